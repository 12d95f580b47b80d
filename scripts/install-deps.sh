#!/usr/bin/env bash
# Installs what is missing, for one of two purposes:
#   scripts/install-deps.sh run    what building and running the system needs (scripts/run.sh):
#                                  the compiler, the libraries, NATS, Redis, PostgreSQL, and the
#                                  Python and Node.js interpreters the tools run in
#   scripts/install-deps.sh test   all of that, and what the tests and benchmarks need on top
#                                  (scripts/test.sh): GoogleTest, Chromium and the npm packages of
#                                  the browser and MCP SDK tests, zsh (completion test), wrk and
#                                  the benchmark peers
# Idempotent: installs only what is missing. Needs root (or sudo).
set -euo pipefail

purpose="${1:-test}"
run_packages=(
  g++ cmake ninja-build pkg-config
  libpistache-dev libnats-dev nats-server libsimdjson-dev libhiredis-dev libpq-dev libjemalloc-dev
  postgresql-15 redis-server liblua5.4-dev libsodium-dev libprotobuf-dev protobuf-compiler
  libcurl4-openssl-dev libssl-dev libre2-dev libseccomp-dev libarchive-dev python3 ca-certificates
)
test_packages=(
  libgtest-dev libgmock-dev wrk python3-yaml chromium python3-uvicorn python3-uvloop
  python3-httptools prometheus iproute2 openssl zsh
)
case "$purpose" in
  run) packages=("${run_packages[@]}") ;;
  test) packages=("${run_packages[@]}" "${test_packages[@]}") ;;
  *) echo "usage: $0 run|test" >&2; exit 2 ;;
esac

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# Node.js runs JavaScript tools (and, with npm, the browser and MCP SDK tests). A machine may
# already have a Node.js of its own; Debian's packages are installed only when there is none.
command -v node >/dev/null 2>&1 || missing+=(nodejs)
# npm installs JavaScript bundles' dependencies (toolgate publish, and the demo's npm tool when
# the CLI is built) and the test packages.
command -v npm >/dev/null 2>&1 || missing+=(npm)
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
if [ ${#missing[@]} -gt 0 ]; then
  echo "installing: ${missing[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
[ "$purpose" = test ] || exit 0

# The npm packages of the browser test (web/), of the MCP SDK test (tests/mcp_sdk/), of the MCP
# conformance suite (tests/mcp_conformance/), of the API description check (tests/openapi/) and of
# the runtime benchmark's workerd peer (bench/), exactly as locked; installed again only when a
# lock changes.
root="$(cd "$(dirname "$0")/.." && pwd)"
for web in "$root/web" "$root/tests/mcp_sdk" "$root/tests/mcp_conformance" "$root/tests/openapi" \
           "$root/bench"; do
  if [ -f "$web/package-lock.json" ] &&
     ! cmp -s "$web/package-lock.json" "$web/node_modules/.installed-package-lock.json"; then
    echo "installing npm packages (${web#"$root"/}/package-lock.json)"
    (cd "$web" && npm ci --no-audit --no-fund --ignore-scripts)
    cp "$web/package-lock.json" "$web/node_modules/.installed-package-lock.json"
  fi
done
