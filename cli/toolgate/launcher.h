// `toolgate up`: the embedded default. Starts NATS, Redis and a PostgreSQL cluster under one data
// directory, then every service, supervises them, and shuts everything down in order on SIGINT
// or SIGTERM. Data survives a restart; ports not given by flags are picked free, so two instances
// on one machine never collide.
#pragma once

#include <string>
#include <vector>

namespace toolgate::cli {

// args: the arguments after "up". Returns the process exit code.
int RunUp(const std::vector<std::string>& args);

}  // namespace toolgate::cli
