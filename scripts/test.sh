#!/usr/bin/env bash
# The second README command: install what is missing, build, and run every test (unit tests,
# then the integration suites that start real NATS, Redis, PostgreSQL and every service).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh
cd build
ctest --output-on-failure --timeout 900 "$@"
