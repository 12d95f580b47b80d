// Span export against a real system: every service sends its spans with OTLP/HTTP JSON to a
// receiver this test runs (a small HTTP server on loopback that decodes the export requests).
// One invocation yields one trace whose spans are the chain's hops, each the child of the hop
// before it; with the receiver gone, invocations still succeed and the spans are counted as
// dropped.
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <mutex>
#include <regex>
#include <set>
#include <sstream>
#include <thread>

#include "system.h"
#include "toolgate/base/time.h"

namespace toolgate::testing {
namespace {

struct ReceivedSpan {
  std::string service;  // the resource's service.name
  std::string trace_id, span_id, parent_span_id, name;
  int64_t kind = 0;
  std::map<std::string, std::string> attributes;  // every value as text
};

// An OTLP/HTTP collector reduced to what the test needs: POST /v1/traces with a JSON body,
// answered 200, one request per connection.
class OtlpReceiver {
 public:
  OtlpReceiver() {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof addr;
    if (::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
        ::listen(fd_, 64) != 0 ||
        ::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
      std::perror("otlp receiver");
      std::abort();
    }
    url_ = "http://127.0.0.1:" + std::to_string(ntohs(addr.sin_port));
    thread_ = std::thread([this] { Loop(); });
  }
  ~OtlpReceiver() { Stop(); }

  // Closes the port: from now on a collector connection is refused.
  void Stop() {
    if (!thread_.joinable()) return;
    ::shutdown(fd_, SHUT_RDWR);  // wakes accept()
    thread_.join();
    ::close(fd_);
  }

  const std::string& url() const { return url_; }

  std::vector<ReceivedSpan> Spans() {
    std::lock_guard<std::mutex> lock(mu_);
    return spans_;
  }
  // Requests that were not a well-formed OTLP/JSON export.
  std::vector<std::string> Errors() {
    std::lock_guard<std::mutex> lock(mu_);
    return errors_;
  }

 private:
  void Loop() {
    for (;;) {
      int conn = ::accept(fd_, nullptr, nullptr);
      if (conn < 0) return;
      Serve(conn);
      ::close(conn);
    }
  }

  void Serve(int conn) {
    std::string data;
    char buf[65536];
    size_t head_end = std::string::npos;
    size_t length = 0;
    for (;;) {
      if (head_end != std::string::npos && data.size() >= head_end + 4 + length) break;
      ssize_t n = ::read(conn, buf, sizeof buf);
      if (n <= 0) return Fail("connection closed mid-request");
      data.append(buf, static_cast<size_t>(n));
      if (head_end == std::string::npos &&
          (head_end = data.find("\r\n\r\n")) != std::string::npos) {
        std::smatch m;
        std::string head = data.substr(0, head_end);
        static const std::regex kLength(R"(\r\ncontent-length:\s*(\d+))", std::regex::icase);
        if (std::regex_search(head, m, kLength)) length = std::stoul(m[1]);
        static const std::regex kJson(R"(\r\ncontent-type:\s*application/json)", std::regex::icase);
        if (head.rfind("POST /v1/traces HTTP/1.1\r\n", 0) != 0 || !std::regex_search(head, kJson)) {
          Fail("not an OTLP/JSON export: " + head.substr(0, head.find("\r\n")));
        }
      }
    }
    Decode(data.substr(head_end + 4, length));
    const std::string ok =
        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n"
        "Connection: close\r\n\r\n{}";
    (void)!::write(conn, ok.data(), ok.size());
  }

  void Decode(const std::string& body) {
    auto doc = ParseJson(body);
    if (!doc.ok()) return Fail("not JSON");
    simdjson::dom::array resources;
    if (doc->root["resourceSpans"].get_array().get(resources)) return Fail("no resourceSpans");
    std::vector<ReceivedSpan> received;
    for (auto resource : resources) {
      std::string service;
      simdjson::dom::array attributes;
      if (resource["resource"]["attributes"].get_array().get(attributes) == simdjson::SUCCESS) {
        for (auto a : attributes) {
          std::string_view key, value;
          if (a["key"].get_string().get(key) == simdjson::SUCCESS && key == "service.name" &&
              a["value"]["stringValue"].get_string().get(value) == simdjson::SUCCESS) {
            service = value;
          }
        }
      }
      simdjson::dom::array scopes;
      if (resource["scopeSpans"].get_array().get(scopes)) return Fail("no scopeSpans");
      for (auto scope : scopes) {
        simdjson::dom::array spans;
        if (scope["spans"].get_array().get(spans)) return Fail("no spans");
        for (auto s : spans) {
          ReceivedSpan span;
          span.service = service;
          std::string_view v;
          if (s["traceId"].get_string().get(v)) return Fail("span without traceId");
          span.trace_id = v;
          if (s["spanId"].get_string().get(v)) return Fail("span without spanId");
          span.span_id = v;
          if (s["parentSpanId"].get_string().get(v) == simdjson::SUCCESS) span.parent_span_id = v;
          if (s["name"].get_string().get(v)) return Fail("span without name");
          span.name = v;
          if (s["kind"].get_int64().get(span.kind)) return Fail("span without kind");
          simdjson::dom::array attrs;
          if (s["attributes"].get_array().get(attrs) == simdjson::SUCCESS) {
            for (auto a : attrs) {
              std::string_view key;
              if (a["key"].get_string().get(key)) return Fail("attribute without key");
              auto value = a["value"];
              if (value["stringValue"].get_string().get(v) == simdjson::SUCCESS ||
                  value["intValue"].get_string().get(v) == simdjson::SUCCESS) {
                span.attributes[std::string(key)] = v;
              }
            }
          }
          received.push_back(std::move(span));
        }
      }
    }
    std::lock_guard<std::mutex> lock(mu_);
    spans_.insert(spans_.end(), received.begin(), received.end());
  }

  void Fail(const std::string& what) {
    std::lock_guard<std::mutex> lock(mu_);
    errors_.push_back(what);
  }

  int fd_ = -1;
  std::string url_;
  std::mutex mu_;
  std::vector<ReceivedSpan> spans_;  // guarded by mu_
  std::vector<std::string> errors_;  // guarded by mu_
  std::thread thread_;
};

// Bound before the system starts, so every service is given its URL.
OtlpReceiver& Receiver() {
  static OtlpReceiver* receiver = new OtlpReceiver();
  return *receiver;
}

const auto* const kEnv = ::testing::AddGlobalTestEnvironment(
    new SharedSystem({}, {"TOOLGATE_OTLP_ENDPOINT=" + Receiver().url()}));

constexpr const char* kEcho = "function service_handler(event, context) return event end";

// The hops of one invocation, in chain order, and the service that records each. The edge
// decides key and version itself; a function that declares no keys goes from there straight to
// billing, past secrets.
const std::vector<std::pair<std::string, std::string>> kChain = {
    {"edge.invoke", "toolgate-edge"},       {"edge.decide", "toolgate-edge"},
    {"billing.hold", "toolgate-billing"},   {"executor.lua", "toolgate-executor"},
    {"billing.settle", "toolgate-billing"},
};

std::vector<ReceivedSpan> SpansOfTrace(const std::string& trace_id) {
  std::vector<ReceivedSpan> out;
  for (auto& s : Receiver().Spans()) {
    if (s.trace_id == trace_id) out.push_back(std::move(s));
  }
  return out;
}

// The sum over every series of a counter in service's /metrics (-1 when it has none).
double CounterSum(const std::string& service, const std::string& prefix) {
  auto state = Json(g_system->State());
  std::string_view url;
  if (state.root["admin"][service].get_string().get(url)) return -1;
  http::HttpClient client{std::string(url)};
  auto r = client.Get("/metrics");
  if (!r.ok() || r->status != 200) return -1;
  double sum = -1;
  std::istringstream in(r->body);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(prefix, 0) != 0) continue;
    sum = std::max(sum, 0.0) + std::stod(line.substr(line.rfind(' ') + 1));
  }
  return sum;
}

class OtlpTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    owner_ = new Account(*g_system, "Otlp Owner");
    owner_->TopUp(100'000'000);
    key_ = owner_->CreateKey();
    echo_ = owner_->CreateFunction("echo");
    ASSERT_EQ(owner_->PublishLua(echo_, "1", kEcho).status, 201);
  }
  static void TearDownTestSuite() { delete owner_; }
  static Account* owner_;
  static std::string key_, echo_;
};
Account* OtlpTest::owner_ = nullptr;
std::string OtlpTest::key_, OtlpTest::echo_;

TEST_F(OtlpTest, OneInvocationIsOneTraceWhoseSpansAreTheChainsHopsLinkedParentToChild) {
  const std::string trace_id = "0af7651916cd43dd8448eb211c80319c";
  const std::string caller_span = "b7ad6b7169203331";
  auto r = Invoke(*g_system, key_, echo_, "1", R"({"event": {"n": 1}})",
                  {{"traceparent", "00-" + trace_id + "-" + caller_span + "-01"}});
  ASSERT_EQ(r.status, 200) << r.body;
  const std::string execution_id =
      std::string(std::string_view(Json(r.body).root["summary"]["execution_id"]));

  // Settlement may end after the answer, and spans leave in batches: wait for the count.
  std::vector<ReceivedSpan> spans;
  EXPECT_TRUE(WaitUntil([&] { return (spans = SpansOfTrace(trace_id)).size() >= kChain.size(); },
                        30000, "every span of the chain", 100));
  EXPECT_TRUE(Receiver().Errors().empty()) << Receiver().Errors().front();
  std::string received;
  for (const auto& s : spans) {
    received += s.name + " " + s.span_id + " <- " + s.parent_span_id + " (" + s.service + ")\n";
  }
  ASSERT_EQ(spans.size(), kChain.size()) << received;

  // Walk the chain from the caller's span: each hop is the only child of the one before.
  std::string parent = caller_span;
  std::set<std::string> span_ids;
  for (const auto& [name, service] : kChain) {
    auto it = std::find_if(spans.begin(), spans.end(),
                           [&](const ReceivedSpan& s) { return s.parent_span_id == parent; });
    ASSERT_NE(it, spans.end()) << "no span whose parent is " << parent << " (want " << name << ")";
    EXPECT_EQ(std::count_if(spans.begin(), spans.end(),
                            [&](const ReceivedSpan& s) { return s.parent_span_id == parent; }),
              1);
    EXPECT_EQ(it->name, name);
    EXPECT_EQ(it->service, service) << name;
    EXPECT_EQ(it->attributes["faas.invocation_id"], execution_id) << name;
    EXPECT_TRUE(span_ids.insert(it->span_id).second) << "span id reused: " << name;
    parent = it->span_id;
  }
  const ReceivedSpan& edge = *std::find_if(
      spans.begin(), spans.end(), [](const ReceivedSpan& s) { return s.name == "edge.invoke"; });
  EXPECT_EQ(edge.kind, 2);  // SERVER
  EXPECT_EQ(edge.attributes.at("http.request.method"), "POST");
  EXPECT_EQ(edge.attributes.at("http.response.status_code"), "200");
  EXPECT_EQ(edge.attributes.at("faas.trigger"), "http");
  // The answer names the edge's span as the trace's current one.
  EXPECT_EQ(r.Header("traceparent"), "00-" + trace_id + "-" + edge.span_id + "-01");
}

// Last: it stops the receiver for good.
TEST_F(OtlpTest, WithTheCollectorGoneInvocationsSucceedAndDroppedSpansAreCounted) {
  const std::string dropped = "toolgate_trace_spans_dropped_total{reason=\"export_failed\"}";
  ASSERT_GE(CounterSum("edge", dropped), 0) << "the edge exports no dropped-span counter";
  Receiver().Stop();
  const double before = CounterSum("edge", dropped);
  for (int i = 0; i < 5; ++i) {
    auto r = Invoke(*g_system, key_, echo_, "1", R"({"event": {}})");
    EXPECT_EQ(r.status, 200) << r.body;
  }
  // The five calls' spans leave in the next batches, which find nobody to take them.
  double edge = before, billing = 0;
  EXPECT_TRUE(WaitUntil(
      [&] {
        return (edge = CounterSum("edge", dropped)) >= before + 5 &&
               (billing = CounterSum("billing", dropped)) >= 5;
      },
      30000, "the dropped spans to be counted", 100));
  EXPECT_GE(edge, before + 5);
  EXPECT_GE(billing, 5);
}

}  // namespace
}  // namespace toolgate::testing
