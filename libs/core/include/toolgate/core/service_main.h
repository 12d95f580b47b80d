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

// --nats-url, --log-level, --threads.
void DefineCommonFlags(Flags& flags);
// --postgres-url (libpq URI), --pg-pool.
void DefinePostgresFlags(Flags& flags);
// --redis-url (redis://[:password@]host:port), --redis-pool.
void DefineRedisFlags(Flags& flags);

// Blocks shutdown signals, starts logging and libsodium, and connects to NATS. Exits the process
// with one clear line when NATS cannot be reached.
std::unique_ptr<bus::Bus> StartService(const std::string& name, const Flags& flags);

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
