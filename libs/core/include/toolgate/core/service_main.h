// What every service's main() does before its own work: common flags, logging, crypto, the bus.
//
//   int main(int argc, char** argv) {
//     Flags flags("auth", "...");
//     core::DefineCommonFlags(flags);
//     flags.Define("postgres-url", ...);
//     flags.Parse(argc, argv);
//     auto bus = core::StartService("auth", flags);   // exits with one line on failure
//     ...
//   }
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "toolgate/base/flags.h"
#include "toolgate/bus/bus.h"

namespace toolgate::core {

// --nats-url, --nats-user, --nats-password-file, --log-level, --threads, --admin-port,
// --admin-address, --otlp-endpoint.
void DefineCommonFlags(Flags& flags);
// --postgres-url (libpq URI), --postgres-password-file, --pg-pool, --pg-wait-ms (what
// pg::ConnectFromFlags, toolgate/pg/service.h, reads).
void DefinePostgresFlags(Flags& flags);
// --redis-url (redis://[:password@]host:port), --redis-password-file, --redis-pool.
void DefineRedisFlags(Flags& flags);

// Blocks shutdown signals, starts logging and libsodium, starts the admin server (StartAdmin)
// with a readiness check of the NATS connection, starts span export (StartSpanExport), and
// connects to NATS. Exits the process with
// one clear line when NATS cannot be reached or the admin port cannot be bound. A service adds
// readiness checks of its stores with core::ReadinessCheck (admin_server.h).
std::unique_ptr<bus::Bus> StartService(const std::string& name, const Flags& flags);

// Starts the process's admin server on --admin-address:--admin-port once (later calls return
// the first one's URL), logs "admin listening" with the URL it bound, and returns that URL. The
// server runs until the process exits. Exits with one line when the port cannot be bound. Call
// from main's thread, before others start.
const std::string& StartAdmin(const std::string& name, const Flags& flags);

// With --otlp-endpoint set, installs an OTLP exporter (trace/otlp_exporter.h) for the rest of
// the process, its resource named "toolgate-<name>"; once only. Exits with one line when the
// endpoint is not one (trace::CheckOtlpEndpoint).
void StartSpanExport(const std::string& name, const Flags& flags);

// How service `name` connects to NATS: the URL, the user (--nats-user, default name) with the
// password of --nats-password-file when set, and the user's inbox prefix. Exits with one line
// when the password file cannot be read.
bus::BusOptions BusOptionsFromFlags(const std::string& name, const Flags& flags);
// The secret in the file a flag names ("" when the flag is empty). Exits with one line when
// the file cannot be read: a service without its credentials cannot work.
std::string SecretFromFlag(const std::string& name, const Flags& flags, const std::string& flag);

// Prints "<name>: <what>: <detail>" to stderr and exits 1: for bad configuration at start-up.
[[noreturn]] void Die(const std::string& name, const std::string& what, const std::string& detail);

struct RedisAddress {
  std::string host;
  int port = 6379;
  std::string password;
};
// Parses redis://[:password@]host[:port]; nullopt when malformed.
std::optional<RedisAddress> ParseRedisUrl(const std::string& url);

}  // namespace toolgate::core
