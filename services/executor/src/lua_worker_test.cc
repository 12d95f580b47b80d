// The Lua worker's side of the protocol, driven over pipes in this process.
#include "toolgate/executor/lua_worker.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <thread>

#include "toolgate/executor/worker_protocol.h"

namespace toolgate::executor {
namespace {

using protocol::FrameKind;

class LuaWorkerTest : public ::testing::Test {
 protected:
  LuaWorkerTest() {
    int fds[2];
    EXPECT_EQ(::pipe2(fds, O_CLOEXEC), 0);
    requests_read_ = fds[0];
    requests_ = fds[1];
    EXPECT_EQ(::pipe2(fds, O_CLOEXEC), 0);
    replies_ = fds[0];
    replies_write_ = fds[1];
    EXPECT_EQ(::pipe2(fds, O_CLOEXEC), 0);
    log_ = fds[0];
    log_write_ = fds[1];
    ::fcntl(log_, F_SETFL, O_NONBLOCK);
  }
  ~LuaWorkerTest() override {
    if (requests_ >= 0) ::close(requests_);
    if (worker_.joinable()) worker_.join();
    for (int fd : {requests_read_, replies_, replies_write_, log_, log_write_}) ::close(fd);
  }

  void Start(const std::string& code) {
    worker_ = std::thread(
        [this] { exit_code_ = ServeLuaWorker(requests_read_, replies_write_, log_write_); });
    RuntimeLimits limits;
    char hello[protocol::kHeaderBytes];
    ASSERT_EQ(::read(replies_, hello, sizeof hello), static_cast<ssize_t>(sizeof hello));
    EXPECT_EQ(static_cast<FrameKind>(hello[4]), FrameKind::kHello);
    nonce_ = protocol::NewNonce();
    Send(FrameKind::kInit, protocol::InitPayload(nonce_, code, 64, 1 << 20, limits));
    EXPECT_EQ(Receive().kind, FrameKind::kReady);
  }
  void Send(FrameKind kind, const std::string& payload) {
    std::string frame = protocol::EncodeFrame(kind, payload);
    ASSERT_EQ(::write(requests_, frame.data(), frame.size()), static_cast<ssize_t>(frame.size()));
  }
  // The next frame, its nonce checked and taken off; a kStarted frame is skipped.
  protocol::Frame Receive() {
    protocol::Frame frame;
    do {
      char buf[4096];
      while (reader_.Next(&frame) != protocol::FrameReader::State::kComplete) {
        ssize_t n = ::read(replies_, buf, sizeof buf);
        if (n <= 0) {
          ADD_FAILURE() << "the worker closed its replies";
          return frame;
        }
        reader_.Append(std::string_view(buf, static_cast<size_t>(n)));
      }
      std::string_view rest;
      EXPECT_TRUE(protocol::TakeNonce(frame.payload, nonce_, &rest)) << frame.payload;
      frame.payload = std::string(rest);
    } while (frame.kind == FrameKind::kStarted);
    return frame;
  }
  protocol::Frame Call(const std::string& event, int64_t deadline_ms = 5000,
                       std::vector<EnvVar> env = {}) {
    Invocation inv;
    inv.event_json = event;
    inv.execution_id = "exec-1";
    inv.function_id = "fn-1";
    inv.version = "1";
    inv.caller_org_id = "org-1";
    inv.env = std::move(env);
    nonce_ = protocol::NewNonce();
    Send(FrameKind::kCall, protocol::CallPayload(nonce_, inv, deadline_ms));
    return Receive();
  }
  std::string Logs() {
    std::string out;
    char buf[4096];
    ssize_t n;
    while ((n = ::read(log_, buf, sizeof buf)) > 0) out.append(buf, static_cast<size_t>(n));
    return out;
  }

  int requests_ = -1, requests_read_ = -1, replies_ = -1, replies_write_ = -1, log_ = -1,
      log_write_ = -1;
  int exit_code_ = -1;
  std::string nonce_;
  protocol::FrameReader reader_{1 << 24};
  std::thread worker_;
};

TEST_F(LuaWorkerTest, AnswersEachCallWithItsNormalisedResponse) {
  Start(
      "function service_handler(event, context)\n"
      "  print('for', context.caller_org_id, os.getenv('TOKEN'))\n"
      "  return {statusCode = 201, body = json.encode({x = event.x})}\n"
      "end");
  auto reply = Call(R"({"x":7})", 5000, {{"TOKEN", "t0k"}});
  EXPECT_EQ(reply.kind, FrameKind::kValue);
  EXPECT_EQ(reply.payload, R"({"statusCode":201,"body":"{\"x\":7}"})");
  EXPECT_EQ(Logs(), "for\torg-1\tt0k\n");
  // The next call works the same, without the secret.
  reply = Call(R"({"x":8})");
  EXPECT_EQ(reply.payload, R"({"statusCode":201,"body":"{\"x\":8}"})");
  EXPECT_EQ(Logs(), "for\torg-1\tnil\n");
  ::close(requests_);
  requests_ = -1;
  worker_.join();
  EXPECT_EQ(exit_code_, 0);
}

TEST_F(LuaWorkerTest, HandlerErrorsAre500sWithTheTracebackInTheLog) {
  Start("function service_handler() error('boom') end");
  auto reply = Call("{}");
  EXPECT_EQ(reply.kind, FrameKind::kValue);
  EXPECT_EQ(reply.payload, R"({"statusCode":500,"body":"{\"errorType\":\"LuaError\",)"
                           R"(\"errorMessage\":\"handler.lua:1: boom\"}"})");
  EXPECT_NE(Logs().find("stack traceback"), std::string::npos);
}

TEST_F(LuaWorkerTest, TheHookStopsALoopAtTheCallsDeadline) {
  Start("function service_handler(event) while event.loop do end return 1 end");
  EXPECT_EQ(Call(R"({"loop":true})", 100).kind, FrameKind::kTimeout);
  EXPECT_EQ(Call("{}").payload, R"({"statusCode":200,"body":"1"})");  // and serves again
}

TEST_F(LuaWorkerTest, ACallLeavesNothingForTheNextOnTheSameWorker) {
  Start(
      "function service_handler(event, context)\n"
      "  local seen = {leaked = leaked, secret = string.secret, env = stolen_env,\n"
      "                upper = ('a'):upper()}\n"
      "  if event.attack then\n"
      "    leaked = 'x'\n"
      "    string.secret = os.getenv('TOKEN')\n"
      "    stolen_env = context.env\n"
      "    getmetatable('').__index = {upper = function() return 'pwned' end}\n"
      "  end\n"
      "  return seen\n"
      "end");
  EXPECT_EQ(Call(R"({"attack":true})", 5000, {{"TOKEN", "t0k"}}).payload,
            R"({"statusCode":200,"body":"{\"upper\":\"A\"}"})");
  EXPECT_EQ(Call("{}").payload, R"({"statusCode":200,"body":"{\"upper\":\"A\"}"})");
}

// Every write to the reply pipe wakes an executor waiting on it, so a frame goes in one write:
// over a socket that keeps each write a record of its own, each read is one whole frame.
TEST_F(LuaWorkerTest, EachFrameIsOneWrite) {
  int fds[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, fds), 0);
  ::close(replies_);
  ::close(replies_write_);
  replies_ = fds[0];
  replies_write_ = fds[1];
  Start("function service_handler(event) return {statusCode = 202, body = event.s} end");
  nonce_ = protocol::NewNonce();
  Invocation inv;
  inv.event_json = R"({"s":"abc"})";
  Send(FrameKind::kCall, protocol::CallPayload(nonce_, inv, 5000));
  for (FrameKind expected : {FrameKind::kStarted, FrameKind::kValue}) {
    char buf[4096];
    ssize_t n = ::read(replies_, buf, sizeof buf);
    ASSERT_GT(n, 0);
    protocol::FrameReader reader(1 << 20);
    reader.Append(std::string_view(buf, static_cast<size_t>(n)));
    protocol::Frame frame;
    ASSERT_EQ(reader.Next(&frame), protocol::FrameReader::State::kComplete)
        << "a read of " << n << " bytes is not a whole frame";
    EXPECT_EQ(frame.kind, expected);
    EXPECT_EQ(reader.Next(&frame), protocol::FrameReader::State::kNeedMore);
  }
}

// A frame larger than the pipe takes in one write still arrives whole, after the frames before.
TEST_F(LuaWorkerTest, AFrameLargerThanThePipeArrivesWhole) {
  Start("function service_handler(event) return {statusCode = 200, body = ('x'):rep(event.n)} end");
  auto reply = Call(R"({"n":300000})");
  ASSERT_EQ(reply.kind, FrameKind::kValue);
  EXPECT_EQ(reply.payload, R"({"statusCode":200,"body":")" + std::string(300000, 'x') + R"("})");
  EXPECT_EQ(Call(R"({"n":2})").payload, R"({"statusCode":200,"body":"xx"})");
}

TEST_F(LuaWorkerTest, RefusesAnythingButCallsAfterInit) {
  Start("function service_handler() return 1 end");
  Send(FrameKind::kInit, "{}");
  worker_.join();
  EXPECT_EQ(exit_code_, 2);
}

}  // namespace
}  // namespace toolgate::executor
