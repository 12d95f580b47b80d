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
          R"("env":{"API_TOKEN":"s\"ecret","OTHER":"v"},"notices":false})");
  inv.event_json = R"("just a string")";
  inv.env.clear();
  EXPECT_NE(CallPayload(nonce, inv, 1).find(R"({"event":"just a string",)"), std::string::npos);
  EXPECT_NE(CallPayload(nonce, inv, 1).find(R"("env":{},)"), std::string::npos);
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

TEST(WorkerProtocolTest, NoticesRoundTripThroughTheirPayload) {
  const std::string nonce = NewNonce();
  Notice progress;
  progress.progress = 0.1;
  progress.total = 3;
  progress.has_total = true;
  progress.message = "step \"one\"";
  std::string payload = NoticePayload(nonce, progress);
  std::string_view body;
  ASSERT_TRUE(TakeNonce(payload, nonce, &body));
  EXPECT_EQ(body, R"({"kind":"progress","progress":0.1,"total":3,"message":"step \"one\""})");
  Notice back;
  ASSERT_TRUE(ParseNotice(body, &back));
  EXPECT_EQ(back.kind, Notice::Kind::kProgress);
  EXPECT_EQ(back.progress, 0.1);
  EXPECT_EQ(back.total, 3);
  EXPECT_TRUE(back.has_total);
  EXPECT_EQ(back.message, "step \"one\"");

  Notice log;
  log.kind = Notice::Kind::kLog;
  log.level = "warning";
  log.data_json = R"({"a":[1,null]})";
  payload = NoticePayload(nonce, log);
  ASSERT_TRUE(TakeNonce(payload, nonce, &body));
  ASSERT_TRUE(ParseNotice(body, &back));
  EXPECT_EQ(back.kind, Notice::Kind::kLog);
  EXPECT_EQ(back.level, "warning");
  EXPECT_EQ(back.data_json, R"({"a":[1,null]})");
  EXPECT_EQ(back.logger, "");
  EXPECT_FALSE(back.has_total);
}

TEST(WorkerProtocolTest, NoticesThatAreNotTheProtocolsDoNotParse) {
  Notice n;
  for (const char* bad :
       {"", "[]", R"({"kind":"progress"})", R"({"kind":"progress","progress":"1"})",
        R"({"kind":"log","level":"info"})", R"({"kind":"log","data":1})",
        R"({"kind":"other","progress":1})", R"({"kind":"progress","progress":1,"message":2})"}) {
    EXPECT_FALSE(ParseNotice(bad, &n)) << bad;
  }
  EXPECT_TRUE(ParseNotice(R"({"kind":"progress","progress":1,"total":null})", &n));
  EXPECT_FALSE(n.has_total);
}

TEST(WorkerProtocolTest, AWorkersDropCountIsReadFromItsMarkerOnly) {
  EXPECT_EQ(DroppedNotices(R"({"kind":"dropped","count":999901})"), 999901u);
  EXPECT_EQ(DroppedNotices(R"({"kind":"dropped"})"), 1u);
  EXPECT_EQ(DroppedNotices(R"({"kind":"dropped","count":0})"), 1u);
  EXPECT_EQ(DroppedNotices(R"({"kind":"dropped","count":99999999999})"), 1000000u);
  EXPECT_EQ(DroppedNotices(R"({"kind":"progress","progress":1})"), 0u);
  EXPECT_EQ(DroppedNotices(R"({"kind":"log","level":"info","data":"dropped"})"), 0u);
  Notice n;
  EXPECT_FALSE(ParseNotice(R"({"kind":"dropped","count":3})", &n));
}

TEST(WorkerProtocolTest, ReaderTakesManySmallFramesFromOneRead) {
  std::string stream;
  for (int i = 0; i < 1000; ++i) stream += EncodeFrame(FrameKind::kNotice, std::to_string(i));
  FrameReader reader(1024);
  reader.Append(stream);
  Frame frame;
  for (int i = 0; i < 1000; ++i) {
    ASSERT_EQ(reader.Next(&frame), FrameReader::State::kComplete);
    EXPECT_EQ(frame.kind, FrameKind::kNotice);
    EXPECT_EQ(frame.payload, std::to_string(i));
  }
  EXPECT_EQ(reader.Next(&frame), FrameReader::State::kNeedMore);
  EXPECT_EQ(reader.buffered(), 0u);
}

TEST(WorkerProtocolTest, CallPayloadSaysWhetherNoticesAreWanted) {
  Invocation inv;
  inv.event_json = "{}";
  EXPECT_NE(CallPayload(NewNonce(), inv, 1).find(R"("notices":false)"), std::string::npos);
  BoundedNoticeSink sink([](const Notice&) {});
  inv.notices = &sink;
  EXPECT_NE(CallPayload(NewNonce(), inv, 1).find(R"("notices":true)"), std::string::npos);
}

}  // namespace
}  // namespace toolgate::executor::protocol
