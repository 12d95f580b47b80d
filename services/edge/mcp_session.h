// MCP sessions without server state, so that any edge replica accepts a session another one
// issued (docs/mcp.md, "Sessions").
//
// The Mcp-Session-Id is a token "tg1.<payload>.<mac>" (base64url): the payload names the endpoint,
// the negotiated protocol revision, an expiry and a random nonce; the MAC is HMAC-SHA-256 under a
// key shared by every edge replica (TOOLGATE_MCP_SESSION_KEY) over the payload and the SHA-256 of
// the API key that opened the session, so the token is worthless without that key and cannot be
// moved to another endpoint or forged. Ending a session (DELETE) puts its nonce on every
// replica's EndedSessions list until the token would have expired anyway.
#pragma once

#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "toolgate/base/bounded_ttl_cache.h"
#include "toolgate/base/status.h"

namespace toolgate::edge {

struct McpSession {
  std::string endpoint;       // "workspace", "functions/<id>" or "functions/<id>/<version>"
  std::string revision;       // the protocol revision the initialize result named
  int64_t expires_at_ms = 0;  // Unix time
  std::string nonce;          // 16 random bytes; names the session on the ended list
  // The client's capabilities as its initialize named them (compact JSON; "" when none or too
  // long to carry): what the edge may ask the client for on the handler's behalf.
  std::string client_capabilities_json;
};

class McpSessionCodec {
 public:
  static constexpr size_t kKeyBytes = 32;

  // key must be kKeyBytes long (LoadMcpSessionKey).
  explicit McpSessionCodec(std::string key);

  // A new session: a fresh nonce, expiring ttl_ms after now_ms.
  static McpSession NewSession(std::string endpoint, std::string revision, int64_t now_ms,
                               int64_t ttl_ms, std::string client_capabilities_json = {});
  // The most capability text a session id carries; more is dropped (the session then asks the
  // client for nothing on a handler's behalf).
  static constexpr size_t kMaxCapabilitiesChars = 512;
  // The Mcp-Session-Id of session for the API key whose SHA-256 is api_key_sha256: visible ASCII
  // only, as the transport requires.
  std::string Issue(const McpSession& session, std::string_view api_key_sha256) const;
  // The session a token names, or nullopt when the token is malformed, was not issued with this
  // codec's key for api_key_sha256, or has expired at now_ms.
  std::optional<McpSession> Verify(std::string_view token, std::string_view api_key_sha256,
                                   int64_t now_ms) const;

  // The requestState a handler handed to a client in an input_required result, sealed so that
  // the client can neither read-modify it nor replay it elsewhere: "tgs1.<payload>.<mac>" whose
  // payload names the endpoint, an expiry and the state, and whose MAC binds it to the API key
  // as a session id is bound. Opening returns the handler's own state, or nullopt when the token
  // is malformed, altered, of another endpoint or key, or expired at now_ms. A sealed state's
  // payload never parses as a session's and the prefixes differ, so neither passes for the other.
  std::string SealState(std::string_view endpoint, std::string_view state, int64_t expires_at_ms,
                        std::string_view api_key_sha256) const;
  std::optional<std::string> OpenState(std::string_view token, std::string_view endpoint,
                                       std::string_view api_key_sha256, int64_t now_ms) const;

  // The JSON-RPC id of a request the edge sends a session's client on a handler's behalf
  // (2025-11-25: sampling/createMessage, elicitation/create, roots/list): "tgb1.<subject>.<input
  // key>.<mac>", naming where the answer is awaited and which input it answers, bound to the
  // session and the API key so that no client can send an answer anywhere else.
  struct BridgeTarget {
    std::string subject;
    std::string input_key;
  };
  std::string IssueBridgeId(std::string_view session_nonce, const BridgeTarget& target,
                            std::string_view api_key_sha256) const;
  // The target of such an id, or nullopt when it is not one this session's key was given.
  std::optional<BridgeTarget> VerifyBridgeId(std::string_view id, std::string_view session_nonce,
                                             std::string_view api_key_sha256) const;

 private:
  std::string Mac(std::string_view payload, std::string_view api_key_sha256) const;
  // "<prefix><payload>.<mac>" (base64url), and the payload of such a token when it is one of
  // this key's for api_key_sha256 and at most max_chars long.
  std::string Seal(std::string_view prefix, std::string_view payload,
                   std::string_view api_key_sha256) const;
  std::optional<std::string> Unseal(std::string_view token, std::string_view prefix,
                                    size_t max_chars, std::string_view api_key_sha256) const;

  std::string key_;
};

// The session key: base64 of kKeyBytes bytes in `value` when it is not empty, else in the file
// `path`. InvalidArgument (with a message naming the flag) when it is malformed; NotFound when
// both are empty.
Result<std::string> LoadMcpSessionKey(std::string_view value, const std::string& path);

// Sessions ended before their expiry, by nonce. Thread-safe.
class EndedSessions {
 public:
  struct Entry {
    std::string nonce;
    int64_t expires_at_ms = 0;
  };

  // Records an ended session; forgets the expired ones now and then, so the list stays as long
  // as the sessions ended within one session lifetime.
  void Add(std::string nonce, int64_t expires_at_ms, int64_t now_ms);
  bool Contains(const std::string& nonce) const;
  // The entries that have not expired at now_ms.
  std::vector<Entry> Live(int64_t now_ms) const;

 private:
  mutable std::mutex mu_;
  std::unordered_map<std::string, int64_t> expires_at_ms_;  // guarded by mu_
  size_t prune_at_ = 1024;                                  // guarded by mu_
};

// The log level each session's logging/setLevel asked for (2025-11-25 and earlier), by nonce,
// until the session expires; the least recently used are forgotten past the capacity (a session
// forgotten here streams no logs until it sets its level again). Thread-safe.
class SessionLogLevels {
 public:
  explicit SessionLogLevels(size_t capacity = 100000) : levels_(capacity) {}
  void Set(const std::string& nonce, std::string level, int64_t expires_at_ms) {
    levels_.Put(nonce, std::move(level), expires_at_ms, levels_.generation());
  }
  std::optional<std::string> Get(const std::string& nonce, int64_t now_ms) {
    return levels_.Get(nonce, now_ms);
  }

 private:
  BoundedTtlCache<std::string, std::string> levels_;
};

}  // namespace toolgate::edge
