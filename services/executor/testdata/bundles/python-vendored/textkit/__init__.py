"""A vendored pure-Python package."""
