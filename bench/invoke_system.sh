#!/usr/bin/env bash
# The toolgate row of bench/invoke.sh alone, for measuring one change against the tree before
# it (run it on each, on the same machine, one after the other): the system as `toolgate up
# --demo` starts it, the demo's Lua echo through the whole path with the same wrk client and
# settings (bench/post.lua, one thread, keep-alive), reporting
#   - req/s at CONNECTIONS connections, with CPU and context switches per call by process;
#   - p50/p90/p99 at 1 connection;
#   - p50 at a paced 1,000 req/s.
# No peers and no floors, so it takes about a fifth of bench/invoke.sh's time; compare figures
# only between runs of this script on the same machine and day.
#
#   bench/invoke_system.sh [duration_s=6] [connections=32] [toolgate up flags...]
#
# Flags after the second argument go to `toolgate up` (for example `--nats-gogc 100`, to measure
# a setting against its default on the same binaries). TOOLGATE_BENCH_CPUS and
# TOOLGATE_BENCH_WRK_CPUS (taskset lists) confine the system and wrk to cores of their own.
set -euo pipefail
cd "$(dirname "$0")/.."
duration=${1:-6}
connections=${2:-32}
shift $(($# < 2 ? $# : 2))
[ -x build/bin/toolgate ] || { echo "missing build/bin/toolgate: scripts/build.sh run" >&2; exit 1; }
source bench/system.sh
system_data_dir
start_system "$data" "$@"
run() {  # connections [rate]: wrk's RESULT line
  TOOLGATE_BENCH_KEY=$key TOOLGATE_BENCH_RATE=${2:-} \
    ${TOOLGATE_BENCH_WRK_CPUS:+taskset -c "$TOOLGATE_BENCH_WRK_CPUS"} wrk -t1 -c"$1" -d"${duration}s" --latency -s bench/post.lua "$echo_url" | grep '^RESULT'
}
TOOLGATE_BENCH_KEY=$key wrk -t1 -c4 -d2s -s bench/post.lua "$echo_url" >/dev/null  # warm up
bench/cpu_by_process.py snapshot "$up_pid" >"$data/cpu.before"
throughput=$(run "$connections")
bench/cpu_by_process.py snapshot "$up_pid" >"$data/cpu.after"
requests=$(sed -n 's/.*requests=\([0-9]*\).*/\1/p' <<<"$throughput")
echo "## bench/invoke_system.sh $duration $connections ($(nproc) cores, $(date -u +%FT%TZ))"
echo "$connections connections: $throughput"
bench/cpu_by_process.py report "$data/cpu.before" "$data/cpu.after" "$requests"
echo "1 connection: $(run 1)"
echo "paced 1,000/s: $(run 32 1000)"
