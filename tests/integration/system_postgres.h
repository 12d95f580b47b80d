// Reading what the services stored, for the tests whose assertion is about the database itself
// (a row that must or must not exist, an index, a migration). Tests link toolgate_pg to use it.
// Everything else goes through the HTTP API.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <string>

#include "system.h"
#include "toolgate/pg/pg.h"

namespace toolgate::testing {

// A one-connection pool on the system's PostgreSQL, as its services log in; database names
// another database of the same server (one a test created).
inline std::unique_ptr<pg::Pool> SystemPostgres(const System& system,
                                                const std::string& database = "toolgate") {
  std::string url = system.State("postgres_url");
  url = url.substr(0, url.rfind('/') + 1) + database;
  return std::make_unique<pg::Pool>(url, 1, system.Secret("postgres.password"));
}

// The first column of the first row of a SELECT count(*)...; a failed statement fails the test
// and returns -1.
inline int64_t CountRows(pg::Pool& pool, const std::string& sql, const pg::Params& params = {}) {
  auto rows = pool.Exec(sql, params);
  if (!rows.ok()) {
    ADD_FAILURE() << sql << ": " << rows.status().ToString();
    return -1;
  }
  return rows->Int(0, 0);
}

}  // namespace toolgate::testing
