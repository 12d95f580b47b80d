#!/usr/bin/env bash
# What the egress gateway adds to an outbound request: the same GET to a loopback upstream, made
# directly and through a gateway door, alternately in the same run (bench/egress_latency.cc),
# then the same comparison with curl as the client (direct, and with -x through a door that
# `bench_egress_latency --serve` keeps open), p50 of curl's own time_total. Last, through the
# whole system as shipped (`toolgate up --demo`): a Lua tool that makes one http.request to the
# demo's weather service on the loopback against the same tool answering without the request,
# each invoked with curl alternately, beside curl calling the weather service directly.
#
#   bench/egress.sh [requests=5000] [curl_requests=300]
#
# Target: under 0.3 ms added at p50.
set -euo pipefail
cd "$(dirname "$0")/.."
requests=${1:-5000}
curl_requests=${2:-300}
bin=build/bin
[ -x $bin/bench_egress_latency ] || ninja -C build bench_egress_latency >/dev/null
$bin/bench_egress_latency "$requests"

coproc SERVE { $bin/bench_egress_latency --serve; }
read -r upstream door <&"${SERVE[0]}"
p50() { sort -n | awk '{a[NR]=$1} END {printf "%.0f", a[int((NR+1)/2)] * 1000000}'; }
direct=$(for _ in $(seq "$curl_requests"); do
  curl -s -o /dev/null -w '%{time_total}\n' "http://127.0.0.1:$upstream/hello"; done | p50)
proxied=$(for _ in $(seq "$curl_requests"); do
  curl -s -o /dev/null -w '%{time_total}\n' -x "http://127.0.0.1:$door" \
    "http://127.0.0.1:$upstream/hello"; done | p50)
exec {SERVE[1]}>&-
wait "$SERVE_PID" 2>/dev/null || true
echo "curl, $curl_requests requests each way: p50 direct ${direct} µs, through the gateway ${proxied} µs, added $((proxied - direct)) µs"

# Through the whole system: a Lua tool with and without its one outbound request.
source bench/system.sh
system_data_dir
start_system "$data"
export TOOLGATE_URL=$url TOOLGATE_API_KEY=$key
weather=127.0.0.1:$(cat "$data/run/demo-weather.port")
tool() {  # name call: publishes a Lua tool that calls the weather service when call is true
  mkdir -p "$data/$1"
  cat >"$data/$1/toolgate.json" <<JSON
{"name": "bench-$1", "description": "bench/egress.sh", "category": "Utilities",
 "visibility": "private", "price_micro_usd": 0, "version": "1.0.0", "runtime": "lua",
 "compute_type": "CPU", "input_schema": {"type": "object"}, "egress": ["$weather"],
 "handler": "handler.lua"}
JSON
  cat >"$data/$1/handler.lua" <<LUA
function service_handler(event, context)
  if $2 then
    local r = http.request{url = "http://$weather/v1/forecast?city=Lisbon",
                           headers = {["X-Api-Key"] = "bench"}}
    return json.decode(r.body)
  end
  return {city = "Lisbon", temperature_c = 9, conditions = "cloudy", source = "none"}
end
LUA
  build/bin/toolgate publish "$data/$1" --json 2>>"$data/publish.log" |
    sed -n 's/.*"function_id": *"\([^"]*\)".*/\1/p'
}
with=$(tool with-request true)
without=$(tool without-request false)
[ -n "$with" ] && [ -n "$without" ] || { cat "$data/publish.log"; exit 1; }
invoke() {
  curl -s -o /dev/null -w '%{http_code} %{time_total}\n' -X POST "$url/api/v1/functions/$1/invoke" \
    -H "Authorization: $key" -d '{"event":{}}'
}
for id in "$with" "$without"; do  # warm both, and check they answer
  read -r code _ < <(invoke "$id")
  [ "$code" = 200 ] || { echo "invoke $id answered $code" >&2; exit 1; }
done
: >"$data/with" >"$data/without" >"$data/direct"
for _ in $(seq "$curl_requests"); do
  invoke "$with" | awk '{print $2}' >>"$data/with"
  invoke "$without" | awk '{print $2}' >>"$data/without"
  curl -s -o /dev/null -w '%{time_total}\n' -H 'X-Api-Key: bench' \
    "http://$weather/v1/forecast?city=Lisbon" >>"$data/direct"
done
w=$(p50 <"$data/with") wo=$(p50 <"$data/without") d=$(p50 <"$data/direct")
echo "whole system, $curl_requests invocations each: p50 Lua tool with one http.request ${w} µs, without ${wo} µs, added $((w - wo)) µs; the weather service called directly by curl ${d} µs, so the facility and the gateway add $((w - wo - d)) µs over the direct call"
