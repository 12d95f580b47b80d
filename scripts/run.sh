#!/usr/bin/env bash
# The first README command: install what running needs, build only what runs, and run the whole
# system (NATS, Redis, PostgreSQL and every service) on its embedded default. Extra arguments go
# to `toolgate up`, e.g. --demo, --detach, --http-port 9000, --data-dir /var/lib/toolgate.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh run
scripts/build.sh run
exec build/bin/toolgate up "$@"
