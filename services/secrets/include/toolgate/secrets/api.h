// The secrets routes on tg.secrets.http (contract section 6):
//   POST /secrets {name, value}   201 {id, name, created_at, updated_at}; 409 duplicate name
//   GET /secrets                  {items: [{id, name, created_at, updated_at}], next_cursor}
//   PUT /secrets/{id} {value}     200 {id, name, created_at, updated_at}
//   DELETE /secrets/{id}          204
// Another organization's secret is 404, like a missing one. No endpoint returns a value, and no
// value is ever logged. Replacing or deleting a secret is announced on tg.events.secret_changed.
#pragma once

#include "toolgate/bus/bus.h"
#include "toolgate/core/http.h"
#include "toolgate/secrets/store.h"

namespace toolgate::secrets {

class SecretsApi {
 public:
  // store and bus must outlive the api. Thread-safe.
  SecretsApi(SecretStore& store, bus::Bus& bus) : store_(store), bus_(bus) {}

  void AddRoutes(core::Router& router);

  v1::HttpResponse Create(const core::Request& r);
  v1::HttpResponse List(const core::Request& r);
  v1::HttpResponse Update(const core::Request& r);
  v1::HttpResponse Delete(const core::Request& r);

 private:
  void AnnounceChange(const std::string& id);

  SecretStore& store_;
  bus::Bus& bus_;
};

}  // namespace toolgate::secrets
