#include "toolgate/auth/key_directory.h"

#include "toolgate/base/log.h"
#include "toolgate/base/time.h"
#include "toolgate/v1/toolgate.pb.h"

namespace toolgate::auth {

std::optional<KeyRecord> KeyDirectory::Cached(std::string_view key_sha256) const {
  return cache_.Get(key_sha256, MonotonicUs());
}

bool KeyDirectory::KnownUnknown(std::string_view key_sha256) const {
  return cache_.KnownUnknown(key_sha256, MonotonicUs());
}

Result<std::optional<KeyRecord>> KeyDirectory::Load(std::string_view key_sha256) {
  uint64_t generation = cache_.generation();
  auto found = store_.FindByHash(key_sha256);
  if (found.ok() && found->has_value()) {
    cache_.Put(std::string(key_sha256), **found, generation, MonotonicUs());
  } else if (found.ok()) {
    cache_.PutUnknown(std::string(key_sha256), generation, MonotonicUs());
  }
  return found;
}

Result<std::optional<KeyRecord>> KeyDirectory::Find(std::string_view key_sha256) {
  if (auto cached = Cached(key_sha256)) return std::optional<KeyRecord>(std::move(*cached));
  if (KnownUnknown(key_sha256)) return std::optional<KeyRecord>();
  return Load(key_sha256);
}

Status KeyDirectory::BroadcastRevoked(std::string_view key_sha256) {
  cache_.Invalidate(key_sha256);
  v1::KeyRevoked event;
  event.set_api_key_sha256(std::string(key_sha256));
  return bus_.Publish(kKeyRevokedSubject, event.SerializeAsString());
}

Status KeyDirectory::ListenForRevocations() {
  return bus_.Subscribe(kKeyRevokedSubject, "", [this](bus::Message&& m) {
    v1::KeyRevoked event;
    if (!event.ParseFromString(m.data) || event.api_key_sha256().empty()) {
      log::Warn("malformed key_revoked event dropped");
      return;
    }
    cache_.Invalidate(event.api_key_sha256());
  });
}

}  // namespace toolgate::auth
