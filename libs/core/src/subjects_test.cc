#include "toolgate/core/subjects.h"

#include <gtest/gtest.h>

#include "toolgate/core/runtime_names.h"

namespace toolgate::core {
namespace {

TEST(RuntimeNamesTest, NamesAndEnumsRoundTrip) {
  for (v1::Runtime r : {v1::RUNTIME_LUA, v1::RUNTIME_PYTHON, v1::RUNTIME_JAVASCRIPT}) {
    ASSERT_FALSE(RuntimeName(r).empty());
    EXPECT_EQ(ParseRuntime(RuntimeName(r)), r);
  }
  EXPECT_EQ(RuntimeName(v1::RUNTIME_UNSPECIFIED), "");
  EXPECT_EQ(ParseRuntime("Lua"), std::nullopt);
  EXPECT_EQ(ParseRuntime(""), std::nullopt);
  EXPECT_EQ(ParseComputeType("GPU"), v1::COMPUTE_TYPE_GPU);
  EXPECT_EQ(ParseComputeType("gpu"), std::nullopt);
  EXPECT_EQ(ComputeTypeName(v1::COMPUTE_TYPE_CPU), "CPU");
  EXPECT_EQ(PoolName(v1::COMPUTE_TYPE_GPU), "gpu");
  EXPECT_EQ(PoolName(v1::COMPUTE_TYPE_UNSPECIFIED), "");
}

TEST(SubjectsTest, ExecSubjectsNeverCarryAnUnknownToken) {
  EXPECT_EQ(ExecSubject(v1::COMPUTE_TYPE_CPU, v1::RUNTIME_LUA), "tg.exec.cpu.lua");
  EXPECT_EQ(ExecSubject(v1::COMPUTE_TYPE_GPU, v1::RUNTIME_PYTHON), "tg.exec.gpu.python");
  EXPECT_EQ(ExecSubject(v1::COMPUTE_TYPE_UNSPECIFIED, v1::RUNTIME_LUA), std::nullopt);
  EXPECT_EQ(ExecSubject(v1::COMPUTE_TYPE_CPU, static_cast<v1::Runtime>(42)), std::nullopt);
  EXPECT_EQ(ExecSubject("cpu", "javascript"), "tg.exec.cpu.javascript");
}

TEST(SubjectsTest, SettlementSubjects) {
  EXPECT_EQ(SettleSubject("e-1"), "tg.billing.settle.e-1");
  EXPECT_EQ(UnservedSubject("e-1"), "tg.billing.unserved.e-1");
  EXPECT_EQ(ExecutionIdOfUnservedSubject("tg.billing.unserved.e-1"), "e-1");
  EXPECT_EQ(ExecutionIdOfUnservedSubject("tg.billing.settle.e-1"), "");
  EXPECT_EQ(ExecutionIdOfUnservedSubject("tg.billing.unserved.a.b"), "");
  EXPECT_TRUE(IsValidExecutionId("0b6f-AZ_9"));
  EXPECT_FALSE(IsValidExecutionId(""));
  EXPECT_FALSE(IsValidExecutionId("a*"));
  EXPECT_FALSE(IsValidExecutionId(std::string(129, 'a')));
  EXPECT_EQ(HttpSubject("auth"), "tg.auth.http");
  EXPECT_EQ(HealthSubject("edge"), "tg.health.edge");
}

}  // namespace
}  // namespace toolgate::core
