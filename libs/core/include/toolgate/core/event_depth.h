// How deeply an invocation's event may nest (contract section 3, row 5).
//
// The runtimes decode an event recursively before the handler runs (CPython's json module fails
// a little under 1,000 levels), so a deeper event would fail in the worker after the hold, and
// be charged for a handler that never ran. The edge measures the depth when it parses the body,
// and the registry's stage refuses a deeper event with the other body checks: 400, nothing held.
#pragma once

#include <cstddef>
#include <string>

namespace toolgate::core {

// Levels of arrays and objects in an event, the event itself being level 1: {} and "text" are
// within 1, {"a": [1]} nests 2 levels.
inline constexpr size_t kMaxEventDepth = 64;

// The detail of the 400 invalid_event that refuses a deeper event.
inline std::string EventTooDeepDetail() {
  return "\"event\" nests deeper than " + std::to_string(kMaxEventDepth) +
         " levels of arrays and objects (the event itself is level 1); send a flatter event.";
}

}  // namespace toolgate::core
