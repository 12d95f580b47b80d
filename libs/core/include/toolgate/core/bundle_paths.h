// Bundle paths: the rules every path and symbolic link inside a version's bundle (.tar.gz) must
// keep, in one place for the registry, which checks a bundle before storing it
// (registry/bundle_check.h), and the executor, which checks it again as it unpacks it
// (executor/bundle_unpack.h). Pure functions over text: nothing here touches a file.
//
// Failures are InvalidArgument whose message is the reason alone ("a path may not leave the
// bundle"); callers put the entry's name in front.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "toolgate/base/status.h"

namespace toolgate::core {

// The components of a path inside a bundle: "./a//b/" is {"a", "b"}, "." is {} (empty and "."
// components are skipped). Refused: an absolute path, a ".." component (even one that would
// stay inside: archives have no reason to write one), control characters.
Result<std::vector<std::string>> SplitBundlePath(std::string_view path);

// parts[0..n) joined with '/' ("a/b"); all of them when n is larger.
std::string JoinBundlePath(const std::vector<std::string>& parts, size_t n);

// The target of the symbolic link whose path is `link` (its components), resolved lexically
// from the link's directory: every path the resolution passes through, joined, the target
// last (a link among them could lead elsewhere than the text says, which the caller checks
// against the links it knows). Refused: an empty or absolute target, one that climbs above the
// bundle's root.
Result<std::vector<std::string>> ResolveBundleLink(const std::vector<std::string>& link,
                                                   std::string_view target);

// The entry file of a bundle of runtime ("python", "javascript", "lua") that names none:
// handler.py, handler.js, handler.lua.
std::string DefaultBundleHandler(std::string_view runtime);

}  // namespace toolgate::core
