#!/usr/bin/env bash
# Where a call's time goes under load: the system as `toolgate up --demo` starts it, the demo's
# Lua echo at CONNECTIONS connections for DURATION seconds (bench/post.lua, wrk -t1, keep-alive),
# reporting
#   - req/s, and the whole machine's busy CPU per request and idle share over the run, from
#     /proc/stat: every process, wrk and the kernel's own work included;
#   - Redis's time inside billing's scripts per request (INFO commandstats, EVALSHA: wall time,
#     so under load it includes time the script was descheduled), and the commands the scripts
#     (and billing's few others) ran per request;
#   - PostgreSQL's WAL per request (pg_stat_wal: records, bytes, syncs);
#   - the median timeline of SAMPLE executions finished during the run, from the hops billing
#     stores with each (GET /api/v1/executions/{id}): when each stage took the call, from the
#     edge's decision, and how long it held it.
# Arguments after the third go to `toolgate up` (`--log-level warn`: no span lines). Compare
# figures only between runs of this script on the same machine and day.
#
#   bench/under_load.sh [duration_s=6] [connections=32] [sample=60] [toolgate up flags...]
set -euo pipefail
cd "$(dirname "$0")/.."
duration=${1:-6}
connections=${2:-32}
sample=${3:-60}
shift $(($# < 3 ? $# : 3))
[ -x build/bin/toolgate ] || { echo "missing build/bin/toolgate: scripts/build.sh run" >&2; exit 1; }
source bench/system.sh
system_data_dir
start_system "$data" "$@"
redis_port=$(sed -n 's/.*"redis_url":"redis:\/\/[^"]*:\([0-9]*\)".*/\1/p' "$data/run/state.json")
redis() { REDISCLI_AUTH=$(cat "$data/keys/redis.password") redis-cli -p "$redis_port" "$@"; }
TOOLGATE_BENCH_KEY=$key wrk -t1 -c4 -d2s -s bench/post.lua "$echo_url" >/dev/null  # warm up

pg_url=$(sed -n 's/.*"postgres_url":"\([^"]*\)".*/\1/p' "$data/run/state.json")
wal() { PGPASSWORD=$(cat "$data/keys/postgres.password") psql "$pg_url" -Atc \
  "SELECT wal_records, wal_bytes, wal_sync FROM pg_stat_wal"; }

redis CONFIG RESETSTAT >/dev/null
wal_before=$(wal)
before=$(head -1 /proc/stat)
TOOLGATE_BENCH_KEY=$key wrk -t1 -c"$connections" -d"${duration}s" --latency -s bench/post.lua \
  "$echo_url" >"$data/wrk.out" &
wrk_pid=$!
# The executions listed newest first once the run is half over: all of them finished under load.
sleep "$((duration / 2))"  # not synchronisation: a point in the middle of the run to sample at
curl -sf -H "Authorization: $key" "$url/api/v1/executions?limit=$sample" >"$data/executions.json"
wait "$wrk_pid"
after=$(head -1 /proc/stat)
wal_after=$(wal)
redis INFO commandstats | tr -d '\r' >"$data/commandstats"

echo "## bench/under_load.sh $duration $connections $sample ($(nproc) cores, $(date -u +%FT%TZ))"
grep '^RESULT' "$data/wrk.out"
python3 - "$url" "$key" "$data" "$before" "$after" "$wal_before" "$wal_after" <<'PY'
import json, re, statistics, sys, urllib.request

url, key, data, before, after, wal_before, wal_after = sys.argv[1:8]
requests = int(re.search(r"requests=(\d+)", open(f"{data}/wrk.out").read()).group(1))
a = [int(x) for x in before.split()[1:]]
b = [int(x) for x in after.split()[1:]]
delta = [y - x for x, y in zip(a, b)]
idle = delta[3] + delta[4]  # idle, iowait
busy = sum(delta) - idle
tick_us = 1e6 / 100  # USER_HZ
print(f"whole machine: {busy * tick_us / requests:.0f} µs busy per request, "
      f"{100 * idle / (idle + busy):.0f} % idle (wrk included)")
stats = re.search(r"cmdstat_evalsha:calls=(\d+),usec=(\d+)", open(f"{data}/commandstats").read())
if stats:
    calls, usec = int(stats.group(1)), int(stats.group(2))
    print(f"Redis scripts: {calls / requests:.2f} per request, {usec / max(calls, 1):.1f} µs each, "
          f"{usec / requests:.1f} µs per request")

# Every command Redis ran, scripts' own calls included, but not the scripts themselves nor this
# script's INFO and CONFIG: what billing's scripts ask of Redis per request.
calls = {name: int(n) for name, n in
         re.findall(r"cmdstat_([a-z|]+):calls=(\d+)", open(f"{data}/commandstats").read())
         if name not in ("evalsha", "eval", "auth", "info", "config|resetstat", "ping")}
print("Redis commands run by the scripts (and billing's few others): "
      f"{sum(calls.values()) / requests:.1f} per request ("
      + ", ".join(f"{k} {v / requests:.2f}"
                  for k, v in sorted(calls.items(), key=lambda kv: -kv[1])) + ")")
wal = [int(y) - int(x) for x, y in zip(wal_before.split("|"), wal_after.split("|"))]
print(f"PostgreSQL's WAL: {wal[0] / requests:.1f} records and {wal[1] / requests:,.0f} bytes per "
      f"request, {wal[2] / requests:.2f} syncs per request")

items = json.load(open(f"{data}/executions.json"))["items"]
starts, held = {}, {}
for item in items:
    request = urllib.request.Request(f"{url}/api/v1/executions/{item['execution_id']}",
                                     headers={"Authorization": key})
    hops = json.load(urllib.request.urlopen(request)).get("hops", [])
    if not hops:
        continue
    first = hops[0]["start_unix_us"]
    for hop in hops:
        starts.setdefault(hop["name"], []).append(hop["start_unix_us"] - first)
        held.setdefault(hop["name"], []).append(hop["duration_us"])
print(f"\n{len(items)} executions, median per hop:\n")
print("| hop | starts at | held |")
print("|---|---:|---:|")
for name in sorted(starts, key=lambda n: statistics.median(starts[n])):
    print(f"| {name} | {statistics.median(starts[name]):,.0f} µs | "
          f"{statistics.median(held[name]):,.0f} µs |")
PY
