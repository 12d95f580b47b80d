#include "toolgate/trace/trace.h"

#include <gtest/gtest.h>

#include "toolgate/base/crypto.h"

namespace toolgate::trace {
namespace {

constexpr char kTraceId[] = "4bf92f3577b34da6a3ce929d0e0e4736";
constexpr char kSpanId[] = "00f067aa0ba902b7";
constexpr char kValid[] = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

bool IsLowerHexOfLength(const std::string& s, size_t n) {
  if (s.size() != n) return false;
  for (char c : s) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

class TraceTest : public ::testing::Test {
 protected:
  void SetUp() override { InitCrypto(); }
};

TEST_F(TraceTest, ParsesValidTraceparent) {
  auto ctx = ParseTraceparent(kValid);
  ASSERT_TRUE(ctx.has_value());
  EXPECT_EQ(ctx->trace_id, kTraceId);
  EXPECT_EQ(ctx->span_id, kSpanId);
  EXPECT_EQ(ctx->parent_span_id, "");
  EXPECT_EQ(ctx->flags, 1);
  EXPECT_EQ(ctx->ToTraceparent(), kValid);
}

TEST_F(TraceTest, ParsesFlags) {
  auto ctx = ParseTraceparent("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00");
  ASSERT_TRUE(ctx.has_value());
  EXPECT_EQ(ctx->flags, 0);
  EXPECT_EQ(ctx->ToTraceparent(), "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00");
  ctx = ParseTraceparent("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-a3");
  ASSERT_TRUE(ctx.has_value());
  EXPECT_EQ(ctx->flags, 0xa3);
}

TEST_F(TraceTest, AcceptsFutureVersionWithExtraFields) {
  // W3C: a higher version may append "-<more>" after the flags; parse what we understand.
  auto ctx = ParseTraceparent("01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra");
  ASSERT_TRUE(ctx.has_value());
  EXPECT_EQ(ctx->trace_id, kTraceId);
  EXPECT_FALSE(ParseTraceparent("01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01extra"));
}

TEST_F(TraceTest, RejectsWrongLengths) {
  for (const char* h : {
           "", "00",
           "00-4bf92f3577b34da6a3ce929d0e0e473-00f067aa0ba902b7-01",     // trace id 31
           "00-4bf92f3577b34da6a3ce929d0e0e47366-00f067aa0ba902b7-01",   // trace id 33
           "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b-01",     // span id 15
           "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b77-01",   // span id 17
           "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-1",     // flags 1
           "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-011",   // flags 3
           "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-x",  // v00 has no extras
           "0-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",     // version 1 digit
       }) {
    EXPECT_FALSE(ParseTraceparent(h).has_value()) << h;
  }
}

TEST_F(TraceTest, RejectsUpperCaseAndNonHex) {
  for (const char* h : {
           "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",
           "00-4bf92f3577b34da6a3ce929d0e0e4736-00F067AA0BA902B7-01",
           "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-0A",
           "0A-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
           "00-4bf92f3577b34da6a3ce929d0e0e473g-00f067aa0ba902b7-01",
           "00_4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
       }) {
    EXPECT_FALSE(ParseTraceparent(h).has_value()) << h;
  }
}

TEST_F(TraceTest, RejectsAllZeroIds) {
  EXPECT_FALSE(ParseTraceparent("00-00000000000000000000000000000000-00f067aa0ba902b7-01"));
  EXPECT_FALSE(ParseTraceparent("00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01"));
}

TEST_F(TraceTest, RejectsVersionFF) {
  EXPECT_FALSE(ParseTraceparent("ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"));
}

TEST_F(TraceTest, NewTraceHasFreshIds) {
  TraceContext a = NewTrace();
  TraceContext b = NewTrace();
  EXPECT_TRUE(IsLowerHexOfLength(a.trace_id, 32)) << a.trace_id;
  EXPECT_TRUE(IsLowerHexOfLength(a.span_id, 16)) << a.span_id;
  EXPECT_EQ(a.parent_span_id, "");
  EXPECT_EQ(a.flags, 1);
  EXPECT_NE(a.trace_id, b.trace_id);
  // What we emit, we can read back.
  auto parsed = ParseTraceparent(a.ToTraceparent());
  ASSERT_TRUE(parsed.has_value());
  EXPECT_EQ(parsed->trace_id, a.trace_id);
  EXPECT_EQ(parsed->span_id, a.span_id);
}

TEST_F(TraceTest, ChildOfKeepsTraceIdAndSetsParent) {
  TraceContext parent = *ParseTraceparent(kValid);
  parent.flags = 0;
  TraceContext child = ChildOf(parent);
  EXPECT_EQ(child.trace_id, kTraceId);
  EXPECT_EQ(child.parent_span_id, kSpanId);
  EXPECT_NE(child.span_id, kSpanId);
  EXPECT_TRUE(IsLowerHexOfLength(child.span_id, 16));
  EXPECT_EQ(child.flags, 0);
  TraceContext grandchild = ChildOf(child);
  EXPECT_EQ(grandchild.trace_id, kTraceId);
  EXPECT_EQ(grandchild.parent_span_id, child.span_id);
}

TEST_F(TraceTest, ContinueOrStartContinuesAValidHeader) {
  TraceContext ctx = ContinueOrStart(kValid);
  EXPECT_EQ(ctx.trace_id, kTraceId);
  EXPECT_EQ(ctx.parent_span_id, kSpanId);
  EXPECT_NE(ctx.span_id, kSpanId);
}

TEST_F(TraceTest, ContinueOrStartStartsANewTraceOnGarbage) {
  for (const char* h : {"", "garbage", "00-00000000000000000000000000000000-00f067aa0ba902b7-01"}) {
    TraceContext ctx = ContinueOrStart(h);
    EXPECT_TRUE(IsLowerHexOfLength(ctx.trace_id, 32)) << h;
    EXPECT_NE(ctx.trace_id, "00000000000000000000000000000000");
    EXPECT_EQ(ctx.parent_span_id, "") << h;
  }
}

TEST_F(TraceTest, SpanExposesItsContext) {
  TraceContext ctx = *ParseTraceparent(kValid);
  Span span(ctx, "test");
  EXPECT_EQ(span.context().span_id, kSpanId);
  EXPECT_EQ(span.traceparent(), kValid);
}

}  // namespace
}  // namespace toolgate::trace
