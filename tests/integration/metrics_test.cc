// Operability against a real system: every service's admin port (from the launcher's state file)
// answers /healthz, /readyz and /metrics in the Prometheus text format; the edge counts a known
// mix of invocations exactly; readiness follows Redis and PostgreSQL, and answers while they are
// stopped; the public port serves neither metrics nor HTML for what is not a page. A real
// Prometheus scrapes every admin port with the shipped alert rules loaded, and every expression
// of the shipped Grafana dashboard returns data.
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "system.h"
#include "toolgate/base/time.h"
#include "toolgate/net/listen_port.h"

namespace toolgate::testing {
namespace {

// Function ids as labels, so the counts can be checked per function; billing's acks gather for
// a second, so that a test's calls, however slow, fall within one linger.
const auto* const kEnv = ::testing::AddGlobalTestEnvironment(new SharedSystem(
    {}, {"TOOLGATE_METRICS_FUNCTION_LABELS=true", "TOOLGATE_SETTLE_ACK_LINGER_MS=1000"}));

constexpr const char* kEcho = "function service_handler(event, context) return event end";
constexpr const char* kLoop = "function service_handler(event, context) while true do end end";
constexpr const char* kBoom = "function service_handler(event, context) error('boom') end";

const std::vector<std::string> kServices = {"auth",    "registry", "secrets",
                                            "billing", "executor", "edge"};

// Samples of a Prometheus text exposition, keyed by `name{labels}` as written. Fails the test on
// a line that is not a comment, a blank or `name[{labels}] value`, on a sample whose family has
// no TYPE before it, or on a TYPE that is not one of the four.
std::map<std::string, double> ParseExposition(const std::string& text) {
  static const std::regex kSample(
      R"(^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{([a-zA-Z_][a-zA-Z0-9_]*="([^"\\]|\\.)*",?)*\})? )"
      R"(([-+]?[0-9.eE+-]+|[-+]Inf|NaN)$)");
  static const std::regex kType(
      R"(^# TYPE ([a-zA-Z_:][a-zA-Z0-9_:]*) (counter|gauge|histogram|summary|untyped)$)");
  std::map<std::string, double> out;
  std::map<std::string, std::string> types;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line.rfind("# HELP ", 0) == 0) continue;
    std::smatch m;
    if (line.rfind("# TYPE ", 0) == 0) {
      EXPECT_TRUE(std::regex_match(line, m, kType)) << line;
      if (m.size() > 2) types[m[1]] = m[2];
      continue;
    }
    if (!std::regex_match(line, m, kSample)) {
      ADD_FAILURE() << "not a sample: " << line;
      continue;
    }
    std::string name = m[1];
    std::string family = name;
    for (const char* suffix : {"_bucket", "_sum", "_count"}) {
      std::string s = suffix;
      if (!types.count(family) && name.size() > s.size() &&
          name.compare(name.size() - s.size(), s.size(), s) == 0) {
        family = name.substr(0, name.size() - s.size());
      }
    }
    EXPECT_TRUE(types.count(family)) << "no TYPE before " << line;
    std::string value = line.substr(line.rfind(' ') + 1);
    out[line.substr(0, line.rfind(' '))] = value == "+Inf"  ? 1e308
                                           : value == "NaN" ? 0
                                                            : std::stod(value);
  }
  return out;
}

std::string AdminUrl(const std::string& service) {
  auto state = Json(g_system->State());
  std::string_view url;
  if (state.root["admin"][service].get_string().get(url) != simdjson::SUCCESS) return "";
  return std::string(url);
}

int Status(const std::string& base, const std::string& path) {
  http::HttpClient client(base);
  auto r = client.Get(path);
  return r.ok() ? r->status : -1;
}

std::map<std::string, double> Scrape(const std::string& service) {
  http::HttpClient client(AdminUrl(service));
  auto r = client.Get("/metrics");
  EXPECT_TRUE(r.ok() && r->status == 200) << service;
  if (!r.ok()) return {};
  EXPECT_EQ(r->Header("content-type").rfind("text/plain; version=0.0.4", 0), 0u);
  return ParseExposition(r->body);
}

double Sample(const std::map<std::string, double>& samples, const std::string& key) {
  auto it = samples.find(key);
  return it == samples.end() ? -1 : it->second;
}

// Polls service's /readyz until it answers want or timeout_ms passes.
::testing::AssertionResult WaitReadiness(const std::string& service, int want, int timeout_ms) {
  return WaitUntil([&] { return Status(AdminUrl(service), "/readyz") == want; }, timeout_ms,
                   service + "'s /readyz to answer " + std::to_string(want), 100);
}

TEST(MetricsTest, EveryServiceHasAnAdminPortThatIsHealthyReadyAndScrapeable) {
  for (const auto& service : kServices) {
    std::string url = AdminUrl(service);
    ASSERT_EQ(url.rfind("http://127.0.0.1:", 0), 0u) << service << ": " << g_system->State();
    EXPECT_EQ(Status(url, "/healthz"), 200) << service;
    // A service is ready once its stores answer; the launcher waited only for NATS health.
    EXPECT_TRUE(WaitReadiness(service, 200, 30000)) << service;
    auto samples = Scrape(service);
    EXPECT_EQ(Sample(samples, "toolgate_nats_connected{connection=\"" + service + "\"}"), 1)
        << service;
    EXPECT_GT(Sample(samples, "toolgate_nats_messages_received_total"), 0) << service;
    EXPECT_EQ(Status(url, "/nope"), 404) << service;
  }
  // The stores' round trips are counted where they are made.
  for (const auto& service : {"auth", "registry", "secrets", "billing"}) {
    EXPECT_GT(Sample(Scrape(service), "toolgate_pg_round_trips_total"), 0) << service;
  }
}

TEST(MetricsTest, TheEdgeCountsAKnownMixOfInvocationsExactly) {
  Account owner(*g_system, "Metrics Owner");
  owner.TopUp(100'000'000);
  std::string key = owner.CreateKey();
  std::string echo = owner.CreateFunction("echo");
  std::string loop = owner.CreateFunction("loop");
  std::string boom = owner.CreateFunction("boom");
  ASSERT_EQ(owner.PublishLua(echo, "1", kEcho).status, 201);
  ASSERT_EQ(owner.PublishLua(loop, "1", kLoop, R"("timeout_ms":100)").status, 201);
  ASSERT_EQ(owner.PublishLua(boom, "1", kBoom).status, 201);
  Account poor(*g_system, "Metrics Poor");
  std::string poor_key = poor.CreateKey();
  std::string mine = poor.CreateFunction("mine");
  ASSERT_EQ(poor.PublishLua(mine, "1", kEcho).status, 201);

  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(Invoke(*g_system, key, echo, "1", R"({"event": {}})").status, 200);
  }
  EXPECT_EQ(Invoke(*g_system, poor_key, mine, "1", R"({"event": {}})").status, 402);
  EXPECT_EQ(Invoke(*g_system, key, loop, "1", R"({"event": {}})").status, 408);
  EXPECT_EQ(Invoke(*g_system, key, boom, "1", R"({"event": {}})").status, 500);
  // Refused at the edge, before the chain: counted too.
  EXPECT_EQ(Invoke(*g_system, "", echo, "1", R"({"event": {}})").status, 401);

  auto edge = Scrape("edge");
  auto count = [&](const std::string& fn, const std::string& cls, const std::string& runtime) {
    return Sample(edge, "toolgate_invocations_total{function_id=\"" + fn +
                            "\",version=\"1\",status_class=\"" + cls + "\",runtime=\"" + runtime +
                            "\"}");
  };
  EXPECT_EQ(count(echo, "2xx", "lua"), 3);
  EXPECT_EQ(count(mine, "4xx", "none"), 1);
  EXPECT_EQ(count(loop, "4xx", "none"), 1);
  EXPECT_EQ(count(boom, "5xx", "lua"), 1);
  EXPECT_EQ(count(echo, "4xx", "none"), 1);
  double total = 0;
  for (const auto& [k, v] : edge) {
    if (k.rfind("toolgate_invocations_total{", 0) == 0) total += v;
  }
  EXPECT_EQ(total, 7);
  EXPECT_EQ(Sample(edge, "toolgate_platform_errors_total{code=\"insufficient_balance\"}"), 1);
  EXPECT_EQ(Sample(edge, "toolgate_platform_errors_total{code=\"timeout\"}"), 1);
  EXPECT_EQ(Sample(edge, "toolgate_platform_errors_total{code=\"missing_api_key\"}"), 1);
  EXPECT_EQ(Sample(edge, "toolgate_invoke_duration_seconds_count{status_class=\"2xx\"}"), 3);
  EXPECT_EQ(
      Sample(edge, "toolgate_invoke_duration_seconds_bucket{status_class=\"4xx\",le=\"+Inf\"}"), 3);
  EXPECT_EQ(Sample(edge, "toolgate_invoke_duration_seconds_count{status_class=\"5xx\"}"), 1);

  // Billing held five calls and refused one; it captured the four that ran and released the
  // timed-out one's hold. Settlement may finish after the answer: poll.
  std::map<std::string, double> billing;
  EXPECT_TRUE(WaitUntil(
      [&] {
        billing = Scrape("billing");
        return Sample(billing, "toolgate_billing_captures_total") == 4 &&
               Sample(billing, "toolgate_billing_releases_total") == 1;
      },
      30000, "billing to capture four calls and release one", 100));
  EXPECT_EQ(Sample(billing, "toolgate_billing_holds_total{outcome=\"held\"}"), 5);
  EXPECT_EQ(Sample(billing, "toolgate_billing_holds_total{outcome=\"insufficient_balance\"}"), 1);
  EXPECT_EQ(Sample(billing, "toolgate_billing_captures_total"), 4);
  EXPECT_EQ(Sample(billing, "toolgate_billing_releases_total"), 1);
  EXPECT_GT(Sample(billing, "toolgate_redis_round_trips_total"), 0);
  EXPECT_GE(Sample(billing, "toolgate_billing_ledger_batch_size_count"), 1);

  auto executor = Scrape("executor");
  EXPECT_GE(Sample(executor, "toolgate_executor_worker_starts_total"), 1);
  // The workers that ran the calls wait warm for the next ones.
  EXPECT_GE(Sample(executor, "toolgate_executor_workers{state=\"idle\"}"), 1);
  EXPECT_EQ(Sample(executor, "toolgate_executor_slots_busy"), 0);
  EXPECT_EQ(Sample(executor, "toolgate_executor_queue_length"), 0);
}

TEST(MetricsTest, BillingAcksTheResultsOfManyBatchesInOneMessage) {
  Account owner(*g_system, "Acks Owner");
  owner.TopUp(100'000'000);
  std::string key = owner.CreateKey();
  std::string echo = owner.CreateFunction("echo");
  ASSERT_EQ(owner.PublishLua(echo, "1", kEcho).status, 201);
  auto before = Scrape("billing");
  const double messages_before = Sample(before, "toolgate_billing_settle_ack_messages_total");
  const double acked_before = Sample(before, "toolgate_billing_settle_acks_total");
  // One call at a time: each result is its own settlement batch, and without the linger each
  // batch would be acked in a message of its own.
  constexpr int kCalls = 12;
  for (int i = 0; i < kCalls; ++i) {
    ASSERT_EQ(Invoke(*g_system, key, echo, "1", R"({"event": {}})").status, 200);
  }
  // Every result is acked once the linger ends.
  std::map<std::string, double> after;
  EXPECT_TRUE(WaitUntil(
      [&] {
        after = Scrape("billing");
        return Sample(after, "toolgate_billing_settle_acks_total") - acked_before >= kCalls;
      },
      30000, "every result to be acked", 100));
  // At least: results of an earlier test may still have been waiting for their linger.
  EXPECT_GE(Sample(after, "toolgate_billing_settle_acks_total") - acked_before, kCalls);
  // The first after a quiet spell at once, the rest together (a call slower than the whole
  // linger, or an earlier test's waiting acks, would add one).
  EXPECT_LE(Sample(after, "toolgate_billing_settle_ack_messages_total") - messages_before, 4);
}

TEST(MetricsTest, BillingIsNotReadyWhileRedisIsAway) {
  ASSERT_TRUE(WaitReadiness("billing", 200, 30000));
  g_system->Kill("redis", SIGSTOP);
  // Redis must run again whatever this test finds: the system is shared.
  struct Resume {
    ~Resume() { g_system->Kill("redis", SIGCONT); }
  } resume;
  EXPECT_TRUE(WaitReadiness("billing", 503, 30000));
  http::HttpClient client(AdminUrl("billing"));
  auto r = client.Get("/readyz");
  ASSERT_TRUE(r.ok());
  EXPECT_NE(r->body.find("redis: "), std::string::npos) << r->body;
  EXPECT_EQ(r->body.find("redis: ok"), std::string::npos) << r->body;
  // Liveness is not readiness: the process is fine.
  EXPECT_EQ(Status(AdminUrl("billing"), "/healthz"), 200);
  // Services that do not use Redis stay ready.
  EXPECT_EQ(Status(AdminUrl("auth"), "/readyz"), 200);
  g_system->Kill("redis", SIGCONT);
  EXPECT_TRUE(WaitReadiness("billing", 200, 30000));
}

// A stopped PostgreSQL accepts connections and never answers: readiness must say so within its
// own deadline rather than hang the probe.
TEST(MetricsTest, AStoppedPostgresMakesItsServicesNotReadyWithoutHangingTheProbe) {
  ASSERT_TRUE(WaitReadiness("auth", 200, 30000));
  g_system->Kill("postgres", SIGSTOP);
  struct Resume {
    ~Resume() { g_system->Kill("postgres", SIGCONT); }
  } resume;
  for (const auto& service : {"auth", "registry", "secrets", "billing"}) {
    http::HttpClient client(AdminUrl(service));
    client.SetTimeout(std::chrono::milliseconds(10000));  // a hung probe fails here, not later
    auto r = client.Get("/readyz");
    ASSERT_TRUE(r.ok()) << service << ": " << r.status().ToString();
    EXPECT_EQ(r->status, 503) << service << ": " << r->body;
    EXPECT_NE(r->body.find("postgres: "), std::string::npos) << r->body;
    EXPECT_EQ(r->body.find("postgres: ok"), std::string::npos) << r->body;
  }
  EXPECT_EQ(Status(AdminUrl("edge"), "/readyz"), 200);  // the edge uses no PostgreSQL
  g_system->Kill("postgres", SIGCONT);
  for (const auto& service : {"auth", "registry", "secrets", "billing"}) {
    EXPECT_TRUE(WaitReadiness(service, 200, 30000)) << service;
  }
}

// A hung NATS (stopped: its port still accepts, nothing answers) is noticed by the clients' pings:
// every service turns unready, and ready again once NATS resumes.
TEST(MetricsTest, EveryServiceIsNotReadyWhileNatsIsStoppedAndReadyOnceItResumes) {
  for (const auto& service : kServices) ASSERT_TRUE(WaitReadiness(service, 200, 30000)) << service;
  g_system->Kill("nats", SIGSTOP);
  struct Resume {
    ~Resume() { g_system->Kill("nats", SIGCONT); }
  } resume;
  for (const auto& service : kServices) {
    EXPECT_TRUE(WaitReadiness(service, 503, 60000)) << service;
  }
  http::HttpClient client(AdminUrl("auth"));
  auto r = client.Get("/readyz");
  ASSERT_TRUE(r.ok());
  EXPECT_NE(r->body.find("nats: "), std::string::npos) << r->body;
  EXPECT_EQ(r->body.find("nats: ok"), std::string::npos) << r->body;
  EXPECT_EQ(Status(AdminUrl("auth"), "/healthz"), 200);
  g_system->Kill("nats", SIGCONT);
  for (const auto& service : kServices) {
    EXPECT_TRUE(WaitReadiness(service, 200, 60000)) << service;
  }
  // And the chain works again.
  Account owner(*g_system, "After Nats");
  EXPECT_FALSE(owner.org_id().empty());
}

TEST(MetricsTest, ThePublicPortServesNoMetricsAndNoHtmlForUnknownApiPaths) {
  auto client = g_system->Client();
  auto metrics = client->Get("/metrics");
  ASSERT_TRUE(metrics.ok());
  EXPECT_EQ(metrics->status, 404);
  EXPECT_EQ(metrics->body.find("<html"), std::string::npos);
  EXPECT_EQ(metrics->body.find("toolgate_"), std::string::npos);
  auto nope = client->Get("/api/v1/nope");
  ASSERT_TRUE(nope.ok());
  EXPECT_EQ(nope->status, 404);
  EXPECT_EQ(nope->Header("content-type"), "application/problem+json");
  auto other = client->Get("/api/v2/things");
  ASSERT_TRUE(other.ok());
  EXPECT_EQ(other->status, 404);
  EXPECT_EQ(other->Header("content-type"), "application/problem+json");
}

// Every admin URL in the state file, by service.
std::map<std::string, std::string> AdminUrls() {
  std::map<std::string, std::string> out;
  auto state = Json(g_system->State());
  simdjson::dom::object admin;
  if (state.root["admin"].get_object().get(admin) != simdjson::SUCCESS) return out;
  for (auto [name, url] : admin) out[std::string(name)] = std::string(std::string_view(url));
  return out;
}

int FreePort() {
  Result<int> port = net::PickListenPort();
  if (!port.ok()) throw std::runtime_error(port.status().ToString());
  return *port;
}

// The one value of an instant query's vector result, or "" when the query has no single result.
std::string QueryValue(http::HttpClient& prometheus, const std::string& encoded_query) {
  auto r = prometheus.Get("/api/v1/query?query=" + encoded_query);
  if (!r.ok() || r->status != 200) return "";
  auto doc = Json(r->body);
  simdjson::dom::array result;
  if (doc.root["data"]["result"].get_array().get(result) != simdjson::SUCCESS ||
      result.size() != 1) {
    return "";
  }
  std::string_view value;
  if (result.at(0)["value"].at(1).get_string().get(value) != simdjson::SUCCESS) return "";
  return std::string(value);
}

const std::filesystem::path kObservability =
    std::filesystem::path(TOOLGATE_SOURCE_DIR) / "deploy" / "observability";

// Runs a command, its output into *output; returns its exit status.
int RunCommand(const std::string& command, std::string* output) {
  FILE* pipe = ::popen((command + " 2>&1").c_str(), "r");
  if (pipe == nullptr) return -1;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, pipe)) > 0) output->append(buf, n);
  int status = ::pclose(pipe);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TEST(MetricsTest, TheShippedAlertRulesAndPrometheusConfigAreValid) {
  std::string out;
  EXPECT_EQ(RunCommand("/usr/bin/promtool check rules " +
                           (kObservability / "prometheus" / "alerts.yml").string(),
                       &out),
            0)
      << out;
  // (kubernetes.yml needs Kubernetes service discovery, which Debian's Prometheus leaves out.)
  for (const char* config : {"prometheus.yml"}) {
    out.clear();
    EXPECT_EQ(RunCommand("/usr/bin/promtool check config " +
                             (kObservability / "prometheus" / config).string(),
                         &out),
              0)
        << config << ": " << out;
  }
}

// Every "expr" of the shipped dashboard's panels.
std::vector<std::string> DashboardExpressions() {
  std::ifstream in(kObservability / "grafana" / "dashboards" / "toolgate.json");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto doc = Json(text);
  std::vector<std::string> out;
  simdjson::dom::array panels;
  if (doc.root["panels"].get_array().get(panels) != simdjson::SUCCESS) return out;
  for (auto panel : panels) {
    simdjson::dom::array targets;
    if (panel["targets"].get_array().get(targets) != simdjson::SUCCESS) continue;
    for (auto target : targets) {
      std::string_view expr;
      if (target["expr"].get_string().get(expr) == simdjson::SUCCESS) out.emplace_back(expr);
    }
  }
  return out;
}

// How many series an instant query returns (-1 when it fails).
int QuerySeries(http::HttpClient& prometheus, const std::string& query) {
  auto r = prometheus.Get("/api/v1/query?query=" + http::UrlEncode(query));
  if (!r.ok() || r->status != 200) return -1;
  auto doc = Json(r->body);
  simdjson::dom::array result;
  if (doc.root["data"]["result"].get_array().get(result) != simdjson::SUCCESS) return -1;
  return static_cast<int>(result.size());
}

// A real Prometheus (Debian's package) scrapes every admin port, labelled as the shipped
// configuration labels them, with the shipped alert rules: its `up` is 1 only for a target whose
// exposition it could parse, every rule evaluates without error, and every expression of the
// dashboard finds data after the mix of calls above.
TEST(MetricsTest, APrometheusServerScrapesEveryAdminPort) {
  auto urls = AdminUrls();
  ASSERT_GE(urls.size(), kServices.size());
  std::filesystem::path dir = std::filesystem::path(g_system->data_dir()) / "prometheus";
  std::filesystem::create_directories(dir);
  std::ostringstream config;
  config << "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
         << "rule_files: [\"" << (kObservability / "prometheus" / "alerts.yml").string() << "\"]\n"
         << "scrape_configs:\n  - job_name: toolgate\n    static_configs:\n";
  for (const auto& [name, url] : urls) {
    config << "      - targets: [\"" << url.substr(url.find("//") + 2) << "\"]\n"
           << "        labels: {service: \"" << name << "\"}\n";
  }
  std::ofstream(dir / "prometheus.yml") << config.str();
  const std::string address = "127.0.0.1:" + std::to_string(FreePort());
  std::vector<std::string> args = {
      "/usr/bin/prometheus", "--config.file=" + (dir / "prometheus.yml").string(),
      "--storage.tsdb.path=" + (dir / "tsdb").string(), "--web.listen-address=" + address};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, (dir / "prometheus.log").c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  pid_t pid = -1;
  ASSERT_EQ(posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ), 0)
      << "prometheus is installed by scripts/install-deps.sh";
  posix_spawn_file_actions_destroy(&actions);
  struct Stop {
    pid_t pid;
    ~Stop() {
      ::kill(pid, SIGTERM);
      ::waitpid(pid, nullptr, 0);
    }
  } stop{pid};

  http::HttpClient prometheus("http://" + address);
  const std::string want = std::to_string(urls.size());
  std::string up, started;
  EXPECT_TRUE(WaitUntil(
      [&] {
        up = QueryValue(prometheus, "count(up%7Bjob%3D%22toolgate%22%7D%20%3D%3D%201)");
        started = QueryValue(prometheus, "count(toolgate_process_start_time_seconds)");
        return up == want && started == want;
      },
      60000, "Prometheus to scrape every service", 200));  // each poll: the next scrape
  std::ifstream log(dir / "prometheus.log");
  std::string log_text((std::istreambuf_iterator<char>(log)), std::istreambuf_iterator<char>());
  EXPECT_EQ(up, want) << log_text;
  EXPECT_EQ(started, want);

  // The shipped rules loaded, and each has been evaluated without error.
  std::string rules_body;
  std::map<std::string, std::string> health;
  auto rules_evaluated = [&] {
    auto r = prometheus.Get("/api/v1/rules");
    health.clear();
    if (r.ok() && r->status == 200) {
      rules_body = r->body;
      auto doc = Json(r->body);
      simdjson::dom::array groups;
      if (doc.root["data"]["groups"].get_array().get(groups) == simdjson::SUCCESS) {
        for (auto group : groups) {
          simdjson::dom::array rules;
          if (group["rules"].get_array().get(rules) != simdjson::SUCCESS) continue;
          for (auto rule : rules) {
            health[std::string(std::string_view(rule["name"]))] =
                std::string(std::string_view(rule["health"]));
          }
        }
      }
    }
    bool all_ok = !health.empty();
    for (const auto& [name, h] : health) all_ok = all_ok && h == "ok";
    return all_ok;
  };
  EXPECT_TRUE(WaitUntil(rules_evaluated, 60000, "every shipped rule to evaluate without error",
                        200));  // each poll: the next evaluation
  EXPECT_GE(health.size(), 9u) << rules_body;
  for (const auto& [name, h] : health) EXPECT_EQ(h, "ok") << name << ": " << rules_body;

  // Every dashboard expression returns data: rates need two scrapes after the calls, so wait
  // for each in turn.
  auto expressions = DashboardExpressions();
  EXPECT_GE(expressions.size(), 30u);
  for (const std::string& expr : expressions) {
    EXPECT_TRUE(WaitUntil([&] { return QuerySeries(prometheus, expr) > 0; }, 30000,
                          "data from " + expr, 200));  // each poll: the next scrape
  }
}

}  // namespace
}  // namespace toolgate::testing
