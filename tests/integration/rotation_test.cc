// Rotating the secrets master key on a running system: `toolgate-secrets rotate-master-key`
// re-encrypts every stored secret under a new key in one transaction; a secrets service started
// with only the new key then still resolves them. With a key that is not the current one it
// refuses and changes nothing.
#include <signal.h>
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>

#include "system.h"

namespace toolgate::testing {
namespace {

const auto* const kEnv = ::testing::AddGlobalTestEnvironment(new SharedSystem());

constexpr const char* kEnvEcho =
    "function service_handler(event, context) return {token = context.env.API_TOKEN} end";

// Runs toolgate-secrets with the system's PostgreSQL and the given keys; returns the exit status
// and the output (stdout and stderr) in *output.
int RunRotation(const std::string& current_key_file, const std::string& new_key_file,
                std::string* output) {
  const std::string keys = g_system->data_dir() + "/keys";
  const std::string command =
      "TOOLGATE_POSTGRES_URL='" + g_system->State("postgres_url") +
      "' TOOLGATE_POSTGRES_PASSWORD_FILE='" + keys + "/postgres.password" +
      "' TOOLGATE_MASTER_KEY_FILE='" + current_key_file + "' " + TOOLGATE_BIN_DIR +
      "/toolgate-secrets rotate-master-key --new-master-key-file '" + new_key_file + "' 2>&1";
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) return -1;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, pipe)) > 0) output->append(buf, n);
  int status = ::pclose(pipe);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TEST(RotationTest, SecretsSurviveARotationOfTheMasterKey) {
  Account owner(*g_system, "Rotation Owner");
  owner.TopUp(10'000'000);
  std::string key = owner.CreateKey();
  std::string fn = owner.CreateFunction("needs token");
  ASSERT_EQ(owner.PublishLua(fn, "1", kEnvEcho, R"("declared_keys":["API_TOKEN"])").status, 201);
  std::string secret = owner.CreateSecret("token", "rotate-me-4f2a");
  auto call = [&] {
    return Invoke(*g_system, key, fn, "1", R"({"event": {}})",
                  {{"X-Env-Keys", "API_TOKEN=" + secret}});
  };
  auto r = call();
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(StringField(StringField(r.body, "body"), "token"), "rotate-me-4f2a");

  const std::string keys = g_system->data_dir() + "/keys";
  const std::string current = keys + "/master.key";
  const std::string next = keys + "/master.key.new";
  // A key that is not the current one: refused, and nothing changes (the real rotation below
  // needs every row still under the current key).
  std::string out;
  EXPECT_NE(RunRotation(keys + "/not-the-master.key", next, &out), 0) << out;
  EXPECT_NE(out.find("does not decrypt under the current master key"), std::string::npos) << out;
  EXPECT_EQ(out.find("rotate-me-4f2a"), std::string::npos) << "a secret in the output: " << out;
  // Refused before it starts: the new key is the current one.
  out.clear();
  EXPECT_NE(RunRotation(current, current, &out), 0) << out;

  out.clear();
  ASSERT_EQ(RunRotation(current, next, &out), 0) << out;
  EXPECT_NE(out.find("re-encrypted"), std::string::npos) << out;
  ASSERT_TRUE(std::filesystem::exists(next));
  EXPECT_NE(g_system->Secret("master.key.new"), g_system->Secret("master.key"));

  // The secrets service starts again with only the new key, where it reads its master key.
  std::filesystem::rename(next, current);
  pid_t old = g_system->Pid("secrets");
  g_system->Kill("secrets", SIGKILL);
  ASSERT_TRUE(g_system->WaitRestarted("secrets", old, 60000));
  r = call();
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(StringField(StringField(r.body, "body"), "token"), "rotate-me-4f2a");
}

}  // namespace
}  // namespace toolgate::testing
