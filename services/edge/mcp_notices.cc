#include "mcp_notices.h"

#include <array>
#include <charconv>
#include <cmath>

#include "toolgate/base/json.h"
#include "toolgate/base/json_writer.h"

namespace toolgate::edge {
namespace {

constexpr std::array<std::string_view, 8> kLevels = {"debug", "info",     "notice", "warning",
                                                     "error", "critical", "alert",  "emergency"};

// A JSON number for a double: the shortest text that reads back the same; 0 for what JSON
// cannot hold (the executor passes on only finite numbers).
std::string Number(double value) {
  if (!std::isfinite(value)) return "0";
  char buf[32];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, value);
  return ec == std::errc() ? std::string(buf, end) : "0";
}

}  // namespace

std::optional<int> LogLevelRank(std::string_view level) {
  for (size_t i = 0; i < kLevels.size(); ++i) {
    if (kLevels[i] == level) return static_cast<int>(i);
  }
  return std::nullopt;
}

std::string MetaMember(const McpMessage& message, std::string_view key) {
  std::string meta = ParamJson(message, "_meta");
  if (meta.empty()) return {};
  auto doc = ParseJson(meta);
  simdjson::dom::object obj;
  std::string out;
  if (doc.ok() && doc->root.get_object().get(obj) == simdjson::SUCCESS) GetRaw(obj, key, &out);
  return out;
}

std::string NotificationFor(const v1::HandlerNotice& notice, const NoticeRequest& request) {
  JsonWriter w;
  w.BeginObject().Field("jsonrpc", "2.0");
  if (notice.has_progress()) {
    if (request.progress_token_json.empty()) return {};
    const v1::ProgressNotice& p = notice.progress();
    w.Field("method", "notifications/progress").Key("params").BeginObject();
    w.Key("progressToken").Raw(request.progress_token_json);
    w.Key("progress").Raw(Number(p.progress()));
    if (p.has_total()) w.Key("total").Raw(Number(p.total()));
    if (!p.message().empty()) w.Field("message", p.message());
  } else if (notice.has_log()) {
    const v1::LogNotice& l = notice.log();
    auto rank = LogLevelRank(l.level());
    if (!request.min_log_rank || !rank || *rank < *request.min_log_rank) return {};
    w.Field("method", "notifications/message").Key("params").BeginObject();
    w.Field("level", l.level());
    if (!l.logger().empty()) w.Field("logger", l.logger());
    // The data comes from inside the sandbox: it is passed on only as the JSON value it claims
    // to be, re-encoded, never as raw text.
    auto data = ParseJson(l.data_json());
    if (!data.ok()) return {};
    w.Key("data").Raw(ToJson(data->root));
  } else {
    return {};
  }
  return w.EndObject().EndObject().Take();
}

}  // namespace toolgate::edge
