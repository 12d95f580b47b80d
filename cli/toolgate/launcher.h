// `toolgate up`: the embedded default. Starts NATS, Redis and a PostgreSQL cluster under one data
// directory, then every service, supervises them, and shuts everything down in order on SIGINT
// or SIGTERM. Data survives a restart; ports not given by flags are picked free, so two instances
// on one machine never collide.
#pragma once

#include <string>
#include <vector>

#include "toolgate/base/flags.h"
#include "toolgate/base/status.h"

namespace toolgate::cli {

// The flags of `toolgate up` (each also its TOOLGATE_* environment variable, as Flags reads
// them). Exposed for tests; RunUp defines and parses them itself.
void DefineUpFlags(Flags& flags);

// What `toolgate up` hands its services of its own flags, so that an operator sets them once.
struct PassedOnFlags {
  std::vector<std::string> every_service;  // --otlp-endpoint URL, when set
  // --no-egress, then each --egress-allow-cidr and --egress-deny-cidr, in the order given
  std::vector<std::string> executor;
  // Checkout funding's --stripe-secret-key-file and --stripe-webhook-secret-file (absolute
  // paths), --stripe-api-base and --public-url, each when set
  std::vector<std::string> billing;
};

// The passed-on flags of flags (parsed, defined by DefineUpFlags). InvalidArgument naming the
// flag for a malformed CIDR or OTLP endpoint, or for --funding checkout without both Stripe
// secret files, so that `up` refuses before it starts anything instead of a service failing to
// start. Pure but for making the secret files' paths absolute.
Result<PassedOnFlags> PassOnFlags(const Flags& flags);

// Billing's --funding for flags (parsed, defined by DefineUpFlags): "demo" with --dev-funding
// or --demo, else --funding (grants by default). InvalidArgument for an unknown mode, for
// --funding demo without either flag (play money must be asked for as such), and for checkout
// with them. Pure.
Result<std::string> FundingFor(const Flags& flags);

// args: the arguments after "up". Returns the process exit code.
int RunUp(const std::vector<std::string>& args);

// `toolgate status [--data-dir DIR]`: whether a launcher runs on DIR, its URL, and each child
// with its pid (from DIR/run/state.json). Returns 0 when it runs, 1 when not.
int RunStatus(const std::vector<std::string>& args);

// `toolgate down [--data-dir DIR]`: stops the launcher running on DIR (started with `toolgate up
// --detach`, or any other) and returns once it and every child are gone. 0 also when none ran.
int RunDown(const std::vector<std::string>& args);

// `toolgate admin create --email E [--password-file F] [--data-dir DIR]`: creates a platform
// operator (docs/operations.md "Operators") on the database of the system running on DIR, by
// running `toolgate-auth create-operator` with DIR's PostgreSQL credentials; it prints the
// generated password once unless F names one. Returns the process exit code: 1 when no system
// runs on DIR or the email is taken, 2 for bad arguments.
int RunAdminCreate(const std::vector<std::string>& args);

// `toolgate keys init [--dir DIR]`: creates in DIR (default ./keys) what a cluster needs and
// `toolgate up` keeps in DATA/keys: the secrets master key, the executor pool's key pair, the
// edges' MCP session key, and the PostgreSQL, Redis and per-user NATS passwords (0600; the
// public key 0644). Existing files are kept, so running it again is harmless. Prints each file
// and how to load them into Kubernetes Secrets. Returns the process exit code.
int RunKeysInit(const std::vector<std::string>& args);

}  // namespace toolgate::cli
