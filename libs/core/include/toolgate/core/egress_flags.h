// The operator's egress flags: whether handlers may reach out at all, and the networks they may
// or may never reach. The executor reads them (its egress gateway); `toolgate up` takes the same
// flags and hands them to the executors it starts, so both define them here, once.
#pragma once

#include <array>
#include <string_view>

#include "toolgate/base/flags.h"

namespace toolgate::core {

// The repeatable CIDR flags, in the order DefineOperatorEgressFlags defines them.
inline constexpr std::array<std::string_view, 2> kEgressCidrFlagNames = {"egress-allow-cidr",
                                                                         "egress-deny-cidr"};

// Defines --no-egress and the flags of kEgressCidrFlagNames with their help. Defines only: the
// values are checked by their readers (core::Cidr::Parse).
void DefineOperatorEgressFlags(Flags& flags);

}  // namespace toolgate::core
