#include "launcher.h"

#include <arpa/inet.h>
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

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <deque>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>
#include <tuple>

#include "DemoWeatherService.h"
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
#include "toolgate/core/charging_flags.h"
#include "toolgate/core/egress_flags.h"
#include "toolgate/core/egress_policy.h"
#include "toolgate/core/subjects.h"
#include "toolgate/net/listen_port.h"
#include "toolgate/trace/otlp_exporter.h"

namespace fs = std::filesystem;

namespace toolgate::cli {
namespace {

constexpr const char* kProgram = "toolgate up";
const std::vector<std::string> kServices = {"auth",    "registry", "secrets",
                                            "billing", "executor", "edge"};

[[noreturn]] void Fail(const std::string& what) {
  std::fprintf(stderr, "%s: %s\n", kProgram, what.c_str());
  std::exit(1);
}

// "host:port", with an IPv6 literal in brackets.
std::string FormatHostPort(const std::string& host, int port) {
  bool v6 = host.find(':') != std::string::npos && host.front() != '[';
  return (v6 ? "[" + host + "]" : host) + ":" + std::to_string(port);
}

// A loopback port for a child to listen on later (net::PickListenPort says why not port 0).
int FreePort() {
  Result<int> port = net::PickListenPort();
  if (!port.ok()) Fail("cannot find a free port: " + port.status().message());
  return *port;
}

// Whether another program listens on host:port (an IPv4 literal; false for a name, which the
// server itself then reports). SO_REUSEADDR like the servers themselves, so a socket in
// TIME_WAIT does not count.
bool PortInUse(const std::string& host, int port) {
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  if (::inet_pton(AF_INET, host.c_str(), &addr.sin_addr) != 1) return false;
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  int one = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  bool in_use =
      ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 && errno == EADDRINUSE;
  ::close(fd);
  return in_use;
}

// Fails when another program listens on host:port, before anything is started: otherwise the
// child that wants the port would exit, and all the user would see is a service that did not
// start.
void EnsurePortFree(const std::string& host, int port, const std::string& flag) {
  if (PortInUse(host, port)) {
    Fail("port " + std::to_string(port) + " is in use (" + host + ":" + std::to_string(port) +
         "); stop the program that listens there or choose another port with --" + flag +
         " (0: any free port)");
  }
}

int PortFlag(const Flags& flags, const std::string& name) {
  int64_t p = flags.GetInt(name);
  if (p < 0 || p > 65535) Fail("--" + name + " must be a port number");
  if (p == 0) return FreePort();
  EnsurePortFree("127.0.0.1", static_cast<int>(p), name);
  return static_cast<int>(p);
}

// The last lines of a log file, for a console that must say why a child died.
std::string LastLines(const fs::path& path, size_t count) {
  std::ifstream in(path);
  std::deque<std::string> lines;
  for (std::string line; std::getline(in, line);) {
    lines.push_back(std::move(line));
    if (lines.size() > count) lines.pop_front();
  }
  std::string out;
  for (const auto& line : lines) out += "  | " + line + "\n";
  return out;
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
    WriteFileAtomically(
        keys / "executor.pub",
        Base64Encode(std::string_view(reinterpret_cast<char*>(pk), sizeof pk)) + "\n", 0644);
    WriteFileAtomically(
        keys / "executor.key",
        Base64Encode(std::string_view(reinterpret_cast<char*>(sk), sizeof sk)) + "\n", 0600);
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

// The demo's weather service (demo/services/weather.py), run on the loopback as the unprivileged
// user: its port is kept in run/demo-weather.port, because the Forecast sample is published once
// with the address in its code and egress list. Returns "127.0.0.1:<port>".
std::string StartDemoWeather(Supervisor& supervisor, const fs::path& data, const fs::path& logs,
                             const PgUser& user) {
  const fs::path port_file = data / "run" / "demo-weather.port";
  int port = std::atoi(ReadFile(port_file).c_str());
  if (port <= 0 || port > 65535) {
    port = FreePort();
    WriteFileAtomically(port_file, std::to_string(port) + "\n", 0644);
  } else if (PortInUse("127.0.0.1", port)) {
    Fail("port " + std::to_string(port) + " is in use (127.0.0.1:" + std::to_string(port) +
         "), which the demo's weather service keeps (" + port_file.string() +
         ": the Forecast sample calls it there); stop the program that listens there");
  }
  const fs::path script = data / "run" / "demo-weather.py";
  WriteFileAtomically(script, std::string(DemoWeatherService()), 0644);
  Status s = supervisor.Start({"demo-weather",
                               {"/usr/bin/python3", "-I", script.string(), std::to_string(port)},
                               {},
                               (logs / "demo-weather.log").string(),
                               user.uid,
                               user.gid,
                               SIGTERM,
                               ""});
  if (!s.ok()) Fail(s.ToString());
  return "127.0.0.1:" + std::to_string(port);
}

const std::vector<std::string> kStopOrder = {"edge",     "demo-weather", "executor", "executor-gpu",
                                             "billing",  "secrets",      "registry", "auth",
                                             "postgres", "redis",        "nats"};

// Reaps children and, when one died during start-up, stops the others and exits non-zero with
// the cause: the child, how it ended and the last lines of its log.
void CheckStarting(Supervisor& supervisor) {
  supervisor.Poll();
  const auto& exit = supervisor.first_exit();
  if (!exit) return;
  std::string how = WIFEXITED(exit->status)
                        ? "exited with status " + std::to_string(WEXITSTATUS(exit->status))
                        : "was killed by signal " + std::to_string(WTERMSIG(exit->status));
  std::string message = exit->name + " " + how + " during start-up; the end of " + exit->log_file +
                        ":\n" + LastLines(exit->log_file, 15);
  while (!message.empty() && message.back() == '\n') message.pop_back();
  supervisor.Stop(kStopOrder, 10000);
  Fail(message);
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
void EnsureDatabase(int port, const std::string& password, int timeout_ms, Supervisor& supervisor) {
  // connect_timeout: whatever listens there must answer, or the loop below would wait forever.
  std::string conninfo = "host=127.0.0.1 port=" + std::to_string(port) +
                         " user=toolgate dbname=postgres connect_timeout=2 password=" + password;
  int64_t deadline = NowMs() + timeout_ms;
  PGconn* conn = nullptr;
  for (;;) {
    conn = PQconnectdb(conninfo.c_str());
    if (PQstatus(conn) == CONNECTION_OK) break;
    PQfinish(conn);
    CheckStarting(supervisor);
    if (NowMs() > deadline) Fail("PostgreSQL did not start; see its log in the data directory");
    std::this_thread::sleep_for(std::chrono::milliseconds(100));  // server still starting
  }
  PGresult* r = PQexec(conn, "SELECT 1 FROM pg_database WHERE datname = 'toolgate'");
  bool exists = PQntuples(r) == 1;
  PQclear(r);
  if (!exists) {
    r = PQexec(conn, "CREATE DATABASE toolgate");
    if (PQresultStatus(r) != PGRES_COMMAND_OK)
      Fail(std::string("CREATE DATABASE: ") + PQerrorMessage(conn));
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
      if (bus.Request(core::HealthSubject(name), "", 500).ok()) break;
      CheckStarting(supervisor);
      if (NowMs() > deadline) {
        std::fprintf(stderr, "%s: service %s did not become healthy\n", kProgram, name.c_str());
        return false;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));  // service starting
    }
  }
  return true;
}

// `toolgate up --detach`: the launcher goes on in a child of its own session (no terminal, so
// no SIGHUP when it closes) whose stdout and stderr are a pipe to this process until the system
// is up; this process copies what comes through to the console and exits 0 when the child
// writes kReady, or with the child's status when it died first. Returns only in the child.
constexpr std::string_view kReady = "\x06toolgate-ready";

void Detach() {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) Fail("pipe: " + std::string(strerror(errno)));
  std::fflush(stdout);
  std::fflush(stderr);
  pid_t pid = ::fork();
  if (pid < 0) Fail("fork: " + std::string(strerror(errno)));
  if (pid == 0) {
    ::close(fds[0]);
    ::setsid();
    int null_fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (null_fd >= 0) ::dup2(null_fd, STDIN_FILENO);
    ::dup2(fds[1], STDOUT_FILENO);
    ::dup2(fds[1], STDERR_FILENO);
    ::close(fds[1]);
    if (null_fd >= 0) ::close(null_fd);
    return;
  }
  ::close(fds[1]);
  std::string pending;
  bool ready = false;
  char buf[4096];
  for (;;) {
    ssize_t n = ::read(fds[0], buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    pending.append(buf, static_cast<size_t>(n));
    for (size_t eol; (eol = pending.find('\n')) != std::string::npos;) {
      std::string line = pending.substr(0, eol);
      pending.erase(0, eol + 1);
      if (line == kReady) {
        ready = true;
      } else {
        std::fprintf(stdout, "%s\n", line.c_str());
      }
    }
  }
  if (!pending.empty()) std::fprintf(stdout, "%s\n", pending.c_str());
  std::fflush(stdout);
  if (ready) std::exit(0);
  int status = 0;
  ::waitpid(pid, &status, 0);
  std::exit(WIFEXITED(status) && WEXITSTATUS(status) != 0 ? WEXITSTATUS(status) : 1);
}

// Called in a detached launcher once the system is up: the waiting `toolgate up` returns, and
// from now on the launcher's own output goes to DATA/logs/launcher.log.
void DetachedReady(const fs::path& logs) {
  std::printf("%s\n", std::string(kReady).c_str());
  std::fflush(stdout);
  std::fflush(stderr);
  int log_fd =
      ::open((logs / "launcher.log").c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
  if (log_fd < 0) log_fd = ::open("/dev/null", O_WRONLY | O_CLOEXEC);
  ::dup2(log_fd, STDOUT_FILENO);
  ::dup2(log_fd, STDERR_FILENO);
  ::close(log_fd);
}

}  // namespace

// nats-server's GOMAXPROCS. Go runs a goroutine woken by another on any idle core, waking an OS
// thread for it; on a machine it shares with every other service, the bus did better on fewer
// cores (docs/decisions.md, "nats-server on a quarter of the cores").
namespace {
int64_t NatsCpus(int64_t flag) {
  if (flag > 0) return flag;
  return std::max<int64_t>(1, ::sysconf(_SC_NPROCESSORS_ONLN) / 4);
}
}  // namespace

void DefineUpFlags(Flags& flags) {
  flags.Define("data-dir", "./data", "where PostgreSQL, Redis, keys and logs live");
  flags.Define("http-port", "8080", "edge HTTP port (0: any free port)");
  flags.Define("host", "127.0.0.1", "edge listen address");
  flags.Define("nats-port", "0", "NATS port (0: any free port)");
  flags.Define("redis-port", "0", "Redis port (0: any free port)");
  flags.Define("postgres-port", "0", "PostgreSQL port (0: any free port)");
  flags.Define("demo", "false",
               "seed a demo organization, key and sample tools (implies --dev-funding)");
  flags.Define("funding", "grants",
               "where organizations' credit comes from: grants (an operator grants it, `toolgate "
               "admin grant`), checkout, or demo (needs --dev-funding or --demo)");
  flags.Define("dev-funding", "false",
               "development only: fund with play money, any member tops up any amount "
               "(billing's --funding=demo)");
  flags.Define("detach", "false",
               "run in the background once the system is up (logs in DATA/logs/launcher.log; "
               "`toolgate status` shows it, `toolgate down` stops it)");
  flags.Define("log-level", "info", "services' log level");
  flags.Define("bin-dir", "", "where the toolgate-* binaries are (default: beside this one)");
  flags.Define("executor-threads", "4", "CPU executor worker threads");
  flags.Define("web-dir", "", "the web app's files (default: <bin-dir>/../web when present)");
  core::DefineChargingFlags(flags);  // handed on to billing
  flags.Define("durable-writes", "true",
               "fsync Redis and PostgreSQL writes before answering (false: for benchmarks only, "
               "to tell the platform's cost from the disk's; a crash can then lose charges)");
  flags.Define("nats-cpus", "0",
               "cores nats-server runs Go code on at once (its GOMAXPROCS); 0: a quarter of this "
               "machine's cores, at least 1");
  flags.Define("nats-gogc", "400",
               "nats-server's GOGC: how far its heap grows past what is live before Go collects; "
               "Go's default, 100, collects its few live megabytes every 30 ms under load");
  flags.Define("redis-fsync", "",
               "Redis's appendfsync policy, always or everysec (default: always with durable "
               "writes, else everysec); everysec is for measuring the fsync's cost only");
  flags.Define("otlp-endpoint", "",
               "OpenTelemetry collector base URL every service sends its spans to, OTLP/HTTP "
               "JSON to <url>/v1/traces (empty: spans are only logged)");
  core::DefineOperatorEgressFlags(flags);  // passed on to the executors
  // Handed on to billing (docs/operations.md "Checkout funding").
  flags.Define("stripe-secret-key-file", "",
               "--funding checkout: file holding the Stripe secret key (sk_...)");
  flags.Define("stripe-webhook-secret-file", "",
               "--funding checkout: file holding the Stripe webhook endpoint's signing secret "
               "(whsec_...)");
  flags.Define("stripe-api-base", "",
               "--funding checkout: Stripe's API base URL (default Stripe's)");
  flags.Define("public-url", "",
               "the web app's public URL, where payers return from checkout (default: the URL "
               "the edge is reached at)");
}

Result<std::string> FundingFor(const Flags& flags) {
  const std::string& funding = flags.Get("funding");
  const bool play_money = flags.GetBool("dev-funding") || flags.GetBool("demo");
  if (funding != "grants" && funding != "checkout" && funding != "demo") {
    return Status::InvalidArgument("--funding must be grants, checkout or demo, not '" + funding +
                                   "'");
  }
  if (play_money) {
    // They replace the default, grants; checkout is a payment set-up they cannot mean.
    if (funding == "checkout") {
      return Status::InvalidArgument(
          "--dev-funding and --demo fund with play money; drop them or --funding checkout");
    }
    return std::string("demo");
  }
  if (funding == "demo") {
    return Status::InvalidArgument(
        "--funding demo lets every member mint credit: for development only, say so with "
        "--dev-funding (or --demo)");
  }
  return funding;
}

Result<PassedOnFlags> PassOnFlags(const Flags& flags) {
  PassedOnFlags out;
  if (const std::string& endpoint = flags.Get("otlp-endpoint"); !endpoint.empty()) {
    if (Status s = trace::CheckOtlpEndpoint(endpoint); !s.ok()) {
      return Status::InvalidArgument("--otlp-endpoint: " + s.message());
    }
    out.every_service = {"--otlp-endpoint", endpoint};
  }
  if (flags.GetBool("no-egress")) out.executor.push_back("--no-egress");
  for (std::string_view flag : core::kEgressCidrFlagNames) {
    const std::string name(flag);
    for (const std::string& text : flags.GetList(name)) {
      if (auto cidr = core::Cidr::Parse(text); !cidr.ok()) {
        return Status::InvalidArgument(std::string("--") + name + " " + text + ": " +
                                       cidr.status().message());
      }
      out.executor.insert(out.executor.end(), {std::string("--") + name, text});
    }
  }
  for (const char* name : {"stripe-secret-key-file", "stripe-webhook-secret-file"}) {
    const std::string& path = flags.Get(name);
    if (path.empty()) {
      if (flags.Get("funding") == "checkout") {
        return Status::InvalidArgument(std::string("--funding checkout needs --") + name);
      }
      continue;
    }
    // Billing runs in another directory.
    out.billing.insert(out.billing.end(),
                       {std::string("--") + name, std::filesystem::absolute(path).string()});
  }
  for (const char* name : {"stripe-api-base", "public-url"}) {
    if (const std::string& value = flags.Get(name); !value.empty()) {
      out.billing.insert(out.billing.end(), {std::string("--") + name, value});
    }
  }
  return out;
}

int RunUp(const std::vector<std::string>& args) {
  Flags flags("toolgate up", "Run the whole Toolgate system on this machine.");
  DefineUpFlags(flags);
  std::vector<char*> argv = {const_cast<char*>("toolgate up")};
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  std::vector<std::string> extra = flags.Parse(static_cast<int>(argv.size()), argv.data());
  if (!extra.empty() && !(extra.size() == 1 && extra[0] == "--demo")) {
    Fail("unexpected argument '" + extra[0] + "' (see --help)");
  }
  // Checked before anything starts: a service refusing its flag would only show as a failed
  // start.
  auto passed_on = PassOnFlags(flags);
  if (!passed_on.ok()) Fail(passed_on.status().message());
  auto funding = FundingFor(flags);
  if (!funding.ok()) Fail(funding.status().message());
  bool demo = flags.GetBool("demo");
  if (demo && flags.GetBool("no-egress")) {
    // Seeding runs Forecast, which calls the demo's weather service through the gateway.
    Fail(
        "--demo needs egress (its Forecast tool calls the demo's weather service); drop "
        "--no-egress");
  }
  bool durable = flags.GetBool("durable-writes");
  std::string redis_fsync = flags.Get("redis-fsync");
  if (redis_fsync.empty()) redis_fsync = durable ? "always" : "everysec";
  if (redis_fsync != "always" && redis_fsync != "everysec") {
    Fail("--redis-fsync must be always or everysec, not '" + redis_fsync + "'");
  }
  const int64_t nats_cpus = flags.GetInt("nats-cpus");
  if (nats_cpus < 0 || nats_cpus > 4096) Fail("--nats-cpus must be 0..4096");
  const int64_t nats_gogc = flags.GetInt("nats-gogc");
  if (nats_gogc < 25 || nats_gogc > 10000) Fail("--nats-gogc must be 25..10000");
  bool detach = flags.GetBool("detach");
  // Before any thread or child: the rest of the launcher runs in the detached process.
  if (detach) Detach();

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
  // The postgres user must be able to reach its cluster inside our data directory, and the
  // executors' sandboxes (other uids) the bundles under data/bundles: passing through, never
  // listing (the directories that hold secrets are 0700).
  fs::permissions(data, fs::perms::others_exec, fs::perm_options::add);
  fs::create_directories(data / "bundles");
  ::chmod((data / "bundles").c_str(), 0711);

  int http_port = static_cast<int>(flags.GetInt("http-port"));
  if (http_port < 0 || http_port > 65535) Fail("--http-port must be a port number");
  if (http_port != 0) EnsurePortFree(flags.Get("host"), http_port, "http-port");
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

  // NATS: messages large enough for a published bundle (core::kNatsMaxPayloadBytes); one user
  // per service, allowed only its own subjects (core::BusUsers()). 0600: it holds the passwords.
  // JetStream (billing's queue of asynchronous executions, bus/jet_stream.h) stores under
  // DATA/nats/jetstream, the launcher's user's only like the rest of DATA/nats.
  fs::path jetstream_dir = data / "nats" / "jetstream";
  fs::create_directories(jetstream_dir);
  ::chmod(jetstream_dir.c_str(), 0700);
  WriteFileAtomically(data / "nats" / "nats.conf",
                      "listen: 127.0.0.1:" + std::to_string(nats_port) +
                          "\nmax_payload: " + std::to_string(core::kNatsMaxPayloadBytes) +
                          "\nmax_pending: 268435456\npid_file: \"" +
                          (data / "run" / "nats.pid").string() +
                          "\"\njetstream {\n  store_dir: \"" + jetstream_dir.string() + "\"\n}\n" +
                          core::NatsAuthorization([&](const std::string& user) {
                            return "\"" + creds.nats.at(user) + "\"";
                          }),
                      0600);
  if (!fs::exists("/usr/sbin/nats-server"))
    Fail("nats-server not found (apt-get install nats-server)");
  if (!fs::exists("/usr/bin/redis-server"))
    Fail("redis-server not found (apt-get install redis-server)");
  Status s = supervisor.Start(
      {"nats",
       {"/usr/sbin/nats-server", "-c", (data / "nats" / "nats.conf").string()},
       {"GOMAXPROCS=" + std::to_string(NatsCpus(nats_cpus)), "GOGC=" + std::to_string(nats_gogc)},
       (logs / "nats.log").string(),
       0,
       0,
       SIGTERM,
       ""});
  // Redis with an append-only file fsynced before each reply (--redis-fsync always, the default
  // with durable writes): Redis, or the whole host, comes back from a crash with every balance
  // and hold it acknowledged. A config file (0600), not arguments, because it holds the password
  // and a process's arguments are readable by every local user.
  WriteFileAtomically(data / "redis" / "redis.conf",
                      "bind 127.0.0.1\nport " + std::to_string(redis_port) + "\ndir " +
                          (data / "redis").string() + "\nappendonly yes\nappendfsync " +
                          redis_fsync + "\nsave \"\"\nprotected-mode yes\ndaemonize no\npidfile " +
                          (data / "run" / "redis.pid").string() + "\nrequirepass " + creds.redis +
                          "\n",
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
  EnsureDatabase(pg_port, creds.postgres, 60000, supervisor);

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
  for (std::string_view flag : core::kChargingFlagNames) {
    const std::string name(flag);
    env.push_back(Flags::EnvName(name) + "=" + flags.Get(name));
  }
  auto service_env = [&](const std::string& name) {
    std::vector<std::string> out = env;
    out.push_back("TOOLGATE_NATS_USER=" + name);
    out.push_back("TOOLGATE_NATS_PASSWORD_FILE=" + creds.nats_files.at(name).string());
    if (name == "billing") {
      out.push_back("TOOLGATE_REDIS_PASSWORD_FILE=" + creds.redis_file.string());
      // Always set: the launcher's own TOOLGATE_FUNDING was read (and checked) as its --funding,
      // and must not reach billing unchecked through the inherited environment.
      out.push_back("TOOLGATE_FUNDING=" + *funding);
    }
    return out;
  };
  // The platform's own addresses, which no handler may reach through the egress gateway
  // whatever an operator allows: Redis, PostgreSQL, the edge and every admin port (the executor
  // adds its NATS servers itself). All are known before the executor starts.
  for (const auto& name : kServices) admin_ports[name] = FreePort();
  if (http_port == 0) http_port = FreePort();
  std::vector<std::string> platform_endpoints = {
      "--egress-deny-addr", "127.0.0.1:" + std::to_string(redis_port),
      "--egress-deny-addr", "127.0.0.1:" + std::to_string(pg_port),
      "--egress-deny-addr", FormatHostPort(flags.Get("host"), http_port),
      "--egress-deny-addr", "127.0.0.1:" + std::to_string(nats_port)};
  for (const auto& [name, port] : admin_ports) {
    platform_endpoints.insert(platform_endpoints.end(),
                              {"--egress-deny-addr", "127.0.0.1:" + std::to_string(port)});
  }
  std::vector<std::string> egress_flags = passed_on->executor;
  egress_flags.insert(egress_flags.end(), platform_endpoints.begin(), platform_endpoints.end());
  // The demo's weather service listens on the loopback, an address of this host, which the
  // executors refuse unless told: a demo-only allowance of that one endpoint (SeedDemo prints
  // it). The platform's own ports above stay refused.
  DemoServices demo_services;
  if (demo) {
    demo_services.weather = StartDemoWeather(supervisor, data, logs, pg_user);
    egress_flags.insert(egress_flags.end(), {"--egress-allow-endpoint", demo_services.weather});
  }
  for (const auto& name : kServices) {
    std::vector<std::string> argv = {(bin_dir / ("toolgate-" + name)).string()};
    if (!fs::exists(argv[0])) Fail(argv[0] + " not found; build first (see README)");
    argv.insert(argv.end(), {"--admin-port", std::to_string(admin_ports[name])});
    argv.insert(argv.end(), passed_on->every_service.begin(), passed_on->every_service.end());
    if (name == "executor") {
      argv.insert(argv.end(), {"--pool", "cpu", "--threads", flags.Get("executor-threads"),
                               "--bundle-cache-dir", (data / "bundles" / "cpu").string()});
      argv.insert(argv.end(), egress_flags.begin(), egress_flags.end());
    }
    if (name == "billing") {
      argv.insert(argv.end(), passed_on->billing.begin(), passed_on->billing.end());
      // Callbacks follow tools' egress rules: the operator's networks, never the platform.
      argv.insert(argv.end(), passed_on->executor.begin(), passed_on->executor.end());
      argv.insert(argv.end(), platform_endpoints.begin(), platform_endpoints.end());
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
    std::vector<std::string> argv = {(bin_dir / "toolgate-executor").string(),
                                     "--pool",
                                     "gpu",
                                     "--admin-port",
                                     std::to_string(admin_ports["executor-gpu"]),
                                     "--bundle-cache-dir",
                                     (data / "bundles" / "gpu").string()};
    argv.insert(argv.end(), passed_on->every_service.begin(), passed_on->every_service.end());
    argv.insert(argv.end(), egress_flags.begin(), egress_flags.end());
    s = supervisor.Start({"executor-gpu", argv, service_env("executor"),
                          (logs / "executor-gpu.log").string(), 0, 0, SIGTERM, ""});
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
    CheckStarting(supervisor);
    if (i > 600) healthy = false;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));  // edge binding its port
  }
  if (!healthy) {
    supervisor.Stop(kStopOrder, 10000);
    Fail("the system did not start; logs are in " + logs.string());
  }
  // Up: from now on a child that dies is restarted.
  supervisor.StartupDone();
  write_state();
  std::string url = "http://" + flags.Get("host") + ":" + ReadFile(port_file);
  while (!url.empty() && url.back() == '\n') url.pop_back();
  std::printf("Toolgate is up at %s (data in %s, logs in %s)\n", url.c_str(), data.c_str(),
              logs.c_str());
  if (demo) {
    Status seeded = SeedDemo(url, data, demo_services);
    if (!seeded.ok())
      std::fprintf(stderr, "%s: demo seeding failed: %s\n", kProgram, seeded.ToString().c_str());
  }
  if (detach) {
    std::printf(
        "Running in the background (launcher pid %d); `toolgate status --data-dir %s` "
        "shows it, `toolgate down --data-dir %s` stops it.\n",
        static_cast<int>(::getpid()), data.c_str(), data.c_str());
    DetachedReady(logs);
  } else {
    std::printf("Press Ctrl-C to stop.\n");
  }
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
  supervisor.Stop(kStopOrder, 15000);
  fs::remove(state_file);
  std::printf("Toolgate stopped.\n");
  return 0;
}

namespace {

// Whether a launcher holds DATA/run/launcher.lock (see LockDataDir): the one sign of a live
// launcher on a data directory that a pid reused by another process cannot fake.
bool LauncherRuns(const fs::path& data) {
  int fd = ::open((data / "run" / "launcher.lock").c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  bool held = ::flock(fd, LOCK_SH | LOCK_NB) != 0 && errno == EWOULDBLOCK;
  ::close(fd);  // releases the probe's own lock at once
  return held;
}

// The data directory of `toolgate status` and `toolgate down`, their one flag but --json
// (status: json not null).
fs::path DataDirFlag(const std::string& command, const std::string& description,
                     const std::vector<std::string>& args, bool* json = nullptr) {
  Flags flags("toolgate " + command, description);
  flags.Define("data-dir", "./data",
               "the data directory of the system (as given to `toolgate up`)");
  if (json != nullptr) flags.Define("json", "false", "print the state as one JSON object");
  std::vector<char*> argv = {const_cast<char*>("toolgate")};
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  std::vector<std::string> extra = flags.Parse(static_cast<int>(argv.size()), argv.data());
  if (!extra.empty()) {
    std::fprintf(stderr, "toolgate %s: unexpected argument '%s' (see --help)\n", command.c_str(),
                 extra[0].c_str());
    std::exit(2);
  }
  if (json != nullptr) *json = flags.GetBool("json");
  return fs::absolute(flags.Get("data-dir")).lexically_normal();
}

}  // namespace

int RunStatus(const std::vector<std::string>& args) {
  bool json = false;
  fs::path data =
      DataDirFlag("status", "Show what `toolgate up` runs on a data directory.", args, &json);
  // "stopped", "starting" or "running", and what the state file says of a live launcher.
  const bool runs = LauncherRuns(data);
  auto state = runs ? ParseJson(ReadFile(data / "run" / "state.json"))
                    : Result<ParsedJson>(Status::NotFound("not running"));
  const char* phase = !runs ? "stopped" : state.ok() ? "running" : "starting";
  int64_t launcher = 0;
  std::string_view url;
  bool has_url = false;
  simdjson::dom::object pids, admin;
  bool has_pids = false, has_admin = false;
  if (state.ok()) {
    if (state->root["pid"].get_int64().get(launcher) != simdjson::SUCCESS) launcher = 0;
    has_url = state->root["url"].get_string().get(url) == simdjson::SUCCESS;
    has_pids = state->root["pids"].get_object().get(pids) == simdjson::SUCCESS;
    has_admin = state->root["admin"].get_object().get(admin) == simdjson::SUCCESS;
  }
  if (state.ok() && !has_url) phase = "starting";
  const std::map<std::string, std::string> programs = {
      {"nats", "nats-server"}, {"redis", "redis-server"}, {"postgres", "postgres"}};
  auto child_runs = [&](std::string_view name, int64_t pid) {
    auto it = programs.find(std::string(name));
    if (name == "demo-weather") return RunsProgram(static_cast<pid_t>(pid), "python3");
    return RunsProgram(static_cast<pid_t>(pid), it == programs.end() ? "toolgate-" : it->second);
  };

  if (json) {
    JsonWriter w;
    w.BeginObject().Field("state", phase).Field("data_dir", data.string());
    if (has_url) w.Field("url", url);
    if (launcher > 0) w.Field("launcher_pid", launcher);
    w.Key("children").BeginObject();
    if (has_pids) {
      for (auto [name, value] : pids) {
        int64_t pid = 0;
        if (value.get_int64().get(pid) != simdjson::SUCCESS) continue;
        w.Key(name).BeginObject().Field("pid", pid).Field("running", child_runs(name, pid));
        std::string_view admin_url;
        if (has_admin && admin[name].get_string().get(admin_url) == simdjson::SUCCESS) {
          w.Field("admin", admin_url);
        }
        w.EndObject();
      }
    }
    w.EndObject().EndObject();
    std::printf("%s\n", w.Take().c_str());
    return runs ? 0 : 1;
  }
  if (!runs) {
    std::printf("Toolgate is not running (data in %s)\n", data.c_str());
    return 1;
  }
  if (!state.ok()) {
    std::printf("Toolgate is starting (data in %s)\n", data.c_str());
    return 0;
  }
  std::printf("Toolgate %s %s (launcher pid %lld, data in %s)\n",
              has_url ? "runs at" : "is starting", has_url ? std::string(url).c_str() : "",
              static_cast<long long>(launcher), data.c_str());
  if (has_pids) {
    for (auto [name, value] : pids) {
      int64_t pid = 0;
      if (value.get_int64().get(pid) != simdjson::SUCCESS) continue;
      std::string_view admin_url;
      bool has_admin_url =
          has_admin && admin[name].get_string().get(admin_url) == simdjson::SUCCESS;
      std::printf("  %-13s pid %-8lld %-10s %s%s\n", std::string(name).c_str(),
                  static_cast<long long>(pid), child_runs(name, pid) ? "running" : "restarting",
                  has_admin_url ? "admin " : "",
                  has_admin_url ? std::string(admin_url).c_str() : "");
    }
  }
  return 0;
}

int RunDown(const std::vector<std::string>& args) {
  fs::path data = DataDirFlag(
      "down", "Stop the system `toolgate up --detach` started on a data directory.", args);
  if (!LauncherRuns(data)) {
    std::printf("Toolgate is not running (data in %s)\n", data.c_str());
    return 0;
  }
  auto state = ParseJson(ReadFile(data / "run" / "state.json"));
  int64_t launcher = 0;
  if (!state.ok() || state->root["pid"].get_int64().get(launcher) != simdjson::SUCCESS ||
      !RunsProgram(static_cast<pid_t>(launcher), "toolgate")) {
    std::fprintf(stderr,
                 "toolgate down: a launcher holds %s but its pid is unknown; try again "
                 "once it has started\n",
                 (data / "run" / "launcher.lock").c_str());
    return 1;
  }
  // SIGTERM: the launcher stops every child in order, then releases the lock as it exits.
  if (::kill(static_cast<pid_t>(launcher), SIGTERM) != 0) {
    std::fprintf(stderr, "toolgate down: cannot signal pid %lld: %s\n",
                 static_cast<long long>(launcher), strerror(errno));
    return 1;
  }
  int64_t deadline = NowMs() + 120000;
  while (LauncherRuns(data)) {
    if (NowMs() > deadline) {
      std::fprintf(stderr, "toolgate down: the launcher (pid %lld) is still stopping\n",
                   static_cast<long long>(launcher));
      return 1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));  // not our child: no waitpid
  }
  std::printf("Toolgate stopped (data in %s)\n", data.c_str());
  return 0;
}

int RunKeysInit(const std::vector<std::string>& args) {
  Flags flags("toolgate keys init",
              "Create the keys and credentials of a cluster (compose or Kubernetes) in a "
              "directory: what `toolgate up` creates in DATA/keys. Files that exist are kept.");
  flags.Define("dir", "./keys", "where the files go (created 0700)");
  std::vector<char*> argv = {const_cast<char*>("toolgate")};
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  std::vector<std::string> extra = flags.Parse(static_cast<int>(argv.size()), argv.data());
  if (!extra.empty()) {
    std::fprintf(stderr, "toolgate keys init: unexpected argument '%s' (see --help)\n",
                 extra[0].c_str());
    return 2;
  }
  InitCrypto();
  const fs::path dir = fs::absolute(flags.Get("dir")).lexically_normal();
  std::set<std::string> before;
  if (fs::is_directory(dir)) {
    for (const auto& entry : fs::directory_iterator(dir)) {
      before.insert(entry.path().filename().string());
    }
  }
  // The same functions as `toolgate up`: one definition of what a system's keys are.
  EnsureKeys(dir);
  EnsureCredentials(dir);
  std::vector<std::string> files;
  for (const auto& entry : fs::directory_iterator(dir)) files.push_back(entry.path().filename());
  std::sort(files.begin(), files.end());
  for (const auto& file : files) {
    std::printf("%s %s\n", before.count(file) ? "kept   " : "created", (dir / file).c_str());
  }
  std::printf(
      "\nFor Kubernetes (deploy/k8s/toolgate.yaml):\n"
      "  kubectl create secret generic toolgate-keys --from-file=%1$s/master.key \\\n"
      "    --from-file=%1$s/executor.key --from-file=%1$s/executor.pub "
      "--from-file=%1$s/mcp_session.key\n"
      "  kubectl create secret generic toolgate-credentials --from-file=%1$s/postgres.password \\\n"
      "    --from-file=%1$s/redis.password $(for f in %1$s/nats-*.password; do printf -- "
      "'--from-file=%%s ' \"$f\"; done)\n"
      "For compose: run from the directory holding compose.yaml with --dir ./keys.\n",
      dir.c_str());
  return 0;
}

}  // namespace toolgate::cli

namespace toolgate::cli {

int RunAdminCreate(const std::vector<std::string>& args) {
  Flags flags("toolgate admin create",
              "Create a platform operator on the system that `toolgate up` runs on a data "
              "directory.");
  flags.Define("data-dir", "./data",
               "the data directory of the system (as given to `toolgate up`)");
  flags.Define("email", "", "the operator's email (required)");
  flags.Define("password-file", "",
               "a file whose first line is the password (default: generate one, printed once)");
  flags.Define("bin-dir", "", "where toolgate-auth is (default: beside this binary)");
  std::vector<char*> argv = {const_cast<char*>("toolgate")};
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  std::vector<std::string> extra = flags.Parse(static_cast<int>(argv.size()), argv.data());
  if (!extra.empty() || flags.Get("email").empty()) {
    std::fprintf(stderr,
                 "usage: toolgate admin create --email E [--password-file F] [--data-dir DIR]\n");
    return 2;
  }
  const fs::path data = fs::absolute(flags.Get("data-dir")).lexically_normal();
  // The database's address is only known while the system runs (its port may be any free one).
  auto state = LauncherRuns(data) ? ParseJson(ReadFile(data / "run" / "state.json"))
                                  : Result<ParsedJson>(Status::NotFound("not running"));
  std::string_view pg_url;
  if (!state.ok() || state->root["postgres_url"].get_string().get(pg_url) != simdjson::SUCCESS) {
    std::fprintf(stderr, "toolgate admin create: no system runs on %s (start `toolgate up`)\n",
                 data.c_str());
    return 1;
  }
  const fs::path bin_dir = flags.Get("bin-dir").empty()
                               ? fs::read_symlink("/proc/self/exe").parent_path()
                               : fs::path(flags.Get("bin-dir"));
  std::string program = (bin_dir / "toolgate-auth").string();
  std::vector<std::string> words = {program, "create-operator", "--email", flags.Get("email")};
  if (const std::string& file = flags.Get("password-file"); !file.empty()) {
    words.insert(words.end(), {"--password-file", fs::absolute(file).string()});
  }
  std::vector<char*> child_argv;
  for (auto& w : words) child_argv.push_back(w.data());
  child_argv.push_back(nullptr);
  // auth reads its PostgreSQL credentials as `toolgate up` hands them to it: the URL and a
  // password file, readable by the launcher's user only.
  std::string url_env = "TOOLGATE_POSTGRES_URL=" + std::string(pg_url);
  std::string password_env =
      "TOOLGATE_POSTGRES_PASSWORD_FILE=" + (data / "keys" / "postgres.password").string();
  std::string log_env = "TOOLGATE_LOG_LEVEL=warn";
  std::vector<char*> envp = {url_env.data(), password_env.data(), log_env.data()};
  for (char** e = environ; *e; ++e) envp.push_back(*e);
  envp.push_back(nullptr);
  pid_t pid = ::fork();
  if (pid < 0) {
    std::fprintf(stderr, "toolgate admin create: fork failed: %s\n", std::strerror(errno));
    return 1;
  }
  if (pid == 0) {
    ::execve(child_argv[0], child_argv.data(), envp.data());
    std::fprintf(stderr, "toolgate admin create: cannot run %s: %s\n", child_argv[0],
                 std::strerror(errno));
    ::_exit(127);
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

}  // namespace toolgate::cli
