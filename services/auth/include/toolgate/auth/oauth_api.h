// OAuthApi: Toolgate's OAuth 2.1 authorization server for MCP clients (docs/oauth.md), served on
// tg.auth.http beside the management routes.
//
//   GET  /oauth/metadata           RFC 8414 metadata (the edge serves it at
//                                  /.well-known/oauth-authorization-server and
//                                  /.well-known/openid-configuration)
//   GET  /oauth/authorize          validates client, redirect URI, PKCE, scope and resource; keeps
//                                  the request and sends the browser to the consent page
//                                  (/connect?request=<id>)
//   POST /oauth/token              authorization_code (PKCE S256) and refresh_token (rotating)
//   POST /oauth/register           Dynamic Client Registration (RFC 7591)
//   POST /oauth/revoke             RFC 7009
//   GET  /oauth/requests/{id}      the consent page's view of a pending request (signed in)
//   POST /oauth/requests/{id}/approve, /deny
//   GET  /oauth/grants, DELETE /oauth/grants/{id}   Connected apps (signed in)
//
// Clients are identified by a Client ID Metadata Document URL (fetched through
// ClientMetadataFetcher), a registered client id, or an operator's pre-registered one. Access
// tokens are opaque and looked up like API keys (KeyStore::FindByHash); a revocation reaches
// every edge through KeyDirectory::BroadcastRevoked. Handlers run on the service's worker pool
// and block on PostgreSQL, the metadata fetch and the bus (the registry for function access,
// billing for grant usage). No code, token or secret is ever logged or put in an error.
// Thread-safe; everything passed to the constructor must outlive the OAuthApi.
#pragma once

#include <string>

#include "toolgate/auth/client_metadata.h"
#include "toolgate/auth/key_directory.h"
#include "toolgate/auth/oauth_store.h"
#include "toolgate/auth/sign_in_throttle.h"
#include "toolgate/bus/bus.h"
#include "toolgate/core/http.h"

namespace toolgate::auth {

struct OAuthOptions {
  // The system's public URL ("https://mcp.example.com"): the issuer and the origin of every
  // resource. Empty: "http://" + the Host each request came with (loopback and development).
  std::string public_url;
  int bus_timeout_ms = 5000;
};

class OAuthApi {
 public:
  OAuthApi(OAuthStore& store, ClientMetadataFetcher& metadata, KeyDirectory& directory,
           SignInThrottle& throttle, bus::Bus& bus, OAuthOptions options)
      : store_(store),
        metadata_(metadata),
        directory_(directory),
        throttle_(throttle),
        bus_(bus),
        options_(std::move(options)) {}

  void Register(core::Router& router);

 private:
  v1::HttpResponse Metadata(const core::Request& request);
  v1::HttpResponse Authorize(const core::Request& request);
  v1::HttpResponse Token(const core::Request& request);
  v1::HttpResponse RegisterClient(const core::Request& request);
  v1::HttpResponse Revoke(const core::Request& request);
  v1::HttpResponse ShowRequest(const core::Request& request);
  v1::HttpResponse Approve(const core::Request& request);
  v1::HttpResponse Deny(const core::Request& request);
  v1::HttpResponse ListGrants(const core::Request& request);
  v1::HttpResponse RevokeGrant(const core::Request& request);

  // The client named by client_id: a metadata document, or a registered one. nullopt with
  // *why set (for the user or client) when there is none.
  Result<std::optional<OAuthClient>> FindClient(const std::string& client_id, std::string* why);
  // Who the token and revocation endpoints' caller is: the client authenticated by its secret
  // (Basic or client_secret_post) or, for a public client, named by client_id. nullopt with
  // *error set to the answer when it cannot be.
  std::optional<OAuthClient> AuthenticateClient(const core::Request& request,
                                                const std::map<std::string, std::string>& form,
                                                v1::HttpResponse* error);
  // The token and revocation endpoints' common start: a form body, then AuthenticateClient.
  std::optional<OAuthClient> ReadClientForm(const core::Request& request,
                                            std::map<std::string, std::string>* form,
                                            v1::HttpResponse* error);
  v1::HttpResponse ExchangeCode(const OAuthClient& client,
                                const std::map<std::string, std::string>& form);
  v1::HttpResponse Refresh(const OAuthClient& client,
                           const std::map<std::string, std::string>& form);
  // Issues an access token (and a refresh token when the grant allows) for grant.
  v1::HttpResponse IssueTokens(const Grant& grant);
  // Revokes the grant and tells every edge at once.
  Status RevokeGrantEverywhere(const std::string& grant_id);
  // Whether org_id may be granted the endpoint (the registry's answer for a function): nullopt
  // when it may, else the problem to show.
  std::optional<v1::Problem> CheckEndpointAccess(const PendingRequest& request,
                                                 const std::string& org_id,
                                                 std::string* function_name);

  OAuthStore& store_;
  ClientMetadataFetcher& metadata_;
  KeyDirectory& directory_;
  SignInThrottle& throttle_;  // registrations per client address
  bus::Bus& bus_;
  const OAuthOptions options_;
};

}  // namespace toolgate::auth
