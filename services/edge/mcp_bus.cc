#include "mcp_bus.h"

#include "toolgate/base/log.h"
#include "toolgate/base/time.h"
#include "toolgate/core/problem.h"
#include "toolgate/core/subjects.h"

namespace toolgate::edge {
namespace {

// How long a starting replica waits for a running one to hand over the ended sessions.
constexpr int kSyncTimeoutMs = 1000;

// Completes done with the parsed answer, or with an answer holding the bus failure's problem.
template <typename Reply>
ReplyMux::Callback Parsed(std::function<void(Reply)> done) {
  return [done = std::move(done)](Result<bus::Message> answer) {
    Reply reply;
    if (!answer.ok()) {
      log::Warn("bus request failed").Str("error", answer.status().ToString());
      *reply.mutable_problem() = BusFailureProblem(answer.status());
    } else if (!reply.ParseFromString(answer->data)) {
      *reply.mutable_problem() = BusFailureProblem(Status::Internal("malformed answer"));
    }
    done(std::move(reply));
  };
}

}  // namespace

v1::Problem BusFailureProblem(const Status& status) {
  switch (status.code()) {
    case Status::Code::kTimeout:
      return core::MakeProblem("upstream_timeout",
                               "A Toolgate service did not answer in time; retry.");
    case Status::Code::kInternal:
      return core::MakeProblem("internal_error", "Malformed answer on the bus.");
    default:
      return core::MakeProblem(
          "service_unavailable",
          "A Toolgate service needed for this request is not running; retry shortly.");
  }
}

McpBus::McpBus(bus::Bus& bus, ReplyMux& mux, Dispatch dispatch, Credentials credentials,
               EndedSessions& ended, SessionLogLevels& log_levels, int timeout_ms)
    : bus_(bus),
      mux_(mux),
      dispatch_(std::move(dispatch)),
      credentials_(std::move(credentials)),
      ended_(ended),
      log_levels_(log_levels),
      timeout_ms_(timeout_ms) {}

Status McpBus::Start() {
  // Before answering the queue subject ourselves, so our own request cannot reach us.
  auto known = bus_.Request(kMcpSessionsEndedSubject, "", kSyncTimeoutMs);
  v1::McpSessionsEnded list;
  if (known.ok() && list.ParseFromString(known->data)) {
    const int64_t now = NowMs();
    for (const auto& e : list.sessions()) ended_.Add(e.session_nonce(), e.expires_at_ms(), now);
  }
  Status s = bus_.Subscribe(kMcpSessionEndedSubject, "", [this](bus::Message&& m) {
    v1::McpSessionEnded e;
    if (e.ParseFromString(m.data)) ended_.Add(e.session_nonce(), e.expires_at_ms(), NowMs());
  });
  if (!s.ok()) return s;
  s = bus_.Subscribe(core::kMcpClientAnswersSubject, "", [this](bus::Message&& m) {
    v1::McpClientAnswer answer;
    if (answer.ParseFromString(m.data)) {
      mux_.Deliver(answer.reply_subject(), std::move(*answer.mutable_body()));
    }
  });
  if (!s.ok()) return s;
  s = bus_.Subscribe(core::kMcpSessionLogLevelSubject, "", [this](bus::Message&& m) {
    v1::McpSessionLogLevel l;
    if (l.ParseFromString(m.data)) log_levels_.Set(l.session_nonce(), l.level(), l.expires_at_ms());
  });
  if (!s.ok()) return s;
  return bus_.Subscribe(kMcpSessionsEndedSubject, "edge", [this](bus::Message&& m) {
    if (m.reply.empty()) return;
    v1::McpSessionsEnded answer;
    for (const auto& e : ended_.Live(NowMs())) {
      v1::McpSessionEnded* out = answer.add_sessions();
      out->set_session_nonce(e.nonce);
      out->set_expires_at_ms(e.expires_at_ms);
    }
    Status sent = bus_.Publish(m.reply, answer.SerializeAsString());
    if (!sent.ok()) log::Warn("ended sessions not sent").Str("error", sent.ToString());
  });
}

void McpBus::Invoke(v1::InvokeJob job, std::function<void(v1::InvokeReply)> done,
                    NoticeSink notices) {
  dispatch_(std::move(job), std::move(done), std::move(notices));
}

void McpBus::Authenticate(std::string api_key_sha256,
                          std::function<void(v1::AuthenticateReply)> done) {
  credentials_(api_key_sha256, std::move(done));
}

void McpBus::WorkspaceTools(std::string org_id, std::function<void(v1::WorkspaceToolsReply)> done) {
  v1::WorkspaceToolsRequest request;
  request.set_org_id(std::move(org_id));
  mux_.Request(core::kWorkspaceToolsSubject, request.SerializeAsString(), "", timeout_ms_,
               Parsed(std::move(done)));
}

void McpBus::ComputeMedians(std::vector<v1::VersionRef> versions,
                            std::function<void(v1::ComputeMediansReply)> done) {
  auto key = [](const std::string& function_id, const std::string& version) {
    return function_id + "\n" + version;
  };
  const int64_t now = MonotonicUs() / 1000;
  auto answer = std::make_shared<v1::ComputeMediansReply>();
  std::vector<size_t> missing;  // positions in versions
  v1::ComputeMediansRequest request;
  for (size_t i = 0; i < versions.size(); ++i) {
    v1::ComputeMedian* slot = answer->add_medians();
    if (auto cached = medians_.Get(key(versions[i].function_id(), versions[i].version()), now)) {
      *slot = std::move(*cached);
      continue;
    }
    missing.push_back(i);
    *request.add_versions() = versions[i];
  }
  if (missing.empty()) return done(std::move(*answer));
  const uint64_t generation = medians_.generation();
  mux_.Request(
      core::kComputeMediansSubject, request.SerializeAsString(), "", timeout_ms_,
      Parsed<v1::ComputeMediansReply>([this, answer, missing, generation, key, now,
                                       done = std::move(done)](v1::ComputeMediansReply fetched) {
        if (fetched.has_problem() ||
            static_cast<size_t>(fetched.medians_size()) != missing.size()) {
          v1::ComputeMediansReply failed;
          *failed.mutable_problem() = fetched.has_problem()
                                          ? fetched.problem()
                                          : BusFailureProblem(Status::Internal("medians mismatch"));
          return done(std::move(failed));
        }
        for (size_t j = 0; j < missing.size(); ++j) {
          const v1::ComputeMedian& m = fetched.medians(static_cast<int>(j));
          // A version without a median yet is asked again next time: its first
          // calls give it one at once.
          if (m.samples() > 0) {
            medians_.Put(key(m.function_id(), m.version()), m, now + kMedianTtlMs, generation);
          }
          *answer->mutable_medians(static_cast<int>(missing[j])) = m;
        }
        done(std::move(*answer));
      }));
}

void McpBus::StoreListing(const v1::McpListingSet& listing,
                          std::function<void(v1::McpListingSetReply)> done) {
  mux_.Request(core::kMcpListingSubject, listing.SerializeAsString(), "", timeout_ms_,
               Parsed(std::move(done)));
}

std::string McpBus::ExpectClientAnswer(int timeout_ms,
                                       std::function<void(std::optional<std::string>)> done) {
  // A reply subject of this replica's; an answer another replica receives is relayed on
  // tg.edge.mcp_client_answers.
  return mux_.Expect(timeout_ms, [done = std::move(done)](Result<bus::Message> m) {
    done(m.ok() ? std::optional<std::string>(std::move(m->data)) : std::nullopt);
  });
}

void McpBus::DeliverClientAnswer(const std::string& subject, std::string body) {
  if (mux_.Owns(subject)) return mux_.Deliver(subject, std::move(body));
  // Another replica waits for it: every edge hears the relay, the one that waits takes it.
  v1::McpClientAnswer answer;
  answer.set_reply_subject(subject);
  answer.set_body(std::move(body));
  Status s = bus_.Publish(core::kMcpClientAnswersSubject, answer.SerializeAsString());
  if (!s.ok()) log::Warn("client answer not relayed").Str("error", s.ToString());
}

void McpBus::After(int ms, std::function<void()> fn) {
  // The mux's deadline table is the edge's one timer: an expectation nobody answers.
  mux_.Expect(ms, [fn = std::move(fn)](Result<bus::Message>) { fn(); });
}

void McpBus::EndSession(const v1::McpSessionEnded& ended) {
  Status s = bus_.Publish(kMcpSessionEndedSubject, ended.SerializeAsString());
  // This replica has it already; should the broadcast fail, the others accept the session
  // until it expires.
  if (!s.ok()) log::Warn("session end not broadcast").Str("error", s.ToString());
}

void McpBus::SetSessionLogLevel(const v1::McpSessionLogLevel& level) {
  Status s = bus_.Publish(core::kMcpSessionLogLevelSubject, level.SerializeAsString());
  // This replica has it already; the others stream no logs for the session until it sets its
  // level again.
  if (!s.ok()) log::Warn("session log level not broadcast").Str("error", s.ToString());
}

}  // namespace toolgate::edge
