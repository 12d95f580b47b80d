// PostgreSQL access on libpq: a small connection pool, parameterised queries, transactions and
// schema migrations.
//
// Every query uses server-side parameters ($1, $2, ...): values are never spliced into SQL.
// A statement with parameters is prepared on a connection the first time that connection runs
// it, and executed by name from then on, so PostgreSQL parses and plans a hot statement once
// per connection instead of once per call. Each connection keeps at most
// kMaxPreparedPerConnection statements; others run unnamed.
// A connection found broken is reset and the statement retried once when it is safe to do so
// (outside a transaction), so a PostgreSQL restart costs the callers in flight an Unavailable
// status, not the process. Thread-safe.
#pragma once

#include <libpq-fe.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "toolgate/base/status.h"

namespace toolgate::pg {

using Param = std::optional<std::string>;  // nullopt is SQL NULL
using Params = std::vector<Param>;

// Bounds the server memory a connection's prepared statements take, should a caller build SQL
// text from data (statement texts are otherwise a fixed set in the code).
inline constexpr size_t kMaxPreparedPerConnection = 256;

struct Session;  // a libpq connection and the statements prepared on it

// The rows of one statement. Movable; owns the libpq result.
class Rows {
 public:
  explicit Rows(PGresult* res) : res_(res, PQclear) {}
  int size() const { return PQntuples(res_.get()); }
  bool empty() const { return size() == 0; }
  bool IsNull(int row, int col) const { return PQgetisnull(res_.get(), row, col); }
  std::string Str(int row, int col) const;
  int64_t Int(int row, int col) const;
  bool Bool(int row, int col) const;
  // Rows changed by an INSERT, UPDATE or DELETE.
  int64_t affected() const;

 private:
  std::shared_ptr<PGresult> res_;
};

// One connection borrowed from the pool, for a transaction.
class Conn {
 public:
  // Conflict for a unique or exclusion violation, InvalidArgument for other data errors
  // (SQLSTATE class 22 and 23), Unavailable when the server is unreachable.
  Result<Rows> Exec(std::string_view sql, const Params& params = {});

 private:
  friend class Pool;
  explicit Conn(Session* session) : session_(session) {}
  Session* session_;
};

class Pool {
 public:
  // conninfo is a libpq connection string or URI. Connections open on first use. password,
  // when not empty, is sent for password authentication (SCRAM) and overrides any in conninfo;
  // it is kept out of conninfo so that it never appears in a URL that gets logged or shown.
  Pool(std::string conninfo, size_t size, std::string password = {});
  ~Pool();
  Pool(const Pool&) = delete;
  Pool& operator=(const Pool&) = delete;

  // Runs one statement in its own implicit transaction.
  Result<Rows> Exec(std::string_view sql, const Params& params = {});
  // Runs fn between BEGIN and COMMIT on one connection; any non-OK status from fn (or from
  // COMMIT) rolls back and is returned.
  Status Transaction(const std::function<Status(Conn&)>& fn);
  // Waits until a connection succeeds or timeout_ms passes.
  Status WaitReady(int timeout_ms);

 private:
  Result<Session*> Acquire();
  void Release(Session* session);
  std::string conninfo_;
  std::string password_;
  size_t size_;
  std::mutex mu_;
  std::condition_variable cv_;  // a connection was returned
  std::vector<Session*> idle_;  // guarded by mu_
  size_t open_ = 0;             // guarded by mu_
};

// Opens a connection of its own, runs SELECT 1 and closes it, all within timeout: for a
// readiness probe, which must answer even when the server accepts connections but never replies
// (a stopped process, a full backlog), where a pooled connection would wait forever. Timeout
// when the server did not answer in time, Unavailable when it cannot be reached or refuses.
// Thread-safe. password as for Pool.
Status Ping(const std::string& conninfo, const std::string& password,
            std::chrono::milliseconds timeout);

// Applies the numbered migrations of a schema once each, in order, under an advisory lock so
// replicas starting together do not race. steps[i] is migration i+1.
Status Migrate(Pool& pool, std::string_view schema, const std::vector<std::string_view>& steps);

}  // namespace toolgate::pg
