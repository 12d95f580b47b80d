// libs/pg against the system's real PostgreSQL: statements with parameters are prepared once per
// connection and run by name after, with the same results and errors as unnamed ones, and a
// prepared statement outlives neither its connection nor a change of the tables under it.
#include "toolgate/pg/pg.h"

#include <gtest/gtest.h>

#include <csignal>
#include <string>

#include "system.h"

namespace toolgate::testing {
namespace {

const auto* const kEnv = ::testing::AddGlobalTestEnvironment(new SharedSystem());

constexpr const char* kAddOne = "SELECT $1::integer + 1";

// One connection, so every statement of a test runs on the same server session and
// pg_prepared_statements shows what this pool prepared.
std::unique_ptr<pg::Pool> OneConnection() {
  auto pool = std::make_unique<pg::Pool>(g_system->State("postgres_url"), 1,
                                         g_system->Secret("postgres.password"));
  EXPECT_TRUE(pool->WaitReady(30000).ok());
  return pool;
}

// How many times the session ran the statement with this text by name (0 when it holds none).
int64_t RunsByName(pg::Pool& pool, const std::string& sql) {
  auto rows = pool.Exec(
      "SELECT coalesce(sum(generic_plans + custom_plans), 0) FROM pg_prepared_statements "
      "WHERE statement = '" +
      sql + "'");
  EXPECT_TRUE(rows.ok()) << rows.status().ToString();
  return rows.ok() ? rows->Int(0, 0) : -1;
}

int64_t PreparedCount(pg::Pool& pool) {
  auto rows = pool.Exec("SELECT count(*) FROM pg_prepared_statements");
  EXPECT_TRUE(rows.ok()) << rows.status().ToString();
  return rows.ok() ? rows->Int(0, 0) : -1;
}

TEST(PgPreparedTest, AStatementIsPreparedOnceAndRunByNameAfter) {
  auto pool = OneConnection();
  for (int i = 0; i < 3; ++i) {
    auto rows = pool->Exec(kAddOne, {std::to_string(40 + i)});
    ASSERT_TRUE(rows.ok()) << rows.status().ToString();
    EXPECT_EQ(rows->Int(0, 0), 41 + i);
  }
  EXPECT_EQ(PreparedCount(*pool), 1);
  EXPECT_EQ(RunsByName(*pool, kAddOne), 3);
}

TEST(PgPreparedTest, NullsAndQuotesTravelAsParameters) {
  auto pool = OneConnection();
  for (int i = 0; i < 2; ++i) {  // prepared by the first run, by name in the second
    auto rows = pool->Exec("SELECT $1::text IS NULL, $2::text", {std::nullopt, "it's; DROP"});
    ASSERT_TRUE(rows.ok()) << rows.status().ToString();
    EXPECT_TRUE(rows->Bool(0, 0));
    EXPECT_EQ(rows->Str(0, 1), "it's; DROP");
  }
}

TEST(PgPreparedTest, ErrorsAreTheStatementsOwnAndNothingIsKeptForThem) {
  auto pool = OneConnection();
  auto syntax = pool->Exec("SELEKT $1::integer", {"1"});
  ASSERT_FALSE(syntax.ok());
  EXPECT_EQ(syntax.status().code(), Status::Code::kInternal);
  EXPECT_NE(syntax.status().message().find("syntax error"), std::string::npos);
  EXPECT_EQ(PreparedCount(*pool), 0);

  ASSERT_TRUE(pool->Exec("CREATE TEMP TABLE once (id integer PRIMARY KEY)").ok());
  ASSERT_TRUE(pool->Exec("INSERT INTO once VALUES ($1)", {"7"}).ok());
  auto again = pool->Exec("INSERT INTO once VALUES ($1)", {"7"});
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.status().code(), Status::Code::kConflict);
  auto bad_value = pool->Exec("INSERT INTO once VALUES ($1)", {"seven"});
  ASSERT_FALSE(bad_value.ok());
  EXPECT_EQ(bad_value.status().code(), Status::Code::kInvalidArgument);
  auto count = pool->Exec("SELECT count(*) FROM once WHERE id = $1", {"7"});
  ASSERT_TRUE(count.ok());
  EXPECT_EQ(count->Int(0, 0), 1);
}

TEST(PgPreparedTest, AChangedTableGetsTheStatementPreparedAgain) {
  auto pool = OneConnection();
  ASSERT_TRUE(pool->Exec("CREATE TEMP TABLE shape (a integer)").ok());
  ASSERT_TRUE(pool->Exec("INSERT INTO shape VALUES (1)").ok());
  const char* select = "SELECT * FROM shape WHERE a = $1";
  ASSERT_TRUE(pool->Exec(select, {"1"}).ok());
  // The cached plan's result has one column; PostgreSQL refuses to run it with two.
  ASSERT_TRUE(pool->Exec("ALTER TABLE shape ADD COLUMN b integer DEFAULT 2").ok());
  auto rows = pool->Exec(select, {"1"});
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  EXPECT_EQ(rows->Str(0, 1), "2");

  // Inside a transaction the refusal aborts it, so the caller sees it; the retry succeeds.
  ASSERT_TRUE(pool->Exec("ALTER TABLE shape ADD COLUMN c integer DEFAULT 3").ok());
  Status in_tx = pool->Transaction([&](pg::Conn& conn) -> Status {
    auto r = conn.Exec(select, {"1"});
    return r.ok() ? Status::Ok() : r.status();
  });
  EXPECT_FALSE(in_tx.ok());
  std::string third;
  Status retried = pool->Transaction([&](pg::Conn& conn) -> Status {
    auto r = conn.Exec(select, {"1"});
    if (!r.ok()) return r.status();
    third = r->Str(0, 2);
    return Status::Ok();
  });
  ASSERT_TRUE(retried.ok()) << retried.ToString();
  EXPECT_EQ(third, "3");
}

TEST(PgPreparedTest, AConnectionPreparesAtMostItsBound) {
  auto pool = OneConnection();
  const size_t n = pg::kMaxPreparedPerConnection + 10;
  for (size_t i = 0; i < n; ++i) {
    auto rows = pool->Exec("SELECT $1::integer + " + std::to_string(i), {"1"});
    ASSERT_TRUE(rows.ok()) << rows.status().ToString();
    ASSERT_EQ(rows->Int(0, 0), static_cast<int64_t>(1 + i));
  }
  EXPECT_EQ(PreparedCount(*pool), static_cast<int64_t>(pg::kMaxPreparedPerConnection));
}

// Last: it restarts the system's PostgreSQL.
TEST(PgPreparedTest, StatementsArePreparedAgainAfterAPostgresRestart) {
  auto pool = OneConnection();
  ASSERT_TRUE(pool->Exec(kAddOne, {"1"}).ok());
  pid_t old = g_system->Pid("postgres");
  g_system->Kill("postgres", SIGKILL);
  ASSERT_TRUE(g_system->WaitRestarted("postgres", old, 60000));
  // Waiting on a pool of its own leaves this pool's connection as it is: dead.
  pg::Pool probe(g_system->State("postgres_url"), 1, g_system->Secret("postgres.password"));
  ASSERT_TRUE(probe.WaitReady(60000).ok());
  // The pool finds its connection dead, reconnects, and prepares the statement afresh.
  auto rows = pool->Exec(kAddOne, {"1"});
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  EXPECT_EQ(rows->Int(0, 0), 2);
  EXPECT_EQ(RunsByName(*pool, kAddOne), 1);
}

}  // namespace
}  // namespace toolgate::testing
