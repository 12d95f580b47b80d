// `toolgate trace TRACE_ID [--data-dir DIR]`: one call's path through the services, from the
// span lines every hop logs (libs/trace), in start order.
#pragma once

#include <string>
#include <vector>

namespace toolgate::cli {

// args: the arguments after "trace". Returns the process exit code.
int RunTrace(const std::vector<std::string>& args);

}  // namespace toolgate::cli
