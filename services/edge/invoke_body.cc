#include "invoke_body.h"

#include <simdjson.h>

#include <algorithm>

#include "toolgate/core/event_depth.h"

namespace toolgate::edge {
namespace {

// The body object is one level above the event.
constexpr size_t kMaxBodyDepth = core::kMaxEventDepth + 1;

}  // namespace

InvokeBody ParseInvokeBody(std::string_view body) {
  // The DOM parse validates the whole document (on-demand parsing is lazy and would accept
  // trailing garbage) and measures its depth as it goes; the on-demand pass then yields the
  // event's original bytes, so the handler receives the event exactly as sent, numbers and key
  // order included.
  thread_local simdjson::dom::parser dom_parser;
  thread_local simdjson::ondemand::parser od_parser;
  // Set once per thread: the parser keeps its depth when it grows for a larger body. Failing to
  // allocate is answered as the parse itself would answer it.
  if (dom_parser.max_depth() != kMaxBodyDepth &&
      dom_parser.allocate(std::max<size_t>(body.size(), 4096), kMaxBodyDepth) !=
          simdjson::SUCCESS) {
    return {v1::BODY_INVALID_JSON, {}};
  }
  simdjson::padded_string padded(body);

  simdjson::dom::element root;
  if (auto error = dom_parser.parse(padded).get(root)) {
    return {error == simdjson::DEPTH_ERROR ? v1::BODY_EVENT_TOO_DEEP : v1::BODY_INVALID_JSON, {}};
  }
  simdjson::dom::object obj;
  simdjson::dom::element event;
  if (root.get_object().get(obj) || obj["event"].get(event)) return {v1::BODY_MISSING_EVENT, {}};
  if (!event.is_object() && !event.is_string()) return {v1::BODY_INVALID_EVENT, {}};

  simdjson::ondemand::document doc;
  simdjson::ondemand::value value;
  if (od_parser.iterate(padded).get(doc) || doc["event"].get(value)) {
    return {v1::BODY_INVALID_JSON, {}};
  }
  std::string_view raw;
  if (event.is_object()) {
    simdjson::ondemand::object event_obj;
    if (value.get_object().get(event_obj) || event_obj.raw_json().get(raw)) {
      return {v1::BODY_INVALID_JSON, {}};
    }
  } else {
    raw = value.raw_json_token();
  }
  while (!raw.empty() &&
         (raw.back() == ' ' || raw.back() == '\n' || raw.back() == '\r' || raw.back() == '\t')) {
    raw.remove_suffix(1);
  }
  return {v1::BODY_OK, std::string(raw)};
}

bool ParseMaxCost(std::string_view text, int64_t* out) {
  if (text.empty() || text.size() > 13) return false;
  int64_t v = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + (c - '0');
  }
  if (v < 1 || v > kMaxCostHeaderMicroUsd) return false;
  *out = v;
  return true;
}

std::string MaxCostRefusal() {
  return "X-Toolgate-Max-Cost must be a whole number of micro-USD from 1 to " +
         std::to_string(kMaxCostHeaderMicroUsd) + ".";
}

}  // namespace toolgate::edge
