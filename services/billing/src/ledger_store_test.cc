#include "toolgate/billing/ledger_store.h"

#include <gtest/gtest.h>

#include "toolgate/billing/http_api.h"

namespace toolgate::billing {
namespace {

TEST(LedgerStoreTest, ArrayLiteralQuotesEveryElement) {
  EXPECT_EQ(PgArrayLiteral({}), "{}");
  EXPECT_EQ(PgArrayLiteral({"a", "", std::nullopt}), R"({"a","",NULL})");
  EXPECT_EQ(PgArrayLiteral({"NULL"}), R"({"NULL"})");  // the string, not SQL NULL
  EXPECT_EQ(PgArrayLiteral({R"(say "hi" \ {x,y})"}), R"({"say \"hi\" \\ {x,y}"})");
  EXPECT_EQ(PgArrayLiteral({"line\nbreak"}), "{\"line\nbreak\"}");
}

TEST(LedgerViewTest, TopUpOmitsExecutionFields) {
  LedgerItem item;
  item.id = 42;
  item.entry.type = EntryType::kTopUp;
  item.entry.amount_micro_usd = 5'000'000;
  item.created_ms = 1'801'353'600'000;
  EXPECT_EQ(LedgerItemJson(item),
            R"({"id":"42","type":"top_up","compute_micro_usd":0,"function_micro_usd":0,)"
            R"("amount_micro_usd":5000000,"created_at":"2027-01-31T00:00:00Z"})");
}

TEST(LedgerViewTest, GrantShowsWhyAndWhoGrantedIt) {
  LedgerItem item;
  item.id = 44;
  item.entry.type = EntryType::kGrant;
  item.entry.amount_micro_usd = 2'000'000;
  item.entry.reason = "pilot customer";
  item.entry.granted_by_user_id = "u1";
  item.entry.granted_by_email = "ops@example.com";
  item.created_ms = 1'801'353'600'000;
  EXPECT_EQ(
      LedgerItemJson(item),
      R"({"id":"44","type":"grant","compute_micro_usd":0,"function_micro_usd":0,)"
      R"("amount_micro_usd":2000000,"created_at":"2027-01-31T00:00:00Z",)"
      R"("reason":"pilot customer","granted_by":{"user_id":"u1","email":"ops@example.com"}})");
}

TEST(LedgerViewTest, ChargeShowsItsExecution) {
  LedgerItem item;
  item.id = 43;
  item.entry.type = EntryType::kCharge;
  item.entry.execution_id = "e1";
  item.entry.function_id = "f1";
  item.entry.version = "1.0";
  item.entry.compute_micro_usd = 3;
  item.entry.function_micro_usd = 5000;
  item.entry.amount_micro_usd = -5003;
  item.created_ms = 1'801'353'600'000;
  EXPECT_EQ(LedgerItemJson(item),
            R"({"id":"43","type":"charge","execution_id":"e1","function_id":"f1",)"
            R"("version":"1.0","compute_micro_usd":3,"function_micro_usd":5000,)"
            R"("amount_micro_usd":-5003,"created_at":"2027-01-31T00:00:00Z"})");
}

TEST(LedgerViewTest, ExecutionShowsLogsAndEgressOnlyWhenAsked) {
  ExecutionItem item;
  ExecutionRecord& r = item.record;
  r.execution_id = "e1";
  r.function_id = "f1";
  r.version = "1.0";
  r.status_code = 200;
  r.runtime_ms = 12;
  r.memory_used_mb = 9;
  r.compute_type = "CPU";
  r.charge = {1, 0, 1, 0};
  r.logs = "hello\n";
  r.egress_json = R"([{"method":"GET","host":"api.x.com"}])";
  r.egress_bytes = 120;
  item.created_ms = 1'801'353'600'000;
  std::string common =
      R"({"execution_id":"e1","function_id":"f1","version":"1.0","status_code":200,)"
      R"("runtime_ms":12,"memory_used_mb":9,"compute_type":"CPU","cost":{"compute_micro_usd":1,)"
      R"("function_micro_usd":0,"total_micro_usd":1},"trace_id":null,)"
      R"("created_at":"2027-01-31T00:00:00Z","egress_bytes":120,"client_name":null)";
  EXPECT_EQ(ExecutionJson(item, false), common + "}");
  EXPECT_EQ(ExecutionJson(item, true),
            common + R"(,"logs":"hello\n","egress":[{"method":"GET","host":"api.x.com"}]})");
}

TEST(LedgerViewTest, AnExecutionMadeWithAGrantNamesItsClient) {
  ExecutionItem item;
  ExecutionRecord& r = item.record;
  r.execution_id = "e1";
  r.function_id = "f1";
  r.version = "1.0";
  r.compute_type = "CPU";
  r.grant_id = "5f0c2b7e-9a41-4d3c-8e2b-1a0f4c3d2e1f";
  r.client_name = "Claude \"desktop\"";
  item.created_ms = 1'801'353'600'000;
  std::string json = ExecutionJson(item, false);
  EXPECT_NE(json.find(R"("client_name":"Claude \"desktop\"")"), std::string::npos) << json;
  // The grant itself stays billing's: the listing shows the app, not its credential.
  EXPECT_EQ(json.find(r.grant_id), std::string::npos) << json;
  // A client that gave no name is still a connected app: "", not null.
  r.client_name.clear();
  EXPECT_NE(ExecutionJson(item, true).find(R"("client_name":"")"), std::string::npos);
}

}  // namespace
}  // namespace toolgate::billing
