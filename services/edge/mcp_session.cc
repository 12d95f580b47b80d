#include "mcp_session.h"

#include <sodium.h>

#include <charconv>
#include <fstream>
#include <sstream>

#include "toolgate/base/crypto.h"

namespace toolgate::edge {
namespace {

constexpr std::string_view kTokenPrefix = "tg1.";
constexpr std::string_view kStatePrefix = "tgs1.";
constexpr std::string_view kBridgePrefix = "tgb1.";
constexpr std::string_view kStateTag = "request-state";
// A handler's state may be large; the bound keeps a forged token from costing much to decode.
constexpr size_t kMaxStateTokenChars = 1 << 20;
constexpr size_t kNonceBytes = 16;
// Tokens are short; anything longer is not one of ours and is not worth decoding.
constexpr size_t kMaxTokenChars = 1024;

std::optional<std::string> Base64UrlDecode(std::string_view text) {
  std::string out(text.size(), '\0');
  size_t len = 0;
  if (sodium_base642bin(reinterpret_cast<unsigned char*>(out.data()), out.size(), text.data(),
                        text.size(), nullptr, &len, nullptr,
                        sodium_base64_VARIANT_URLSAFE_NO_PADDING) != 0) {
    return std::nullopt;
  }
  out.resize(len);
  return out;
}

// payload = endpoint \n revision \n expires_at_ms \n hex(nonce) [\n capabilities]; compact
// JSON holds no raw line break, so the capabilities are the whole rest.
std::string Payload(const McpSession& s) {
  std::string out = s.endpoint + "\n" + s.revision + "\n" + std::to_string(s.expires_at_ms) + "\n" +
                    HexEncode(s.nonce);
  if (!s.client_capabilities_json.empty()) out += "\n" + s.client_capabilities_json;
  return out;
}

std::optional<McpSession> ParsePayload(std::string_view payload) {
  std::string_view parts[5];
  int count = 0;
  while (count < 5) {
    size_t nl = count == 4 ? std::string_view::npos : payload.find('\n');
    parts[count++] = payload.substr(0, nl);
    if (nl == std::string_view::npos) break;
    payload.remove_prefix(nl + 1);
  }
  if (count < 4) return std::nullopt;
  McpSession s;
  s.endpoint = std::string(parts[0]);
  s.revision = std::string(parts[1]);
  auto [end, ec] =
      std::from_chars(parts[2].data(), parts[2].data() + parts[2].size(), s.expires_at_ms);
  if (ec != std::errc() || end != parts[2].data() + parts[2].size()) return std::nullopt;
  s.nonce.resize(kNonceBytes);
  size_t len = 0;
  if (sodium_hex2bin(reinterpret_cast<unsigned char*>(s.nonce.data()), s.nonce.size(),
                     parts[3].data(), parts[3].size(), nullptr, &len, nullptr) != 0 ||
      len != kNonceBytes) {
    return std::nullopt;
  }
  if (count == 5) s.client_capabilities_json = std::string(parts[4]);
  return s;
}

}  // namespace

McpSessionCodec::McpSessionCodec(std::string key) : key_(std::move(key)) {}

McpSession McpSessionCodec::NewSession(std::string endpoint, std::string revision, int64_t now_ms,
                                       int64_t ttl_ms, std::string client_capabilities_json) {
  if (client_capabilities_json.size() > kMaxCapabilitiesChars ||
      client_capabilities_json.find('\n') != std::string::npos) {
    client_capabilities_json.clear();
  }
  return {std::move(endpoint), std::move(revision), now_ms + ttl_ms, RandomBytes(kNonceBytes),
          std::move(client_capabilities_json)};
}

std::string McpSessionCodec::Mac(std::string_view payload, std::string_view api_key_sha256) const {
  crypto_auth_hmacsha256_state state;
  crypto_auth_hmacsha256_init(&state, reinterpret_cast<const unsigned char*>(key_.data()),
                              key_.size());
  crypto_auth_hmacsha256_update(&state, reinterpret_cast<const unsigned char*>(payload.data()),
                                payload.size());
  // The separator keeps (payload, key hash) pairs from colliding; the hash has a fixed length.
  const unsigned char separator = '\n';
  crypto_auth_hmacsha256_update(&state, &separator, 1);
  crypto_auth_hmacsha256_update(
      &state, reinterpret_cast<const unsigned char*>(api_key_sha256.data()), api_key_sha256.size());
  std::string mac(crypto_auth_hmacsha256_BYTES, '\0');
  crypto_auth_hmacsha256_final(&state, reinterpret_cast<unsigned char*>(mac.data()));
  return mac;
}

std::string McpSessionCodec::Issue(const McpSession& session,
                                   std::string_view api_key_sha256) const {
  return Seal(kTokenPrefix, Payload(session), api_key_sha256);
}

std::string McpSessionCodec::Seal(std::string_view prefix, std::string_view payload,
                                  std::string_view api_key_sha256) const {
  return std::string(prefix) + Base64UrlEncode(payload) + "." +
         Base64UrlEncode(Mac(payload, api_key_sha256));
}

std::optional<std::string> McpSessionCodec::Unseal(std::string_view token, std::string_view prefix,
                                                   size_t max_chars,
                                                   std::string_view api_key_sha256) const {
  if (token.size() > max_chars || !token.starts_with(prefix)) return std::nullopt;
  token.remove_prefix(prefix.size());
  size_t dot = token.find('.');
  if (dot == std::string_view::npos) return std::nullopt;
  auto payload = Base64UrlDecode(token.substr(0, dot));
  auto mac = Base64UrlDecode(token.substr(dot + 1));
  if (!payload || !mac || mac->size() != crypto_auth_hmacsha256_BYTES) return std::nullopt;
  if (!ConstantTimeEquals(*mac, Mac(*payload, api_key_sha256))) return std::nullopt;
  return payload;
}

std::optional<McpSession> McpSessionCodec::Verify(std::string_view token,
                                                  std::string_view api_key_sha256,
                                                  int64_t now_ms) const {
  auto payload = Unseal(token, kTokenPrefix, kMaxTokenChars, api_key_sha256);
  if (!payload) return std::nullopt;
  auto session = ParsePayload(*payload);
  if (!session || session->expires_at_ms <= now_ms) return std::nullopt;
  return session;
}

std::string McpSessionCodec::SealState(std::string_view endpoint, std::string_view state,
                                       int64_t expires_at_ms,
                                       std::string_view api_key_sha256) const {
  // payload = "request-state" \n endpoint \n expires_at_ms \n state (the state last: it may
  // hold anything, newlines included).
  std::string payload = std::string(kStateTag) + "\n" + std::string(endpoint) + "\n" +
                        std::to_string(expires_at_ms) + "\n" + std::string(state);
  return Seal(kStatePrefix, payload, api_key_sha256);
}

std::optional<std::string> McpSessionCodec::OpenState(std::string_view token,
                                                      std::string_view endpoint,
                                                      std::string_view api_key_sha256,
                                                      int64_t now_ms) const {
  auto payload = Unseal(token, kStatePrefix, kMaxStateTokenChars, api_key_sha256);
  if (!payload) return std::nullopt;
  std::string_view rest = *payload;
  std::string_view parts[3];
  for (std::string_view& part : parts) {
    size_t nl = rest.find('\n');
    if (nl == std::string_view::npos) return std::nullopt;
    part = rest.substr(0, nl);
    rest.remove_prefix(nl + 1);
  }
  int64_t expires_at_ms = 0;
  auto [end, ec] =
      std::from_chars(parts[2].data(), parts[2].data() + parts[2].size(), expires_at_ms);
  if (parts[0] != kStateTag || parts[1] != endpoint || ec != std::errc() ||
      end != parts[2].data() + parts[2].size() || expires_at_ms <= now_ms) {
    return std::nullopt;
  }
  return std::string(rest);
}

namespace {
std::string BridgePayload(std::string_view nonce, const McpSessionCodec::BridgeTarget& t) {
  return "bridge\n" + HexEncode(nonce) + "\n" + t.subject + "\n" + t.input_key;
}
}  // namespace

std::string McpSessionCodec::IssueBridgeId(std::string_view session_nonce,
                                           const BridgeTarget& target,
                                           std::string_view api_key_sha256) const {
  return std::string(kBridgePrefix) + Base64UrlEncode(target.subject) + "." +
         Base64UrlEncode(target.input_key) + "." +
         Base64UrlEncode(Mac(BridgePayload(session_nonce, target), api_key_sha256));
}

std::optional<McpSessionCodec::BridgeTarget> McpSessionCodec::VerifyBridgeId(
    std::string_view id, std::string_view session_nonce, std::string_view api_key_sha256) const {
  if (id.size() > kMaxTokenChars || !id.starts_with(kBridgePrefix)) return std::nullopt;
  id.remove_prefix(kBridgePrefix.size());
  size_t dot1 = id.find('.');
  size_t dot2 = dot1 == std::string_view::npos ? dot1 : id.find('.', dot1 + 1);
  if (dot2 == std::string_view::npos) return std::nullopt;
  auto subject = Base64UrlDecode(id.substr(0, dot1));
  auto key = Base64UrlDecode(id.substr(dot1 + 1, dot2 - dot1 - 1));
  auto mac = Base64UrlDecode(id.substr(dot2 + 1));
  if (!subject || !key || !mac || mac->size() != crypto_auth_hmacsha256_BYTES) return std::nullopt;
  BridgeTarget target{std::move(*subject), std::move(*key)};
  if (!ConstantTimeEquals(*mac, Mac(BridgePayload(session_nonce, target), api_key_sha256))) {
    return std::nullopt;
  }
  return target;
}

Result<std::string> LoadMcpSessionKey(std::string_view value, const std::string& path) {
  std::string text(value);
  std::string source = "--mcp-session-key";
  if (text.empty()) {
    if (path.empty()) return Status::NotFound("no MCP session key configured");
    std::ifstream in(path);
    if (!in) return Status::InvalidArgument("cannot read --mcp-session-key-file " + path);
    std::ostringstream read;
    read << in.rdbuf();
    text = read.str();
    source = "--mcp-session-key-file " + path;
  }
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r' || text.back() == ' ')) {
    text.pop_back();
  }
  std::string key;
  if (!Base64Decode(text, &key) || key.size() != McpSessionCodec::kKeyBytes) {
    return Status::InvalidArgument(source + " must hold the base64 of " +
                                   std::to_string(McpSessionCodec::kKeyBytes) + " bytes");
  }
  return key;
}

void EndedSessions::Add(std::string nonce, int64_t expires_at_ms, int64_t now_ms) {
  std::lock_guard<std::mutex> lock(mu_);
  if (expires_at_ms_.size() >= prune_at_) {
    std::erase_if(expires_at_ms_, [now_ms](const auto& e) { return e.second <= now_ms; });
    prune_at_ = std::max<size_t>(1024, 2 * expires_at_ms_.size());
  }
  auto [it, inserted] = expires_at_ms_.emplace(std::move(nonce), expires_at_ms);
  if (!inserted) it->second = std::max(it->second, expires_at_ms);
}

bool EndedSessions::Contains(const std::string& nonce) const {
  std::lock_guard<std::mutex> lock(mu_);
  return expires_at_ms_.count(nonce) > 0;
}

std::vector<EndedSessions::Entry> EndedSessions::Live(int64_t now_ms) const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<Entry> out;
  for (const auto& [nonce, expires] : expires_at_ms_) {
    if (expires > now_ms) out.push_back({nonce, expires});
  }
  return out;
}

}  // namespace toolgate::edge
