// The wire names of runtimes and compute types: what the API accepts and shows, what the store
// keeps, and the last two tokens of an executor subject. On the bus they travel as the protobuf
// enums v1::Runtime and v1::ComputeType; these functions are the one place a name becomes an
// enum and back. Pure, thread-safe.
#pragma once

#include <optional>
#include <string_view>

#include "toolgate/v1/toolgate.pb.h"

namespace toolgate::core {

// "lua", "python", "javascript"; "" for RUNTIME_UNSPECIFIED or an unknown value.
std::string_view RuntimeName(v1::Runtime runtime);
// The enum of a runtime name; nullopt for any other text (case matters, as in the API).
std::optional<v1::Runtime> ParseRuntime(std::string_view name);

// "CPU", "GPU"; "" for COMPUTE_TYPE_UNSPECIFIED or an unknown value.
std::string_view ComputeTypeName(v1::ComputeType compute);
std::optional<v1::ComputeType> ParseComputeType(std::string_view name);
// The executor pool of a compute type: "cpu" or "gpu"; "" when unspecified.
std::string_view PoolName(v1::ComputeType compute);

}  // namespace toolgate::core
