#include "mcp_listeners.h"

#include "toolgate/base/json_writer.h"

namespace toolgate::edge {

uint64_t WorkspaceListeners::Add(Listener listener) {
  std::vector<std::function<void()>> ended;
  uint64_t id;
  {
    std::lock_guard<std::mutex> lock(mu_);
    size_t of_org = 0;
    for (const auto& [_, l] : listeners_) of_org += l.org_id == listener.org_id;
    // Room first: the organization's oldest past its share, the oldest of all past the total.
    for (auto it = listeners_.begin(); it != listeners_.end() && of_org >= max_per_org_;) {
      if (it->second.org_id != listener.org_id) {
        ++it;
        continue;
      }
      ended.push_back(std::move(it->second.end));
      it = listeners_.erase(it);
      --of_org;
    }
    while (listeners_.size() >= max_total_ && !listeners_.empty()) {
      ended.push_back(std::move(listeners_.begin()->second.end));
      listeners_.erase(listeners_.begin());
    }
    id = next_id_++;
    listeners_.emplace(id, std::move(listener));
  }
  for (auto& end : ended) {
    if (end) end();
  }
  return id;
}

void WorkspaceListeners::End(uint64_t id) {
  std::function<void()> end;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = listeners_.find(id);
    if (it == listeners_.end()) return;
    end = std::move(it->second.end);
    listeners_.erase(it);
  }
  if (end) end();
}

size_t WorkspaceListeners::size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return listeners_.size();
}

std::string WorkspaceListeners::ListChanged(std::string_view kind,
                                            std::string_view subscription_id_json) {
  JsonWriter w;
  w.BeginObject()
      .Field("jsonrpc", "2.0")
      .Field("method", "notifications/" + std::string(kind) + "/list_changed");
  w.Key("params").BeginObject().Key("_meta").BeginObject();
  w.Key("io.modelcontextprotocol/subscriptionId").Raw(subscription_id_json);
  return w.EndObject().EndObject().EndObject().Take();
}

void WorkspaceListeners::Notify(const std::function<bool(const Listener&)>& concerned) {
  std::vector<std::pair<std::function<void(std::string)>, std::string>> out;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& [_, l] : listeners_) {
      if (!concerned(l)) continue;
      if (l.tools) out.emplace_back(l.send, ListChanged("tools", l.subscription_id_json));
      if (l.prompts) out.emplace_back(l.send, ListChanged("prompts", l.subscription_id_json));
      if (l.resources) out.emplace_back(l.send, ListChanged("resources", l.subscription_id_json));
    }
  }
  for (auto& [send, json] : out) send(std::move(json));
}

void WorkspaceListeners::FunctionChanged(const std::string& function_id) {
  Notify([&function_id](const Listener& l) { return l.function_ids.count(function_id) > 0; });
}

void WorkspaceListeners::WorkspaceChanged(const std::string& org_id) {
  Notify([&org_id](const Listener& l) { return l.org_id == org_id; });
}

}  // namespace toolgate::edge
