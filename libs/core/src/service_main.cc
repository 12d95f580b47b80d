#include "toolgate/core/service_main.h"

#include <cstdio>
#include <cstdlib>

#include "toolgate/base/crypto.h"
#include "toolgate/base/log.h"
#include "toolgate/base/process.h"
#include "toolgate/base/secret_file.h"
#include "toolgate/base/time.h"
#include "toolgate/core/admin_server.h"
#include "toolgate/core/bus_permissions.h"
#include "toolgate/metrics/metrics.h"
#include "toolgate/trace/otlp_exporter.h"

namespace toolgate::core {

void DefineCommonFlags(Flags& flags) {
  flags.Define("nats-url", "nats://127.0.0.1:14222", "NATS server URL(s), comma-separated");
  flags.Define("nats-user", "", "NATS user (default: the service's name)");
  flags.Define("nats-password-file", "", "file holding the NATS user's password (empty: none)");
  flags.Define("log-level", "info", "debug, info, warn or error");
  flags.Define("threads", "8", "worker threads for message handlers");
  flags.Define("admin-port", "0",
               "port of the admin HTTP server (/metrics, /healthz, /readyz; 0: any free port)");
  flags.Define("admin-address", "127.0.0.1",
               "address of the admin HTTP server (loopback: metrics are the operator's)");
  flags.Define("otlp-endpoint", "",
               "OpenTelemetry collector base URL for spans, OTLP/HTTP JSON to <url>/v1/traces "
               "(empty: spans are only logged)");
}

void DefinePostgresFlags(Flags& flags) {
  flags.Define("postgres-url", "postgresql://toolgate@127.0.0.1:15432/toolgate",
               "PostgreSQL connection URI");
  flags.Define("postgres-password-file", "",
               "file holding the PostgreSQL password (empty: none, or the URI's)");
  flags.Define("pg-pool", "8", "PostgreSQL connections");
  flags.Define("pg-wait-ms", "60000",
               "how long to wait for PostgreSQL to accept connections at start-up");
}

void DefineRedisFlags(Flags& flags) {
  flags.Define("redis-url", "redis://127.0.0.1:16379", "Redis URL redis://[:password@]host:port");
  flags.Define("redis-password-file", "",
               "file holding the Redis password (AUTH; empty: none, or the URL's)");
  flags.Define("redis-pool", "16", "Redis connections");
}

void Die(const std::string& name, const std::string& what, const std::string& detail) {
  std::fprintf(stderr, "%s: %s: %s\n", name.c_str(), what.c_str(), detail.c_str());
  std::exit(1);
}

namespace {

// The process's admin server: started once, and never stopped, so that /healthz answers for
// as long as the process runs (its thread ends with the process).
AdminServer* g_admin = nullptr;

}  // namespace

std::unique_ptr<bus::Bus> StartService(const std::string& name, const Flags& flags) {
  BlockShutdownSignals();
  InitCrypto();
  log::Init(name, log::ParseLevel(flags.Get("log-level")));
  bus::BusOptions options = BusOptionsFromFlags(name, flags);
  // Before connecting, so a probe sees "not ready" rather than nothing while NATS is awaited.
  StartAdmin(name, flags);
  StartSpanExport(name, flags);
  // Read from the bus's own gauge, not the Bus: the check may outlive the connection.
  static ReadinessCheck nats("nats", [gauge = &bus::ConnectionGauge(options.name)] {
    return gauge->value() == 1 ? Status::Ok() : Status::Unavailable("not connected");
  });
  auto bus = bus::Bus::Connect(options);
  if (!bus.ok()) Die(name, "cannot connect to NATS", bus.status().ToString());
  return std::move(bus).value();
}

const std::string& StartAdmin(const std::string& name, const Flags& flags) {
  if (g_admin) return g_admin->url();
  int64_t port = flags.GetInt("admin-port");
  if (port < 0 || port > 65535) Die(name, "bad --admin-port", flags.Get("admin-port"));
  auto admin = AdminServer::Start(flags.Get("admin-address"), static_cast<int>(port));
  if (!admin.ok()) Die(name, "cannot start the admin server", admin.status().ToString());
  g_admin = admin->release();  // lives for the process, see g_admin
  static metrics::Gauge& started = metrics::Registry::Global()
                                       .Gauge("toolgate_process_start_time_seconds",
                                              "When this process started, in Unix seconds.")
                                       .With({});
  started.Set(static_cast<double>(NowMs()) / 1000);
  log::Info("admin listening").Str("url", g_admin->url());
  return g_admin->url();
}

void StartSpanExport(const std::string& name, const Flags& flags) {
  static trace::OtlpExporter* exporter = nullptr;
  const std::string endpoint = flags.Get("otlp-endpoint");
  trace::RegisterExportMetrics();
  if (exporter || endpoint.empty()) return;
  if (Status s = trace::CheckOtlpEndpoint(endpoint); !s.ok()) {
    Die(name, "bad --otlp-endpoint", s.message());
  }
  trace::OtlpOptions options;
  options.endpoint = endpoint;
  options.service_name = "toolgate-" + name;
  options.service_version = TOOLGATE_VERSION;
  // Never destroyed: a span may end on any thread until the process exits.
  exporter = new trace::OtlpExporter(options, trace::HttpSpanTransport(options));
  trace::SetSpanSink(exporter);
  // The spans of the last second before a graceful stop still leave.
  std::atexit([] { exporter->Shutdown(); });
  log::Info("exporting spans").Str("endpoint", endpoint);
}

std::string SecretFromFlag(const std::string& name, const Flags& flags, const std::string& flag) {
  const std::string path = flags.Get(flag);
  if (path.empty()) return {};
  auto secret = ReadSecretFile(path);
  if (!secret.ok()) Die(name, "--" + flag, secret.status().ToString());
  return std::move(secret).value();
}

bus::BusOptions BusOptionsFromFlags(const std::string& name, const Flags& flags) {
  bus::BusOptions options;
  options.url = flags.Get("nats-url");
  options.name = name;
  options.password = SecretFromFlag(name, flags, "nats-password-file");
  if (!options.password.empty()) {
    options.user = flags.Get("nats-user").empty() ? name : flags.Get("nats-user");
    options.inbox_prefix = InboxPrefix(options.user);
  }
  return options;
}

std::optional<RedisAddress> ParseRedisUrl(const std::string& url) {
  const std::string prefix = "redis://";
  if (url.rfind(prefix, 0) != 0) return std::nullopt;
  std::string rest = url.substr(prefix.size());
  RedisAddress out;
  size_t at = rest.rfind('@');
  if (at != std::string::npos) {
    std::string auth = rest.substr(0, at);
    out.password = auth.substr(auth.find(':') == std::string::npos ? 0 : auth.find(':') + 1);
    rest = rest.substr(at + 1);
  }
  size_t slash = rest.find('/');
  if (slash != std::string::npos) rest = rest.substr(0, slash);
  size_t colon = rest.rfind(':');
  out.host = rest.substr(0, colon);
  if (colon != std::string::npos) {
    char* end = nullptr;
    long port = std::strtol(rest.c_str() + colon + 1, &end, 10);
    if (*end != '\0' || port <= 0 || port > 65535) return std::nullopt;
    out.port = static_cast<int>(port);
  }
  if (out.host.empty()) return std::nullopt;
  return out;
}

}  // namespace toolgate::core
