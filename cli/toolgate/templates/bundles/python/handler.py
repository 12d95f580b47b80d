"""A Toolgate function packed as a bundle: this directory, minus .toolgateignore's patterns.

The bundle's root is on sys.path, so packages beside this file import as usual: put pure-Python
dependencies here (pip install --target . PACKAGE, or copy them in). Packages installed on the
machine that runs the tool are not visible: a tool sees Python's standard library and its bundle.
"""

from greetings import greet


def service_handler(event, context):
    name = event.get("name", "world") if isinstance(event, dict) else "world"
    if not isinstance(name, str):
        return {"statusCode": 400, "body": {"error": "name must be a string"}}
    return {"statusCode": 200, "body": {"message": greet(name)}}
