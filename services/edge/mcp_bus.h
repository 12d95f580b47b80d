// McpBus: the MCP endpoints' McpBackend over NATS, and this replica's part in the list of ended
// sessions (mcp_session.h):
//   tg.events.mcp_session_ended  (every replica)  McpSessionEnded -> EndedSessions::Add
//   tg.edge.mcp_sessions_ended   (queue "edge")   empty -> McpSessionsEnded, for a starting replica
//   tg.events.mcp_session_log_level (every replica) McpSessionLogLevel -> SessionLogLevels::Set
//   tg.edge.mcp_client_answers   (every replica)  McpClientAnswer -> ReplyMux::Deliver
// Thread-safe.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "mcp_endpoint.h"
#include "mcp_session.h"
#include "reply_mux.h"
#include "toolgate/base/bounded_ttl_cache.h"
#include "toolgate/bus/bus.h"
#include "toolgate/core/subjects.h"

namespace toolgate::edge {

using core::kMcpSessionEndedSubject;
using core::kMcpSessionsEndedSubject;

// What a failed bus round trip means to a client: 504 upstream_timeout after a timeout, 503
// service_unavailable otherwise (no responders, NATS down), 500 for a malformed answer.
v1::Problem BusFailureProblem(const Status& status);

class McpBus : public McpBackend {
 public:
  // Sends an InvokeJob along the chain and reports its final reply (the edge's own dispatch).
  using Dispatch =
      std::function<void(v1::InvokeJob, std::function<void(v1::InvokeReply)>, NoticeSink)>;
  // Decides a presented credential from the edge's key cache (InvokeDecider::Credential), so an
  // MCP request costs no round trip to auth when its key or token is cached.
  using Credentials =
      std::function<void(const std::string&, std::function<void(v1::AuthenticateReply)>)>;

  // Every reference must outlive this object. timeout_ms bounds the authenticate and registry
  // round trips.
  McpBus(bus::Bus& bus, ReplyMux& mux, Dispatch dispatch, Credentials credentials,
         EndedSessions& ended, SessionLogLevels& log_levels, int timeout_ms);

  // Copies the ended sessions of a running replica (none is fine: then no session has ended
  // that any replica remembers), then subscribes to both subjects. Call once, after the mux
  // has started.
  Status Start();

  void Invoke(v1::InvokeJob job, std::function<void(v1::InvokeReply)> done,
              NoticeSink notices) override;
  void Authenticate(std::string api_key_sha256,
                    std::function<void(v1::AuthenticateReply)> done) override;
  void WorkspaceTools(std::string org_id,
                      std::function<void(v1::WorkspaceToolsReply)> done) override;
  void EndSession(const v1::McpSessionEnded& ended) override;
  void SetSessionLogLevel(const v1::McpSessionLogLevel& level) override;
  void StoreListing(const v1::McpListingSet& listing,
                    std::function<void(v1::McpListingSetReply)> done) override;
  std::string ExpectClientAnswer(int timeout_ms,
                                 std::function<void(std::optional<std::string>)> done) override;
  void DeliverClientAnswer(const std::string& subject, std::string body) override;
  void After(int ms, std::function<void()> fn) override;
  // Answered from a cache of billing's answers (kMedianTtlMs) where it can be; the versions it
  // misses are asked in one request.
  void ComputeMedians(std::vector<v1::VersionRef> versions,
                      std::function<void(v1::ComputeMediansReply)> done) override;

  // A median changes slowly; a minute keeps tools/list from asking billing each time.
  static constexpr int64_t kMedianTtlMs = 60'000;
  static constexpr size_t kMedianCacheEntries = 10'000;

 private:
  bus::Bus& bus_;
  ReplyMux& mux_;
  Dispatch dispatch_;
  Credentials credentials_;
  EndedSessions& ended_;
  SessionLogLevels& log_levels_;
  int timeout_ms_;
  BoundedTtlCache<std::string, v1::ComputeMedian> medians_{kMedianCacheEntries};
};

}  // namespace toolgate::edge
