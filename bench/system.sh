# Sourced by the bench scripts: starts the whole system as shipped (info logs: one span line per
# hop), with rate and concurrency limits off, since a bench measures the platform, not the rate
# limiter. Extra arguments go to `toolgate up`. Also free_port, for the peers.
#
#   start_system DATA_DIR [toolgate up flags...]
#
# Sets up_pid, url (the edge), nats_url (which takes the credentials in DATA/keys), key (the
# demo organization's API key, scopes invoke and manage), echo_id and echo_url (the demo's Lua
# echo and its invoke URL); exits with the launcher's log when the system does not come up.
start_system() {
  local data=$1
  shift
  # TOOLGATE_BENCH_CPUS (a taskset list) confines every process of the system to those cores.
  ${TOOLGATE_BENCH_CPUS:+taskset -c "$TOOLGATE_BENCH_CPUS"} build/bin/toolgate up --data-dir "$data" --http-port 0 --demo \
    --rate-limit-per-key 0 --concurrency-per-org 0 "$@" >"$data/up.log" 2>&1 &
  up_pid=$!
  for _ in $(seq 1 600); do
    grep -q "Press Ctrl-C" "$data/up.log" 2>/dev/null && break
    kill -0 "$up_pid" 2>/dev/null || { cat "$data/up.log"; exit 1; }
    sleep 0.1
  done
  url=$(sed -n 's/.*"url":"\([^"]*\)".*/\1/p' "$data/run/state.json")
  nats_url=$(sed -n 's/.*"nats_url":"\([^"]*\)".*/\1/p' "$data/run/state.json")
  key=$(sed -n 's/.*"api_key":"\([^"]*\)".*/\1/p' "$data/run/demo.json")
  echo_id=$(sed -n 's/.*"echo_id":"\([^"]*\)".*/\1/p' "$data/run/demo.json")
  echo_url="$url/api/v1/functions/$echo_id/1.0.0/invoke"
}

# Prints a TCP port that is free on 127.0.0.1 now.
free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

# A fresh data directory under /tmp for start_system, stopped and removed when the script exits
# (however it exits). Sets data.
system_data_dir() {
  data=$(mktemp -d /tmp/toolgate-bench-XXXXXX)
  trap 'stop_system_data' EXIT
}
stop_system_data() {
  [ -n "${up_pid:-}" ] && kill "$up_pid" 2>/dev/null && wait "$up_pid" 2>/dev/null || true
  rm -rf "$data"
}
