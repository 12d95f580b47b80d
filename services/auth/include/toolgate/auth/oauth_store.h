// OAuthStore: the authorization server's records in PostgreSQL (schema `auth`, migration
// 003_oauth.sql): registered clients, pending authorization requests, grants, codes and tokens.
//
// Codes, tokens and client secrets arrive and are kept as their SHA-256 (32 raw bytes); nothing
// stored can be presented. Each state change that must happen once (answering a request,
// redeeming a code, rotating a refresh token) is one conditional UPDATE, so two replicas racing on
// the same code or token cannot both win. Every method blocks on PostgreSQL; failures come back
// as Unavailable or Internal. Thread-safe (the pool is).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "toolgate/base/status.h"
#include "toolgate/pg/pg.h"

namespace toolgate::auth {

// A client as the server knows it: registered (RFC 7591), pre-registered by the operator, or
// described by its metadata document (then never stored).
struct OAuthClient {
  std::string client_id;
  std::string kind;  // "registered", "pre_registered", "metadata_document"
  std::string client_name;
  std::string logo_uri;    // empty: none
  std::string client_uri;  // empty: none
  std::vector<std::string> redirect_uris;
  std::vector<std::string> grant_types;
  std::string token_endpoint_auth_method;  // "none", "client_secret_basic", "client_secret_post"
  std::string client_secret_sha256;        // empty for public clients

  bool AllowsRefresh() const;
};

// An authorization request waiting for a member's consent.
struct PendingRequest {
  std::string id;
  std::string client_id;
  std::string client_kind;
  std::string client_name;
  std::string logo_uri;
  std::string client_uri;
  std::string redirect_uri;
  std::string state;  // empty: the client sent none
  std::string code_challenge;
  std::string resource;       // canonical URL
  std::string resource_path;  // "/mcp", "/mcp/functions/<id>[/<version>]"
  std::vector<std::string> scopes;
  bool refresh_allowed = false;
  std::string issuer;
  int64_t expires_at_ms = 0;
};

struct Grant {
  std::string id;
  std::string user_id;
  std::string org_id;
  std::string org_name;
  std::string client_id;
  std::string client_name;
  std::string logo_uri;
  std::string redirect_uri;
  std::string resource;
  std::string resource_path;
  std::vector<std::string> scopes;
  bool refresh_allowed = false;
  std::optional<int64_t> cap_micro_usd;
  int64_t created_at_ms = 0;
  bool revoked = false;
};

// A code's redemption.
struct Redemption {
  enum class Outcome { kRedeemed, kReused, kUnknown };
  Outcome outcome = Outcome::kUnknown;
  Grant grant;  // kRedeemed, kReused (the grant to revoke)
  std::string client_id;
  std::string redirect_uri;
  std::string code_challenge;
  bool expired = false;  // kRedeemed: the code was past its expiry (refused, nothing issued)
};

// A refresh token's rotation.
struct Rotation {
  enum class Outcome { kRotated, kReused, kUnknown };
  Outcome outcome = Outcome::kUnknown;
  Grant grant;
};

// Tokens to store for a grant; refresh_sha256 empty: none.
struct NewTokens {
  std::string access_sha256;
  int64_t access_expires_at_ms = 0;
  std::string refresh_sha256;
  int64_t refresh_expires_at_ms = 0;
};

// The operator's pre-registered clients from a JSON file:
//   {"clients": [{"client_id": "acme-cli", "client_name": "Acme CLI",
//                 "redirect_uris": ["http://127.0.0.1:7777/callback"],
//                 "grant_types": ["authorization_code", "refresh_token"],
//                 "token_endpoint_auth_method": "client_secret_basic",
//                 "client_secret_sha256": "<64 hex digits>"}]}
// A client without client_secret_sha256 is public (token_endpoint_auth_method "none").
// InvalidArgument naming the client and field for anything malformed.
Result<std::vector<OAuthClient>> LoadPreRegisteredClients(const std::string& path);

class OAuthStore {
 public:
  explicit OAuthStore(pg::Pool& pool) : pool_(pool) {}

  Status InsertClient(const OAuthClient& client);
  // Inserts or replaces an operator's client (pre_registered), at start.
  Status UpsertPreRegisteredClient(const OAuthClient& client);
  Result<std::optional<OAuthClient>> FindClient(std::string_view client_id);

  Status InsertRequest(const PendingRequest& request);
  // The request when it is unexpired and unanswered.
  Result<std::optional<PendingRequest>> FindRequest(std::string_view id);
  // Marks the request answered (denied); false when it was not pending any more.
  Result<bool> AnswerRequest(std::string_view id);
  // Approves a pending request in one transaction: marks it answered, creates the grant for
  // (user_id, org_id) with cap, and the code (code_sha256, expiring at code_expires_at_ms).
  // nullopt when the request was no longer pending.
  Result<std::optional<Grant>> Approve(std::string_view request_id, std::string_view user_id,
                                       std::string_view org_id, std::optional<int64_t> cap,
                                       std::string_view code_sha256, int64_t code_expires_at_ms);

  // Redeems a code once. A code presented again is kReused: the caller revokes its grant.
  Result<Redemption> RedeemCode(std::string_view code_sha256);
  Status InsertTokens(std::string_view grant_id, const NewTokens& tokens);
  // Rotates a live refresh token of a live grant once; a rotated one presented again is kReused.
  Result<Rotation> RotateRefresh(std::string_view refresh_sha256);

  // Revokes the grant and every token of it; returns the hashes of its access tokens that had
  // not expired (to broadcast), nullopt when org_id (when not empty) has no such grant.
  Result<std::optional<std::vector<std::string>>> RevokeGrant(std::string_view grant_id,
                                                              std::string_view org_id = {});
  // The token's kind ("access" or "refresh"), grant and client; nullopt when unknown.
  struct TokenOwner {
    std::string kind;
    std::string grant_id;
    std::string client_id;
  };
  Result<std::optional<TokenOwner>> FindToken(std::string_view token_sha256);
  // Revokes one access token; returns whether it was live.
  Result<bool> RevokeAccessToken(std::string_view token_sha256);

  // The grants user_id made in org_id, newest first (at most 200).
  Result<std::vector<Grant>> ListGrants(std::string_view org_id, std::string_view user_id);

  // Removes expired requests, codes and tokens (housekeeping); returns how many rows went.
  Result<int64_t> PurgeExpired();

 private:
  pg::Pool& pool_;
};

}  // namespace toolgate::auth
