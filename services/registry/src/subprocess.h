// Running a short-lived tool (a compiler's syntax check) with input and a deadline.
// Internal to the registry library.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "toolgate/base/status.h"

namespace toolgate::registry {

struct ProcessOutput {
  int exit_code = 0;   // 128 + signal when killed by one
  std::string output;  // stdout and stderr interleaved, at most max_output bytes
};

// Runs argv[0] (searched in PATH when it has no '/') with stdin reading `input`, an environment
// holding only PATH, and stdout+stderr captured. Returns NotFound when the program does not
// exist, Timeout (after killing it) when it runs past timeout_ms, Unavailable when it cannot be
// started. Thread-safe; never touches the caller's signal dispositions.
Result<ProcessOutput> RunProcess(const std::vector<std::string>& argv, std::string_view input,
                                 int timeout_ms, size_t max_output = 64 * 1024);

}  // namespace toolgate::registry
