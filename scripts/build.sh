#!/usr/bin/env bash
# Configures and builds into build/ (binaries in build/bin), TOOLGATE_JOBS jobs at a time
# (default 2).
#   scripts/build.sh run    only what running needs: the services, the toolgate launcher and CLI,
#                           the worker runtimes and the web app (no tests, no benchmarks)
#   scripts/build.sh        everything, tests included
set -euo pipefail
cd "$(dirname "$0")/.."
jobs="${TOOLGATE_JOBS:-2}"
if [ "${1:-all}" = run ]; then
  # The tests' setting is left as the build directory has it: a checkout that also runs the tests
  # keeps its test binaries.
  cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
  cmake --build build -j"$jobs" --target toolgate toolgate-edge toolgate-auth toolgate-registry \
    toolgate-secrets toolgate-billing toolgate-executor toolgate-lua-worker \
    toolgate_executor_runtimes web
else
  cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTOOLGATE_TESTS=ON >/dev/null
  cmake --build build -j"$jobs"
fi
