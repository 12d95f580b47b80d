// WorkspaceListeners: the workspace endpoint's open subscriptions/listen streams (2026-07-28;
// docs/mcp.md, "Change notifications"), and which of them a change concerns.
//
// A listener belongs to an organization, asked for some of tools/prompts/resources list
// changes, and knows the functions its workspace listed when it subscribed. A function that
// changes (published, deprecated, deleted: tg.events.function_changed) concerns the listeners
// whose workspace lists it; a workspace that changes (a function added or removed:
// tg.events.workspace_changed) concerns its organization's. Each concerned listener gets one
// notifications/<kind>/list_changed per kind it asked for, tagged with its subscription id.
//
// Bounded: at most max_per_org listeners per organization and max_total in all; past either the
// oldest is ended (gracefully, with its final response) to make room. A listener ends by itself
// when its owner calls End (its lifetime is up); a client that just goes away is not seen, which
// the bounds and the lifetime make harmless. Thread-safe; send and end run outside the lock.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <unordered_set>
#include <vector>

namespace toolgate::edge {

class WorkspaceListeners {
 public:
  struct Listener {
    std::string org_id;
    std::string subscription_id_json;  // the listen request's JSON-RPC id
    bool tools = false, prompts = false, resources = false;
    std::unordered_set<std::string> function_ids;
    std::function<void(std::string json)> send;  // an event on the listener's stream
    std::function<void()> end;                   // its final response; the stream closes
  };

  WorkspaceListeners(size_t max_per_org, size_t max_total)
      : max_per_org_(max_per_org), max_total_(max_total) {}

  // Registers listener; returns its id.
  uint64_t Add(Listener listener);
  // Ends listener id gracefully (nothing when it ended already).
  void End(uint64_t id);
  void FunctionChanged(const std::string& function_id);
  void WorkspaceChanged(const std::string& org_id);

  size_t size() const;

  // The notification of kind ("tools", "prompts", "resources") for subscription_id_json.
  static std::string ListChanged(std::string_view kind, std::string_view subscription_id_json);

 private:
  // Notifies the listeners concerned; concerned runs under the lock.
  void Notify(const std::function<bool(const Listener&)>& concerned);

  const size_t max_per_org_;
  const size_t max_total_;
  mutable std::mutex mu_;
  uint64_t next_id_ = 1;                    // guarded by mu_
  std::map<uint64_t, Listener> listeners_;  // guarded by mu_; oldest first
};

}  // namespace toolgate::edge
