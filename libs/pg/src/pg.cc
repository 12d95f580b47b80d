#include "toolgate/pg/pg.h"

#include <poll.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <unordered_map>

#include "toolgate/base/log.h"
#include "toolgate/base/time.h"
#include "toolgate/metrics/metrics.h"

namespace toolgate::pg {

std::string Rows::Str(int row, int col) const {
  return std::string(PQgetvalue(res_.get(), row, col), PQgetlength(res_.get(), row, col));
}

int64_t Rows::Int(int row, int col) const {
  return std::strtoll(PQgetvalue(res_.get(), row, col), nullptr, 10);
}

bool Rows::Bool(int row, int col) const {
  return PQgetvalue(res_.get(), row, col)[0] == 't';
}

int64_t Rows::affected() const {
  const char* n = PQcmdTuples(res_.get());
  return n && *n ? std::strtoll(n, nullptr, 10) : 0;
}

struct Session {
  explicit Session(PGconn* c) : conn(c) {}
  ~Session() { PQfinish(conn); }
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  PGconn* conn;
  // SQL text -> the name it was prepared under on this connection.
  std::unordered_map<std::string, std::string> prepared;
  uint64_t next_name = 1;  // names are never reused, even after a statement is forgotten
};

namespace {

// SQLSTATEs that mean a prepared statement is gone or stale (a DEALLOCATE, or a table whose
// columns changed under a cached plan): prepared afresh, the statement would run.
bool IsStalePreparedStatement(const char* state) {
  return state && (std::strcmp(state, "26000") == 0 || std::strcmp(state, "0A000") == 0);
}

Result<Rows> StatusOf(PGconn* conn, PGresult* res) {
  ExecStatusType st = PQresultStatus(res);
  if (st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK) return Rows(res);
  const char* state = PQresultErrorField(res, PG_DIAG_SQLSTATE);
  std::string msg = PQresultErrorMessage(res);
  while (!msg.empty() && msg.back() == '\n') msg.pop_back();
  PQclear(res);
  if (PQstatus(conn) != CONNECTION_OK) return Status::Unavailable("postgres: " + msg);
  if (state && (std::strcmp(state, "23505") == 0 || std::strcmp(state, "23P01") == 0)) {
    return Status::Conflict(msg);
  }
  if (state && (std::strncmp(state, "22", 2) == 0 || std::strncmp(state, "23", 2) == 0)) {
    return Status::InvalidArgument(msg);
  }
  return Status::Internal("postgres: " + msg);
}

// The name sql is prepared under on this session, preparing it first if need be; empty when
// the session holds its maximum (the statement then runs unnamed). Fails as the statement would
// (a syntax error, an unknown table) when PostgreSQL refuses to prepare it.
Result<std::string> PreparedName(Session& s, const std::string& sql, int nparams) {
  auto it = s.prepared.find(sql);
  if (it != s.prepared.end()) return it->second;
  if (s.prepared.size() >= kMaxPreparedPerConnection) return std::string();
  std::string name = "tg_" + std::to_string(s.next_name++);
  auto ready = StatusOf(s.conn, PQprepare(s.conn, name.c_str(), sql.c_str(), nparams, nullptr));
  if (!ready.ok()) return ready.status();
  s.prepared.emplace(sql, name);
  return name;
}

Result<Rows> RunOnce(Session& s, std::string_view sql, const Params& params) {
  std::string text(sql);
  // Without parameters the simple protocol is used, which also runs multi-statement scripts
  // (migrations); with parameters, the extended protocol keeps values out of the SQL text.
  if (params.empty()) return StatusOf(s.conn, PQexec(s.conn, text.c_str()));
  std::vector<const char*> values;
  values.reserve(params.size());
  for (const auto& p : params) values.push_back(p ? p->c_str() : nullptr);
  const int n = static_cast<int>(params.size());
  for (int attempt = 0;; ++attempt) {
    auto name = PreparedName(s, text, n);
    if (!name.ok()) return name.status();
    PGresult* res =
        name->empty()
            ? PQexecParams(s.conn, text.c_str(), n, nullptr, values.data(), nullptr, nullptr, 0)
            : PQexecPrepared(s.conn, name->c_str(), n, values.data(), nullptr, nullptr, 0);
    if (!name->empty() && attempt == 0 &&
        IsStalePreparedStatement(PQresultErrorField(res, PG_DIAG_SQLSTATE))) {
      // Forget it; outside a transaction, prepare it again and run it once more (inside one,
      // the error has aborted the transaction, and the caller's retry prepares it again).
      s.prepared.erase(text);
      PQclear(PQexec(s.conn, ("DEALLOCATE " + *name).c_str()));
      if (PQtransactionStatus(s.conn) == PQTRANS_IDLE) {
        PQclear(res);
        continue;
      }
    }
    return StatusOf(s.conn, res);
  }
}

// Counts one statement's round trip and its time, and an error by kind: unavailable (the
// server), conflict (a constraint), invalid (bad data) or internal.
Result<Rows> Run(Session& s, std::string_view sql, const Params& params) {
  static auto& trips = metrics::Registry::Global()
                           .Counter("toolgate_pg_round_trips_total",
                                    "Statements sent to PostgreSQL (each a round trip).")
                           .With({});
  static auto& seconds = metrics::Registry::Global()
                             .Histogram("toolgate_pg_round_trip_duration_seconds",
                                        "Time of one statement's round trip to PostgreSQL.")
                             .With({});
  static auto& errors = metrics::Registry::Global().Counter(
      "toolgate_pg_errors_total",
      "Statements PostgreSQL failed: kind unavailable, conflict, invalid or internal.", {"kind"});
  static auto& unavailable = errors.With({"unavailable"});
  static auto& conflict = errors.With({"conflict"});
  static auto& invalid = errors.With({"invalid"});
  static auto& internal = errors.With({"internal"});
  int64_t start = MonotonicUs();
  Result<Rows> rows = RunOnce(s, sql, params);
  trips.Inc();
  seconds.Observe(static_cast<double>(MonotonicUs() - start) / 1e6);
  if (!rows.ok()) {
    switch (rows.status().code()) {
      case Status::Code::kUnavailable:
        unavailable.Inc();
        break;
      case Status::Code::kConflict:
        conflict.Inc();
        break;
      case Status::Code::kInvalidArgument:
        invalid.Inc();
        break;
      default:
        internal.Inc();
    }
  }
  return rows;
}

}  // namespace

Result<Rows> Conn::Exec(std::string_view sql, const Params& params) {
  return Run(*session_, sql, params);
}

Pool::Pool(std::string conninfo, size_t size, std::string password)
    : conninfo_(std::move(conninfo)), password_(std::move(password)), size_(size) {}

Pool::~Pool() {
  for (Session* s : idle_) delete s;
}

Result<Session*> Pool::Acquire() {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait(lock, [this] { return !idle_.empty() || open_ < size_; });
  if (!idle_.empty()) {
    Session* s = idle_.back();
    idle_.pop_back();
    return s;
  }
  ++open_;
  lock.unlock();
  // dbname with expand_dbname: conninfo's own settings, then the password on top.
  const char* keys[] = {"dbname", password_.empty() ? nullptr : "password", nullptr};
  const char* values[] = {conninfo_.c_str(), password_.c_str(), nullptr};
  PGconn* c = PQconnectdbParams(keys, values, 1);
  if (PQstatus(c) != CONNECTION_OK) {
    std::string msg = PQerrorMessage(c);
    PQfinish(c);
    lock.lock();
    --open_;
    cv_.notify_one();
    return Status::Unavailable("postgres connect: " + msg);
  }
  return new Session(c);
}

void Pool::Release(Session* session) {
  std::lock_guard<std::mutex> lock(mu_);
  if (PQstatus(session->conn) != CONNECTION_OK) {
    // The server went away: every idle connection is as stale as this one.
    delete session;
    --open_;
    for (Session* idle : idle_) delete idle;
    open_ -= idle_.size();
    idle_.clear();
  } else if (PQtransactionStatus(session->conn) != PQTRANS_IDLE) {
    delete session;  // left mid-transaction: never hand it out again
    --open_;
  } else {
    idle_.push_back(session);
  }
  cv_.notify_one();
}

Result<Rows> Pool::Exec(std::string_view sql, const Params& params) {
  for (int attempt = 0;; ++attempt) {
    auto session = Acquire();
    if (!session.ok()) return session.status();
    auto rows = Run(**session, sql, params);
    bool broken = PQstatus((*session)->conn) != CONNECTION_OK;
    Release(*session);
    // A statement on a connection that died before the server saw it is safe to retry once:
    // PostgreSQL restarted under us and the pool held a stale connection.
    if (rows.ok() || !broken || attempt > 0) return rows;
  }
}

Status Pool::Transaction(const std::function<Status(Conn&)>& fn) {
  auto acquired = Acquire();
  if (!acquired.ok()) return acquired.status();
  Session* session = *acquired;
  Conn conn(session);
  auto begin = conn.Exec("BEGIN");
  if (!begin.ok()) {
    Release(session);
    return begin.status();
  }
  Status s = fn(conn);
  if (s.ok()) {
    auto commit = conn.Exec("COMMIT");
    if (!commit.ok()) s = commit.status();
  }
  if (!s.ok() && PQstatus(session->conn) == CONNECTION_OK) conn.Exec("ROLLBACK");
  Release(session);
  return s;
}

Status Pool::WaitReady(int timeout_ms) {
  int64_t deadline = MonotonicUs() + int64_t{timeout_ms} * 1000;
  for (;;) {
    auto rows = Exec("SELECT 1");
    if (rows.ok()) return Status::Ok();
    if (MonotonicUs() > deadline) return rows.status();
    std::this_thread::sleep_for(std::chrono::milliseconds(100));  // server still starting
  }
}

Status Migrate(Pool& pool, std::string_view schema, const std::vector<std::string_view>& steps) {
  std::string s(schema);
  return pool.Transaction([&](Conn& conn) -> Status {
    auto lock = conn.Exec("SELECT pg_advisory_xact_lock(hashtext($1))", {s});
    if (!lock.ok()) return lock.status();
    for (const char* sql : {"CREATE SCHEMA IF NOT EXISTS {s}",
                            "CREATE TABLE IF NOT EXISTS {s}.schema_migrations ("
                            "version integer PRIMARY KEY, applied_at timestamptz NOT NULL "
                            "DEFAULT now())"}) {
      std::string stmt = sql;
      stmt.replace(stmt.find("{s}"), 3, s);
      auto r = conn.Exec(stmt);
      if (!r.ok()) return r.status();
    }
    auto applied = conn.Exec("SELECT coalesce(max(version), 0) FROM " + s + ".schema_migrations");
    if (!applied.ok()) return applied.status();
    int64_t done = applied->Int(0, 0);
    for (size_t i = static_cast<size_t>(done); i < steps.size(); ++i) {
      auto r = conn.Exec(steps[i]);
      if (!r.ok()) {
        return Status::Internal(s + " migration " + std::to_string(i + 1) + ": " +
                                r.status().message());
      }
      auto mark = conn.Exec("INSERT INTO " + s + ".schema_migrations(version) VALUES ($1)",
                            {std::to_string(i + 1)});
      if (!mark.ok()) return mark.status();
      log::Info("migration applied").Str("schema", s).Int("version", static_cast<int64_t>(i + 1));
    }
    return Status::Ok();
  });
}

namespace {

// Waits until the connection's socket is ready for events or the deadline passes.
bool WaitSocket(PGconn* c, short events, std::chrono::steady_clock::time_point deadline) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
      deadline - std::chrono::steady_clock::now());
  if (left.count() <= 0) return false;
  pollfd p{PQsocket(c), events, 0};
  return ::poll(&p, 1, static_cast<int>(left.count())) > 0;
}

}  // namespace

Status Ping(const std::string& conninfo, const std::string& password,
            std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  const char* keys[] = {"dbname", password.empty() ? nullptr : "password", nullptr};
  const char* values[] = {conninfo.c_str(), password.c_str(), nullptr};
  std::unique_ptr<PGconn, decltype(&PQfinish)> conn(PQconnectStartParams(keys, values, 1),
                                                    PQfinish);
  PGconn* c = conn.get();
  if (c == nullptr || PQstatus(c) == CONNECTION_BAD) {
    return Status::Unavailable(std::string("postgres connect: ") +
                               (c ? PQerrorMessage(c) : "out of memory"));
  }
  // libpq's asynchronous connect: poll the socket in the direction it asks for.
  for (PostgresPollingStatusType st = PGRES_POLLING_WRITING; st != PGRES_POLLING_OK;) {
    if (st == PGRES_POLLING_FAILED) {
      return Status::Unavailable(std::string("postgres connect: ") + PQerrorMessage(c));
    }
    if (!WaitSocket(c, st == PGRES_POLLING_READING ? POLLIN : POLLOUT, deadline)) {
      return Status::Timeout("postgres did not accept a connection in time");
    }
    st = PQconnectPoll(c);
  }
  if (PQsetnonblocking(c, 1) != 0 || !PQsendQuery(c, "SELECT 1")) {
    return Status::Unavailable(std::string("postgres: ") + PQerrorMessage(c));
  }
  while (PQflush(c) == 1) {
    if (!WaitSocket(c, POLLOUT, deadline))
      return Status::Timeout("postgres did not answer in time");
  }
  Status result = Status::Unavailable("postgres: no result");
  for (;;) {
    while (PQisBusy(c)) {
      if (!WaitSocket(c, POLLIN, deadline))
        return Status::Timeout("postgres did not answer in time");
      if (!PQconsumeInput(c))
        return Status::Unavailable(std::string("postgres: ") + PQerrorMessage(c));
    }
    PGresult* r = PQgetResult(c);
    if (r == nullptr) return result;
    result = PQresultStatus(r) == PGRES_TUPLES_OK
                 ? Status::Ok()
                 : Status::Unavailable(std::string("postgres: ") + PQresultErrorMessage(r));
    PQclear(r);
  }
}

}  // namespace toolgate::pg
