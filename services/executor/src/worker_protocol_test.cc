#include "toolgate/executor/worker_protocol.h"

#include <gtest/gtest.h>

#include "toolgate/base/json.h"

namespace toolgate::executor::protocol {
namespace {

TEST(WorkerProtocolTest, FrameIsLittleEndianLengthKindAndPayload) {
  std::string payload(300, 'x');
  std::string frame = EncodeFrame(FrameKind::kValue, payload);
  ASSERT_EQ(frame.size(), kHeaderBytes + 300);
  EXPECT_EQ(static_cast<unsigned char>(frame[0]), 300 & 0xFF);
  EXPECT_EQ(static_cast<unsigned char>(frame[1]), 300 >> 8);
  EXPECT_EQ(frame[2], 0);
  EXPECT_EQ(frame[3], 0);
  EXPECT_EQ(frame[4], 'V');
  EXPECT_EQ(frame.substr(kHeaderBytes), payload);
  EXPECT_EQ(FrameHeader(FrameKind::kCall, 0), std::string("\0\0\0\0C", 5));
}

TEST(WorkerProtocolTest, ReaderReassemblesFramesFromAnyChunking) {
  std::string stream = EncodeFrame(FrameKind::kReady, "") +
                       EncodeFrame(FrameKind::kValue, "[1,2]") +
                       EncodeFrame(FrameKind::kTimeout, "") +
                       EncodeFrame(FrameKind::kError, R"({"errorType":"E","errorMessage":"m"})");
  for (size_t chunk : {size_t{1}, size_t{3}, size_t{7}, stream.size()}) {
    FrameReader reader(1024);
    std::vector<Frame> frames;
    for (size_t at = 0; at < stream.size(); at += chunk) {
      reader.Append(std::string_view(stream).substr(at, chunk));
      Frame f;
      while (reader.Next(&f) == FrameReader::State::kComplete) frames.push_back(f);
    }
    ASSERT_EQ(frames.size(), 4u) << "chunk " << chunk;
    EXPECT_EQ(frames[0].kind, FrameKind::kReady);
    EXPECT_EQ(frames[0].payload, "");
    EXPECT_EQ(frames[1].kind, FrameKind::kValue);
    EXPECT_EQ(frames[1].payload, "[1,2]");
    EXPECT_EQ(frames[2].kind, FrameKind::kTimeout);
    EXPECT_EQ(frames[3].kind, FrameKind::kError);
    EXPECT_EQ(reader.buffered(), 0u);
  }
}

TEST(WorkerProtocolTest, ReaderWaitsForAWholeFrame) {
  FrameReader reader(1024);
  std::string frame = EncodeFrame(FrameKind::kValue, "12345");
  reader.Append(frame.substr(0, frame.size() - 1));
  Frame f;
  EXPECT_EQ(reader.Next(&f), FrameReader::State::kNeedMore);
  reader.Append(frame.substr(frame.size() - 1));
  EXPECT_EQ(reader.Next(&f), FrameReader::State::kComplete);
  EXPECT_EQ(f.payload, "12345");
  EXPECT_EQ(reader.Next(&f), FrameReader::State::kNeedMore);
}

TEST(WorkerProtocolTest, ReaderRefusesOversizedFramesBeforeReadingThem) {
  FrameReader reader(10);
  reader.Append(FrameHeader(FrameKind::kValue, 11));
  Frame f;
  EXPECT_EQ(reader.Next(&f), FrameReader::State::kInvalid);
}

TEST(WorkerProtocolTest, ReaderRefusesKindsNoWorkerSends) {
  for (FrameKind kind : {FrameKind::kInit, FrameKind::kCall}) {
    FrameReader reader(100);
    reader.Append(EncodeFrame(kind, "{}"));
    Frame f;
    EXPECT_EQ(reader.Next(&f), FrameReader::State::kInvalid);
  }
  FrameReader reader(100);
  reader.Append(std::string("\1\0\0\0Zx", 6));
  Frame f;
  EXPECT_EQ(reader.Next(&f), FrameReader::State::kInvalid);
}

TEST(WorkerProtocolTest, InitPayloadCarriesCodeAndLimits) {
  RuntimeLimits limits;
  limits.max_response_bytes = 900;
  limits.max_log_bytes = 77;
  const std::string nonce(kNonceBytes, 'a');
  std::string payload = InitPayload(nonce, "def f():\n  return \"x\"\n", 256, 1000, limits);
  std::string_view json;
  ASSERT_TRUE(TakeNonce(payload, nonce, &json));
  auto doc = ParseJson(json);
  ASSERT_TRUE(doc.ok());
  auto obj = doc->root.get_object().value();
  std::string code;
  int64_t memory = 0, max_result = 0;
  EXPECT_EQ(GetString(obj, "code", &code), Field::kOk);
  EXPECT_EQ(code, "def f():\n  return \"x\"\n");
  EXPECT_EQ(GetInt(obj, "memory_mb", &memory), Field::kOk);
  EXPECT_EQ(memory, 256);
  EXPECT_EQ(GetInt(obj, "max_result_bytes", &max_result), Field::kOk);
  EXPECT_EQ(max_result, 1000);
  int64_t max_response = 0, max_log = 0;
  EXPECT_EQ(GetInt(obj, "max_response_bytes", &max_response), Field::kOk);
  EXPECT_EQ(max_response, 900);
  EXPECT_EQ(GetInt(obj, "max_log_bytes", &max_log), Field::kOk);
  EXPECT_EQ(max_log, 77);
}

TEST(WorkerProtocolTest, CallPayloadHoldsEventContextAndSecrets) {
  Invocation inv;
  inv.event_json = R"({"b":1.50,"a":[1]})";
  inv.execution_id = "exec-1";
  inv.function_id = "fn-1";
  inv.version = "1.2";
  inv.caller_org_id = "org-1";
  inv.env = {{"API_TOKEN", "s\"ecret"}, {"OTHER", "v"}};
  const std::string nonce = NewNonce();
  EXPECT_EQ(
      CallPayload(nonce, inv, 750),
      nonce +
          R"({"event":{"b":1.50,"a":[1]},"context":{"execution_id":"exec-1","function_id":"fn-1",)"
          R"("version":"1.2","caller_org_id":"org-1","deadline_ms":750},)"
          R"("env":{"API_TOKEN":"s\"ecret","OTHER":"v"}})");
  inv.event_json = R"("just a string")";
  inv.env.clear();
  EXPECT_NE(CallPayload(nonce, inv, 1).find(R"({"event":"just a string",)"), std::string::npos);
  EXPECT_NE(CallPayload(nonce, inv, 1).find(R"("env":{}})"), std::string::npos);
}

TEST(WorkerProtocolTest, NoncesAreFreshAndMustMatchExactly) {
  std::string a = NewNonce(), b = NewNonce();
  EXPECT_EQ(a.size(), kNonceBytes);
  EXPECT_EQ(a.find_first_not_of("0123456789abcdef"), std::string::npos);
  EXPECT_NE(a, b);
  std::string_view rest;
  EXPECT_TRUE(TakeNonce(a + "{}", a, &rest));
  EXPECT_EQ(rest, "{}");
  EXPECT_FALSE(TakeNonce(b + "{}", a, &rest));
  EXPECT_FALSE(TakeNonce(a.substr(0, 31), a, &rest));  // cut short
  EXPECT_FALSE(TakeNonce("", a, &rest));
  EXPECT_FALSE(TakeNonce(a + "{}", "", &rest));  // no nonce to match: nothing matches
}

TEST(WorkerProtocolTest, HandlerErrorsParseOnlyWithBothStrings) {
  HandlerError e;
  ASSERT_TRUE(ParseHandlerError(R"({"errorType":"ValueError","errorMessage":"bad"})", &e));
  EXPECT_EQ(e.type, "ValueError");
  EXPECT_EQ(e.message, "bad");
  EXPECT_FALSE(ParseHandlerError(R"({"errorType":"ValueError"})", &e));
  EXPECT_FALSE(ParseHandlerError(R"({"errorType":1,"errorMessage":"x"})", &e));
  EXPECT_FALSE(ParseHandlerError("[]", &e));
  EXPECT_FALSE(ParseHandlerError("not json", &e));
}

}  // namespace
}  // namespace toolgate::executor::protocol
