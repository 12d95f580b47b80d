#include "invoke_body.h"

#include <simdjson.h>

#include <algorithm>

#include "toolgate/base/crypto.h"
#include "toolgate/base/strings.h"
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

bool PrefersRespondAsync(std::string_view prefer) {
  while (!prefer.empty()) {
    size_t comma = prefer.find(',');
    std::string_view item = prefer.substr(0, comma);
    prefer = comma == std::string_view::npos ? std::string_view() : prefer.substr(comma + 1);
    std::string_view token = TrimAsciiWhitespace(item.substr(0, item.find_first_of("=;")));
    if (AsciiLower(token) == "respond-async") return true;
  }
  return false;
}

bool ParseIdempotencyKey(std::string_view header, std::string* key) {
  std::string_view text = TrimAsciiWhitespace(header);
  std::string out;
  if (text.size() >= 2 && text.front() == '"' && text.back() == '"') {
    text = text.substr(1, text.size() - 2);
    for (size_t i = 0; i < text.size(); ++i) {
      char c = text[i];
      if (c == '\\') {
        if (i + 1 == text.size() || (text[i + 1] != '"' && text[i + 1] != '\\')) return false;
        c = text[++i];
      } else if (c == '"') {
        return false;
      }
      out.push_back(c);
    }
  } else {
    // Bare: what a quoted key could carry, less the quote and escape characters themselves.
    if (text.find_first_of("\"\\") != std::string_view::npos) return false;
    out = std::string(text);
  }
  if (out.empty() || out.size() > kMaxIdempotencyKeyLength) return false;
  for (char c : out) {
    if (c < 0x20 || c > 0x7e) return false;
  }
  *key = std::move(out);
  return true;
}

std::string IdempotencyKeyRefusal() {
  return "Idempotency-Key must be 1 to " + std::to_string(kMaxIdempotencyKeyLength) +
         " printable ASCII characters: a quoted string (\"...\", with \\\" and \\\\ escapes) or "
         "the characters bare, without quotes or backslashes.";
}

std::string InvokeRequestDigest(std::string_view function_id, std::string_view version,
                                const std::string* env_keys, std::string_view body) {
  // Lengths first: no two different requests concatenate to the same bytes ("-" for no
  // X-Env-Keys, which differs from an empty one).
  std::string text;
  for (std::string_view part : {function_id, version}) {
    text += std::to_string(part.size());
    text += ':';
    text += part;
  }
  if (env_keys) {
    text += std::to_string(env_keys->size());
    text += ':';
    text += *env_keys;
  } else {
    text += '-';
  }
  text += body;
  return Sha256(text);
}

}  // namespace toolgate::edge
