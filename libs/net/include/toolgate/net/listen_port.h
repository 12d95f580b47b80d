// PickListenPort: a loopback TCP port for a listener that binds it later (a child the launcher
// starts and must name on other children's command lines, a server a test starts).
//
//   Result<int> port = net::PickListenPort();
//   if (!port.ok()) ...                // no free port found: port.status() says why
//   Start("redis-server", "--port", std::to_string(*port));
//
// Why not bind port 0 and close it: the kernel answers with a port of its ephemeral range
// (net.ipv4.ip_local_port_range), the range it also takes the source port of every outgoing
// connection from. A start-up opens hundreds of connections (services to NATS, Redis and
// PostgreSQL), so a port that was free when chosen can be a connection's source port by the time
// its listener binds it, and the listener fails with "Address already in use". A port below that
// range is never taken that way: only another listener could take it, and the choice is random
// over thousands of ports, so two pickers rarely meet.
//
// The port is free on 127.0.0.1 when returned (a bind without SO_REUSEADDR succeeded and was
// closed) and was not returned before by this process. Thread-safe. Fails (kUnavailable) only
// when no free port was found in many tries; when the ephemeral range starts too low to leave
// room below it, falls back to the kernel's choice (the race above stays possible).
#pragma once

#include "toolgate/base/status.h"

namespace toolgate::net {

Result<int> PickListenPort();

}  // namespace toolgate::net
