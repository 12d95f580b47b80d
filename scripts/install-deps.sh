#!/usr/bin/env bash
# Installs what the build, the tests and the embedded system need, from Debian's packages only.
# Idempotent: installs only what is missing. Needs root (or sudo).
set -euo pipefail

packages=(
  g++ cmake ninja-build pkg-config
  libpistache-dev libnats-dev nats-server libsimdjson-dev libhiredis-dev libpq-dev
  postgresql-15 redis-server liblua5.4-dev libsodium-dev libprotobuf-dev protobuf-compiler
  libgtest-dev libgmock-dev libcurl4-openssl-dev libssl-dev wrk python3 python3-yaml
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
echo "installing: ${missing[*]}"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
