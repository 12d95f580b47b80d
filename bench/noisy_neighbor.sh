#!/usr/bin/env bash
# A noisy neighbour: organization A keeps spinning Lua handlers running at its slot cap (and more
# waiting), while organization B calls the Lua echo tool at a steady rate. Prints B's latency
# alone and beside A, in the same run, and the cost of the per-sandbox cgroup work per call.
#
#   bench/noisy_neighbor.sh [duration_s=10] [rate_per_s=100] [spinners=4]
#
# The fairness target: B's p50 beside A at most 2x B's p50 alone.
set -euo pipefail
cd "$(dirname "$0")/.."
duration=${1:-10}
rate=${2:-100}
spinners=${3:-4}
bin=build/bin
[ -x $bin/toolgate ] || scripts/build.sh >/dev/null

data=$(mktemp -d /tmp/toolgate-bench-XXXXXX)
spin_pids=()
cleanup() {
  for p in "${spin_pids[@]}"; do kill "$p" 2>/dev/null || true; done
  [ -n "${up_pid:-}" ] && kill "$up_pid" 2>/dev/null && wait "$up_pid" 2>/dev/null || true
  rm -rf "$data"
}
trap cleanup EXIT

source bench/system.sh
start_system "$data"
api="$url/api/v1"

# Organization A: its own account, a funded balance, a key and a handler that spins until its
# timeout (5 s; 408, not charged).
jar="$data/a.jar"
curl -sf -c "$jar" -X POST "$api/auth/signup" -H 'Content-Type: application/json' \
  -d '{"email":"noisy@example.com","password":"a long password","organization":"Noisy"}' >/dev/null
csrf=(-H 'X-Toolgate-CSRF: 1' -H "Origin: $url" -H 'Content-Type: application/json')
curl -sf -b "$jar" "${csrf[@]}" -X POST "$api/billing/top-ups" -H 'Idempotency-Key: noisy' \
  -d '{"amount_micro_usd":900000000}' >/dev/null
a_key=$(curl -sf -b "$jar" "${csrf[@]}" -X POST "$api/api-keys" -d '{"name":"noisy"}' |
  sed 's/.*"key":"\([^"]*\)".*/\1/')
spin_id=$(curl -sf -b "$jar" "${csrf[@]}" -X POST "$api/functions" \
  -d '{"name":"spin","description":"spins","category":"Demo","visibility":"private","price_micro_usd":0}' |
  sed 's/.*"function_id":"\([^"]*\)".*/\1/')
curl -sf -b "$jar" "${csrf[@]}" -X POST "$api/functions/$spin_id/versions" \
  -d '{"version":"1","runtime":"lua","compute_type":"CPU","input_schema":{"type":"object"},"timeout_ms":5000,"code":"function service_handler(event, context) while true do end end"}' >/dev/null

run_b() {  # name
  local out
  out=$(TOOLGATE_BENCH_KEY=$key TOOLGATE_BENCH_RATE=$rate \
    wrk -t1 -c4 -d"${duration}s" --latency -s bench/post.lua \
    "$api/functions/$echo_id/1.0.0/invoke" | grep '^RESULT')
  printf "%-34s %s\n" "$1" "${out#RESULT }"
}

# Warm B's worker and A's.
TOOLGATE_BENCH_KEY=$key wrk -t1 -c2 -d2s -s bench/post.lua "$api/functions/$echo_id/1.0.0/invoke" >/dev/null
echo "# $(date -u +%FT%TZ) $(nproc) cores, ${duration}s per run, B at $rate req/s, A with $spinners spinning callers"
grep -o '"slots":[0-9]*,"max_slots_per_org":[0-9]*,"cgroups":"[^"]*"' "$data/logs/executor.log" | head -1
run_b "B alone"

for _ in $(seq 1 "$spinners"); do
  (while true; do
     curl -s -o /dev/null -X POST "$api/functions/$spin_id/1/invoke" -H "Authorization: $a_key" \
       -H 'Content-Type: application/json' -d '{"event":{}}'
   done) &
  spin_pids+=($!)
done
sleep 1  # A's callers fill its slots
run_b "B beside A spinning at its cap"
for p in "${spin_pids[@]}"; do kill "$p" 2>/dev/null || true; done
spin_pids=()

# The cgroup work per call, measured inside the executor: the worker's call with and without
# a cgroup, from the unit benchmark (one process, no bus).
echo "## per-call cost of the sandbox's cgroup (create or reuse, read, kill)"
$bin/bench_cgroup_cost 2>/dev/null || echo "(bench_cgroup_cost not built)"
