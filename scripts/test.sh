#!/usr/bin/env bash
# The second README command: install what the tests need too, build everything, and run every
# test (unit tests, then the integration suites that start real NATS, Redis, PostgreSQL and every
# service). Extra arguments go to ctest, e.g. -R it_cli.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh test
scripts/build.sh
cd build
ctest --output-on-failure --timeout 900 "$@"
