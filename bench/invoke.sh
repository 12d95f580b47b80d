#!/usr/bin/env bash
# The invoke path against its peers, in one run on one machine, with one wrk client and one set of
# wrk settings (one wrk thread, keep-alive, bench/post.lua):
#   - bare Pistache: an echo route on the same Pistache with the edge's reactor thread count
#     (read from the running edge), the cost of HTTP alone;
#   - the floor of each bus design, HOPS no-op stages (default 3: edge -> billing's hold ->
#     executor -> billing's settlement -> edge, the warm call's shape): one message per request
#     per hop ("per-message"), batches of what piled up ("batched"), and batches with each
#     stage reading its connection on its own epoll loop ("batched, inline"); bench/bus_chain.cc;
#   - toolgate: the Lua echo tool through the whole system as `toolgate up --demo` starts it
#     (rate and concurrency limits off), each call's charge committed before its answer.
# For each: req/s at CONNECTIONS connections and its ratio to bare, CPU and context switches per
# call over that run (every process of the peer), p50/p90/p99 at 1 connection, and p50 at a
# paced 1,000 req/s. Then toolgate's CPU and context switches per call by process over the same
# throughput run, and one call's trace as a tree (its spans from the logs, and the hops recorded
# with the execution). docs/benchmarks.md says what each row means.
#
#   bench/invoke.sh [duration_s=10] [connections=32] [durable_writes=true] [redis_fsync] [--lines]
#
# --lines prints machine-readable lines (RESULT, CPU, SPAN, HOP, REDIS) instead of the tables.
# durable_writes=false starts the system with --durable-writes=false (no fsync before answering;
# unsafe in production) to show the platform's cost apart from this disk's fsync.
# redis_fsync (always or everysec; default: always with durable writes) sets Redis's appendfsync
# alone, to measure what the fsync of holds and captures costs with PostgreSQL's commit unchanged;
# billing's Redis round trips during toolgate's throughput run (from its /metrics) show how many
# calls share each one.
# TOOLGATE_BENCH_FLOOR_HOPS changes the floors' stage count. Exits non-zero when a run had
# failed requests, after printing everything.
set -euo pipefail
cd "$(dirname "$0")/.."
lines=false
args=()
for arg in "$@"; do
  if [ "$arg" = --lines ]; then lines=true; else args+=("$arg"); fi
done
duration=${args[0]:-10}
connections=${args[1]:-32}
durable=${args[2]:-true}
redis_fsync=${args[3]:-}
hops=${TOOLGATE_BENCH_FLOOR_HOPS:-3}
paced_rate=1000        # requests a second, the condition of the paced p50 target
paced_connections=32   # enough that the schedule is kept while some requests are slow
bin=build/bin
for b in toolgate toolgate-edge bench_bare_pistache bench_bus_chain; do
  [ -x "$bin/$b" ] || {
    echo "missing $bin/$b: scripts/build.sh run && ninja -C build bench_bare_pistache bench_bus_chain" >&2
    exit 1
  }
done

source bench/system.sh
source bench/chain.sh
data=$(mktemp -d /tmp/toolgate-bench-XXXXXX)
permsg_pids=()
batched_pids=()
inline_pids=()
cleanup() {
  [ -n "${bare_pid:-}" ] && kill "$bare_pid" 2>/dev/null && wait "$bare_pid" 2>/dev/null || true
  chain_pids=("${permsg_pids[@]}" "${batched_pids[@]}" "${inline_pids[@]}")
  stop_chain
  [ -n "${up_pid:-}" ] && kill "$up_pid" 2>/dev/null && wait "$up_pid" 2>/dev/null || true
  rm -rf "$data"
}
trap cleanup EXIT

start_system "$data" --durable-writes "$durable" ${redis_fsync:+--redis-fsync "$redis_fsync"}

# The edge's Pistache reactor threads as the running edge has them: its --http-threads, else
# TOOLGATE_HTTP_THREADS in its environment, else the flag's default.
edge_http_threads() {
  local pid=$1 n
  n=$(tr '\0' '\n' <"/proc/$pid/cmdline" |
      sed -n -e 's/^--http-threads=\([0-9]*\)$/\1/p' -e '/^--http-threads$/{n;p}' | tail -1)
  [ -n "$n" ] || n=$(tr '\0' '\n' <"/proc/$pid/environ" | sed -n 's/^TOOLGATE_HTTP_THREADS=//p')
  [ -n "$n" ] || n=$($bin/toolgate-edge --help 2>&1 |
                     sed -n '/--http-threads/,/default:/ s/.*default: .\([0-9]*\).*/\1/p' | head -1)
  echo "$n"
}
edge_pid=$(bench/cpu_by_process.py snapshot "$up_pid" | awk '$7 == "toolgate-edge" {print $1; exit}')
[ -n "$edge_pid" ] || { echo "no toolgate-edge process under the launcher" >&2; exit 1; }
threads=$(edge_http_threads "$edge_pid")
[ -n "$threads" ] || { echo "cannot tell the edge's --http-threads" >&2; exit 1; }
# The floors' fronts are the edge's Pistache too.
export TOOLGATE_CHAIN_FRONT_THREADS=${TOOLGATE_CHAIN_FRONT_THREADS:-$threads}

bare_port=$(free_port)
$bin/bench_bare_pistache "$bare_port" "$threads" >/dev/null &
bare_pid=$!
until curl -s -o /dev/null "http://127.0.0.1:$bare_port/"; do sleep 0.05; done
start_chain "$hops" per-message
permsg_url=$chain_url
permsg_pids=("${chain_pids[@]}")
start_chain "$hops" batched
batched_url=$chain_url
batched_pids=("${chain_pids[@]}")
start_chain "$hops" batched-inline
inline_url=$chain_url
inline_pids=("${chain_pids[@]}")
chain_pids=()

runs=(bare permsg batched inline toolgate)
declare -A url_of pids_of key_of
url_of=([bare]="http://127.0.0.1:$bare_port/echo" [permsg]=$permsg_url [batched]=$batched_url
        [inline]=$inline_url [toolgate]=$echo_url)
pids_of=([bare]=$bare_pid [permsg]="${permsg_pids[*]}" [batched]="${batched_pids[*]}"
         [inline]="${inline_pids[*]}" [toolgate]=$up_pid)
key_of=([bare]="" [permsg]="" [batched]="" [inline]="" [toolgate]=$key)

declare -A result  # "<run> <load>" -> wrk's RESULT line (bench/post.lua)
failed=0
wrk_run() {  # run load connections [rate]
  local out
  out=$(TOOLGATE_BENCH_KEY=${key_of[$1]} TOOLGATE_BENCH_RATE=${4:-} \
        wrk -t1 -c"$3" -d"${duration}s" --latency -s bench/post.lua "${url_of[$1]}" |
        grep '^RESULT') || { echo "wrk gave no result for $1 ($2)" >&2; exit 1; }
  result["$1 $2"]=${out#RESULT }
  if [ "$(field "$1 $2" non2xx)" != 0 ] || [ "$(field "$1 $2" errors)" != 0 ]; then failed=1; fi
}
field() {  # "run load" name: one value of a RESULT line
  sed -n "s/.*\\b$2=\\([^ ]*\\).*/\\1/p" <<<"${result[$1]:-}"
}

# Warm every peer (connections, caches, page faults) before measuring.
for r in "${runs[@]}"; do
  TOOLGATE_BENCH_KEY=${key_of[$r]} wrk -t1 -c4 -d1s -s bench/post.lua "${url_of[$r]}" >/dev/null
done

# Billing's Redis round trips (a command or a pipeline: with appendfsync always, at most one
# fsync each) and their total time, from its /metrics: "count seconds".
billing_admin=$(sed -n 's/.*"billing":"\(http:[^"]*\)".*/\1/p' "$data/run/state.json")
redis_trips() {
  curl -s "$billing_admin/metrics" | awk '
    /^toolgate_redis_round_trips_total/ { n = $2 }
    /^toolgate_redis_round_trip_duration_seconds_sum/ { s = $2 }
    END { print n + 0, s + 0 }'
}

# Throughput, with CPU and context switches of every process of the peer over the run: on a
# small machine this, not one hop's latency, is what bounds throughput.
declare -A cpu_us switches
for r in "${runs[@]}"; do
  # shellcheck disable=SC2086 # pids_of holds a list
  bench/cpu_by_process.py snapshot ${pids_of[$r]} >"$data/cpu.$r.before"
  [ "$r" != toolgate ] || trips_before=$(redis_trips)
  wrk_run "$r" throughput "$connections"
  [ "$r" != toolgate ] || trips_after=$(redis_trips)
  # shellcheck disable=SC2086
  bench/cpu_by_process.py snapshot ${pids_of[$r]} >"$data/cpu.$r.after"
  read -r "cpu_us[$r]" "switches[$r]" < <(bench/cpu_by_process.py report "$data/cpu.$r.before" \
    "$data/cpu.$r.after" "$(field "$r throughput" requests)" --total)
done
for r in "${runs[@]}"; do wrk_run "$r" one 1; done
for r in "${runs[@]}"; do wrk_run "$r" paced "$paced_connections" "$paced_rate"; done

# One call, traced: the spans every hop logs, and the hops billing stored with the execution.
headers=$(curl -s -D - -o "$data/call.json" -X POST "$echo_url" -H "Authorization: $key" \
  -H 'Content-Type: application/json' -H 'Connection: close' -d '{"event":{"trace":true}}')
trace_id=$(sed -n 's/^traceparent: 00-\([0-9a-f]*\)-.*/\1/ip' <<<"$headers" | tr -d '\r')
execution_id=$(python3 -c 'import json,sys; print(json.load(sys.stdin)["summary"]["execution_id"])' \
  <"$data/call.json" 2>/dev/null || true)
[ -z "$execution_id" ] || curl -s -o "$data/execution.json" -H "Authorization: $key" \
  "$url/api/v1/executions/$execution_id" || true

# Everything measured, as lines (bench/invoke_report.py reads them back into tables).
bare_rps=$(field "bare throughput" rps)
ratio_to_bare() {
  python3 -c 'import sys; print(f"{float(sys.argv[1]) / max(float(sys.argv[2]), 1):.3f}")' "$1" "$bare_rps"
}
{
  echo "BENCH date=$(date -u +%FT%TZ) cores=$(nproc) duration_s=$duration" \
       "connections=$connections durable_writes=$durable edge_http_threads=$threads" \
       "floor_hops=$hops wrk_threads=1 paced_rate=$paced_rate" \
       "paced_connections=$paced_connections trace_id=${trace_id:-none}" \
       "redis_fsync=${redis_fsync:-default}"
  for r in "${runs[@]}"; do
    for load in throughput one paced; do
      extra=""
      if [ "$load" = throughput ]; then
        extra=" ratio_to_bare=$(ratio_to_bare "$(field "$r $load" rps)")"
        extra+=" cpu_us=${cpu_us[$r]} switches=${switches[$r]}"
      fi
      echo "RESULT run=$r load=$load ${result["$r $load"]}$extra"
    done
  done
  bench/cpu_by_process.py report "$data/cpu.toolgate.before" "$data/cpu.toolgate.after" \
    "$(field "toolgate throughput" requests)" --lines
  echo "$trips_before $trips_after $(field "toolgate throughput" requests)" | awk '{
    n = $3 - $1; s = $4 - $2
    printf "REDIS round_trips_per_call=%.3f round_trip_us=%.0f\n", n / ($5 ? $5 : 1), n ? s / n * 1e6 : 0 }'
  [ -z "$trace_id" ] ||
    bench/trace_tree.py "$data/logs" "$trace_id" "$data/execution.json" --lines || true
} >"$data/lines"
if $lines; then
  cat "$data/lines"
else
  echo "## bench/invoke.sh $duration $connections $durable ${redis_fsync}"
  echo "$(nproc) cores ($(sed -n 's/^model name\s*: //p' /proc/cpuinfo | head -1))"
  echo
  bench/invoke_report.py <"$data/lines"
fi
exit $failed
