// A running handler's notices (context.progress, context.log; toolgate.proto HandlerNotice) as
// the MCP notifications a client asked for: notifications/progress for a request that carries
// _meta.progressToken, notifications/message at or above the log level the client set (a
// session's logging/setLevel, or a stateless request's _meta "io.modelcontextprotocol/logLevel").
// Pure functions; thread-safe.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "mcp_protocol.h"
#include "toolgate/v1/toolgate.pb.h"

namespace toolgate::edge {

inline constexpr std::string_view kMetaLogLevel = "io.modelcontextprotocol/logLevel";

// The rank of an RFC 5424 level name as MCP uses them (debug 0 ... emergency 7), or nullopt for
// any other string.
std::optional<int> LogLevelRank(std::string_view level);

// The member key of a request's params._meta as compact JSON, or "" when absent.
std::string MetaMember(const McpMessage& message, std::string_view key);

// What a request asked to be told while it runs.
struct NoticeRequest {
  std::string progress_token_json;  // "" when no progress is wanted
  std::optional<int> min_log_rank;  // nullopt when no logs are wanted
  bool Any() const { return !progress_token_json.empty() || min_log_rank.has_value(); }
};

// The notification for notice under request, or "" when the client did not ask for it.
std::string NotificationFor(const v1::HandlerNotice& notice, const NoticeRequest& request);

}  // namespace toolgate::edge
