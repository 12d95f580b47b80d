// toolgate-edge: the HTTP gateway. See edge_server.h.
#include <cstdio>

#include "OpenApiJson.h"
#include "edge_server.h"
#include "mcp_host_guard.h"
#include "toolgate/base/flags.h"
#include "toolgate/base/log.h"
#include "toolgate/base/process.h"
#include "toolgate/core/admin_server.h"
#include "toolgate/core/service_main.h"

int main(int argc, char** argv) {
  using namespace toolgate;
  Flags flags("toolgate-edge", "Toolgate's HTTP gateway: invoke and management API.");
  core::DefineCommonFlags(flags);
  flags.Define("host", "127.0.0.1", "address to listen on");
  flags.Define("http-port", "8080", "port to listen on (0: any free port)");
  flags.Define("http-threads", "2", "HTTP reactor threads");
  flags.Define("max-request-bytes", "6291456", "largest accepted request body");
  flags.Define("max-upload-bytes", "62914560",
               "largest accepted body of POST /api/v1/functions/{id}/versions, which may carry a "
               "bundle (at most 64 MiB less room for the bus message around it)");
  flags.Define("max-body-bytes-in-flight", "268435456",
               "bytes of request bodies admitted and not yet answered, in total; past it a "
               "request is 503 with Retry-After");
  flags.Define("max-body-bytes-in-flight-per-client", "75497472",
               "the same from one client address; past it a request is 429 with Retry-After "
               "(at least max-upload-bytes, so that one upload fits)");
  flags.Define("header-timeout-ms", "10000",
               "a request's head must arrive within this of its first byte, else 408 and close");
  flags.Define("body-timeout-ms", "60000",
               "a request's body must arrive within this of its head, else 408 and close");
  flags.Define("idle-timeout-ms", "60000",
               "a connection with no request begun and no answer pending closes after this");
  flags.Define("max-connections", "4096", "open client connections, in total");
  flags.Define("max-connections-per-client", "128",
               "open client connections from one address (trusted proxies excepted)");
  flags.Define("trusted-proxies", "",
               "comma-separated proxy IP addresses whose X-Forwarded-For names the client");
  flags.Define("chain-timeout-ms", "15000",
               "how long the edge waits for an invocation to reach an executor");
  flags.Define("settle-margin-ms", "60000",
               "how long past the version's timeout the edge waits for the result");
  flags.Define("port-file", "", "write the bound port to this file once listening");
  flags.Define("web-dir", "", "directory of the web app to serve (empty: none)");
  flags.Define("mcp-session-key", "",
               "key of MCP session ids, base64 of 32 bytes, the same on every edge replica; when "
               "empty, --mcp-session-key-file is used");
  flags.Define("mcp-session-key-file", "", "file holding --mcp-session-key");
  flags.Define("app-origins", "",
               "comma-separated origins besides the edge's own whose pages may use the session "
               "cookie (e.g. https://app.example.com)");
  flags.Define("public-hosts", "",
               "comma-separated names clients reach this system by (\"mcp.example.com\", or "
               "with a port): the Host headers MCP endpoints serve besides localhost; empty on a "
               "non-loopback --host serves any Host");
  flags.Define("public-url", "",
               "the system's public URL (https://mcp.example.com): the origin of each MCP "
               "endpoint's canonical resource URL and of the OAuth issuer; empty: http:// and "
               "the request's Host");
  flags.Define("mcp-session-ttl-s", "86400", "lifetime of an MCP session, in seconds");
  flags.Define("metrics-function-labels", "false",
               "label invocation metrics with function id and version (the tenants' names, on "
               "the admin port; bounded by --metrics-max-functions)");
  flags.Define("metrics-max-functions", "1000",
               "most function/version label sets; later ones count under \"_overflow\"");
  flags.Define("decision-cache-entries", "100000",
               "most API keys, and most (organization, function) pairs, whose decisions the edge "
               "keeps in memory (least recently used go first)");
  flags.Define("decision-cache-ttl-ms", "30000",
               "longest time a cached key or function is used without asking its owner again, "
               "should an invalidation event be lost");
  flags.Define("decision-cache-negative-ttl-ms", "5000", "the same for an unknown key or function");
  flags.Parse(argc, argv);
  auto bus = core::StartService("edge", flags);

  edge::EdgeOptions options;
  options.host = flags.Get("host");
  options.port = static_cast<int>(flags.GetInt("http-port"));
  options.threads = static_cast<int>(flags.GetInt("http-threads"));
  options.max_request_bytes = static_cast<size_t>(flags.GetInt("max-request-bytes"));
  options.max_upload_bytes = static_cast<size_t>(flags.GetInt("max-upload-bytes"));
  options.max_body_bytes_in_flight = static_cast<size_t>(flags.GetInt("max-body-bytes-in-flight"));
  options.max_body_bytes_in_flight_per_client =
      static_cast<size_t>(flags.GetInt("max-body-bytes-in-flight-per-client"));
  options.header_timeout_ms = static_cast<int>(flags.GetInt("header-timeout-ms"));
  options.body_timeout_ms = static_cast<int>(flags.GetInt("body-timeout-ms"));
  options.idle_timeout_ms = static_cast<int>(flags.GetInt("idle-timeout-ms"));
  options.max_connections = static_cast<int>(flags.GetInt("max-connections"));
  options.max_connections_per_client = static_cast<int>(flags.GetInt("max-connections-per-client"));
  options.trusted_proxies = flags.GetList("trusted-proxies");
  if (options.header_timeout_ms <= 0 || options.body_timeout_ms <= 0 ||
      options.idle_timeout_ms <= 0 || options.max_connections <= 0 ||
      options.max_connections_per_client <= 0) {
    core::Die("toolgate-edge", "bad connection limits",
              "timeouts and connection limits must be positive");
  }
  options.chain_timeout_ms = static_cast<int>(flags.GetInt("chain-timeout-ms"));
  options.settle_margin_ms = static_cast<int>(flags.GetInt("settle-margin-ms"));
  options.openapi_json = std::string(OpenApiJson());
  options.web_dir = flags.Get("web-dir");
  options.version = TOOLGATE_VERSION;
  options.app_origins = flags.GetList("app-origins");
  options.public_hosts = flags.GetList("public-hosts");
  options.public_url = flags.Get("public-url");
  options.metrics.function_labels = flags.GetBool("metrics-function-labels");
  if (flags.GetInt("metrics-max-functions") < 1) {
    core::Die("toolgate-edge", "bad --metrics-max-functions", "it must be at least 1");
  }
  options.metrics.max_functions = static_cast<size_t>(flags.GetInt("metrics-max-functions"));
  if (flags.GetInt("decision-cache-entries") < 1 || flags.GetInt("decision-cache-ttl-ms") < 0 ||
      flags.GetInt("decision-cache-negative-ttl-ms") < 0) {
    core::Die("toolgate-edge", "bad decision cache flags",
              "--decision-cache-entries must be at least 1 and the TTLs not negative");
  }
  options.decisions.max_keys = static_cast<size_t>(flags.GetInt("decision-cache-entries"));
  options.decisions.max_functions = options.decisions.max_keys;
  options.decisions.positive_ttl_ms = flags.GetInt("decision-cache-ttl-ms");
  options.decisions.negative_ttl_ms = flags.GetInt("decision-cache-negative-ttl-ms");
  options.mcp_session_ttl_ms = flags.GetInt("mcp-session-ttl-s") * 1000;
  if (options.mcp_session_ttl_ms <= 0) {
    core::Die("toolgate-edge", "bad --mcp-session-ttl-s",
              "it must be a positive number of seconds");
  }
  auto mcp_key =
      edge::LoadMcpSessionKey(flags.Get("mcp-session-key"), flags.Get("mcp-session-key-file"));
  if (mcp_key.ok()) {
    options.mcp_session_key = std::move(*mcp_key);
  } else if (mcp_key.status().code() == Status::Code::kNotFound) {
    // One replica works without a shared key; several would reject each other's sessions.
    log::Warn("no MCP session key: MCP sessions hold on this replica only")
        .Str("hint", "set TOOLGATE_MCP_SESSION_KEY on every edge replica");
  } else {
    core::Die("toolgate-edge", "bad MCP session key", mcp_key.status().message());
  }
  edge::EdgeServer server(*bus, options);
  if (options.public_hosts.empty() && !edge::IsLoopbackListenAddress(options.host)) {
    log::Warn("no public host names: MCP endpoints serve any Host header")
        .Str("hint", "set TOOLGATE_PUBLIC_HOSTS to the names clients use (DNS rebinding)");
  }
  Status s = server.Start();
  if (!s.ok()) core::Die("toolgate-edge", "cannot serve HTTP", s.ToString());
  if (!flags.Get("port-file").empty()) {
    std::string tmp = flags.Get("port-file") + ".tmp";
    if (FILE* f = std::fopen(tmp.c_str(), "w")) {
      std::fprintf(f, "%d\n", server.port());
      std::fclose(f);
      std::rename(tmp.c_str(), flags.Get("port-file").c_str());
    }
  }
  log::Info("ready").Str("addr", options.host).Int("port", server.port());
  int sig = WaitForShutdownSignal();
  log::Info("draining").Int("signal", sig);
  core::MarkDraining();
  server.Shutdown();
  bus->Drain(2000);
  log::Info("stopped");
  return 0;
}
