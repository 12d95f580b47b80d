// Version strings of published functions (contract section 3).
//
// A version matches ^[0-9]{1,9}(\.[0-9]{1,9}){0,3}$. Versions compare numerically part by part,
// missing parts counting as 0, so 1.10 > 1.9 > 1.2.3 > 1.2 and 1.0 == 1.0.0.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>

namespace toolgate::core {

struct Version {
  std::array<uint32_t, 4> parts{};  // missing parts are 0
  int count = 0;                    // how many parts the string had
};

// nullopt when text is not a valid version string.
std::optional<Version> ParseVersion(std::string_view text);
// <0, 0, >0 like strcmp.
int CompareVersions(const Version& a, const Version& b);

}  // namespace toolgate::core
