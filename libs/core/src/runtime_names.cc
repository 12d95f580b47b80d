#include "toolgate/core/runtime_names.h"

namespace toolgate::core {
namespace {

struct RuntimeEntry {
  v1::Runtime runtime;
  std::string_view name;
};
constexpr RuntimeEntry kRuntimes[] = {
    {v1::RUNTIME_LUA, "lua"},
    {v1::RUNTIME_PYTHON, "python"},
    {v1::RUNTIME_JAVASCRIPT, "javascript"},
};

struct ComputeEntry {
  v1::ComputeType compute;
  std::string_view name;
  std::string_view pool;
};
constexpr ComputeEntry kComputeTypes[] = {
    {v1::COMPUTE_TYPE_CPU, "CPU", "cpu"},
    {v1::COMPUTE_TYPE_GPU, "GPU", "gpu"},
};

}  // namespace

std::string_view RuntimeName(v1::Runtime runtime) {
  for (const auto& e : kRuntimes) {
    if (e.runtime == runtime) return e.name;
  }
  return {};
}

std::optional<v1::Runtime> ParseRuntime(std::string_view name) {
  for (const auto& e : kRuntimes) {
    if (e.name == name) return e.runtime;
  }
  return std::nullopt;
}

std::string_view ComputeTypeName(v1::ComputeType compute) {
  for (const auto& e : kComputeTypes) {
    if (e.compute == compute) return e.name;
  }
  return {};
}

std::optional<v1::ComputeType> ParseComputeType(std::string_view name) {
  for (const auto& e : kComputeTypes) {
    if (e.name == name) return e.compute;
  }
  return std::nullopt;
}

std::string_view PoolName(v1::ComputeType compute) {
  for (const auto& e : kComputeTypes) {
    if (e.compute == compute) return e.pool;
  }
  return {};
}

}  // namespace toolgate::core
