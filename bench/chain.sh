# Sourced by the bench scripts: the architecture's floor, a peer that pays for what the owner's
# shape costs and for nothing else. An HTTP front (the edge's Pistache, Bus and ReplyMux) hands
# each request to HOPS no-op stage processes over NATS, one after another, and the last one
# answers (bench/bus_chain.cc). A request is HOPS + 1 bus messages: the Lua echo's invoke path
# is 6 (HOPS=5); the fewest any chain with separate billing and executor services can be is 4
# (edge, billing's hold, executor, billing's settlement: HOPS=3).
#
#   start_chain HOPS   # sets chain_url (POST it) and chain_pids
#   stop_chain
#
# The chain runs on a nats-server of its own (the same binary, loopback only): the system's NATS
# lets each service's user reach only that service's subjects, and no user of it may use the
# chain's bench.hop.* subjects.
# The front runs 2 reactor threads, like the edge; TOOLGATE_CHAIN_FRONT_THREADS changes that.
# Needs bench/system.sh (free_port).
chain_pids=()

start_chain() {
  local hops=$1 nats port i
  chain_pids=()
  port=$(free_port)
  /usr/sbin/nats-server -a 127.0.0.1 -p "$port" >/dev/null 2>&1 &
  chain_pids+=($!)
  nats="nats://127.0.0.1:$port"
  for i in $(seq 1 "$hops"); do
    build/bin/bench_bus_chain stage "$nats" "$i" "$hops" >/dev/null &
    chain_pids+=($!)
  done
  port=$(free_port)
  build/bin/bench_bus_chain front "$port" "${TOOLGATE_CHAIN_FRONT_THREADS:-2}" "$nats" >/dev/null &
  chain_pids+=($!)
  chain_url="http://127.0.0.1:$port/echo"
  # Stages subscribe before they print "ready", but the front may be up first: wait for an answer.
  for _ in $(seq 1 200); do
    [ "$(curl -s -o /dev/null -w '%{http_code}' -d '{}' "$chain_url")" = 200 ] && return 0
    sleep 0.05
  done
  echo "the bus chain with $hops stages did not answer" >&2
  return 1
}

stop_chain() {
  local pid
  for pid in "${chain_pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${chain_pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  chain_pids=()
}
