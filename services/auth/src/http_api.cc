#include "toolgate/auth/http_api.h"

#include "toolgate/auth/account_rules.h"
#include "toolgate/auth/key_rules.h"
#include "toolgate/base/crypto.h"
#include "toolgate/base/json.h"
#include "toolgate/base/json_writer.h"
#include "toolgate/base/log.h"
#include "toolgate/base/strings.h"
#include "toolgate/base/time.h"
#include "toolgate/core/problem.h"

namespace toolgate::auth {
namespace {

// The fields of a JSON object body, and the field errors found while reading them.
class Form {
 public:
  // nullopt, with *error set to the 400 answer, when body is not a JSON object.
  static std::optional<Form> Parse(const std::string& body, v1::HttpResponse* error) {
    auto doc = ParseJson(body);
    simdjson::dom::object obj;
    if (!doc.ok() || doc->root.get_object().get(obj)) {
      *error = core::ProblemResponse("invalid_json", "Send a JSON object as the request body.");
      return std::nullopt;
    }
    return Form(std::move(doc).value(), obj);
  }

  // The string at key; nullopt when absent, or when of another type (then a field error).
  std::optional<std::string> OptionalString(std::string_view key) {
    std::string value;
    switch (GetString(obj_, key, &value)) {
      case Field::kOk:
        return value;
      case Field::kWrongType:
        Fail(key, "must be a string");
        return std::nullopt;
      case Field::kAbsent:
        break;
    }
    return std::nullopt;
  }
  // The string at key, empty when absent or of another type.
  std::string String(std::string_view key) { return OptionalString(key).value_or(""); }
  std::optional<std::vector<std::string>> OptionalStrings(std::string_view key) {
    std::vector<std::string> values;
    switch (GetStringArray(obj_, key, &values)) {
      case Field::kOk:
        return values;
      case Field::kWrongType:
        Fail(key, "must be an array of strings");
        return std::nullopt;
      case Field::kAbsent:
        break;
    }
    return std::nullopt;
  }

  // Records message for field when there is one.
  void Check(std::string_view field, const std::optional<std::string>& message) {
    if (message) Fail(field, *message);
  }
  // Records the first error of each field; a later one (such as "is required" after "must be
  // a string") would only repeat it.
  void Fail(std::string_view field, std::string_view message) {
    for (const auto& e : problem_.errors()) {
      if (e.field() == field) return;
    }
    if (!failed_) {
      problem_ = core::ValidationProblem(field, message);
      failed_ = true;
    } else {
      core::AddFieldError(&problem_, field, message);
    }
  }
  bool failed() const { return failed_; }
  // The 422 answer listing every field error; only when failed().
  v1::HttpResponse Problem() const { return core::ProblemResponse(problem_); }

 private:
  Form(ParsedJson doc, simdjson::dom::object obj) : doc_(std::move(doc)), obj_(obj) {}
  ParsedJson doc_;  // owns what obj_ points into
  simdjson::dom::object obj_;
  v1::Problem problem_;
  bool failed_ = false;
};

struct User {
  std::string id;
  std::string email;
};

// {user: {id, email} | null, organization: {id, name}}
std::string AccountJson(const std::optional<User>& user, const std::string& org_id,
                        const std::string& org_name) {
  JsonWriter w;
  w.BeginObject().Key("user");
  if (user) {
    w.BeginObject().Field("id", user->id).Field("email", user->email).EndObject();
  } else {
    w.Null();
  }
  w.Key("organization").BeginObject().Field("id", org_id).Field("name", org_name).EndObject();
  w.EndObject();
  return w.Take();
}

std::string AccountJson(const Account& a) {
  return AccountJson(User{a.user_id, a.email}, a.org_id, a.org_name);
}

void WriteScopes(JsonWriter& w, const std::vector<std::string>& scopes) {
  w.Key("scopes").BeginArray();
  for (const auto& s : scopes) w.String(s);
  w.EndArray();
}

// A new session for account: the answer carries its cookie.
v1::HttpResponse SignedIn(int status, const Account& account, const std::string& token) {
  v1::HttpResponse response = core::JsonResponse(status, AccountJson(account));
  response.add_set_cookies(SessionCookie(token, kSessionLifetimeS));
  return response;
}

NewSession MakeSession(const std::string& token) {
  return NewSession{Sha256(token), NowMs() + kSessionLifetimeS * 1000};
}

v1::HttpResponse InvalidCredentials() {
  return core::ProblemResponse("invalid_credentials",
                               "Check the email and password, or sign up first.");
}

// The client's address as the edge reports it.
std::string ClientOf(const core::Request& request) {
  auto it = request.http.headers().find(std::string(core::kClientAddressHeader));
  return it == request.http.headers().end() || it->second.empty() ? "unknown" : it->second;
}

// 429 for a locked subject. The same answer whether or not the e-mail has an account.
v1::HttpResponse Throttled(SignInThrottle& throttle, int64_t remaining_ms, std::string_view what,
                           const std::string& client) {
  throttle.CountRefusal();
  log::Warn("sign-in throttled")
      .Str("route", std::string(what))
      .Str("client", client)
      .Int("retry_after_ms", remaining_ms)
      .Int("refused_total", throttle.refused());
  v1::Problem problem = core::MakeProblem(
      "rate_limited", "Too many attempts; wait for the time in Retry-After, then try again.");
  problem.set_retry_after_s(static_cast<int32_t>(RetryAfterSeconds(remaining_ms)));
  return core::ProblemResponse(std::move(problem));
}

}  // namespace

void HttpApi::Register(core::Router& router) {
  router.Add(
      "POST", "/auth/signup", [this](const core::Request& r) { return Signup(r); }, false);
  router.Add(
      "POST", "/auth/login", [this](const core::Request& r) { return Login(r); }, false);
  router.Add(
      "POST", "/auth/logout", [this](const core::Request& r) { return Logout(r); }, false);
  router.Add("GET", "/me", [this](const core::Request& r) { return Me(r); });
  router.Add("POST", "/api-keys", [this](const core::Request& r) { return CreateKey(r); });
  router.Add("GET", "/api-keys", [this](const core::Request& r) { return ListKeys(r); });
  router.Add("DELETE", "/api-keys/{id}", [this](const core::Request& r) { return RevokeKey(r); });
}

v1::HttpResponse HttpApi::Signup(const core::Request& request) {
  v1::HttpResponse error;
  auto form = Form::Parse(request.http.body(), &error);
  if (!form) return error;
  std::string email(TrimAsciiWhitespace(form->String("email")));
  std::string password = form->String("password");
  std::string organization(TrimAsciiWhitespace(form->String("organization")));
  form->Check("email", CheckEmail(email));
  form->Check("password", CheckPassword(password));
  form->Check("organization", CheckOrganizationName(organization));
  if (form->failed()) return form->Problem();

  const std::string client = ClientOf(request);
  auto locked = throttle_.LockedFor({SignInThrottle::SignupSubject(client)});
  if (!locked.ok()) return core::Unavailable(locked.status());
  if (*locked > 0) return Throttled(throttle_, *locked, "signup", client);
  if (Status s = throttle_.RecordSignup(client); !s.ok()) return core::Unavailable(s);

  auto hash = HashPassword(password);
  if (!hash.ok()) return core::Unavailable(hash.status());
  std::string token = NewSessionToken();
  auto account = accounts_.CreateAccount(email, *hash, organization, MakeSession(token));
  if (!account.ok()) {
    if (account.status().code() == Status::Code::kConflict) {
      return core::ProblemResponse("email_taken",
                                   "An account with this email exists; sign in instead.");
    }
    return core::Unavailable(account.status());
  }
  log::Info("organization created").Str("org_id", account->org_id).Str("user_id", account->user_id);
  return SignedIn(201, *account, token);
}

v1::HttpResponse HttpApi::Login(const core::Request& request) {
  v1::HttpResponse error;
  auto form = Form::Parse(request.http.body(), &error);
  if (!form) return error;
  std::string email(TrimAsciiWhitespace(form->String("email")));
  std::string password = form->String("password");
  if (email.empty()) form->Fail("email", "is required");
  if (password.empty()) form->Fail("password", "is required");
  if (form->failed()) return form->Problem();

  // Locked subjects are refused before any password check, so the right password is refused
  // too, and an unknown e-mail locks and answers exactly like a known one.
  const std::string client = ClientOf(request);
  auto locked = throttle_.LockedFor(
      {SignInThrottle::AccountSubject(email), SignInThrottle::ClientSubject(client)});
  if (!locked.ok()) return core::Unavailable(locked.status());
  if (*locked > 0) return Throttled(throttle_, *locked, "login", client);
  auto failed = [&] {
    if (Status s = throttle_.RecordLoginFailure(email, client); !s.ok()) {
      return core::Unavailable(s);
    }
    return InvalidCredentials();
  };

  auto found = accounts_.FindByEmail(email);
  if (!found.ok()) return core::Unavailable(found.status());
  if (!found->has_value()) {
    BurnPasswordCheck(password);
    return failed();
  }
  const AccountCredentials& credentials = **found;
  if (!VerifyPassword(credentials.password_hash, password)) return failed();
  if (Status s = throttle_.ClearAccount(email); !s.ok()) return core::Unavailable(s);
  std::string token = NewSessionToken();
  Status s = accounts_.CreateSession(credentials.account, MakeSession(token));
  if (!s.ok()) return core::Unavailable(s);
  return SignedIn(200, credentials.account, token);
}

v1::HttpResponse HttpApi::Logout(const core::Request& request) {
  if (!request.http.session_token().empty()) {
    Status s = accounts_.DeleteSession(Sha256(request.http.session_token()));
    if (!s.ok()) return core::Unavailable(s);
  }
  v1::HttpResponse response = core::NoContent();
  response.add_set_cookies(ClearedSessionCookie());
  return response;
}

v1::HttpResponse HttpApi::Me(const core::Request& request) {
  const v1::Principal& p = request.principal();
  std::optional<User> user;
  if (!p.user_id().empty()) {
    auto email = accounts_.UserEmail(p.user_id());
    if (!email.ok()) return core::Unavailable(email.status());
    if (email->has_value()) user = User{p.user_id(), **email};
  }
  return core::JsonResponse(200, AccountJson(user, p.org_id(), p.org_name()));
}

v1::HttpResponse HttpApi::CreateKey(const core::Request& request) {
  v1::HttpResponse error;
  auto form = Form::Parse(request.http.body(), &error);
  if (!form) return error;
  std::string name(TrimAsciiWhitespace(form->String("name")));
  form->Check("name", CheckKeyName(name));
  std::optional<std::string> requested_expiry = form->OptionalString("expires_at");
  auto expires_at_ms = ResolveKeyExpiry(requested_expiry, NowMs());
  if (!expires_at_ms.ok()) form->Fail("expires_at", expires_at_ms.status().message());
  std::optional<std::vector<std::string>> requested_scopes = form->OptionalStrings("scopes");
  auto scopes = ResolveScopes(requested_scopes);
  if (!scopes.ok()) form->Fail("scopes", scopes.status().message());
  if (form->failed()) return form->Problem();

  GeneratedKey generated = GenerateApiKey();
  const v1::Principal& p = request.principal();
  auto listing = keys_.Insert(NewKey{p.org_id(), p.user_id(), name, generated.prefix,
                                     generated.sha256, *scopes, *expires_at_ms});
  if (!listing.ok()) return core::Unavailable(listing.status());
  JsonWriter w;
  w.BeginObject()
      .Field("id", listing->id)
      .Field("name", listing->name)
      .Field("key", generated.key)
      .Field("prefix", listing->prefix);
  WriteScopes(w, listing->scopes);
  w.Field("expires_at", FormatRfc3339(listing->expires_at_ms))
      .Field("created_at", FormatRfc3339(listing->created_at_ms))
      .EndObject();
  log::Info("api key created").Str("org_id", p.org_id()).Str("key_id", listing->id);
  return core::JsonResponse(201, w.Take());
}

v1::HttpResponse HttpApi::ListKeys(const core::Request& request) {
  v1::HttpResponse error;
  std::optional<int> limit = core::ParseLimit(request, &error);
  if (!limit) return error;
  std::string after;
  if (std::string cursor = request.Query("cursor"); !cursor.empty()) {
    std::optional<std::string> position = core::DecodeCursor(cursor);
    if (!position) {
      return core::ProblemResponse(
          core::ValidationProblem("cursor", "must be a next_cursor returned by this list"));
    }
    after = *position;
  }
  auto page = keys_.List(request.principal().org_id(), *limit, after);
  if (!page.ok()) {
    if (page.status().code() == Status::Code::kInvalidArgument) {
      return core::ProblemResponse(
          core::ValidationProblem("cursor", "must be a next_cursor returned by this list"));
    }
    return core::Unavailable(page.status());
  }
  int64_t now_ms = NowMs();
  JsonWriter w;
  w.BeginObject().Key("items").BeginArray();
  for (const KeyListing& k : page->items) {
    w.BeginObject().Field("id", k.id).Field("name", k.name).Field("prefix", k.prefix);
    WriteScopes(w, k.scopes);
    w.Field("expires_at", FormatRfc3339(k.expires_at_ms))
        .Field("created_at", FormatRfc3339(k.created_at_ms))
        .FieldOrNull("last_used_at", k.last_used_at_ms ? FormatRfc3339(*k.last_used_at_ms) : "")
        .Field("status", KeyStatusName(ComputeKeyStatus(k.expires_at_ms, k.revoked, now_ms)))
        .EndObject();
  }
  w.EndArray().FieldOrNull("next_cursor",
                           page->next_after.empty() ? "" : core::EncodeCursor(page->next_after));
  w.EndObject();
  return core::JsonResponse(200, w.Take());
}

v1::HttpResponse HttpApi::RevokeKey(const core::Request& request) {
  const std::string& id = request.params[0];
  auto not_found = [] {
    return core::ProblemResponse("not_found", "No API key with this id in your organization.");
  };
  if (!IsUuid(id)) return not_found();
  auto revoked = keys_.Revoke(request.principal().org_id(), id);
  if (!revoked.ok()) return core::Unavailable(revoked.status());
  if (!revoked->has_value()) return not_found();
  // Revocation is idempotent, so a client that sees 503 here retries and the broadcast goes
  // out again.
  Status s = directory_.BroadcastRevoked(**revoked);
  if (!s.ok()) return core::Unavailable(s);
  log::Info("api key revoked").Str("org_id", request.principal().org_id()).Str("key_id", id);
  return core::NoContent();
}

}  // namespace toolgate::auth
