#include "toolgate/auth/oauth_api.h"

#include <algorithm>
#include <cctype>
#include <unordered_map>

#include "toolgate/auth/oauth_rules.h"
#include "toolgate/base/crypto.h"
#include "toolgate/base/json.h"
#include "toolgate/base/json_writer.h"
#include "toolgate/base/log.h"
#include "toolgate/base/strings.h"
#include "toolgate/base/time.h"
#include "toolgate/core/problem.h"
#include "toolgate/core/subjects.h"

namespace toolgate::auth {
namespace {

constexpr size_t kMaxClientNameChars = 100;
constexpr size_t kMaxUriChars = 2000;
constexpr size_t kMaxRedirectUris = 10;
constexpr int64_t kMaxCapMicroUsd = 1'000'000'000'000;  // $1,000,000

std::optional<std::string> QueryParam(const core::Request& r, const std::string& name) {
  auto it = r.http.query().find(name);
  if (it == r.http.query().end()) return std::nullopt;
  return it->second;
}

std::optional<std::string> FormParam(const std::map<std::string, std::string>& form,
                                     const std::string& name) {
  auto it = form.find(name);
  if (it == form.end() || it->second.empty()) return std::nullopt;
  return it->second;
}

std::string Header(const core::Request& r, const std::string& lower_name) {
  auto it = r.http.headers().find(lower_name);
  return it == r.http.headers().end() ? "" : it->second;
}

bool IsHttpsUrl(std::string_view uri) {
  return uri.size() <= kMaxUriChars && uri.rfind("https://", 0) == 0 &&
         !CheckRedirectUri(uri).has_value();
}

// A browser redirect (the authorization response, or to the consent page).
v1::HttpResponse Redirect(const std::string& location) {
  v1::HttpResponse r;
  r.set_status(302);
  (*r.mutable_headers())["Location"] = location;
  (*r.mutable_headers())["Cache-Control"] = "no-store";
  (*r.mutable_headers())["Referrer-Policy"] = "no-referrer";
  return r;
}

// An authorization error sent back to the client's (validated) redirect URI, with state and
// iss (RFC 6749 §4.1.2.1, RFC 9207).
std::string ErrorRedirect(const std::string& redirect_uri, const std::string& error,
                          const std::string& description, const std::string& state,
                          const std::string& issuer) {
  std::vector<std::pair<std::string, std::string>> params = {{"error", error},
                                                             {"error_description", description}};
  if (!state.empty()) params.emplace_back("state", state);
  params.emplace_back("iss", issuer);
  return WithQuery(redirect_uri, params);
}

// The page a browser sees when the request cannot be sent back to the client: an unknown
// client or a redirect URI it did not register. Never a redirect (no open redirector).
v1::HttpResponse AuthorizeRefused(std::string_view detail) {
  return core::ProblemResponse("bad_request", detail);
}

// A signed-in member in a browser (not an API key, not a token): consent is a person's.
std::optional<v1::HttpResponse> RequireMember(const core::Request& r) {
  const v1::Principal& p = r.principal();
  if (p.user_id().empty() || !p.key_id().empty() || !p.grant_id().empty()) {
    return core::ProblemResponse("user_session_required",
                                 "Sign in to the web app to answer an authorization request or "
                                 "manage connected apps.");
  }
  return std::nullopt;
}

void WriteEndpoint(JsonWriter& w, const std::string& resource_path,
                   const std::string& function_name) {
  w.Key("endpoint").BeginObject();
  if (resource_path == "/mcp") {
    w.Field("kind", "workspace").Key("function_id").Null().Key("function_name").Null();
    w.Key("version").Null();
  } else {
    // /mcp/functions/<id>[/<version>]
    std::string rest = resource_path.substr(std::string("/mcp/functions/").size());
    size_t slash = rest.find('/');
    w.Field("kind", "function").Field("function_id", rest.substr(0, slash));
    w.FieldOrNull("function_name", function_name);
    if (slash == std::string::npos) {
      w.Key("version").Null();
    } else {
      w.Field("version", rest.substr(slash + 1));
    }
  }
  w.EndObject();
}

// The registry's view of a function for an organization (tg.registry.function_view).
Result<v1::FunctionViewReply> ViewFunction(bus::Bus& bus, const std::string& function_id,
                                           const std::string& org_id, int timeout_ms) {
  v1::FunctionViewRequest ask;
  ask.set_function_id(function_id);
  ask.set_caller_org_id(org_id);
  auto answer = bus.Request(core::kFunctionViewSubject, ask.SerializeAsString(), timeout_ms);
  if (!answer.ok()) return answer.status();
  v1::FunctionViewReply reply;
  if (!reply.ParseFromString(answer->data)) return Status::Internal("malformed FunctionViewReply");
  if (reply.has_problem()) return Status::Unavailable(reply.problem().detail());
  return reply;
}

}  // namespace

void OAuthApi::Register(core::Router& router) {
  auto route = [&](const char* method, const char* path, auto member, bool require_auth) {
    router.Add(
        method, path, [this, member](const core::Request& r) { return (this->*member)(r); },
        require_auth);
  };
  route("GET", "/oauth/metadata", &OAuthApi::Metadata, false);
  route("GET", "/oauth/authorize", &OAuthApi::Authorize, false);
  route("POST", "/oauth/token", &OAuthApi::Token, false);
  route("POST", "/oauth/register", &OAuthApi::RegisterClient, false);
  route("POST", "/oauth/revoke", &OAuthApi::Revoke, false);
  route("GET", "/oauth/requests/{id}", &OAuthApi::ShowRequest, true);
  route("POST", "/oauth/requests/{id}/approve", &OAuthApi::Approve, true);
  route("POST", "/oauth/requests/{id}/deny", &OAuthApi::Deny, true);
  route("GET", "/oauth/grants", &OAuthApi::ListGrants, true);
  route("DELETE", "/oauth/grants/{id}", &OAuthApi::RevokeGrant, true);
}

v1::HttpResponse OAuthApi::Metadata(const core::Request& request) {
  return core::JsonResponse(
      200, AuthorizationServerMetadata(PublicBase(options_.public_url, request.http)));
}

Result<std::optional<OAuthClient>> OAuthApi::FindClient(const std::string& client_id,
                                                        std::string* why) {
  if (ClientMetadataFetcher::IsMetadataUrl(client_id)) {
    auto fetched = metadata_.Fetch(client_id);
    if (!fetched.ok()) {
      if (fetched.status().code() == Status::Code::kInvalidArgument) {
        *why = fetched.status().message();
        return std::optional<OAuthClient>();
      }
      *why = "The client's metadata document could not be fetched; try again later.";
      return fetched.status();
    }
    OAuthClient c;
    c.client_id = fetched->client_id;
    c.kind = "metadata_document";
    c.client_name = fetched->client_name;
    c.logo_uri = fetched->logo_uri;
    c.client_uri = fetched->client_uri;
    c.grant_types = fetched->grant_types;
    c.token_endpoint_auth_method = "none";
    for (const auto& uri : fetched->redirect_uris) {
      if (auto bad = CheckRedirectUri(uri)) {
        *why = "The client's metadata document lists a redirect URI that " + *bad + ".";
        return std::optional<OAuthClient>();
      }
      c.redirect_uris.push_back(uri);
    }
    return std::optional<OAuthClient>(std::move(c));
  }
  if (client_id.empty() || client_id.size() > 200) {
    *why = "Unknown client_id.";
    return std::optional<OAuthClient>();
  }
  auto found = store_.FindClient(client_id);
  if (!found.ok()) return found.status();
  if (!found->has_value()) *why = "Unknown client_id; register the client first.";
  return found;
}

v1::HttpResponse OAuthApi::Authorize(const core::Request& request) {
  const std::string base = PublicBase(options_.public_url, request.http);
  const std::string client_id = QueryParam(request, "client_id").value_or("");
  std::string why;
  auto client = FindClient(client_id, &why);
  if (!client.ok()) return core::Unavailable(client.status());
  if (!client->has_value()) return AuthorizeRefused(why);
  const OAuthClient& c = **client;

  // The redirect URI first: until it is known to be the client's, nothing may be sent to it.
  std::string redirect_uri;
  if (auto given = QueryParam(request, "redirect_uri")) {
    if (std::find(c.redirect_uris.begin(), c.redirect_uris.end(), *given) ==
        c.redirect_uris.end()) {
      return AuthorizeRefused(
          "redirect_uri is not one the client registered (it must match exactly).");
    }
    redirect_uri = *given;
  } else if (c.redirect_uris.size() == 1) {
    redirect_uri = c.redirect_uris[0];
  } else {
    return AuthorizeRefused("redirect_uri is required: the client registered several.");
  }

  const std::string state = QueryParam(request, "state").value_or("");
  auto fail = [&](const std::string& error, const std::string& description) {
    return Redirect(ErrorRedirect(redirect_uri, error, description, state, base));
  };
  if (QueryParam(request, "response_type").value_or("") != "code") {
    return fail("unsupported_response_type", "Only response_type=code is supported.");
  }
  const std::string challenge = QueryParam(request, "code_challenge").value_or("");
  if (QueryParam(request, "code_challenge_method").value_or("") != "S256" ||
      !IsS256Challenge(challenge)) {
    return fail("invalid_request",
                "PKCE is required: send code_challenge (S256 of the verifier) with "
                "code_challenge_method=S256.");
  }
  auto scopes = ParseScopes(QueryParam(request, "scope"));
  if (!scopes.ok()) return fail("invalid_scope", scopes.status().message());
  auto target = ParseResource(QueryParam(request, "resource"), base);
  if (!target.ok()) return fail("invalid_target", target.status().message());
  if (state.size() > 2000) return fail("invalid_request", "state is longer than 2000 characters.");

  PendingRequest pending;
  pending.id = NewOpaqueSecret(kRequestIdPrefix);
  pending.client_id = c.client_id;
  pending.client_kind = c.kind;
  pending.client_name = c.client_name;
  pending.logo_uri = c.logo_uri;
  pending.client_uri = c.client_uri;
  pending.redirect_uri = redirect_uri;
  pending.state = state;
  pending.code_challenge = challenge;
  pending.resource = target->url;
  pending.resource_path = target->path;
  pending.scopes = *scopes;
  pending.refresh_allowed = c.AllowsRefresh();
  pending.issuer = base;
  pending.expires_at_ms = NowMs() + kAuthorizationRequestTtlMs;
  if (Status s = store_.InsertRequest(pending); !s.ok()) return core::Unavailable(s);
  return Redirect("/connect?request=" + FormEncode(pending.id));
}

std::optional<v1::Problem> OAuthApi::CheckEndpointAccess(const PendingRequest& request,
                                                         const std::string& org_id,
                                                         std::string* function_name) {
  if (request.resource_path == "/mcp") return std::nullopt;
  std::string rest = request.resource_path.substr(std::string("/mcp/functions/").size());
  const std::string function_id = rest.substr(0, rest.find('/'));
  const std::string version =
      rest.find('/') == std::string::npos ? "" : rest.substr(rest.find('/') + 1);
  auto view = ViewFunction(bus_, function_id, org_id, options_.bus_timeout_ms);
  if (!view.ok()) {
    return core::MakeProblem("service_unavailable",
                             "The registry did not answer; try again shortly.");
  }
  const v1::FunctionView& f = view->function();
  // A private function of another organization is not there at all, as on every route.
  if (!view->found() || (f.org_id() != org_id && !f.is_public())) {
    return core::MakeProblem("function_not_found", "No function " + function_id + " exists.");
  }
  if (!f.mcp()) {
    return core::MakeProblem("forbidden", "This function is not an MCP server.");
  }
  if (f.org_id() != org_id && !view->added()) {
    return core::MakeProblem("function_not_added",
                             "Add this public function to your workspace in the marketplace "
                             "first, then connect the app again.");
  }
  if (!version.empty() &&
      std::none_of(f.versions().begin(), f.versions().end(),
                   [&](const v1::VersionView& v) { return v.version() == version; })) {
    return core::MakeProblem("version_not_found", "No published version " + version + ".");
  }
  *function_name = f.name();
  return std::nullopt;
}

v1::HttpResponse OAuthApi::ShowRequest(const core::Request& request) {
  if (auto refused = RequireMember(request)) return *refused;
  auto found = store_.FindRequest(request.params[0]);
  if (!found.ok()) return core::Unavailable(found.status());
  if (!found->has_value()) {
    return core::ProblemResponse("oauth_request_not_found",
                                 "This authorization request expired or was answered; start "
                                 "again from the app.");
  }
  const PendingRequest& p = **found;
  const v1::Principal& who = request.principal();
  std::string function_name;
  if (auto problem = CheckEndpointAccess(p, who.org_id(), &function_name)) {
    return core::ProblemResponse(*problem);
  }
  JsonWriter w;
  w.BeginObject().Field("request_id", p.id);
  w.Key("client")
      .BeginObject()
      .Field("client_id", p.client_id)
      .Field("name", p.client_name)
      .FieldOrNull("logo_uri", p.logo_uri)
      .FieldOrNull("client_uri", p.client_uri)
      .Field("redirect_uri", p.redirect_uri)
      .Field("redirect_host", RedirectHost(p.redirect_uri))
      .Field("kind", p.client_kind)
      .EndObject();
  w.Field("resource", p.resource);
  WriteEndpoint(w, p.resource_path, function_name);
  w.Key("scopes").BeginArray();
  for (const auto& s : p.scopes) {
    w.BeginObject().Field("name", s).Field("description", ScopeDescription(s)).EndObject();
  }
  w.EndArray();
  w.Key("organizations").BeginArray();
  w.BeginObject().Field("id", who.org_id()).Field("name", who.org_name()).EndObject();
  w.EndArray();
  w.Field("expires_at", FormatRfc3339(p.expires_at_ms)).EndObject();
  return core::JsonResponse(200, w.Take());
}

v1::HttpResponse OAuthApi::Approve(const core::Request& request) {
  if (auto refused = RequireMember(request)) return *refused;
  const v1::Principal& who = request.principal();
  auto doc = ParseJson(request.http.body());
  simdjson::dom::object body;
  if (!doc.ok() || doc->root.get_object().get(body)) {
    return core::ProblemResponse("invalid_json", "Send a JSON object as the request body.");
  }
  std::string org_id;
  if (GetString(body, "organization_id", &org_id) != Field::kOk || org_id != who.org_id()) {
    return core::ProblemResponse(core::ValidationProblem(
        "organization_id", "must be the id of an organization you belong to"));
  }
  std::optional<int64_t> cap;
  int64_t value = 0;
  switch (GetInt(body, "spending_cap_micro_usd", &value)) {
    case Field::kOk:
      if (value <= 0 || value > kMaxCapMicroUsd) {
        return core::ProblemResponse(core::ValidationProblem(
            "spending_cap_micro_usd", "must be a positive amount of at most $1,000,000, or null"));
      }
      cap = value;
      break;
    case Field::kWrongType: {
      simdjson::dom::element e;
      if (body["spending_cap_micro_usd"].get(e) || !e.is_null()) {
        return core::ProblemResponse(core::ValidationProblem(
            "spending_cap_micro_usd", "must be an integer number of micro-dollars, or null"));
      }
      break;
    }
    case Field::kAbsent:
      break;
  }
  auto found = store_.FindRequest(request.params[0]);
  if (!found.ok()) return core::Unavailable(found.status());
  if (!found->has_value()) {
    return core::ProblemResponse("oauth_request_not_found",
                                 "This authorization request expired or was answered; start "
                                 "again from the app.");
  }
  const PendingRequest& p = **found;
  std::string function_name;
  if (auto problem = CheckEndpointAccess(p, org_id, &function_name)) {
    return core::ProblemResponse(*problem);
  }
  const std::string code = NewOpaqueSecret(kCodePrefix);
  auto grant = store_.Approve(p.id, who.user_id(), org_id, cap, Sha256(code),
                              NowMs() + kAuthorizationCodeTtlMs);
  if (!grant.ok()) return core::Unavailable(grant.status());
  if (!grant->has_value()) {
    return core::ProblemResponse("oauth_request_not_found",
                                 "This authorization request was answered meanwhile.");
  }
  log::Info("oauth grant created")
      .Str("grant_id", (*grant)->id)
      .Str("client_id", p.client_id)
      .Str("org_id", org_id)
      .Str("resource", p.resource_path);
  std::vector<std::pair<std::string, std::string>> params = {{"code", code}};
  if (!p.state.empty()) params.emplace_back("state", p.state);
  params.emplace_back("iss", p.issuer);
  JsonWriter w;
  w.BeginObject().Field("redirect_to", WithQuery(p.redirect_uri, params)).EndObject();
  v1::HttpResponse r = core::JsonResponse(200, w.Take());
  (*r.mutable_headers())["Cache-Control"] = "no-store";
  return r;
}

v1::HttpResponse OAuthApi::Deny(const core::Request& request) {
  if (auto refused = RequireMember(request)) return *refused;
  auto found = store_.FindRequest(request.params[0]);
  if (!found.ok()) return core::Unavailable(found.status());
  auto answered = found->has_value() ? store_.AnswerRequest((*found)->id) : Result<bool>(false);
  if (!answered.ok()) return core::Unavailable(answered.status());
  if (!*answered) {
    return core::ProblemResponse("oauth_request_not_found",
                                 "This authorization request expired or was answered; start "
                                 "again from the app.");
  }
  const PendingRequest& p = **found;
  JsonWriter w;
  w.BeginObject()
      .Field("redirect_to", ErrorRedirect(p.redirect_uri, "access_denied",
                                          "The user denied the request.", p.state, p.issuer))
      .EndObject();
  return core::JsonResponse(200, w.Take());
}

std::optional<OAuthClient> OAuthApi::AuthenticateClient(
    const core::Request& request, const std::map<std::string, std::string>& form,
    v1::HttpResponse* error) {
  std::string client_id = FormParam(form, "client_id").value_or("");
  std::string secret = FormParam(form, "client_secret").value_or("");
  const std::string authorization = Header(request, "authorization");
  bool basic = false;
  if (authorization.size() > 6 &&
      (authorization.rfind("Basic ", 0) == 0 || authorization.rfind("basic ", 0) == 0)) {
    std::string decoded;
    size_t colon = std::string::npos;
    if (!Base64Decode(authorization.substr(6), &decoded) ||
        (colon = decoded.find(':')) == std::string::npos) {
      *error = OAuthError(401, "invalid_client", "Malformed Basic credentials.");
      return std::nullopt;
    }
    // RFC 6749 §2.3.1: each part is form-encoded before base64.
    auto parsed = ParseForm("u=" + decoded.substr(0, colon) + "&p=" + decoded.substr(colon + 1));
    if (!parsed.ok()) {
      *error = OAuthError(401, "invalid_client", "Malformed Basic credentials.");
      return std::nullopt;
    }
    if (!client_id.empty() && client_id != (*parsed)["u"]) {
      *error = OAuthError(400, "invalid_request", "client_id differs from the Basic credentials.");
      return std::nullopt;
    }
    client_id = (*parsed)["u"];
    secret = (*parsed)["p"];
    basic = true;
  }
  if (client_id.empty()) {
    *error = OAuthError(401, "invalid_client", "Send client_id, or authenticate the client.");
    return std::nullopt;
  }
  std::string why;
  auto client = FindClient(client_id, &why);
  if (!client.ok()) {
    *error = OAuthError(503, "temporarily_unavailable", "Try again shortly.");
    return std::nullopt;
  }
  if (!client->has_value()) {
    *error = OAuthError(401, "invalid_client", why);
    return std::nullopt;
  }
  const OAuthClient& c = **client;
  if (!c.client_secret_sha256.empty()) {
    const bool method_ok = (basic && c.token_endpoint_auth_method == "client_secret_basic") ||
                           (!basic && c.token_endpoint_auth_method == "client_secret_post") ||
                           c.kind == "pre_registered";
    if (secret.empty() || !method_ok ||
        !ConstantTimeEquals(Sha256(secret), c.client_secret_sha256)) {
      *error = OAuthError(401, "invalid_client", "Client authentication failed.");
      return std::nullopt;
    }
  } else if (!secret.empty()) {
    *error = OAuthError(401, "invalid_client", "This client is public: it has no secret.");
    return std::nullopt;
  }
  return c;
}

std::optional<OAuthClient> OAuthApi::ReadClientForm(const core::Request& request,
                                                    std::map<std::string, std::string>* form,
                                                    v1::HttpResponse* error) {
  const std::string type = Header(request, "content-type");
  if (type.rfind("application/x-www-form-urlencoded", 0) != 0) {
    *error = OAuthError(400, "invalid_request",
                        "Send the parameters as application/x-www-form-urlencoded.");
    return std::nullopt;
  }
  auto parsed = ParseForm(request.http.body());
  if (!parsed.ok()) {
    *error = OAuthError(400, "invalid_request", parsed.status().message());
    return std::nullopt;
  }
  *form = std::move(*parsed);
  return AuthenticateClient(request, *form, error);
}

v1::HttpResponse OAuthApi::Token(const core::Request& request) {
  std::map<std::string, std::string> form_fields;
  v1::HttpResponse error;
  auto client = ReadClientForm(request, &form_fields, &error);
  if (!client) return error;
  const auto* form = &form_fields;
  const std::string grant_type = FormParam(*form, "grant_type").value_or("");
  if (grant_type == "authorization_code") return ExchangeCode(*client, *form);
  if (grant_type == "refresh_token") {
    if (!client->AllowsRefresh()) {
      return OAuthError(400, "unauthorized_client",
                        "This client is not registered for the refresh_token grant.");
    }
    return Refresh(*client, *form);
  }
  return OAuthError(400, "unsupported_grant_type",
                    "grant_type must be authorization_code or refresh_token.");
}

v1::HttpResponse OAuthApi::ExchangeCode(const OAuthClient& client,
                                        const std::map<std::string, std::string>& form) {
  const std::string code = FormParam(form, "code").value_or("");
  if (code.empty()) return OAuthError(400, "invalid_request", "code is required.");
  auto redeemed = store_.RedeemCode(Sha256(code));
  if (!redeemed.ok()) return OAuthError(503, "temporarily_unavailable", "Try again shortly.");
  const Redemption& r = *redeemed;
  auto invalid = [](std::string_view why) { return OAuthError(400, "invalid_grant", why); };
  if (r.outcome == Redemption::Outcome::kUnknown) return invalid("Unknown authorization code.");
  if (r.outcome == Redemption::Outcome::kReused) {
    // Someone presented a code twice: whatever its first use issued may be in other hands.
    if (Status s = RevokeGrantEverywhere(r.grant.id); !s.ok()) {
      log::Error("oauth grant not revoked after code reuse")
          .Str("grant_id", r.grant.id)
          .Str("error", s.ToString());
    }
    log::Warn("oauth code reused: grant revoked")
        .Str("grant_id", r.grant.id)
        .Str("client_id", client.client_id);
    return invalid("This authorization code was already used; its tokens are revoked.");
  }
  // From here the code is spent: any refusal also ends its grant, which issued nothing yet.
  auto refuse = [&](std::string_view why) {
    if (Status s = RevokeGrantEverywhere(r.grant.id); !s.ok()) {
      log::Error("oauth grant not revoked").Str("grant_id", r.grant.id).Str("error", s.ToString());
    }
    return invalid(why);
  };
  if (r.client_id != client.client_id) return refuse("The code was issued to another client.");
  if (r.expired) return refuse("The authorization code expired.");
  if (auto uri = FormParam(form, "redirect_uri"); uri && *uri != r.redirect_uri) {
    return refuse("redirect_uri differs from the authorization request's.");
  }
  if (!VerifyPkceS256(FormParam(form, "code_verifier").value_or(""), r.code_challenge)) {
    return refuse("code_verifier does not match the code_challenge.");
  }
  if (auto resource = FormParam(form, "resource"); resource && *resource != r.grant.resource) {
    return OAuthError(400, "invalid_target",
                      "resource differs from the one the authorization was granted for.");
  }
  if (r.grant.revoked) return invalid("The authorization was revoked.");
  return IssueTokens(r.grant);
}

v1::HttpResponse OAuthApi::Refresh(const OAuthClient& client,
                                   const std::map<std::string, std::string>& form) {
  const std::string token = FormParam(form, "refresh_token").value_or("");
  if (token.empty()) return OAuthError(400, "invalid_request", "refresh_token is required.");
  auto rotated = store_.RotateRefresh(Sha256(token));
  if (!rotated.ok()) return OAuthError(503, "temporarily_unavailable", "Try again shortly.");
  const Rotation& r = *rotated;
  auto invalid = [](std::string_view why) { return OAuthError(400, "invalid_grant", why); };
  if (r.outcome == Rotation::Outcome::kUnknown) {
    return invalid("Unknown, expired or revoked refresh token.");
  }
  if (r.outcome == Rotation::Outcome::kReused || r.grant.client_id != client.client_id) {
    // A rotated refresh token came back (or another client holds one): the family is
    // compromised.
    if (Status s = RevokeGrantEverywhere(r.grant.id); !s.ok()) {
      log::Error("oauth grant not revoked after refresh reuse")
          .Str("grant_id", r.grant.id)
          .Str("error", s.ToString());
    }
    log::Warn("oauth refresh token reused: grant revoked")
        .Str("grant_id", r.grant.id)
        .Str("client_id", client.client_id);
    return invalid("This refresh token was already used; the authorization is revoked.");
  }
  if (auto resource = FormParam(form, "resource"); resource && *resource != r.grant.resource) {
    return OAuthError(400, "invalid_target",
                      "resource differs from the one the authorization was granted for.");
  }
  return IssueTokens(r.grant);
}

v1::HttpResponse OAuthApi::IssueTokens(const Grant& grant) {
  const int64_t now = NowMs();
  const std::string access = NewOpaqueSecret(kAccessTokenPrefix);
  NewTokens tokens;
  tokens.access_sha256 = Sha256(access);
  tokens.access_expires_at_ms = now + kAccessTokenTtlMs;
  std::string refresh;
  if (grant.refresh_allowed) {
    refresh = NewOpaqueSecret(kRefreshTokenPrefix);
    tokens.refresh_sha256 = Sha256(refresh);
    tokens.refresh_expires_at_ms = now + kRefreshTokenTtlMs;
  }
  if (Status s = store_.InsertTokens(grant.id, tokens); !s.ok()) {
    log::Error("oauth tokens not stored").Str("grant_id", grant.id).Str("error", s.ToString());
    return OAuthError(503, "temporarily_unavailable", "Try again shortly.");
  }
  return TokenResponse(access, kAccessTokenTtlMs / 1000, refresh, JoinScopes(grant.scopes));
}

Status OAuthApi::RevokeGrantEverywhere(const std::string& grant_id) {
  auto hashes = store_.RevokeGrant(grant_id);
  if (!hashes.ok()) return hashes.status();
  Status result = Status::Ok();
  if (!hashes->has_value()) return result;
  for (const auto& hash : **hashes) {
    if (Status s = directory_.BroadcastRevoked(hash); !s.ok()) result = s;
  }
  return result;
}

v1::HttpResponse OAuthApi::Revoke(const core::Request& request) {
  std::map<std::string, std::string> form_fields;
  v1::HttpResponse error;
  auto client = ReadClientForm(request, &form_fields, &error);
  if (!client) return error;
  const auto* form = &form_fields;
  const std::string token = FormParam(*form, "token").value_or("");
  if (token.empty()) return OAuthError(400, "invalid_request", "token is required.");
  const std::string hash = Sha256(token);
  auto owner = store_.FindToken(hash);
  if (!owner.ok()) return OAuthError(503, "temporarily_unavailable", "Try again shortly.");
  // RFC 7009 §2.2: an unknown token is not an error.
  if (!owner->has_value()) return core::JsonResponse(200, "{}");
  if ((*owner)->client_id != client->client_id) {
    return OAuthError(400, "unauthorized_client", "The token was issued to another client.");
  }
  if ((*owner)->kind == "refresh") {
    // Revoking a refresh token ends the whole authorization (RFC 7009 §2.1).
    if (Status s = RevokeGrantEverywhere((*owner)->grant_id); !s.ok()) {
      return OAuthError(503, "temporarily_unavailable", "Try again shortly.");
    }
  } else {
    auto live = store_.RevokeAccessToken(hash);
    if (!live.ok()) return OAuthError(503, "temporarily_unavailable", "Try again shortly.");
    if (Status s = directory_.BroadcastRevoked(hash); !s.ok()) {
      return OAuthError(503, "temporarily_unavailable", "Try again shortly.");
    }
  }
  return core::JsonResponse(200, "{}");
}

v1::HttpResponse OAuthApi::RegisterClient(const core::Request& request) {
  // Registration is open (MCP clients register themselves), so it is throttled per address
  // like sign-ups: nobody fills the client table by the million.
  auto client_address = request.http.headers().find(std::string(core::kClientAddressHeader));
  const std::string address =
      client_address == request.http.headers().end() ? "unknown" : client_address->second;
  auto locked = throttle_.LockedFor({SignInThrottle::RegistrationSubject(address)});
  if (!locked.ok()) return core::Unavailable(locked.status());
  if (*locked > 0) {
    throttle_.CountRefusal();
    v1::Problem problem =
        core::MakeProblem("rate_limited",
                          "Too many client registrations from this address; wait for the time in "
                          "Retry-After.");
    problem.set_retry_after_s(static_cast<int32_t>(RetryAfterSeconds(*locked)));
    return core::ProblemResponse(std::move(problem));
  }
  if (Status s = throttle_.RecordRegistration(address); !s.ok()) return core::Unavailable(s);
  auto doc = ParseJson(request.http.body());
  simdjson::dom::object body;
  if (!doc.ok() || doc->root.get_object().get(body)) {
    return OAuthError(400, "invalid_client_metadata", "Send the client's metadata as JSON.");
  }
  OAuthClient c;
  c.kind = "registered";
  if (GetStringArray(body, "redirect_uris", &c.redirect_uris) != Field::kOk ||
      c.redirect_uris.empty() || c.redirect_uris.size() > kMaxRedirectUris) {
    return OAuthError(400, "invalid_redirect_uri",
                      "redirect_uris must be an array of 1 to 10 URIs.");
  }
  for (const auto& uri : c.redirect_uris) {
    if (auto bad = CheckRedirectUri(uri)) {
      return OAuthError(400, "invalid_redirect_uri", "The redirect URI " + uri + " " + *bad + ".");
    }
  }
  switch (GetString(body, "client_name", &c.client_name)) {
    case Field::kOk:
      if (c.client_name.empty() || c.client_name.size() > kMaxClientNameChars) {
        return OAuthError(400, "invalid_client_metadata",
                          "client_name must have 1 to 100 characters.");
      }
      break;
    case Field::kWrongType:
      return OAuthError(400, "invalid_client_metadata", "client_name must be a string.");
    case Field::kAbsent:
      c.client_name = RedirectHost(c.redirect_uris[0]);
      break;
  }
  for (auto [key, out] : {std::pair{"logo_uri", &c.logo_uri}, {"client_uri", &c.client_uri}}) {
    Field f = GetString(body, key, out);
    if (f == Field::kWrongType || (f == Field::kOk && !out->empty() && !IsHttpsUrl(*out))) {
      return OAuthError(400, "invalid_client_metadata",
                        std::string(key) + " must be an https URL.");
    }
  }
  switch (GetStringArray(body, "grant_types", &c.grant_types)) {
    case Field::kOk:
      break;
    case Field::kWrongType:
      return OAuthError(400, "invalid_client_metadata", "grant_types must be an array.");
    case Field::kAbsent:
      c.grant_types = {"authorization_code"};
      break;
  }
  for (const auto& g : c.grant_types) {
    if (g != "authorization_code" && g != "refresh_token") {
      return OAuthError(400, "invalid_client_metadata",
                        "grant_types may hold authorization_code and refresh_token only.");
    }
  }
  if (std::find(c.grant_types.begin(), c.grant_types.end(), "authorization_code") ==
      c.grant_types.end()) {
    return OAuthError(400, "invalid_client_metadata", "grant_types must hold authorization_code.");
  }
  std::vector<std::string> response_types;
  if (GetStringArray(body, "response_types", &response_types) == Field::kOk &&
      (response_types.size() != 1 || response_types[0] != "code")) {
    return OAuthError(400, "invalid_client_metadata", "response_types must be [\"code\"].");
  }
  switch (GetString(body, "token_endpoint_auth_method", &c.token_endpoint_auth_method)) {
    case Field::kOk:
      break;
    case Field::kWrongType:
      return OAuthError(400, "invalid_client_metadata",
                        "token_endpoint_auth_method must be a string.");
    case Field::kAbsent:
      c.token_endpoint_auth_method = "client_secret_basic";  // RFC 7591 §2
      break;
  }
  const auto& method = c.token_endpoint_auth_method;
  if (method != "none" && method != "client_secret_basic" && method != "client_secret_post") {
    return OAuthError(400, "invalid_client_metadata",
                      "token_endpoint_auth_method must be none, client_secret_basic or "
                      "client_secret_post.");
  }
  std::string scope;
  if (GetString(body, "scope", &scope) == Field::kOk) {
    if (auto parsed = ParseScopes(scope); !parsed.ok()) {
      return OAuthError(400, "invalid_client_metadata", parsed.status().message());
    }
  }
  c.client_id = NewUuid();
  std::string secret;
  if (method != "none") {
    secret = NewOpaqueSecret(kClientSecretPrefix);
    c.client_secret_sha256 = Sha256(secret);
  }
  if (Status s = store_.InsertClient(c); !s.ok()) return core::Unavailable(s);
  log::Info("oauth client registered").Str("client_id", c.client_id).Str("auth_method", method);

  JsonWriter w;
  w.BeginObject().Field("client_id", c.client_id);
  if (!secret.empty()) w.Field("client_secret", secret).Field("client_secret_expires_at", 0);
  w.Field("client_id_issued_at", NowMs() / 1000).Field("client_name", c.client_name);
  w.Key("redirect_uris").BeginArray();
  for (const auto& uri : c.redirect_uris) w.String(uri);
  w.EndArray().Key("grant_types").BeginArray();
  for (const auto& g : c.grant_types) w.String(g);
  w.EndArray();
  w.Key("response_types").BeginArray().String("code").EndArray();
  w.Field("token_endpoint_auth_method", method);
  if (!c.logo_uri.empty()) w.Field("logo_uri", c.logo_uri);
  if (!c.client_uri.empty()) w.Field("client_uri", c.client_uri);
  w.EndObject();
  v1::HttpResponse r = core::JsonResponse(201, w.Take());
  (*r.mutable_headers())["Cache-Control"] = "no-store";
  return r;
}

v1::HttpResponse OAuthApi::ListGrants(const core::Request& request) {
  if (auto refused = RequireMember(request)) return *refused;
  const v1::Principal& who = request.principal();
  auto grants = store_.ListGrants(who.org_id(), who.user_id());
  if (!grants.ok()) return core::Unavailable(grants.status());

  // What each grant's calls cost is billing's; without its answer the list still shows.
  std::unordered_map<std::string, v1::GrantUsage> usage;
  bool usage_known = false;
  if (!grants->empty()) {
    v1::GrantUsageRequest ask;
    ask.set_org_id(who.org_id());
    for (const auto& g : *grants) ask.add_grant_ids(g.id);
    auto answer =
        bus_.Request(core::kGrantUsageSubject, ask.SerializeAsString(), options_.bus_timeout_ms);
    v1::GrantUsageReply reply;
    if (answer.ok() && reply.ParseFromString(answer->data) && !reply.has_problem()) {
      usage_known = true;
      for (const auto& u : reply.usage()) usage[u.grant_id()] = u;
    } else {
      log::Warn("grant usage unavailable")
          .Str("error", answer.ok() ? "billing refused" : answer.status().ToString());
    }
  }
  JsonWriter w;
  w.BeginObject().Key("items").BeginArray();
  for (const auto& g : *grants) {
    w.BeginObject().Field("grant_id", g.id);
    w.Key("client")
        .BeginObject()
        .Field("client_id", g.client_id)
        .Field("name", g.client_name)
        .FieldOrNull("logo_uri", g.logo_uri)
        .Field("redirect_host", RedirectHost(g.redirect_uri))
        .EndObject();
    w.Field("resource", g.resource);
    WriteEndpoint(w, g.resource_path, "");
    w.Key("scopes").BeginArray();
    for (const auto& s : g.scopes) w.String(s);
    w.EndArray();
    w.Key("organization").BeginObject().Field("id", g.org_id).Field("name", g.org_name).EndObject();
    w.Key("spending_cap_micro_usd");
    if (g.cap_micro_usd) {
      w.Int(*g.cap_micro_usd);
    } else {
      w.Null();
    }
    w.Field("created_at", FormatRfc3339(g.created_at_ms));
    auto u = usage.find(g.id);
    w.Key("last_used_at");
    if (u != usage.end() && u->second.last_used_ms() > 0) {
      w.String(FormatRfc3339(u->second.last_used_ms()));
    } else {
      w.Null();
    }
    if (usage_known) {
      w.Field("calls", u == usage.end() ? int64_t{0} : u->second.calls());
      w.Field("spent_micro_usd", u == usage.end() ? int64_t{0} : u->second.spent_micro_usd());
    } else {
      w.Key("calls").Null().Key("spent_micro_usd").Null();
    }
    w.Field("status", g.revoked ? "revoked" : "active").EndObject();
  }
  w.EndArray().EndObject();
  return core::JsonResponse(200, w.Take());
}

v1::HttpResponse OAuthApi::RevokeGrant(const core::Request& request) {
  if (auto refused = RequireMember(request)) return *refused;
  const std::string& grant_id = request.params[0];
  auto not_found = [] {
    return core::ProblemResponse("grant_not_found", "No such connected app.");
  };
  if (!IsUuid(grant_id)) return not_found();
  // Only the member who made a grant lists it; only they revoke it.
  auto mine = store_.ListGrants(request.principal().org_id(), request.principal().user_id());
  if (!mine.ok()) return core::Unavailable(mine.status());
  if (std::none_of(mine->begin(), mine->end(),
                   [&](const Grant& g) { return g.id == AsciiLower(grant_id); })) {
    return not_found();
  }
  if (Status s = RevokeGrantEverywhere(AsciiLower(grant_id)); !s.ok()) {
    return core::Unavailable(s);
  }
  log::Info("oauth grant revoked").Str("grant_id", grant_id);
  return core::NoContent();
}

}  // namespace toolgate::auth
