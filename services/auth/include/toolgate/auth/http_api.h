// HttpApi: auth's management routes (contract section 6), served on tg.auth.http.
//
//   POST /auth/signup, POST /auth/login, POST /auth/logout   public; signup and login throttled
//                                                            (sign_in_throttle.h)
//   GET /me, POST /api-keys, GET /api-keys, DELETE /api-keys/{id}
//
// Handlers run on the service's worker pool and may block on PostgreSQL and Argon2id. Every
// answer is JSON or a problem; nothing is half-written (signup is one transaction).
// Thread-safe; everything passed to the constructor must outlive the HttpApi and the Router it
// registers with.
#pragma once

#include "toolgate/auth/account_store.h"
#include "toolgate/auth/key_directory.h"
#include "toolgate/auth/key_store.h"
#include "toolgate/auth/sign_in_throttle.h"
#include "toolgate/core/http.h"

namespace toolgate::auth {

class HttpApi {
 public:
  HttpApi(AccountStore& accounts, KeyStore& keys, KeyDirectory& directory, SignInThrottle& throttle)
      : accounts_(accounts), keys_(keys), directory_(directory), throttle_(throttle) {}

  void Register(core::Router& router);

 private:
  v1::HttpResponse Signup(const core::Request& request);
  v1::HttpResponse Login(const core::Request& request);
  v1::HttpResponse Logout(const core::Request& request);
  v1::HttpResponse Me(const core::Request& request);
  v1::HttpResponse CreateKey(const core::Request& request);
  v1::HttpResponse ListKeys(const core::Request& request);
  v1::HttpResponse RevokeKey(const core::Request& request);

  AccountStore& accounts_;
  KeyStore& keys_;
  KeyDirectory& directory_;
  SignInThrottle& throttle_;
};

}  // namespace toolgate::auth
