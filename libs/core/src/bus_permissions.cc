#include "toolgate/core/bus_permissions.h"

#include "toolgate/bus/bus.h"

namespace toolgate::core {
namespace {

// Every stage may answer the edge at InvokeJob.edge_reply, which it received as data (or as the
// reply subject of the message before), not always as a request of its own.
constexpr const char* kEdgeReplies = "_INBOX.edge.>";
// Every service answers the launcher's health requests.
constexpr const char* kLauncherReplies = "_INBOX.launcher.>";
// The registry and billing answer auth's requests (OAuth consent and grants).
constexpr const char* kAuthReplies = "_INBOX.auth.>";
// Auth answers billing's organization lookups (operators' credit grants and payouts), the
// registry its function views (the names in an earnings statement).
constexpr const char* kBillingReplies = "_INBOX.billing.>";

std::vector<BusUser> MakeUsers() {
  return {
      // The edge decides keys and versions from its caches and sends each job to the first
      // stage that has work for it; the invalidation broadcasts reach it like every cache. An MCP
      // client's answer that reached the wrong replica is relayed to all of them.
      {"edge",
       {"tg.invoke.secrets", "tg.invoke.billing", "tg.auth.key_lookup", "tg.auth.keys_used",
        "tg.registry.function_view", "tg.auth.authenticate", "tg.auth.http", "tg.registry.http",
        "tg.secrets.http", "tg.billing.http", "tg.registry.workspace_tools",
        "tg.registry.mcp_listing", "tg.billing.compute_medians", "tg.health.*",
        "tg.events.mcp_session_ended", "tg.edge.mcp_sessions_ended",
        "tg.events.mcp_session_log_level", "tg.edge.mcp_client_answers"},
       {"_INBOX.edge.>", "tg.events.mcp_session_ended", "tg.edge.mcp_sessions_ended",
        "tg.edge.mcp_client_answers", "tg.events.mcp_session_log_level", "tg.events.key_revoked",
        "tg.events.function_changed", "tg.events.workspace_changed"},
       /*allow_responses=*/true},
      // Auth asks the registry whether an OAuth client may be granted a function's endpoint, and
      // billing what its grants have spent; it answers billing's organization lookups.
      {"auth",
       {"tg.events.key_revoked", "tg.registry.function_view", "tg.billing.grant_usage",
        kEdgeReplies, kLauncherReplies, kBillingReplies},
       {"tg.auth.key_lookup", "tg.auth.keys_used", "tg.auth.authenticate", "tg.auth.http",
        "tg.auth.organization_lookup", "tg.health.auth", "tg.events.key_revoked", "_INBOX.auth.>"}},
      {"registry",
       {"tg.events.function_changed", "tg.events.workspace_changed", kEdgeReplies, kLauncherReplies,
        kAuthReplies, kBillingReplies,
        // Code for the executors' cache misses: replies of their main connection's requests
        // (<prefix>.<nuid>.<n>), never the settler's inbox (<prefix>.settle.<nuid>.…).
        "_INBOX.executor.*.*"},
       {"tg.registry.function_view", "tg.registry.code", "tg.registry.http",
        "tg.registry.workspace_tools", "tg.registry.mcp_listing", "tg.health.registry",
        "tg.events.execution", "tg.events.function_changed", "tg.events.workspace_changed",
        "_INBOX.registry.>"}},
      {"secrets",
       {"tg.invoke.billing", "tg.events.secret_changed", kEdgeReplies, kLauncherReplies},
       {"tg.invoke.secrets", "tg.secrets.http", "tg.health.secrets", "tg.events.secret_changed",
        "_INBOX.secrets.>"}},
      // Billing answers the edge, sends jobs to the executor pools and the settlement acks to
      // the executors' inboxes; it asks the registry for the names of a publisher's functions.
      // It queues asynchronous executions in JetStream (bus/jet_stream.h): the API, the
      // acknowledgements of what it fetched, and the queue's subjects; the API's replies and the
      // fetched messages come to its own inbox.
      {"billing",
       {"tg.exec.*.*", "tg.events.execution", "tg.auth.organization_lookup",
        "tg.registry.function_view", kEdgeReplies, kLauncherReplies, kAuthReplies,
        "_INBOX.executor.settle.>", "$JS.API.>", "$JS.ACK.>", "tg.async.queue.*", "tg.exec.cancel"},
       {"tg.invoke.billing", "tg.billing.settle.*", "tg.billing.unserved.*", "tg.billing.http",
        "tg.billing.grant_usage", "tg.billing.compute_medians", "tg.health.billing",
        "_INBOX.billing.>"}},
      // The executor sends results to billing and its dispatch notices to the edge; it reads its
      // own inbox (settlement acks under .settle, code replies) but cannot write to it.
      {"executor",
       {"tg.billing.settle.*", "tg.registry.code", kEdgeReplies, kLauncherReplies},
       {"tg.exec.*.*", "tg.exec.cancel", "tg.health.executor", "_INBOX.executor.>"}},
      {"launcher", {"tg.health.*"}, {"_INBOX.launcher.>"}},
  };
}

bool AnyMatches(const std::vector<std::string>& patterns, std::string_view subject) {
  for (const auto& p : patterns) {
    if (bus::SubjectMatches(p, subject)) return true;
  }
  return false;
}

void AppendList(std::string& out, const std::vector<std::string>& subjects) {
  out += "[";
  for (size_t i = 0; i < subjects.size(); ++i) {
    out += (i ? ", \"" : "\"") + subjects[i] + "\"";
  }
  out += "]";
}

}  // namespace

const std::vector<BusUser>& BusUsers() {
  static const std::vector<BusUser> kUsers = MakeUsers();
  return kUsers;
}

const BusUser* FindBusUser(std::string_view name) {
  for (const auto& u : BusUsers()) {
    if (u.name == name) return &u;
  }
  return nullptr;
}

std::string InboxPrefix(std::string_view user) {
  return "_INBOX." + std::string(user);
}

bool MayPublish(const BusUser& user, std::string_view subject) {
  return AnyMatches(user.publish, subject);
}

bool MaySubscribe(const BusUser& user, std::string_view subject) {
  return AnyMatches(user.subscribe, subject);
}

std::string NatsAuthorization(const std::function<std::string(const std::string& user)>& password) {
  std::string out = "authorization {\n  users = [\n";
  for (const auto& u : BusUsers()) {
    out += "    {user: \"" + u.name + "\", password: " + password(u.name) +
           ",\n     permissions: {\n       publish: {allow: ";
    AppendList(out, u.publish);
    out += "},\n       subscribe: {allow: ";
    AppendList(out, u.subscribe);
    out += u.allow_responses ? "},\n       allow_responses: true}}\n" : "}}}\n";
  }
  out += "  ]\n}\n";
  return out;
}

}  // namespace toolgate::core
