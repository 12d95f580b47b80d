#include "launcher.h"

#include <fcntl.h>
#include <libpq-fe.h>
#include <netinet/in.h>
#include <pwd.h>
#include <signal.h>
#include <sodium.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>
#include <tuple>

#include "demo.h"
#include "stale.h"
#include "supervisor.h"
#include "toolgate/base/crypto.h"
#include "toolgate/base/flags.h"
#include "toolgate/base/json.h"
#include "toolgate/base/json_writer.h"
#include "toolgate/base/log.h"
#include "toolgate/base/process.h"
#include "toolgate/base/secret_file.h"
#include "toolgate/base/time.h"
#include "toolgate/bus/bus.h"
#include "toolgate/core/bus_permissions.h"

namespace fs = std::filesystem;

namespace toolgate::cli {
namespace {

constexpr const char* kProgram = "toolgate up";
const std::vector<std::string> kServices = {"auth", "registry", "secrets", "billing", "executor",
                                            "edge"};

[[noreturn]] void Fail(const std::string& what) {
  std::fprintf(stderr, "%s: %s\n", kProgram, what.c_str());
  std::exit(1);
}

int FreePort() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    Fail("cannot find a free port");
  }
  int port = ntohs(addr.sin_port);
  ::close(fd);
  return port;
}

int PortFlag(const Flags& flags, const std::string& name) {
  int64_t p = flags.GetInt(name);
  if (p < 0 || p > 65535) Fail("--" + name + " must be a port number");
  return p == 0 ? FreePort() : static_cast<int>(p);
}

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void WriteFileAtomically(const fs::path& path, const std::string& text, mode_t mode) {
  fs::path tmp = path.string() + ".tmp";
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC, mode);
  if (fd < 0 || ::write(fd, text.data(), text.size()) != static_cast<ssize_t>(text.size()) ||
      ::fchmod(fd, mode) != 0 || ::close(fd) != 0) {
    Fail("cannot write " + tmp.string());
  }
  fs::rename(tmp, path);
}

// The secrets master key, the edges' MCP session key and the executor pool's key pair, created
// once, 0600.
void EnsureKeys(const fs::path& keys) {
  fs::create_directories(keys);
  ::chmod(keys.c_str(), 0700);
  if (!fs::exists(keys / "master.key")) {
    WriteFileAtomically(keys / "master.key", Base64Encode(RandomBytes(32)) + "\n", 0600);
  }
  if (!fs::exists(keys / "mcp_session.key")) {
    WriteFileAtomically(keys / "mcp_session.key", Base64Encode(RandomBytes(32)) + "\n", 0600);
  }
  if (!fs::exists(keys / "executor.key")) {
    unsigned char pk[crypto_box_PUBLICKEYBYTES], sk[crypto_box_SECRETKEYBYTES];
    crypto_box_keypair(pk, sk);
    WriteFileAtomically(keys / "executor.pub",
                        Base64Encode(std::string_view(reinterpret_cast<char*>(pk), sizeof pk)) +
                            "\n",
                        0644);
    WriteFileAtomically(keys / "executor.key",
                        Base64Encode(std::string_view(reinterpret_cast<char*>(sk), sizeof sk)) +
                            "\n",
                        0600);
    sodium_memzero(sk, sizeof sk);
  }
}

struct PgUser {
  uid_t uid = 0;
  gid_t gid = 0;
};

// PostgreSQL refuses to run as root; when we are root it runs as the `postgres` system user
// (created by Debian's postgresql package).
PgUser PostgresUser() {
  if (::geteuid() != 0) return {};
  passwd* pw = ::getpwnam("postgres");
  if (!pw) Fail("running as root needs the 'postgres' system user (apt-get install postgresql-15)");
  return {pw->pw_uid, pw->pw_gid};
}

std::string PgBin(const std::string& tool) {
  for (const char* dir : {"/usr/lib/postgresql/15/bin", "/usr/lib/postgresql/16/bin"}) {
    fs::path p = fs::path(dir) / tool;
    if (fs::exists(p)) return p.string();
  }
  Fail("PostgreSQL server binaries not found (apt-get install postgresql-15)");
}

// Runs a command to completion as user, output to log, stdin from stdin_file (empty: none);
// returns its exit status.
int RunAs(const std::vector<std::string>& argv, const PgUser& user, const std::string& log_file,
          const std::string& stdin_file = {}) {
  Supervisor once(nullptr);
  ChildSpec spec{"once", argv, {}, log_file, user.uid, user.gid, SIGTERM, stdin_file};
  if (!once.Start(spec).ok()) return -1;
  int status = 0;
  ::waitpid(once.pid("once"), &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

void ChownTree(const fs::path& dir, const PgUser& user) {
  if (user.uid == 0) return;
  if (::chown(dir.c_str(), user.uid, user.gid) != 0) Fail("cannot chown " + dir.string());
  for (const auto& entry : fs::recursive_directory_iterator(dir)) {
    if (::lchown(entry.path().c_str(), user.uid, user.gid) != 0) {
      Fail("cannot chown " + entry.path().string());
    }
  }
}

// Every credential of the embedded default, generated on the first run into DATA/keys (0600)
// and read back on every later one.
struct Credentials {
  fs::path postgres_file;
  std::string postgres;
  bool postgres_created = false;  // a new password: PostgreSQL must be told (see below)
  fs::path redis_file;
  std::string redis;
  std::map<std::string, fs::path> nats_files;  // by NATS user (core::BusUsers())
  std::map<std::string, std::string> nats;
};

Credentials EnsureCredentials(const fs::path& keys) {
  auto ensure = [](const fs::path& path, bool* created) {
    auto secret = EnsureSecretFile(path);
    if (!secret.ok()) Fail(secret.status().ToString());
    if (created) *created = secret->created;
    return secret->value;
  };
  Credentials c;
  c.postgres_file = keys / "postgres.password";
  c.postgres = ensure(c.postgres_file, &c.postgres_created);
  c.redis_file = keys / "redis.password";
  c.redis = ensure(c.redis_file, nullptr);
  for (const auto& user : core::BusUsers()) {
    c.nats_files[user.name] = keys / ("nats-" + user.name + ".password");
    c.nats[user.name] = ensure(c.nats_files[user.name], nullptr);
  }
  return c;
}

// The cluster's client authentication, written on every start: SCRAM passwords over loopback TCP
// and nothing else (the Unix socket is off), never `trust`.
constexpr const char* kPgHba =
    "# Written by `toolgate up` on every start; edits are lost.\n"
    "# TYPE  DATABASE  USER  ADDRESS       METHOD\n"
    "host    all       all   127.0.0.1/32  scram-sha-256\n";

// Gives the `toolgate` role its password, in single-user mode (no listener, so no window in
// which anyone could log in without one). Needed on a new cluster and on one created before
// clusters had passwords (its pg_hba.conf trusted loopback); pg_hba.conf is rewritten only after
// this succeeds, so an interrupted upgrade is retried on the next start.
void SetPostgresPassword(const fs::path& pg_dir, const fs::path& keys, const PgUser& user,
                         const std::string& password, const fs::path& log) {
  // stdin of the single-user backend, in the launcher's own directory (0700): the postgres user
  // reads it through the descriptor the launcher opened. The password is hex: no quoting issue.
  fs::path sql = keys / "postgres-password.sql";
  WriteFileAtomically(sql, "ALTER ROLE toolgate PASSWORD '" + password + "';\n", 0600);
  int rc =
      RunAs({PgBin("postgres"), "--single", "-D", pg_dir.string(), "-c", "listen_addresses=", "-c",
             "unix_socket_directories=", "-c", "password_encryption=scram-sha-256", "postgres"},
            user, log.string(), sql.string());
  fs::remove(sql);
  if (rc != 0) Fail("cannot set the PostgreSQL password; see " + log.string());
}

// Connects as the cluster's superuser and creates the database on first run.
void EnsureDatabase(int port, const std::string& password, int timeout_ms) {
  std::string conninfo = "host=127.0.0.1 port=" + std::to_string(port) +
                         " user=toolgate dbname=postgres password=" + password;
  int64_t deadline = NowMs() + timeout_ms;
  PGconn* conn = nullptr;
  for (;;) {
    conn = PQconnectdb(conninfo.c_str());
    if (PQstatus(conn) == CONNECTION_OK) break;
    PQfinish(conn);
    if (NowMs() > deadline) Fail("PostgreSQL did not start; see its log in the data directory");
    std::this_thread::sleep_for(std::chrono::milliseconds(100));  // server still starting
  }
  PGresult* r = PQexec(conn, "SELECT 1 FROM pg_database WHERE datname = 'toolgate'");
  bool exists = PQntuples(r) == 1;
  PQclear(r);
  if (!exists) {
    r = PQexec(conn, "CREATE DATABASE toolgate");
    if (PQresultStatus(r) != PGRES_COMMAND_OK) Fail(std::string("CREATE DATABASE: ") + PQerrorMessage(conn));
    PQclear(r);
  }
  PQfinish(conn);
}

// Holds DATA/run/launcher.lock for the life of this process (the kernel drops it when the
// process dies, however it dies), so two launchers never share a data directory.
void LockDataDir(const fs::path& run_dir) {
  fs::path lock = run_dir / "launcher.lock";
  int fd = ::open(lock.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) Fail("cannot open " + lock.string());
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    Fail("another `toolgate up` is running on this data directory (" + lock.string() + ")");
  }
  // fd stays open on purpose: closing it would release the lock.
}

// Stops what a killed launcher left running on this data directory: the services listed in its
// state file (each only if its pid still runs that program), then the servers through their
// pid files. A launcher that died cleanly left none of these.
void StopLeftovers(const fs::path& data) {
  const std::map<std::string, std::string> programs = {
      {"nats", "nats-server"}, {"redis", "redis-server"}, {"postgres", "postgres"}};
  auto state = ParseJson(ReadFile(data / "run" / "state.json"));
  simdjson::dom::object pids;
  if (state.ok() && state->root["pids"].get_object().get(pids) == simdjson::SUCCESS) {
    for (auto [name, value] : pids) {
      int64_t pid = 0;
      if (value.get_int64().get(pid) != simdjson::SUCCESS) continue;
      auto it = programs.find(std::string(name));
      std::string program = it == programs.end() ? "toolgate-" : it->second;
      if (program == "postgres") continue;  // through postmaster.pid below, with its data dir
      Result<bool> stopped =
          StopStale(static_cast<pid_t>(pid), program, data.string(), SIGTERM, 10000);
      if (!stopped.ok()) Fail(stopped.status().ToString());
    }
  }
  for (const auto& [file, program, sig] : std::vector<std::tuple<fs::path, std::string, int>>{
           {data / "run" / "nats.pid", "nats-server", SIGTERM},
           {data / "run" / "redis.pid", "redis-server", SIGTERM},
           // SIGINT: PostgreSQL's fast shutdown, which leaves a clean cluster behind.
           {data / "pg" / "postmaster.pid", "postgres", SIGINT}}) {
    Result<bool> stopped = StopStaleFromPidFile(file, program, data.string(), sig, 15000);
    if (!stopped.ok()) Fail(stopped.status().ToString());
  }
}

// Waits until every service answers its health subject.
bool WaitHealthy(bus::Bus& bus, int timeout_ms, Supervisor& supervisor) {
  int64_t deadline = NowMs() + timeout_ms;
  for (const auto& name : kServices) {
    if (name == "edge") continue;
    for (;;) {
      if (bus.Request("tg.health." + name, "", 500).ok()) break;
      supervisor.Poll();
      if (NowMs() > deadline) {
        std::fprintf(stderr, "%s: service %s did not become healthy\n", kProgram, name.c_str());
        return false;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));  // service starting
    }
  }
  return true;
}

}  // namespace

int RunUp(const std::vector<std::string>& args) {
  Flags flags("toolgate up", "Run the whole Toolgate system on this machine.");
  flags.Define("data-dir", "./data", "where PostgreSQL, Redis, keys and logs live");
  flags.Define("http-port", "8080", "edge HTTP port (0: any free port)");
  flags.Define("host", "127.0.0.1", "edge listen address");
  flags.Define("nats-port", "0", "NATS port (0: any free port)");
  flags.Define("redis-port", "0", "Redis port (0: any free port)");
  flags.Define("postgres-port", "0", "PostgreSQL port (0: any free port)");
  flags.Define("demo", "false", "seed a demo organization, key and sample tools");
  flags.Define("log-level", "info", "services' log level");
  flags.Define("bin-dir", "", "where the toolgate-* binaries are (default: beside this one)");
  flags.Define("executor-threads", "4", "CPU executor worker threads");
  flags.Define("web-dir", "", "the web app's files (default: <bin-dir>/../web when present)");
  flags.Define("rate-limit-per-key", "1000", "requests/s per API key (0: off)");
  flags.Define("rate-limit-burst", "2000", "burst per API key");
  flags.Define("concurrency-per-org", "100", "concurrent executions per organization (0: off)");
  flags.Define("cpu-rate", "0.0166667", "compute price, µUSD per GB-ms");
  flags.Define("gpu-rate", "1.1", "compute price, µUSD per GPU-ms");
  flags.Define("commission-percent", "20", "platform commission on function fees");
  flags.Define("durable-writes", "true",
               "fsync Redis and PostgreSQL writes before answering (false: for benchmarks only, "
               "to tell the platform's cost from the disk's; a crash can then lose charges)");
  std::vector<char*> argv = {const_cast<char*>("toolgate up")};
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  std::vector<std::string> extra = flags.Parse(static_cast<int>(argv.size()), argv.data());
  if (!extra.empty() && !(extra.size() == 1 && extra[0] == "--demo")) {
    Fail("unexpected argument '" + extra[0] + "' (see --help)");
  }
  bool demo = flags.GetBool("demo");
  bool durable = flags.GetBool("durable-writes");

  BlockShutdownSignals();
  sigset_t chld;
  sigemptyset(&chld);
  sigaddset(&chld, SIGCHLD);
  pthread_sigmask(SIG_BLOCK, &chld, nullptr);
  InitCrypto();
  log::Init("launcher", log::ParseLevel(flags.Get("log-level")));

  fs::path data = fs::absolute(flags.Get("data-dir")).lexically_normal();
  fs::path bin_dir = flags.Get("bin-dir").empty() ? fs::read_symlink("/proc/self/exe").parent_path()
                                                  : fs::path(flags.Get("bin-dir"));
  for (const char* sub : {"logs", "redis", "nats", "run"}) fs::create_directories(data / sub);
  // Redis's AOF (balances, holds), the configurations with passwords and the services' logs are
  // the launcher's user's only, like PostgreSQL's cluster (0700 by initdb).
  for (const char* sub : {"logs", "redis", "nats"}) ::chmod((data / sub).c_str(), 0700);
  LockDataDir(data / "run");
  StopLeftovers(data);
  // Before any thread: the reaper is a fork that runs on without exec.
  auto reaper = Reaper::Start(10000);
  if (!reaper.ok()) Fail(reaper.status().ToString());
  EnsureKeys(data / "keys");
  Credentials creds = EnsureCredentials(data / "keys");
  PgUser pg_user = PostgresUser();
  fs::create_directories(data / "pg");
  if (pg_user.uid != 0) {
    // The postgres user must be able to reach its cluster inside our data directory.
    fs::permissions(data, fs::perms::others_exec, fs::perm_options::add);
  }

  int http_port = static_cast<int>(flags.GetInt("http-port"));
  int nats_port = PortFlag(flags, "nats-port");
  int redis_port = PortFlag(flags, "redis-port");
  int pg_port = PortFlag(flags, "postgres-port");
  std::string nats_url = "nats://127.0.0.1:" + std::to_string(nats_port);
  std::string redis_url = "redis://127.0.0.1:" + std::to_string(redis_port);
  std::string pg_url = "postgresql://toolgate@127.0.0.1:" + std::to_string(pg_port) + "/toolgate";
  fs::path logs = data / "logs";
  fs::path port_file = data / "run" / "edge.port";
  fs::remove(port_file);

  std::map<std::string, pid_t> pids;
  // Each service's admin port (/metrics, /healthz, /readyz), chosen here so the state file can
  // name it before the service has started.
  std::map<std::string, int> admin_ports;
  fs::path state_file = data / "run" / "state.json";
  auto write_state = [&]() {
    JsonWriter w;
    w.BeginObject()
        .Field("pid", static_cast<int64_t>(::getpid()))
        .Field("nats_url", nats_url)
        .Field("redis_url", redis_url)
        .Field("postgres_url", pg_url);
    if (fs::exists(port_file)) {
      std::string port = ReadFile(port_file);
      while (!port.empty() && port.back() == '\n') port.pop_back();
      w.Field("url", "http://" + flags.Get("host") + ":" + port);
    }
    w.Key("pids").BeginObject();
    for (const auto& [name, pid] : pids) w.Field(name, static_cast<int64_t>(pid));
    w.EndObject();
    w.Key("admin").BeginObject();
    for (const auto& [name, port] : admin_ports) {
      w.Field(name, "http://127.0.0.1:" + std::to_string(port));
    }
    w.EndObject().EndObject();
    WriteFileAtomically(state_file, w.Take() + "\n", 0644);
  };
  Supervisor supervisor(
      [&](const std::string& name, pid_t pid) {
        pids[name] = pid;
        write_state();
      },
      reaper->get());

  // NATS: large enough messages for a 6 MiB body plus the job around it; one user per service,
  // allowed only its own subjects (core::BusUsers()). 0600: it holds the passwords.
  WriteFileAtomically(data / "nats" / "nats.conf",
                      "listen: 127.0.0.1:" + std::to_string(nats_port) +
                          "\nmax_payload: 16777216\nmax_pending: 268435456\npid_file: \"" +
                          (data / "run" / "nats.pid").string() + "\"\n" +
                          core::NatsAuthorization([&](const std::string& user) {
                            return "\"" + creds.nats.at(user) + "\"";
                          }),
                      0600);
  if (!fs::exists("/usr/sbin/nats-server")) Fail("nats-server not found (apt-get install nats-server)");
  if (!fs::exists("/usr/bin/redis-server")) Fail("redis-server not found (apt-get install redis-server)");
  Status s =
      supervisor.Start({"nats",
                        {"/usr/sbin/nats-server", "-c", (data / "nats" / "nats.conf").string()},
                        {},
                        (logs / "nats.log").string(),
                        0,
                        0,
                        SIGTERM,
                        ""});
  // Redis with an append-only file fsynced before each reply: a killed Redis comes back with
  // every balance and hold it acknowledged. A config file (0600), not arguments, because it holds
  // the password and a process's arguments are readable by every local user.
  WriteFileAtomically(
      data / "redis" / "redis.conf",
      "bind 127.0.0.1\nport " + std::to_string(redis_port) + "\ndir " + (data / "redis").string() +
          "\nappendonly yes\nappendfsync " + (durable ? "always" : "everysec") +
          "\nsave \"\"\nprotected-mode yes\ndaemonize no\npidfile " +
          (data / "run" / "redis.pid").string() + "\nrequirepass " + creds.redis + "\n",
      0600);
  if (s.ok()) {
    s = supervisor.Start({"redis",
                          {"/usr/bin/redis-server", (data / "redis" / "redis.conf").string()},
                          {},
                          (logs / "redis.log").string(),
                          0,
                          0,
                          SIGTERM,
                          ""});
  }
  if (!s.ok()) Fail(s.ToString());

  // PostgreSQL: a cluster in the data directory, SCRAM passwords on loopback TCP only. initdb's
  // own pg_hba.conf is replaced before the server first starts.
  if (!fs::exists(data / "pg" / "PG_VERSION")) {
    ChownTree(data / "pg", pg_user);
    int rc = RunAs({PgBin("initdb"), "-D", (data / "pg").string(), "-U", "toolgate", "-A", "trust",
                    "-E", "UTF8", "--locale", "C"},
                   pg_user, (logs / "initdb.log").string());
    if (rc != 0) Fail("initdb failed; see " + (logs / "initdb.log").string());
  }
  ChownTree(data / "pg", pg_user);
  fs::path hba = data / "pg" / "pg_hba.conf";
  if (ReadFile(hba) != kPgHba || creds.postgres_created) {
    SetPostgresPassword(data / "pg", data / "keys", pg_user, creds.postgres,
                        logs / "postgres-password.log");
    WriteFileAtomically(hba, kPgHba, 0600);
    ChownTree(data / "pg", pg_user);
  }
  s = supervisor.Start(
      {"postgres",
       {PgBin("postgres"), "-D", (data / "pg").string(), "-p", std::to_string(pg_port), "-c",
        "listen_addresses=127.0.0.1", "-c", "unix_socket_directories=", "-c", "max_connections=200",
        "-c", durable ? "synchronous_commit=on" : "synchronous_commit=off"},
       {},
       (logs / "postgres.log").string(),
       pg_user.uid,
       pg_user.gid,
       SIGINT,
       ""});
  if (!s.ok()) Fail(s.ToString());
  EnsureDatabase(pg_port, creds.postgres, 60000);

  // Credentials travel as file names: a service reads its own password files (root-only, like
  // the launcher's keys), and only billing is given Redis's.
  std::vector<std::string> env = {
      "TOOLGATE_NATS_URL=" + nats_url,
      "TOOLGATE_REDIS_URL=" + redis_url,
      "TOOLGATE_POSTGRES_URL=" + pg_url,
      "TOOLGATE_POSTGRES_PASSWORD_FILE=" + creds.postgres_file.string(),
      "TOOLGATE_LOG_LEVEL=" + flags.Get("log-level"),
      "TOOLGATE_MASTER_KEY_FILE=" + (data / "keys" / "master.key").string(),
      "TOOLGATE_MCP_SESSION_KEY_FILE=" + (data / "keys" / "mcp_session.key").string(),
      "TOOLGATE_EXECUTOR_PUBLIC_KEY_FILE=" + (data / "keys" / "executor.pub").string(),
      "TOOLGATE_EXECUTOR_KEY_FILE=" + (data / "keys" / "executor.key").string(),
  };
  for (const char* name : {"rate-limit-per-key", "rate-limit-burst", "concurrency-per-org",
                           "cpu-rate", "gpu-rate", "commission-percent"}) {
    env.push_back(Flags::EnvName(name) + "=" + flags.Get(name));
  }
  auto service_env = [&](const std::string& name) {
    std::vector<std::string> out = env;
    out.push_back("TOOLGATE_NATS_USER=" + name);
    out.push_back("TOOLGATE_NATS_PASSWORD_FILE=" + creds.nats_files.at(name).string());
    if (name == "billing")
      out.push_back("TOOLGATE_REDIS_PASSWORD_FILE=" + creds.redis_file.string());
    return out;
  };
  for (const auto& name : kServices) {
    std::vector<std::string> argv = {(bin_dir / ("toolgate-" + name)).string()};
    if (!fs::exists(argv[0])) Fail(argv[0] + " not found; build first (see README)");
    admin_ports[name] = FreePort();
    argv.insert(argv.end(), {"--admin-port", std::to_string(admin_ports[name])});
    if (name == "executor") {
      argv.insert(argv.end(), {"--pool", "cpu", "--threads", flags.Get("executor-threads")});
    }
    if (name == "edge") {
      argv.insert(argv.end(), {"--http-port", std::to_string(http_port), "--host",
                               flags.Get("host"), "--port-file", port_file.string()});
      fs::path web = flags.Get("web-dir").empty() ? bin_dir.parent_path() / "web"
                                                  : fs::path(flags.Get("web-dir"));
      if (fs::is_directory(web)) argv.insert(argv.end(), {"--web-dir", web.string()});
    }
    s = supervisor.Start(
        {name, argv, service_env(name), (logs / (name + ".log")).string(), 0, 0, SIGTERM, ""});
    if (!s.ok()) Fail(s.ToString());
  }
  // A GPU executor (Python on tg.exec.gpu.python) when the machine has an NVIDIA GPU.
  if (fs::exists("/dev/nvidia0") || std::system("nvidia-smi -L >/dev/null 2>&1") == 0) {
    admin_ports["executor-gpu"] = FreePort();
    s = supervisor.Start({"executor-gpu",
                          {(bin_dir / "toolgate-executor").string(), "--pool", "gpu",
                           "--admin-port", std::to_string(admin_ports["executor-gpu"])},
                          service_env("executor"),
                          (logs / "executor-gpu.log").string(),
                          0,
                          0,
                          SIGTERM,
                          ""});
    if (!s.ok()) Fail(s.ToString());
  }

  bus::BusOptions bus_options;
  bus_options.url = nats_url;
  bus_options.name = "launcher";
  bus_options.user = "launcher";
  bus_options.password = creds.nats.at("launcher");
  bus_options.inbox_prefix = core::InboxPrefix("launcher");
  auto bus = bus::Bus::Connect(bus_options);
  if (!bus.ok()) Fail("cannot reach NATS: " + bus.status().ToString());
  bool healthy = WaitHealthy(**bus, 60000, supervisor);
  for (int i = 0; healthy && !fs::exists(port_file); ++i) {
    supervisor.Poll();
    if (i > 600) healthy = false;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));  // edge binding its port
  }
  const std::vector<std::string> stop_order = {"edge",     "executor", "executor-gpu", "billing",
                                               "secrets",  "registry", "auth",         "postgres",
                                               "redis",    "nats"};
  if (!healthy) {
    supervisor.Stop(stop_order, 10000);
    Fail("the system did not start; logs are in " + logs.string());
  }
  write_state();
  std::string url = "http://" + flags.Get("host") + ":" + ReadFile(port_file);
  while (!url.empty() && url.back() == '\n') url.pop_back();
  std::printf("Toolgate is up at %s (data in %s, logs in %s)\n", url.c_str(), data.c_str(),
              logs.c_str());
  if (demo) {
    Status seeded = SeedDemo(url, data);
    if (!seeded.ok()) std::fprintf(stderr, "%s: demo seeding failed: %s\n", kProgram, seeded.ToString().c_str());
  }
  std::printf("Press Ctrl-C to stop.\n");
  std::fflush(stdout);

  sigset_t wait_set;
  sigemptyset(&wait_set);
  sigaddset(&wait_set, SIGTERM);
  sigaddset(&wait_set, SIGINT);
  sigaddset(&wait_set, SIGCHLD);
  for (;;) {
    timespec tick{0, 200 * 1000 * 1000};
    int sig = sigtimedwait(&wait_set, nullptr, &tick);
    if (sig == SIGTERM || sig == SIGINT) break;
    supervisor.Poll();
  }
  log::Info("shutting down");
  bus->reset();
  supervisor.Stop(stop_order, 15000);
  fs::remove(state_file);
  std::printf("Toolgate stopped.\n");
  return 0;
}

}  // namespace toolgate::cli
