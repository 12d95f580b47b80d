// Authenticated infrastructure in the embedded default: PostgreSQL, Redis and NATS refuse a
// client without the launcher's credentials (a local user who is not the launcher has none),
// each service's NATS user is held to its own subjects, nothing listens beyond loopback, and a
// data directory from before credentials existed upgrades on the next start.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "system.h"
#include "toolgate/base/time.h"

namespace fs = std::filesystem;

namespace toolgate::testing {
namespace {

const auto* const kEnv = ::testing::AddGlobalTestEnvironment(new SharedSystem());

// Runs command as the unprivileged local user `nobody`, with no environment of ours.
std::pair<int, std::string> RunAsNobody(const std::string& command) {
  return RunCommand(
      "setpriv --reuid=nobody --regid=nogroup --clear-groups env -i PATH=/usr/bin:/bin "
      "sh -c '" +
      command + "'");
}

int PortOf(const std::string& url) {
  size_t colon = url.rfind(':');
  size_t end = url.find('/', colon);
  return colon == std::string::npos ? -1 : std::stoi(url.substr(colon + 1, end - colon - 1));
}

std::string Slurp(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// A raw NATS client: the protocol is text, so what the server answers is plain to see.
class RawNats {
 public:
  explicit RawNats(int port) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(port));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    timeval tv{5, 0};
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    if (::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
      ADD_FAILURE() << "cannot connect to NATS on " << port;
    }
    ReadUntil("\r\n");  // INFO
  }
  ~RawNats() { ::close(fd_); }

  // Sends CONNECT (with user and password unless user is empty), the commands, then PING, and
  // returns everything the server said up to PONG (or until it closed the connection).
  std::string Session(const std::string& user, const std::string& password,
                      const std::string& commands) {
    std::string connect = R"(CONNECT {"verbose":false,"pedantic":false,"protocol":1)";
    if (!user.empty()) connect += R"(,"user":")" + user + R"(","pass":")" + password + "\"";
    Send(connect + "}\r\n" + commands + "PING\r\n");
    return ReadUntil("PONG\r\n");
  }

 private:
  void Send(const std::string& s) {
    ASSERT_EQ(::write(fd_, s.data(), s.size()), static_cast<ssize_t>(s.size()));
  }
  std::string ReadUntil(const std::string& end) {
    std::string got;
    char buf[4096];
    while (got.find(end) == std::string::npos) {
      ssize_t n = ::read(fd_, buf, sizeof buf);
      if (n <= 0) break;  // closed (as after an authorization violation) or timed out
      got.append(buf, static_cast<size_t>(n));
    }
    return got;
  }
  int fd_ = -1;
};

// First: every hop of the chain (secrets included, and another organization's tool) runs under
// the per-service NATS users, and neither the server nor a service saw a subject refused, so the
// permission lists miss nothing the services use.
TEST(InfraTest, TheSystemWorksWithCredentials) {
  Account owner(*g_system, "Credentialed");
  Account caller(*g_system, "Caller");
  std::string owner_key = owner.CreateKey();
  std::string caller_key = caller.CreateKey();
  owner.TopUp(1000000);
  caller.TopUp(1000000);
  std::string fn = owner.CreateFunction("env", R"("visibility":"public","price_micro_usd":3)");
  ASSERT_EQ(owner
                .PublishLua(fn, "1.0.0",
                            "function service_handler(e, c) return {token = c.env.TOKEN} end",
                            R"("declared_keys":["TOKEN"])")
                .status,
            201);
  std::string secret = owner.CreateSecret("token", "s3cret");
  auto r =
      Invoke(*g_system, owner_key, fn, "", R"({"event":{}})", {{"X-Env-Keys", "TOKEN=" + secret}});
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_NE(r.body.find("s3cret"), std::string::npos) << r.body;
  caller.AddToWorkspace(fn);
  std::string other_secret = caller.CreateSecret("token", "theirs");
  auto paid = Invoke(*g_system, caller_key, fn, "1.0.0", R"({"event":{}})",
                     {{"X-Env-Keys", "TOKEN=" + other_secret}});
  ASSERT_EQ(paid.status, 200) << paid.body;
  auto doc = Json(paid.body);
  EXPECT_EQ(int64_t(doc.root["summary"]["cost"]["function_micro_usd"]), 3);
  auto health = g_system->Client()->Get("/healthz");
  ASSERT_TRUE(health.ok());
  EXPECT_EQ(health->status, 200) << health->body;
  for (const auto& entry : fs::directory_iterator(fs::path(g_system->data_dir()) / "logs")) {
    std::string log = Slurp(entry.path());
    // nats-server's "Publish Violation", "Subscription Violation", "authentication error"; a
    // client's "Permissions Violation", "Not Permitted".
    for (const char* refused :
         {"Violation", "authentication error", "Not Permitted", "not permitted"}) {
      EXPECT_EQ(log.find(refused), std::string::npos) << entry.path() << " has " << refused;
    }
  }
}

TEST(InfraTest, PostgresRefusesAClientWithoutThePassword) {
  std::string port = std::to_string(PortOf(g_system->State("postgres_url")));
  std::string psql =
      "psql -h 127.0.0.1 -p " + port + " -U toolgate -d toolgate -w -tAc \"SELECT 1\"";
  auto none = RunAsNobody(psql);
  EXPECT_NE(none.first, 0) << none.second;
  EXPECT_NE(none.second.find("no password supplied"), std::string::npos) << none.second;
  auto wrong = RunAsNobody("PGPASSWORD=guess " + psql);
  EXPECT_NE(wrong.first, 0) << wrong.second;
  EXPECT_NE(wrong.second.find("password authentication failed"), std::string::npos) << wrong.second;
  // The ledger is there, for whoever has the password.
  auto right = RunCommand("PGPASSWORD=" + g_system->Secret("postgres.password") + " " + psql);
  EXPECT_EQ(right.first, 0) << right.second;
  EXPECT_EQ(right.second, "1\n");
  std::string hba = Slurp(fs::path(g_system->data_dir()) / "pg" / "pg_hba.conf");
  EXPECT_EQ(hba.find("trust"), std::string::npos) << hba;
}

TEST(InfraTest, RedisRefusesAClientWithoutThePassword) {
  std::string cli =
      "redis-cli -h 127.0.0.1 -p " + std::to_string(PortOf(g_system->State("redis_url")));
  auto none = RunAsNobody(cli + " GET tg:bal:x");
  EXPECT_NE(none.second.find("NOAUTH"), std::string::npos) << none.second;
  auto wrong = RunAsNobody("REDISCLI_AUTH=guess " + cli + " PING");
  EXPECT_NE(wrong.second.find("WRONGPASS"), std::string::npos) << wrong.second;
  auto right =
      RunCommand("REDISCLI_AUTH=" + g_system->Secret("redis.password") + " " + cli + " PING");
  EXPECT_EQ(right.second, "PONG\n");
}

TEST(InfraTest, NatsRefusesAClientWithoutCredentials) {
  int port = PortOf(g_system->State("nats_url"));
  EXPECT_NE(RawNats(port)
                .Session("", "", "SUB tg.invoke.auth 1\r\n")
                .find("-ERR 'Authorization Violation'"),
            std::string::npos);
  EXPECT_NE(RawNats(port).Session("executor", "guess", "").find("-ERR 'Authorization Violation'"),
            std::string::npos);
  // The credentials of one service do not open another's account.
  EXPECT_NE(RawNats(port)
                .Session("billing", g_system->Secret("nats-executor.password"), "")
                .find("-ERR 'Authorization Violation'"),
            std::string::npos);
}

TEST(InfraTest, AServiceUserIsHeldToItsOwnSubjects) {
  int port = PortOf(g_system->State("nats_url"));
  std::string pw = g_system->Secret("nats-executor.password");
  ASSERT_FALSE(pw.empty());
  // Allowed: what the executor does.
  std::string ok = RawNats(port).Session(
      "executor", pw, "SUB tg.exec.cpu.lua executor 1\r\nPUB tg.billing.settle.probe 0\r\n\r\n");
  EXPECT_EQ(ok, "PONG\r\n");
  // Acking its own settlements, reading the edge's replies, taking another stage's queue.
  std::string denied = RawNats(port).Session("executor", pw,
                                             "PUB _INBOX.executor.settle.probe.acks 0\r\n\r\n"
                                             "SUB _INBOX.edge.> 2\r\n"
                                             "SUB tg.invoke.billing billing 3\r\n"
                                             "PUB tg.events.execution 0\r\n\r\n");
  for (const char* want :
       {"Permissions Violation for Publish to \"_INBOX.executor.settle.probe.acks\"",
        "Permissions Violation for Subscription to \"_INBOX.edge.>\"",
        "Permissions Violation for Subscription to \"tg.invoke.billing\"",
        "Permissions Violation for Publish to \"tg.events.execution\""}) {
    EXPECT_NE(denied.find(want), std::string::npos) << want << " in:\n" << denied;
  }
  // Billing, which does send the acks, may.
  EXPECT_EQ(RawNats(port).Session("billing", g_system->Secret("nats-billing.password"),
                                  "PUB _INBOX.executor.settle.probe.acks 0\r\n\r\n"),
            "PONG\r\n");
}

TEST(InfraTest, CredentialsAreOwnerOnlyAndNothingListensBeyondLoopback) {
  fs::path data = g_system->data_dir();
  for (const fs::path& file :
       {data / "keys" / "postgres.password", data / "keys" / "redis.password",
        data / "keys" / "nats-edge.password", data / "nats" / "nats.conf",
        data / "redis" / "redis.conf"}) {
    struct stat st {};
    ASSERT_EQ(::stat(file.c_str(), &st), 0) << file;
    EXPECT_EQ(st.st_mode & 077, 0u) << file;
  }
  EXPECT_NE(RunAsNobody("cat " + (data / "keys" / "redis.password").string()).first, 0);
  // Nor the data and logs behind the servers: Redis's AOF, PostgreSQL's cluster.
  for (const char* dir : {"keys", "redis", "nats", "logs", "pg"}) {
    struct stat st {};
    ASSERT_EQ(::stat((data / dir).c_str(), &st), 0) << dir;
    EXPECT_EQ(st.st_mode & 077, 0u) << dir;
  }
  EXPECT_NE(RunAsNobody("ls " + (data / "redis").string()).first, 0);
  // /proc/net/tcp: local address 0100007F is 127.0.0.1; state 0A is LISTEN.
  for (int port : {PortOf(g_system->State("nats_url")), PortOf(g_system->State("redis_url")),
                   PortOf(g_system->State("postgres_url")), PortOf(g_system->url())}) {
    char hex[8];
    std::snprintf(hex, sizeof hex, "%04X", port);
    std::string listening;
    for (const char* table : {"/proc/net/tcp", "/proc/net/tcp6"}) {
      std::istringstream lines(Slurp(table));
      std::string line;
      while (std::getline(lines, line)) {
        std::istringstream f(line);
        std::string sl, local, remote, st;
        f >> sl >> local >> remote >> st;
        if (st == "0A" && local.size() > 5 && local.substr(local.size() - 4) == hex) {
          listening += local + " ";
        }
      }
    }
    EXPECT_EQ(listening, "0100007F:" + std::string(hex) + " ") << "port " << port;
  }
}

// Last: it restarts the launcher. A data directory of an earlier version: no PostgreSQL password
// and a pg_hba.conf that trusts loopback.
TEST(InfraTest, ADataDirectoryWithoutCredentialsUpgradesOnTheNextStart) {
  Account owner(*g_system, "Upgraded");
  g_system->KillLauncher(SIGTERM);
  fs::path data = g_system->data_dir();
  fs::remove(data / "keys" / "postgres.password");
  {
    std::ofstream hba(data / "pg" / "pg_hba.conf", std::ios::trunc);
    hba << "host all all 127.0.0.1/32 trust\n";
  }
  g_system->Restart();
  std::string password = g_system->Secret("postgres.password");
  EXPECT_FALSE(password.empty());
  std::string psql = "psql -h 127.0.0.1 -p " +
                     std::to_string(PortOf(g_system->State("postgres_url"))) +
                     " -U toolgate -d toolgate -w -tAc ";
  auto none = RunAsNobody(psql + "\"SELECT 1\"");
  EXPECT_NE(none.first, 0) << none.second;
  auto right = RunCommand("PGPASSWORD=" + password + " " + psql +
                          "\"SELECT count(*) FROM auth.organizations WHERE name = 'Upgraded'\"");
  EXPECT_EQ(right.second, "1\n");  // the data of before the upgrade
  Account after(*g_system, "AfterUpgrade");
  after.TopUp(4242);
  EXPECT_EQ(after.Balance(), 4242);
}

}  // namespace
}  // namespace toolgate::testing
