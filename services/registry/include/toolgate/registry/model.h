// The registry's names for the function model, which lives in libs/core so that the edge
// decides invocations on the same types (toolgate/core/function_model.h).
#pragma once

#include "toolgate/core/function_model.h"

namespace toolgate::registry {

using core::CachedFunction;
using core::FindVersion;
using core::LatestVersion;
using core::NormalizeFunctionId;
using core::PublishedVersion;

}  // namespace toolgate::registry
