# Sourced by the bench scripts: the architecture's floor, a peer that pays for what the owner's
# shape costs and for nothing else. An HTTP front (the edge's Pistache, Bus and ReplyMux) hands
# each request to HOPS no-op stage processes over NATS, one after another, and the last one
# answers (bench/bus_chain.cc). A request crosses the bus HOPS + 1 times; the fewest any chain
# with separate billing and executor services can have is 4 (edge, billing's hold, executor,
# billing's settlement: HOPS=3).
#
#   start_chain HOPS [DESIGN]   # sets chain_url (POST it) and chain_pids
#   stop_chain
#
# DESIGN is per-message (the default: one bus message per request per hop), batched (the
# front sends what queued while its previous batch was in flight as one message, each stage
# forwards what piled up as one message) or batched-inline (the same, with each stage reading
# its connection on an epoll loop of its own and taking messages on that thread);
# bench/bus_chain.cc says how.
#
# The chain runs on a nats-server of its own (the same binary, loopback only): the system's NATS
# lets each service's user reach only that service's subjects, and no user of it may use the
# chain's bench.hop.* subjects.
# The front runs 2 reactor threads, the edge's default; TOOLGATE_CHAIN_FRONT_THREADS changes that
# (bench/invoke.sh sets it to the running edge's count).
# Needs bench/system.sh (free_port).
chain_pids=()

start_chain() {
  local hops=$1 design=${2:-per-message} nats port i front stage
  case "$design" in
    per-message) front=front stage=stage ;;
    batched) front=batch-front stage=batch-stage ;;
    batched-inline) front=batch-front stage=loop-stage ;;
    *) echo "start_chain: unknown design $design" >&2; return 1 ;;
  esac
  chain_pids=()
  port=$(free_port)
  /usr/sbin/nats-server -a 127.0.0.1 -p "$port" >/dev/null 2>&1 &
  chain_pids+=($!)
  nats="nats://127.0.0.1:$port"
  for i in $(seq 1 "$hops"); do
    build/bin/bench_bus_chain "$stage" "$nats" "$i" "$hops" >/dev/null &
    chain_pids+=($!)
  done
  port=$(free_port)
  build/bin/bench_bus_chain "$front" "$port" "${TOOLGATE_CHAIN_FRONT_THREADS:-2}" "$nats" >/dev/null &
  chain_pids+=($!)
  chain_url="http://127.0.0.1:$port/echo"
  # Stages subscribe before they print "ready", but the front may be up first: wait for an answer.
  for _ in $(seq 1 200); do
    [ "$(curl -s -m 2 -o /dev/null -w '%{http_code}' -d '{}' "$chain_url")" = 200 ] && return 0
    sleep 0.05
  done
  echo "the $design bus chain with $hops stages did not answer" >&2
  return 1
}

# Stops the chain's processes newest first, each before the next, so that no front or stage
# outlives its nats-server (it would log the disconnect).
stop_chain() {
  local i
  for ((i = ${#chain_pids[@]} - 1; i >= 0; i--)); do
    kill "${chain_pids[$i]}" 2>/dev/null || true
    wait "${chain_pids[$i]}" 2>/dev/null || true
  done
  chain_pids=()
}
