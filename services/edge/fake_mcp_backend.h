// FakeMcpBackend: an McpBackend for the MCP endpoint's tests, answering every call at once on the
// calling thread and recording what it was asked. Not thread-safe (the tests are single-threaded).
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "mcp_endpoint.h"

namespace toolgate::edge {

// Answers every call at once: invocations with the handler `handler` (event -> InvokeReply),
// authentication with `principal` or `auth_problem`, the registry with `tools`.
class FakeMcpBackend : public McpBackend {
 public:
  void Invoke(v1::InvokeJob job, std::function<void(v1::InvokeReply)> done,
              NoticeSink sink) override {
    jobs.push_back(job);
    EXPECT_EQ(job.stream_notices(), static_cast<bool>(sink));
    if (sink) {
      for (const v1::HandlerNotice& n : notices) sink(n);
    }
    done(handler(job));
  }
  void Authenticate(std::string api_key_sha256,
                    std::function<void(v1::AuthenticateReply)> done) override {
    authenticated.push_back(api_key_sha256);
    v1::AuthenticateReply reply;
    if (auth_problem) {
      *reply.mutable_problem() = *auth_problem;
    } else {
      *reply.mutable_principal() = principal;
    }
    done(reply);
  }
  void WorkspaceTools(std::string org_id,
                      std::function<void(v1::WorkspaceToolsReply)> done) override {
    orgs.push_back(org_id);
    done(tools);
  }
  void EndSession(const v1::McpSessionEnded& ended) override { ended_sessions.push_back(ended); }
  // Answers from medians (keyed "function_id version"; absent: no samples), or with
  // medians_problem when it is set.
  void ComputeMedians(std::vector<v1::VersionRef> versions,
                      std::function<void(v1::ComputeMediansReply)> done) override {
    v1::ComputeMediansReply reply;
    if (!medians_problem.code().empty()) {
      *reply.mutable_problem() = medians_problem;
      return done(std::move(reply));
    }
    for (const v1::VersionRef& v : versions) {
      median_requests.push_back(v);
      v1::ComputeMedian* m = reply.add_medians();
      m->set_function_id(v.function_id());
      m->set_version(v.version());
      m->set_max_compute_micro_usd(max_compute_micro_usd);
      auto it = medians.find(v.function_id() + " " + v.version());
      if (it != medians.end()) {
        m->set_median_compute_micro_usd(it->second);
        m->set_samples(7);
      }
    }
    done(std::move(reply));
  }
  void SetSessionLogLevel(const v1::McpSessionLogLevel& level) override {
    log_levels.push_back(level);
  }
  std::string ExpectClientAnswer(int,
                                 std::function<void(std::optional<std::string>)> done) override {
    std::string subject = "_INBOX.edge.test." + std::to_string(client_waits.size());
    client_waits[subject] = std::move(done);
    return subject;
  }
  void DeliverClientAnswer(const std::string& subject, std::string body) override {
    auto it = client_waits.find(subject);
    if (it == client_waits.end()) return;
    auto done = std::move(it->second);
    client_waits.erase(it);
    done(std::move(body));
  }
  void After(int ms, std::function<void()> fn) override { timers.emplace_back(ms, std::move(fn)); }
  void StoreListing(const v1::McpListingSet& listing,
                    std::function<void(v1::McpListingSetReply)> done) override {
    stored_listings.push_back(listing);
    done(store_listing_reply);
  }

  std::function<v1::InvokeReply(const v1::InvokeJob&)> handler;
  v1::Principal principal;
  std::optional<v1::Problem> auth_problem;
  v1::WorkspaceToolsReply tools;
  std::map<std::string, int64_t> medians;  // "function_id version" -> median compute
  int64_t max_compute_micro_usd = 0;       // every version's, in ComputeMedians
  v1::Problem medians_problem;
  std::vector<v1::VersionRef> median_requests;

  std::vector<v1::InvokeJob> jobs;
  std::vector<std::string> authenticated;
  std::vector<std::string> orgs;
  std::vector<v1::McpSessionEnded> ended_sessions;
  std::vector<v1::McpSessionLogLevel> log_levels;
  std::vector<v1::HandlerNotice> notices;  // what every handler reports while it runs
  std::vector<v1::McpListingSet> stored_listings;
  std::map<std::string, std::function<void(std::optional<std::string>)>> client_waits;
  std::vector<std::pair<int, std::function<void()>>> timers;  // After's, fired by the test
  v1::McpListingSetReply store_listing_reply;
};

inline v1::InvokeReply HandlerAnswer(int status, std::string body) {
  v1::InvokeReply reply;
  reply.mutable_result()->set_status_code(status);
  reply.mutable_result()->set_body(std::move(body));
  reply.mutable_result()->mutable_summary()->set_execution_id("exec-1");
  return reply;
}

}  // namespace toolgate::edge
