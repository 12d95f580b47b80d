#!/usr/bin/env bash
# Installs what the build, the tests and the embedded system need: Debian's packages, and the
# test-only npm packages of web/ and tests/mcp_sdk/ and the benchmark peer of bench/ (their
# package-lock.json, `npm ci`).
# Idempotent: installs only what is missing. Needs root (or sudo).
set -euo pipefail

packages=(
  g++ cmake ninja-build pkg-config
  libpistache-dev libnats-dev nats-server libsimdjson-dev libhiredis-dev libpq-dev
  postgresql-15 redis-server liblua5.4-dev libsodium-dev libprotobuf-dev protobuf-compiler
  libgtest-dev libgmock-dev libcurl4-openssl-dev libssl-dev libre2-dev wrk python3 python3-yaml
  chromium libseccomp-dev python3-uvicorn python3-uvloop python3-httptools prometheus
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# Node.js with npm runs the web app's browser test. A machine may already have a Node.js of its
# own (with npm inside); Debian's packages are installed only when there is none.
command -v npm >/dev/null 2>&1 || missing+=(nodejs npm)
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
if [ ${#missing[@]} -gt 0 ]; then
  echo "installing: ${missing[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# The npm packages of the browser test (web/), of the MCP SDK test (tests/mcp_sdk/) and of the
# runtime benchmark's workerd peer (bench/), exactly as locked; installed again only when a lock
# changes.
root="$(cd "$(dirname "$0")/.." && pwd)"
for web in "$root/web" "$root/tests/mcp_sdk" "$root/bench"; do
  if [ -f "$web/package-lock.json" ] &&
     ! cmp -s "$web/package-lock.json" "$web/node_modules/.installed-package-lock.json"; then
    echo "installing npm packages (${web#"$root"/}/package-lock.json)"
    (cd "$web" && npm ci --no-audit --no-fund --ignore-scripts)
    cp "$web/package-lock.json" "$web/node_modules/.installed-package-lock.json"
  fi
done
