#include "toolgate/webhook/signature.h"

#include "toolgate/base/crypto.h"

namespace toolgate::webhook {

std::string NewSecret() {
  return std::string(kSecretPrefix) + Base64Encode(RandomBytes(kSecretBytes));
}

std::optional<std::string> SigningKey(std::string_view secret) {
  if (secret.starts_with(kSecretPrefix)) secret.remove_prefix(kSecretPrefix.size());
  std::string key;
  if (!Base64Decode(secret, &key) || key.size() < kMinSecretBytes || key.size() > kMaxSecretBytes) {
    return std::nullopt;
  }
  return key;
}

std::string Sign(std::string_view key, std::string_view message_id, int64_t timestamp_s,
                 std::string_view body) {
  std::string content;
  content.reserve(message_id.size() + body.size() + 24);
  content.append(message_id).append(".").append(std::to_string(timestamp_s)).append(".");
  content.append(body);
  return "v1," + Base64Encode(HmacSha256(key, content));
}

bool Verify(std::string_view key, std::string_view message_id, int64_t timestamp_s,
            std::string_view body, std::string_view signature_header) {
  const std::string expected = Sign(key, message_id, timestamp_s, body);
  bool matched = false;
  while (!signature_header.empty()) {
    const size_t space = signature_header.find(' ');
    const std::string_view entry = signature_header.substr(0, space);
    // Every entry is compared, so the time taken does not tell which one matched.
    if (!entry.empty() && ConstantTimeEquals(entry, expected)) matched = true;
    if (space == std::string_view::npos) break;
    signature_header.remove_prefix(space + 1);
  }
  return matched;
}

std::string NewMessageId() {
  return "msg_" + HexEncode(RandomBytes(16));
}

}  // namespace toolgate::webhook
