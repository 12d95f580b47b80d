// A service's PostgreSQL at start-up, the same in every service: the flags of
// core::DefinePostgresFlags, one wait (--pg-wait-ms) and one readiness check.
//
//   auto pool = pg::ConnectFromFlags("auth", flags);   // exits when PostgreSQL never answers
//   auto ready = pg::ReadinessFromFlags("auth", flags);
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "toolgate/base/flags.h"
#include "toolgate/core/admin_server.h"
#include "toolgate/pg/pg.h"

namespace toolgate::pg {

// A pool of `size` connections (0: --pg-pool) to --postgres-url with the password of
// --postgres-password-file, once the server accepts connections: waits up to --pg-wait-ms for
// it, so a service may start before its database. Exits the process with one line
// "<service>: cannot reach PostgreSQL: ..." when it does not answer in time: a service cannot
// work without its database.
std::unique_ptr<Pool> ConnectFromFlags(const std::string& service, const Flags& flags,
                                       size_t size = 0);

// Registers the readiness check "postgres" for as long as the result lives. It opens a
// connection of its own with core::kReadinessTimeout: a pool busy with work must not read as a
// store that is away, and a stopped server must not hang the probe.
std::unique_ptr<core::ReadinessCheck> ReadinessFromFlags(const std::string& service,
                                                         const Flags& flags);

}  // namespace toolgate::pg
