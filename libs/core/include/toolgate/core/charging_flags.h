// The flags that set what an invocation costs and how much an organization may run at once.
// The billing service reads them (billing/config.h); `toolgate up` takes the same flags and
// hands their values to the billing service it starts, so both define them here, once.
#pragma once

#include <array>
#include <string_view>

#include "toolgate/base/flags.h"

namespace toolgate::core {

// The flags' names, in the order DefineChargingFlags defines them.
inline constexpr std::array<std::string_view, 7> kChargingFlagNames = {
    "cpu-rate",
    "gpu-rate",
    "commission-percent",
    "rate-limit-per-key",
    "rate-limit-burst",
    "concurrency-per-org",
    "uncharged-timeout-s-per-hour"};

// Defines every flag of kChargingFlagNames with its default (the rates of cost.h) and help.
// Defines only: the billing service validates the values when it starts.
void DefineChargingFlags(Flags& flags);

}  // namespace toolgate::core
