#include "toolgate/executor/code_store.h"

#include "toolgate/core/subjects.h"

namespace toolgate::executor {

Result<v1::CodeReply> RegistryCodeSource::Ask(const std::string& function_id,
                                              const std::string& version,
                                              std::string_view traceparent) {
  v1::CodeRequest request;
  request.set_function_id(function_id);
  request.set_version(version);
  auto reply =
      bus_.Request(core::kCodeSubject, request.SerializeAsString(), timeout_ms_, traceparent);
  if (!reply.ok()) return reply.status();
  v1::CodeReply code;
  if (!code.ParseFromString(reply->data)) {
    return Status::Internal("tg.registry.code answered something that is not a CodeReply");
  }
  if (!code.found()) return Status::NotFound("no code for " + function_id + "@" + version);
  return code;
}

Result<std::string> RegistryCodeSource::Fetch(const std::string& function_id,
                                              const std::string& version,
                                              std::string_view traceparent) {
  auto code = Ask(function_id, version, traceparent);
  if (!code.ok()) return code.status();
  return std::move(*code->mutable_code());
}

Result<std::string> RegistryCodeSource::FetchBundle(const std::string& function_id,
                                                    const std::string& version,
                                                    std::string_view traceparent) {
  auto code = Ask(function_id, version, traceparent);
  if (!code.ok()) return code.status();
  if (code->bundle_digest().empty()) {
    return Status::NotFound(function_id + "@" + version + " has no bundle");
  }
  return std::move(*code->mutable_bundle());
}

Result<Code> CodeStore::Get(const std::string& function_id, const std::string& version,
                            std::string_view traceparent) {
  std::string key = function_id + "@" + version;
  if (Code code = Lookup(key)) return code;
  auto fetched = source_.Fetch(function_id, version, traceparent);
  if (!fetched.ok()) return fetched.status();
  Code code = std::make_shared<const std::string>(std::move(fetched).value());
  Insert(key, code);
  return code;
}

size_t CodeStore::bytes() const {
  std::lock_guard<std::mutex> lock(mu_);
  return bytes_;
}

Code CodeStore::Lookup(const std::string& key) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = index_.find(key);
  if (it == index_.end()) return nullptr;
  lru_.splice(lru_.begin(), lru_, it->second);
  return it->second->code;
}

void CodeStore::Insert(const std::string& key, Code code) {
  if (code->size() > max_bytes_) return;
  std::lock_guard<std::mutex> lock(mu_);
  if (index_.count(key) != 0) return;  // a concurrent miss got here first
  bytes_ += code->size();
  lru_.push_front(Entry{key, std::move(code)});
  index_[key] = lru_.begin();
  while (bytes_ > max_bytes_) {
    const Entry& victim = lru_.back();
    bytes_ -= victim.code->size();
    index_.erase(victim.key);
    lru_.pop_back();
  }
}

}  // namespace toolgate::executor
