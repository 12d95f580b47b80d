#include "toolgate/executor/job_executor.h"

#include <gtest/gtest.h>
#include <sodium.h>
#include <sys/stat.h>
#include <unistd.h>

#include <map>

#include "testing/tar_builder.h"
#include "toolgate/base/crypto.h"
#include "toolgate/executor/bundle_unpack.h"
#include "toolgate/executor/lua_runtime.h"

namespace toolgate::executor {
namespace {

class FakeSource : public CodeSource {
 public:
  Result<std::string> Fetch(const std::string& function_id, const std::string& version,
                            std::string_view) override {
    auto it = code.find(function_id + "@" + version);
    if (it == code.end()) return Status::NotFound("no such version");
    return it->second;
  }
  std::map<std::string, std::string> code;
};

class JobExecutorTest : public ::testing::Test {
 protected:
  JobExecutorTest() : store_(1 << 20, source_), lua_(RuntimeLimits{}) {
    InitCrypto();
    keys_ = std::move(ExecutorKeys::FromSecretKey(RandomBytes(crypto_box_SECRETKEYBYTES)).value());
    executor_ = std::make_unique<JobExecutor>(*keys_, store_, std::vector<Runtime*>{&lua_});
  }

  v1::InvokeJob Job(const std::string& code, std::map<std::string, std::string> secrets = {}) {
    source_.code["fn-1@1.0"] = code;
    v1::InvokeJob job;
    job.set_execution_id("exec-1");
    job.set_event_json(R"({"x":1})");
    job.mutable_principal()->set_org_id("org-caller");
    v1::FunctionVersion* fn = job.mutable_function();
    fn->set_function_id("fn-1");
    fn->set_version("1.0");
    fn->set_runtime(v1::RUNTIME_LUA);
    fn->set_compute_type(v1::COMPUTE_TYPE_CPU);
    fn->set_timeout_ms(2000);
    fn->set_memory_mb(32);
    v1::EnvMap env;
    for (auto& [k, v] : secrets) (*env.mutable_values())[k] = v;
    std::string plain = env.SerializeAsString();
    std::string sealed(plain.size() + crypto_box_SEALBYTES, '\0');
    crypto_box_seal(reinterpret_cast<unsigned char*>(sealed.data()),
                    reinterpret_cast<const unsigned char*>(plain.data()), plain.size(),
                    reinterpret_cast<const unsigned char*>(keys_->public_key().data()));
    job.set_sealed_env(sealed);
    return job;
  }

  FakeSource source_;
  CodeStore store_;
  LuaRuntime lua_;
  std::unique_ptr<ExecutorKeys> keys_;
  std::unique_ptr<JobExecutor> executor_;
};

TEST_F(JobExecutorTest, AHandlerThatRanIsReportedWithTheJobWithoutItsSecrets) {
  v1::InvokeJob job = Job(R"(
    function service_handler(event, context)
      print("called")
      return {x = event.x, key = os.getenv("API_KEY"), org = context.caller_org_id}
    end)",
                          {{"API_KEY", "s3cret"}});
  v1::ExecutionResult result = executor_->Execute(job, "");
  EXPECT_TRUE(result.handler_ran());
  EXPECT_FALSE(result.has_problem());
  EXPECT_EQ(result.status_code(), 200);
  EXPECT_NE(result.body().find(R"("key":"s3cret")"), std::string::npos) << result.body();
  EXPECT_NE(result.body().find(R"("org":"org-caller")"), std::string::npos) << result.body();
  EXPECT_EQ(result.logs(), "called\n");
  EXPECT_GE(result.memory_used_mb(), 1);
  EXPECT_EQ(result.job().execution_id(), "exec-1");
  EXPECT_EQ(result.job().function().function_id(), "fn-1");
  EXPECT_TRUE(result.job().sealed_env().empty());
}

TEST_F(JobExecutorTest, AHandlerErrorRanAndIsA500) {
  v1::ExecutionResult result =
      executor_->Execute(Job("function service_handler() error('boom') end"), "");
  EXPECT_TRUE(result.handler_ran());
  EXPECT_EQ(result.status_code(), 500);
  EXPECT_NE(result.body().find("boom"), std::string::npos);
}

TEST_F(JobExecutorTest, ATimeoutDidNotRunToTheEnd) {
  v1::InvokeJob job = Job("function service_handler() while true do end end");
  job.mutable_function()->set_timeout_ms(50);
  v1::ExecutionResult result = executor_->Execute(job, "");
  EXPECT_FALSE(result.handler_ran());
  EXPECT_EQ(result.problem().status(), 408);
  EXPECT_EQ(result.problem().code(), "timeout");
  EXPECT_EQ(result.problem().detail(), "The handler ran past its timeout_ms of 50 ms.");
}

TEST_F(JobExecutorTest, MissingCodeIsAnExecutorFailure) {
  v1::InvokeJob job = Job("function service_handler() return 1 end");
  job.mutable_function()->set_version("9.9");
  v1::ExecutionResult result = executor_->Execute(job, "");
  EXPECT_FALSE(result.handler_ran());
  EXPECT_EQ(result.problem().status(), 502);
  EXPECT_EQ(result.problem().code(), "executor_failure");
}

TEST_F(JobExecutorTest, SecretsThatDoNotOpenAreAnExecutorFailure) {
  v1::InvokeJob job = Job("function service_handler() return 1 end", {{"K", "v"}});
  job.set_sealed_env("garbage that is long enough to look like a sealed box......");
  v1::ExecutionResult result = executor_->Execute(job, "");
  EXPECT_FALSE(result.handler_ran());
  EXPECT_EQ(result.problem().code(), "executor_failure");
  EXPECT_TRUE(result.job().sealed_env().empty());
}

TEST_F(JobExecutorTest, AnUnservedRuntimeIsAnExecutorFailure) {
  v1::InvokeJob job = Job("function service_handler() return 1 end");
  job.mutable_function()->set_runtime(v1::RUNTIME_PYTHON);
  v1::ExecutionResult result = executor_->Execute(job, "");
  EXPECT_FALSE(result.handler_ran());
  EXPECT_EQ(result.problem().code(), "executor_failure");
}

TEST_F(JobExecutorTest, NoSealedEnvMeansNoSecrets) {
  v1::InvokeJob job =
      Job("function service_handler(e, c) return os.getenv('K') == nil and next(c.env) == nil end");
  job.clear_sealed_env();
  v1::ExecutionResult result = executor_->Execute(job, "");
  EXPECT_TRUE(result.handler_ran());
  EXPECT_EQ(result.status_code(), 200);
  EXPECT_EQ(result.body(), "true");
}

// What a job's handler notices send to its edge reply subject, and when.
struct Published {
  std::string subject, traceparent;
  v1::InvokeReply reply;
};

constexpr const char* kNoticesHandler = R"lua(
  function service_handler(event)
    progress(1, 4, "one")
    log("notice", {x = event.x}, "job")
    progress(2)
    return {done = true}
  end)lua";

TEST_F(JobExecutorTest, NoticesGoToTheEdgeReplyInOrderBeforeTheResult) {
  v1::InvokeJob job = Job(kNoticesHandler);
  job.set_edge_reply("_INBOX.edge.42");
  job.set_stream_notices(true);
  std::vector<Published> published;
  bool returned = false;
  v1::ExecutionResult result = executor_->Execute(
      job, "00-trace-span-01",
      [&](const std::string& subject, const std::string& bytes, const std::string& traceparent) {
        EXPECT_FALSE(returned) << "a notice was sent after the result";
        Published p{subject, traceparent, {}};
        ASSERT_TRUE(p.reply.ParseFromString(bytes));
        published.push_back(std::move(p));
      });
  returned = true;
  EXPECT_EQ(result.body(), R"({"done":true})");
  ASSERT_EQ(published.size(), 3u);
  for (const Published& p : published) {
    EXPECT_EQ(p.subject, "_INBOX.edge.42");
    EXPECT_EQ(p.traceparent, "00-trace-span-01");
    ASSERT_TRUE(p.reply.has_notice());
    EXPECT_EQ(p.reply.notice().timeout_ms(), 2000);
  }
  const v1::ProgressNotice& first = published[0].reply.notice().progress();
  EXPECT_EQ(first.progress(), 1);
  EXPECT_EQ(first.total(), 4);
  EXPECT_TRUE(first.has_total());
  EXPECT_EQ(first.message(), "one");
  const v1::LogNotice& log = published[1].reply.notice().log();
  EXPECT_EQ(log.level(), "notice");
  EXPECT_EQ(log.data_json(), R"({"x":1})");
  EXPECT_EQ(log.logger(), "job");
  EXPECT_EQ(published[2].reply.notice().progress().progress(), 2);
  EXPECT_FALSE(published[2].reply.notice().progress().has_total());
}

TEST_F(JobExecutorTest, AJobWithoutStreamNoticesSendsNone) {
  v1::InvokeJob job = Job(kNoticesHandler);
  job.set_edge_reply("_INBOX.edge.42");
  int sent = 0;
  v1::ExecutionResult result = executor_->Execute(
      job, "", [&](const std::string&, const std::string&, const std::string&) { ++sent; });
  EXPECT_EQ(result.body(), R"({"done":true})");
  EXPECT_EQ(sent, 0);
}

// A runtime that notes the egress list it was given and reports one request through the gateway.
class EgressReportingRuntime : public Runtime {
 public:
  std::string_view name() const override { return "python"; }
  ExecutionOutcome Run(const Invocation& invocation) override {
    seen_rules.clear();
    if (invocation.egress != nullptr) seen_rules = invocation.egress->rules();
    ExecutionOutcome out;
    out.status_code = 200;
    out.body = "{}";
    EgressRecord r;
    r.method = "CONNECT";
    r.host = "api.x.com";
    r.port = 443;
    r.address = "93.184.216.34";
    r.bytes_sent = 300;
    r.bytes_received = 4000;
    r.ms = 25;
    out.egress.requests.push_back(r);
    EgressRecord refused;
    refused.method = "GET";
    refused.host = "10.0.0.5";
    refused.port = 80;
    refused.refused = "private address";
    out.egress.requests.push_back(refused);
    out.egress.bytes = 4300;
    return out;
  }
  std::vector<core::EgressRule> seen_rules;
};

TEST_F(JobExecutorTest, TheVersionsEgressListReachesTheRuntimeAndItsRequestsTheResult) {
  EgressReportingRuntime runtime;
  JobExecutor executor(*keys_, store_, {&runtime});
  v1::InvokeJob job = Job("unused");
  job.mutable_function()->set_runtime(v1::RUNTIME_PYTHON);
  job.mutable_function()->add_egress("API.x.com");
  job.mutable_function()->add_egress("*.example.com:8443");
  v1::ExecutionResult result = executor.Execute(job, "");
  ASSERT_EQ(runtime.seen_rules.size(), 2u);
  EXPECT_EQ(runtime.seen_rules[0].host, "api.x.com");
  EXPECT_EQ(runtime.seen_rules[1].host, "*.example.com");
  EXPECT_EQ(runtime.seen_rules[1].port, 8443);
  ASSERT_EQ(result.egress_size(), 2);
  EXPECT_EQ(result.egress(0).method(), "CONNECT");
  EXPECT_EQ(result.egress(0).host(), "api.x.com");
  EXPECT_EQ(result.egress(0).port(), 443);
  EXPECT_EQ(result.egress(0).address(), "93.184.216.34");
  EXPECT_EQ(result.egress(0).bytes_sent(), 300);
  EXPECT_EQ(result.egress(0).bytes_received(), 4000);
  EXPECT_EQ(result.egress(0).ms(), 25);
  EXPECT_EQ(result.egress(1).refused(), "private address");
  EXPECT_EQ(result.egress_bytes(), 4300);
}

TEST_F(JobExecutorTest, AnEgressListThatNoLongerParsesAllowsNothing) {
  EgressReportingRuntime runtime;
  JobExecutor executor(*keys_, store_, {&runtime});
  v1::InvokeJob job = Job("unused");
  job.mutable_function()->set_runtime(v1::RUNTIME_PYTHON);
  job.mutable_function()->add_egress("*.*.com");
  executor.Execute(job, "");
  EXPECT_TRUE(runtime.seen_rules.empty());
}

}  // namespace
}  // namespace toolgate::executor

namespace toolgate::executor {
namespace {

class FakeBundles : public BundleSource {
 public:
  Result<std::string> FetchBundle(const std::string& function_id, const std::string& version,
                                  std::string_view) override {
    ++fetches;
    auto it = bundles.find(function_id + "@" + version);
    if (it == bundles.end()) return Status::NotFound("no such bundle");
    return it->second;
  }
  std::map<std::string, std::string> bundles;
  int fetches = 0;
};

// Bundle versions through the JobExecutor: the cache, the default entry file, a module.
class JobExecutorBundleTest : public JobExecutorTest {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/job-bundles-XXXXXX";
    ASSERT_NE(::mkdtemp(pattern), nullptr);
    ASSERT_EQ(::chmod(pattern, 0711), 0);
    dir_ = pattern;
    BundleCacheOptions options;
    options.dir = dir_ + "/cache";
    auto cache = BundleCache::Open(options, bundle_source_);
    ASSERT_TRUE(cache.ok()) << cache.status().ToString();
    cache_ = std::move(*cache);
    with_bundles_ =
        std::make_unique<JobExecutor>(*keys_, store_, std::vector<Runtime*>{&lua_}, cache_.get());
  }
  void TearDown() override {
    with_bundles_.reset();
    cache_.reset();
    ASSERT_TRUE(RemoveTree(dir_).ok());
  }
  // A job of fn-1@1.0 as a bundle version whose bytes are archive, declared with digest.
  v1::InvokeJob BundleJob(const std::string& archive, const std::string& digest) {
    v1::InvokeJob job = Job("");
    bundle_source_.bundles["fn-1@1.0"] = archive;
    job.mutable_function()->set_bundle_digest(digest);
    return job;
  }

  FakeBundles bundle_source_;
  std::string dir_;
  std::unique_ptr<BundleCache> cache_;
  std::unique_ptr<JobExecutor> with_bundles_;
};

const std::string kLuaBundle =
    testing::TarBuilder()
        .File("handler.lua",
              "local m = require('lib.twice')\n"
              "function service_handler(event) return {y = m.twice(event.x)} end\n")
        .File("lib/twice.lua", "return {twice = function(n) return 2 * n end}\n")
        .Finish();

TEST_F(JobExecutorBundleTest, RunsTheDefaultEntryAndAWarmCallNeverFetches) {
  const std::string digest = HexEncode(Sha256(kLuaBundle));
  v1::ExecutionResult first = with_bundles_->Execute(BundleJob(kLuaBundle, digest), "");
  EXPECT_TRUE(first.handler_ran()) << first.problem().detail();
  EXPECT_EQ(first.body(), R"({"y":2})");
  v1::ExecutionResult second = with_bundles_->Execute(BundleJob(kLuaBundle, digest), "");
  EXPECT_EQ(second.body(), R"({"y":2})");
  EXPECT_EQ(bundle_source_.fetches, 1);
}

TEST_F(JobExecutorBundleTest, BytesThatDoNotHashToTheDigestAreNotRunNorCharged) {
  const std::string other = testing::TarBuilder().File("handler.lua", "x = 1").Finish();
  v1::ExecutionResult result =
      with_bundles_->Execute(BundleJob(kLuaBundle, HexEncode(Sha256(other))), "");
  EXPECT_FALSE(result.handler_ran());
  EXPECT_EQ(result.problem().code(), "executor_failure");
  EXPECT_EQ(cache_->count(), 0u);
}

TEST_F(JobExecutorBundleTest, AnExecutorWithoutABundleCacheRefusesBundleVersions) {
  v1::ExecutionResult result =
      executor_->Execute(BundleJob(kLuaBundle, HexEncode(Sha256(kLuaBundle))), "");
  EXPECT_FALSE(result.handler_ran());
  EXPECT_EQ(result.problem().code(), "executor_failure");
  EXPECT_EQ(bundle_source_.fetches, 0);
}

}  // namespace
}  // namespace toolgate::executor
