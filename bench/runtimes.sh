#!/usr/bin/env bash
# Python and JavaScript tools against peers that run the same handler with none of the platform
# around it, in the same run, on the same machine, with the same wrk settings (issue 3):
#   - the Python echo tool through the whole system against the same handler served by uvicorn
#     (uvloop, httptools, one worker: bench/runtimes/uvicorn_echo.py);
#   - the JavaScript echo tool against the same handler in Cloudflare's workerd
#     (bench/runtimes/workerd/).
# Toolgate's side pays for authentication, billing (a durable ledger write per call) and a
# sandboxed worker process per tool; the peers pay for none of it. The script also times cold
# starts: the first call of a freshly published version. Beside them runs the architecture's
# floor (bench/chain.sh): the edge's front handing each request to 1 or 3 no-op services over
# NATS, the most any design of separate services could reach here. Prints the runs and a table
# against the targets; exits non-zero when any request failed.
#
#   bench/runtimes.sh [duration_s=10] [connections=32]
#
# Needs scripts/install-deps.sh (python3-uvicorn, python3-uvloop, python3-httptools, and the npm
# package workerd in bench/node_modules).
set -euo pipefail
cd "$(dirname "$0")/.."
duration=${1:-10}
connections=${2:-32}
cold_versions=5  # fresh versions published and timed per runtime
bin=build/bin
# Debian's interpreter: the one the executor runs Python tools with, and the one Debian's uvicorn
# is installed for (a pyenv or virtualenv python3 first on PATH has neither).
python=/usr/bin/python3
[ -x $bin/toolgate ] || scripts/build.sh >/dev/null
$python -c 'import uvicorn, uvloop, httptools' 2>/dev/null ||
  { echo "uvicorn, uvloop or httptools missing: run scripts/install-deps.sh" >&2; exit 1; }
# The npm package's launcher (npx workerd) runs the binary as a child it does not pass signals
# to, so killing it would leave workerd running: run the binary it names directly.
workerd=$(cd bench && node -p 'require("workerd").default' 2>/dev/null || true)
[ -x "$workerd" ] || { echo "workerd missing: run scripts/install-deps.sh" >&2; exit 1; }

source bench/chain.sh
data=$(mktemp -d /tmp/toolgate-bench-XXXXXX)
stop() {  # pid: end it and reap it
  [ -n "$1" ] && kill "$1" 2>/dev/null && wait "$1" 2>/dev/null || true
}
cleanup() {
  stop_chain
  stop "${up_pid:-}"
  stop "${uvicorn_pid:-}"
  stop "${workerd_pid:-}"
  rm -rf "$data"
}
trap cleanup EXIT

source bench/system.sh
start_system "$data"
# The CLI acts as the demo organization through its key, which has the manage scope.
export TOOLGATE_URL=$url TOOLGATE_API_KEY=$key

uvicorn_port=$(free_port)
$python -m uvicorn --app-dir bench/runtimes uvicorn_echo:app --host 127.0.0.1 \
  --port "$uvicorn_port" --loop uvloop --http httptools --workers 1 --lifespan off \
  --no-access-log --log-level warning >"$data/uvicorn.log" 2>&1 &
uvicorn_pid=$!
workerd_port=$(free_port)
"$workerd" serve bench/runtimes/workerd/config.capnp --socket-addr "http=127.0.0.1:$workerd_port" \
  >"$data/workerd.log" 2>&1 &
workerd_pid=$!
uvicorn_url="http://127.0.0.1:$uvicorn_port/invoke"
workerd_url="http://127.0.0.1:$workerd_port/invoke"
for peer in "$uvicorn_url" "$workerd_url"; do
  for _ in $(seq 1 200); do
    curl -s -o /dev/null -X POST "$peer" -d '{"event":{}}' && break
    sleep 0.05
  done
done

# Publishes DIR's tool at VERSION and prints its function id. The tools are published from copies
# in the data directory, because `toolgate publish` writes the new function's id into the
# manifest.
publish() {  # runtime version
  local dir=$data/tools/$1
  [ -d "$dir" ] || { mkdir -p "$data/tools"; cp -r "bench/runtimes/echo_$1" "$dir"; }
  sed -i "s/\"version\": \"[^\"]*\"/\"version\": \"$2\"/" "$dir/toolgate.json"
  $bin/toolgate publish "$dir" --json 2>>"$data/publish.log" |
    sed -n 's/.*"function_id": *"\([^"]*\)".*/\1/p' || true  # no id: the caller shows the log
}

event='{"event":{"hello":"world","n":42}}'
declare -A fid cold_ms last_trace
failed=0

# Cold start: publish a fresh version, then time its very first call (no worker exists for a
# version before it is called: the executor starts one, inside the sandbox, on demand).
for rt in python javascript; do
  fid[$rt]=$(publish "$rt" 1.0.0)
  [ -n "${fid[$rt]}" ] || { cat "$data/publish.log"; exit 1; }
  times=()
  for i in $(seq 1 $cold_versions); do
    [ -n "$(publish "$rt" "1.0.$i")" ] || { cat "$data/publish.log"; exit 1; }
    read -r code seconds < <(curl -s -o /dev/null -D "$data/cold.headers" \
      -w '%{http_code} %{time_total}\n' -X POST "$url/api/v1/functions/${fid[$rt]}/1.0.$i/invoke" \
      -H "Authorization: $key" -H 'Content-Type: application/json' -d "$event")
    [ "$code" = 200 ] || { echo "cold call of $rt 1.0.$i answered $code" >&2; failed=1; }
    times+=("$(awk -v s="$seconds" 'BEGIN { printf "%.1f", s * 1000 }')")
  done
  last_trace[$rt]=$(sed -n 's/^traceparent: 00-\([0-9a-f]*\)-.*/\1/p' "$data/cold.headers" |
                    tr -d '\r')
  # min, median, max
  cold_ms[$rt]=$(printf '%s\n' "${times[@]}" | sort -n |
                 awk '{ v[NR] = $1 } END { print v[1], v[int((NR + 1) / 2)], v[NR] }')
done

declare -A rps p50
run() {  # label name url connections threads
  local out
  out=$(TOOLGATE_BENCH_KEY=$key wrk -t"$5" -c"$4" -d"${duration}s" --latency -s bench/post.lua \
        "$3" | grep '^RESULT') || { echo "wrk gave no result for $1" >&2; failed=1; return 0; }
  printf "%-32s %s\n" "$1" "${out#RESULT }"
  [[ $out == *" non2xx=0 errors=0" ]] || failed=1
  rps[$2]=$(sed -n 's/.* rps=\([0-9]*\) .*/\1/p' <<<"$out")
  p50[$2]=$(sed -n 's/.* p50_ms=\([0-9.]*\) .*/\1/p' <<<"$out")
}

python_url="$url/api/v1/functions/${fid[python]}/1.0.$cold_versions/invoke"
javascript_url="$url/api/v1/functions/${fid[javascript]}/1.0.$cold_versions/invoke"
# Warm everything at the throughput run's concurrency, so the tools' worker pools have grown to
# the size that run needs before it is measured. Every side gets the same request, key included.
for target in "$uvicorn_url" "$python_url" "$workerd_url" "$javascript_url"; do
  TOOLGATE_BENCH_KEY=$key wrk -t2 -c"$connections" -d2s -s bench/post.lua "$target" >/dev/null
done

echo "# $(date -u +%FT%TZ) $(nproc) cores, ${duration}s per run, wrk keep-alive, durable writes"
echo "## cold start: first call after publish, $cold_versions versions per runtime (ms)"
for rt in python javascript; do
  read -r lo mid hi <<<"${cold_ms[$rt]}"
  printf "%-32s min=%s median=%s max=%s\n" "toolgate $rt" "$lo" "$mid" "$hi"
done
echo "## throughput, $connections connections"
run "uvicorn echo (peer)" uvicorn_t "$uvicorn_url" "$connections" 2
run "toolgate python echo" python_t "$python_url" "$connections" 2
run "workerd echo (peer)" workerd_t "$workerd_url" "$connections" 2
run "toolgate javascript echo" javascript_t "$javascript_url" "$connections" 2
for hops in 1 3; do
  start_chain "$hops"
  wrk -t1 -c4 -d1s -s bench/post.lua "$chain_url" >/dev/null
  run "bus chain floor, $hops stage$([ "$hops" = 1 ] || echo s)" "floor${hops}_t" "$chain_url" \
    "$connections" 2
  stop_chain
done
echo "## latency, 1 connection (one request at a time)"
run "uvicorn echo (peer)" uvicorn_l "$uvicorn_url" 1 1
run "toolgate python echo" python_l "$python_url" 1 1
run "workerd echo (peer)" workerd_l "$workerd_url" 1 1
run "toolgate javascript echo" javascript_l "$javascript_url" 1 1

# Where a cold start's time goes: the spans of the last one per runtime, hop by hop.
for rt in python javascript; do
  echo "## one cold call's trace, $rt (${last_trace[$rt]})"
  $bin/toolgate trace "${last_trace[$rt]}" --data-dir "$data" || true
done

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a != "" && b > 0) printf "%.2f", a / b }'; }
minus() { awk -v a="$1" -v b="$2" 'BEGIN { if (a != "" && b != "") printf "%.3f", a - b }'; }
line() { printf "| %-56s | %-9s | %-8s | %-7s |\n" "$@"; }
row() {  # measure value unit target-text target lt|ge
  local verdict
  verdict=$(awk -v v="$2" -v t="$5" -v op="$6" \
    'BEGIN { if (v == "") print "n/a"; else print ((op == "lt" ? v + 0 < t : v + 0 >= t) ? "met" : "not met") }')
  line "$1" "${2:-n/a}$3" "$4" "$verdict"
}
read -r _ py_cold _ <<<"${cold_ms[python]}"
read -r _ js_cold _ <<<"${cold_ms[javascript]}"

echo "## against the targets (issue 3)"
line measure result target verdict
line "$(printf -- '-%.0s' {1..56})" "---------" "--------" "-------"
row "python req/s, toolgate / uvicorn ($connections connections)" \
  "$(ratio "${rps[python_t]:-}" "${rps[uvicorn_t]:-}")" x ">= 0.5x" 0.5 ge
row "javascript req/s, toolgate / workerd ($connections connections)" \
  "$(ratio "${rps[javascript_t]:-}" "${rps[workerd_t]:-}")" x ">= 1.0x" 1.0 ge
row "  the floor's: 1 no-op NATS stage / uvicorn" \
  "$(ratio "${rps[floor1_t]:-}" "${rps[uvicorn_t]:-}")" x ">= 0.5x" 0.5 ge
row "  the floor's: 3 no-op NATS stages / workerd" \
  "$(ratio "${rps[floor3_t]:-}" "${rps[workerd_t]:-}")" x ">= 1.0x" 1.0 ge
row "python cold start, median of $cold_versions" "$py_cold" " ms" "< 150 ms" 150 lt
row "javascript cold start, median of $cold_versions" "$js_cold" " ms" "< 100 ms" 100 lt
row "python warm overhead, p50 toolgate - p50 uvicorn" \
  "$(minus "${p50[python_l]:-}" "${p50[uvicorn_l]:-}")" " ms" "< 1 ms" 1 lt
row "javascript warm overhead, p50 toolgate - p50 workerd" \
  "$(minus "${p50[javascript_l]:-}" "${p50[workerd_l]:-}")" " ms" "< 1 ms" 1 lt

[ "$failed" -eq 0 ] || { echo "some requests failed (non-2xx or socket errors): see above" >&2; exit 1; }
