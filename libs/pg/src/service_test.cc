#include "toolgate/pg/service.h"

#include <gtest/gtest.h>

#include "toolgate/core/service_main.h"

namespace toolgate::pg {
namespace {

// Flags as a service defines them, pointing at a port where no server listens.
Flags Unreachable(const char* wait_ms) {
  Flags flags("test", "");
  core::DefinePostgresFlags(flags);
  std::string url = "--postgres-url=postgresql://toolgate@127.0.0.1:1/toolgate?connect_timeout=1";
  std::string wait = std::string("--pg-wait-ms=") + wait_ms;
  char* argv[] = {const_cast<char*>("test"), url.data(), wait.data()};
  flags.Parse(3, argv);
  return flags;
}

TEST(PgServiceTest, EveryServiceWaitsTheSameDefaultTime) {
  Flags flags("test", "");
  core::DefinePostgresFlags(flags);
  EXPECT_EQ(flags.GetInt("pg-wait-ms"), 60000);
}

TEST(PgServiceDeathTest, ExitsWithOneLineWhenPostgresNeverAnswers) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(ConnectFromFlags("svc", Unreachable("0"), 1), testing::ExitedWithCode(1),
              "svc: cannot reach PostgreSQL: ");
}

}  // namespace
}  // namespace toolgate::pg
