#include "mcp_notices.h"

#include <gtest/gtest.h>

namespace toolgate::edge {
namespace {

v1::HandlerNotice Progress(double progress, std::optional<double> total, std::string message) {
  v1::HandlerNotice n;
  n.mutable_progress()->set_progress(progress);
  if (total) {
    n.mutable_progress()->set_total(*total);
    n.mutable_progress()->set_has_total(true);
  }
  n.mutable_progress()->set_message(std::move(message));
  return n;
}

v1::HandlerNotice Log(std::string level, std::string data_json, std::string logger = "") {
  v1::HandlerNotice n;
  n.mutable_log()->set_level(std::move(level));
  n.mutable_log()->set_data_json(std::move(data_json));
  n.mutable_log()->set_logger(std::move(logger));
  return n;
}

TEST(McpNoticesTest, ProgressOnlyWithAToken) {
  NoticeRequest request;
  EXPECT_EQ(NotificationFor(Progress(1, 2, ""), request), "");
  request.progress_token_json = R"("tok-1")";
  EXPECT_EQ(NotificationFor(Progress(50, 100, "half"), request),
            R"({"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":)"
            R"("tok-1","progress":50,"total":100,"message":"half"}})");
  request.progress_token_json = "7";
  EXPECT_EQ(NotificationFor(Progress(0.25, std::nullopt, ""), request),
            R"({"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":7,)"
            R"("progress":0.25}})");
}

TEST(McpNoticesTest, LogsAtOrAboveTheLevel) {
  NoticeRequest request;
  EXPECT_EQ(NotificationFor(Log("error", R"("x")"), request), "");  // no level set
  request.min_log_rank = LogLevelRank("warning");
  EXPECT_EQ(NotificationFor(Log("info", R"("x")"), request), "");
  EXPECT_EQ(NotificationFor(Log("error", R"({"a": [1, 2]})", "db"), request),
            R"({"jsonrpc":"2.0","method":"notifications/message","params":{"level":"error",)"
            R"("logger":"db","data":{"a":[1,2]}}})");
  EXPECT_EQ(NotificationFor(Log("loud", R"("x")"), request), "");  // not a level
  // Data that is not one JSON value (a sandbox writing its own frames) is dropped, never
  // spliced into the notification.
  EXPECT_EQ(NotificationFor(Log("error", R"(1},"jsonrpc":"1.0)"), request), "");
}

TEST(McpNoticesTest, Levels) {
  EXPECT_EQ(LogLevelRank("debug"), 0);
  EXPECT_EQ(LogLevelRank("emergency"), 7);
  EXPECT_FALSE(LogLevelRank("Debug"));
  EXPECT_FALSE(LogLevelRank(""));
}

TEST(McpNoticesTest, MetaMembers) {
  auto parsed = ParseMcpMessage(
      R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"_meta":{"progressToken":"p"}}})");
  const auto& m = std::get<McpMessage>(parsed);
  EXPECT_EQ(MetaMember(m, "progressToken"), R"("p")");
  EXPECT_EQ(MetaMember(m, "other"), "");
}

}  // namespace
}  // namespace toolgate::edge
