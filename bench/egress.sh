#!/usr/bin/env bash
# What the egress gateway adds to an outbound request: the same GET to a loopback upstream, made
# directly and through a gateway door, alternately in the same run (bench/egress_latency.cc),
# then the same comparison with curl as the client (direct, and with -x through a door that
# `bench_egress_latency --serve` keeps open), p50 of curl's own time_total.
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
