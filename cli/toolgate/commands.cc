#include "commands.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <termios.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "bundle_pack.h"
#include "templates.h"
#include "toolgate/base/crypto.h"
#include "toolgate/base/json.h"
#include "toolgate/base/json_writer.h"
#include "toolgate/core/env_keys.h"
#include "toolgate/core/version.h"
#include "toolgate/http_client/http_client.h"

namespace toolgate::cli {
namespace fs = std::filesystem;
namespace {

constexpr int kOk = 0;
constexpr int kFailed = 1;
constexpr int kUsage = 2;
constexpr char kDefaultUrl[] = "http://127.0.0.1:8080";
constexpr char kManifestFile[] = "toolgate.json";
constexpr char kDefaultInputSchema[] = R"({"type":"object"})";
// An invocation may run up to the contract's maximum timeout_ms (900 s); wait a little longer.
constexpr std::chrono::milliseconds kInvokeTimeout{960'000};

std::string Api(std::string_view path) {
  return "/api/v1" + std::string(path);
}

std::string Env(const char* name) {
  const char* value = std::getenv(name);
  return value == nullptr ? "" : value;
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

// ---- Manifest ----

// Reads the members of a manifest object, recording a FieldError for each bad one.
class ManifestReader {
 public:
  ManifestReader(simdjson::dom::object obj, std::vector<FieldError>* errors)
      : obj_(obj), errors_(errors) {}

  void Fail(std::string_view field, std::string_view message) {
    errors_->push_back({std::string(field), std::string(message)});
  }

  std::optional<std::string> OptionalString(std::string_view key) {
    std::string value;
    if (!Check(key, GetString(obj_, key, &value), "must be a string", false)) return std::nullopt;
    return value;
  }

  std::string RequiredString(std::string_view key) {
    std::string value;
    if (Check(key, GetString(obj_, key, &value), "must be a string", true) && value.empty()) {
      Fail(key, "must not be empty");
    }
    return value;
  }

  std::string OneOf(std::string_view key, std::initializer_list<std::string_view> allowed) {
    std::string value = RequiredString(key);
    if (value.empty() || std::find(allowed.begin(), allowed.end(), value) != allowed.end()) {
      return value;
    }
    std::string message = "must be one of:";
    for (std::string_view a : allowed) message += " \"" + std::string(a) + "\"";
    Fail(key, message);
    return value;
  }

  // An integer of at least `min`.
  std::optional<int64_t> Int(std::string_view key, int64_t min, bool required) {
    int64_t value = 0;
    if (!Check(key, GetInt(obj_, key, &value), "must be an integer", required)) {
      return std::nullopt;
    }
    if (value < min) {
      Fail(key, min == 0 ? "must not be negative" : "must be at least " + std::to_string(min));
      return std::nullopt;
    }
    return value;
  }

  std::optional<bool> Bool(std::string_view key) {
    bool value = false;
    if (!Check(key, GetBool(obj_, key, &value), "must be true or false", false)) {
      return std::nullopt;
    }
    return value;
  }

  std::optional<std::vector<std::string>> Strings(std::string_view key) {
    std::vector<std::string> value;
    if (!Check(key, GetStringArray(obj_, key, &value), "must be an array of strings", false)) {
      return std::nullopt;
    }
    return value;
  }

  // Any JSON value of the given type, re-encoded compactly.
  std::optional<std::string> Raw(std::string_view key, simdjson::dom::element_type type,
                                 std::string_view type_name) {
    simdjson::dom::element e;
    if (obj_[key].get(e) != simdjson::SUCCESS || e.is_null()) return std::nullopt;
    if (e.type() != type) {
      Fail(key, "must be " + std::string(type_name));
      return std::nullopt;
    }
    return ToJson(e);
  }

 private:
  // Records what is wrong with a lookup; true when the value is there and of the right type.
  bool Check(std::string_view key, Field found, std::string_view wrong_type, bool required) {
    if (found == Field::kWrongType) Fail(key, wrong_type);
    if (found == Field::kAbsent && required) Fail(key, "is required");
    return found == Field::kOk;
  }

  simdjson::dom::object obj_;
  std::vector<FieldError>* errors_;
};

const std::set<std::string, std::less<>>& ManifestMembers() {
  static const std::set<std::string, std::less<>> kMembers = {
      "function_id", "name",      "description",  "overview",        "category",
      "sector",      "tags",      "visibility",   "price_micro_usd", "mcp",
      "version",     "runtime",   "compute_type", "input_schema",    "declared_keys",
      "timeout_ms",  "memory_mb", "examples",     "handler",         "bundle"};
  return kMembers;
}

// ---- Files and the session ----

Result<std::string> ReadFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::NotFound("cannot read " + path.string());
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) return Status::Unavailable("cannot read " + path.string());
  return text.str();
}

// Writes through a temporary file and a rename, so a crash never leaves half a file.
Status WriteFileAtomically(const fs::path& path, std::string_view text) {
  fs::path tmp = path;
  tmp += ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << text;
    if (!out.flush()) return Status::Unavailable("cannot write " + tmp.string());
  }
  std::error_code ec;
  fs::rename(tmp, path, ec);
  if (ec) return Status::Unavailable("cannot replace " + path.string() + ": " + ec.message());
  return Status::Ok();
}

fs::path SessionPath() {
  std::string config = Env("XDG_CONFIG_HOME");
  if (config.empty()) config = (fs::path(Env("HOME")) / ".config").string();
  return fs::path(config) / "toolgate" / "session";
}

std::optional<std::string> LoadSession() {
  auto text = ReadFile(SessionPath());
  if (!text.ok()) return std::nullopt;
  std::string token(Trim(*text));
  if (token.empty()) return std::nullopt;
  return token;
}

// The session token is a credential: the file is created 0600 in a 0700 directory.
Status SaveSession(std::string_view token) {
  fs::path path = SessionPath();
  std::error_code ec;
  if (fs::create_directories(path.parent_path(), ec)) {
    fs::permissions(path.parent_path(), fs::perms::owner_all, ec);
  }
  if (ec) return Status::Unavailable("cannot create " + path.parent_path().string());
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) return Status::Unavailable("cannot write " + path.string());
  std::string line = std::string(token) + "\n";
  bool written = fchmod(fd, 0600) == 0 &&
                 write(fd, line.data(), line.size()) == static_cast<ssize_t>(line.size());
  written = close(fd) == 0 && written;
  if (!written) return Status::Unavailable("cannot write " + path.string());
  return Status::Ok();
}

// ---- Commands ----

struct Command;

// One run of a command: its parsed words and where and as whom to connect.
struct Call {
  const Command& command;
  ParsedArgs args;
  std::string url;
  std::string api_key;
};

using Runner = int (*)(const Call&);

struct Command {
  std::string_view name;   // "keys create"
  std::string_view usage;  // what follows "toolgate "
  std::string_view summary;
  std::set<std::string> options = {};   // beyond the global --url and --api-key
  std::set<std::string> switches = {};  // options given without a value ("--mcp" is "--mcp=true")
  std::set<std::string> required = {};  // options that must be given
  size_t positional = 0;                // how many positional words it takes
  Runner run = nullptr;
};

int UsageError(const Call& call, std::string_view message) {
  std::fprintf(stderr, "error: %.*s\nusage: toolgate %.*s\n", static_cast<int>(message.size()),
               message.data(), static_cast<int>(call.command.usage.size()),
               call.command.usage.data());
  return kUsage;
}

void PrintError(std::string_view message) {
  std::fprintf(stderr, "error: %.*s\n", static_cast<int>(message.size()), message.data());
}

void PrintJson(std::string_view body) {
  if (body.empty()) return;
  std::string text = PrettyJson(body);
  std::fprintf(stdout, "%s\n", text.c_str());
}

// A client that sends the caller's credentials: the API key, else the saved session.
http::HttpClient Client(const Call& call) {
  http::HttpClient client(call.url);
  if (!call.api_key.empty()) {
    client.SetDefaultHeader("Authorization", call.api_key);
  } else if (auto token = LoadSession()) {
    client.SetDefaultHeader("Cookie", "tg_session=" + *token);
    // The edge refuses state changes signed in by the cookie alone (cross-site requests).
    client.SetDefaultHeader("X-Toolgate-CSRF", "1");
  }
  return client;
}

// Prints what a request came back with: the JSON on stdout below 400, the error on stderr
// otherwise. Returns the exit code.
int Report(const Call& call, const Result<http::HttpResponse>& r) {
  if (!r.ok()) {
    PrintError(r.status().message());
    if (r.status().code() == Status::Code::kUnavailable) {
      std::fprintf(stderr, "hint: is Toolgate running at %s? (--url or TOOLGATE_URL)\n",
                   call.url.c_str());
    }
    return kFailed;
  }
  if (r->status >= 400) {
    std::fputs(DescribeHttpError(r->status, r->body).c_str(), stderr);
    if (r->status == 401 && call.api_key.empty() && !LoadSession()) {
      std::fputs("hint: run `toolgate login`, or set TOOLGATE_API_KEY\n", stderr);
    }
    return kFailed;
  }
  PrintJson(r->body);
  return kOk;
}

// --password, else TOOLGATE_PASSWORD, else a prompt without echo when stdin is a terminal.
std::optional<std::string> Password(const Call& call) {
  if (call.args.Has("password")) return call.args.Get("password");
  if (std::string env = Env("TOOLGATE_PASSWORD"); !env.empty()) return env;
  if (!isatty(STDIN_FILENO)) return std::nullopt;
  termios saved;
  if (tcgetattr(STDIN_FILENO, &saved) != 0) return std::nullopt;
  termios quiet = saved;
  quiet.c_lflag &= ~static_cast<tcflag_t>(ECHO);
  std::fputs("Password: ", stderr);
  tcsetattr(STDIN_FILENO, TCSAFLUSH, &quiet);
  std::string password;
  std::getline(std::cin, password);
  tcsetattr(STDIN_FILENO, TCSAFLUSH, &saved);
  std::fputs("\n", stderr);
  return password;
}

// After a successful signup or login: keeps the session cookie for the next commands.
int SaveSignIn(const Call& call, const http::HttpClient& client,
               const Result<http::HttpResponse>& r) {
  if (!r.ok() || r->status >= 400) return Report(call, r);
  std::string token = client.Cookie("tg_session");
  if (token.empty()) {
    PrintError("the server answered without a tg_session cookie");
    return kFailed;
  }
  if (Status saved = SaveSession(token); !saved.ok()) {
    PrintError(saved.message());
    return kFailed;
  }
  PrintJson(r->body);
  std::fprintf(stderr, "session saved in %s\n", SessionPath().c_str());
  return kOk;
}

int Login(const Call& call) {
  auto password = Password(call);
  if (!password) return UsageError(call, "give the password with --password or TOOLGATE_PASSWORD");
  JsonWriter w;
  w.BeginObject().Field("email", call.args.Get("email")).Field("password", *password).EndObject();
  http::HttpClient client(call.url);
  return SaveSignIn(call, client, client.Post(Api("/auth/login"), w.str()));
}

int Signup(const Call& call) {
  auto password = Password(call);
  if (!password) return UsageError(call, "give the password with --password or TOOLGATE_PASSWORD");
  JsonWriter w;
  w.BeginObject()
      .Field("email", call.args.Get("email"))
      .Field("password", *password)
      .Field("organization", call.args.Get("organization"))
      .EndObject();
  http::HttpClient client(call.url);
  return SaveSignIn(call, client, client.Post(Api("/auth/signup"), w.str()));
}

int Logout(const Call& call) {
  auto token = LoadSession();
  if (!token) {
    std::fputs("not signed in\n", stderr);
    return kOk;
  }
  http::HttpClient client(call.url);
  client.SetDefaultHeader("Cookie", "tg_session=" + *token);
  client.SetDefaultHeader("X-Toolgate-CSRF", "1");
  auto r = client.Post(Api("/auth/logout"), "");
  if (!r.ok()) return Report(call, r);  // the session still holds: keep it to retry
  std::error_code ec;
  fs::remove(SessionPath(), ec);
  // 401: the server had already ended the session; the local copy is gone now too.
  if (r->status >= 400 && r->status != 401) return Report(call, r);
  std::fputs("signed out\n", stderr);
  return kOk;
}

// "--limit" and "--cursor" of list commands, and any other option-to-parameter pairs, as a
// query string ("" when none is given).
std::string Query(const ParsedArgs& args,
                  std::initializer_list<std::pair<const char*, const char*>> params) {
  std::string query;
  for (const auto& [option, param] : params) {
    if (!args.Has(option)) continue;
    query += query.empty() ? "?" : "&";
    query += std::string(param) + "=" + http::UrlEncode(args.Get(option));
  }
  return query;
}

std::string ListQuery(const ParsedArgs& args) {
  return Query(args, {{"limit", "limit"}, {"cursor", "cursor"}});
}

int KeysCreate(const Call& call) {
  JsonWriter w;
  w.BeginObject().Field("name", call.args.Get("name"));
  if (call.args.Has("expires-at")) w.Field("expires_at", call.args.Get("expires-at"));
  if (call.args.Has("scopes")) {
    w.Key("scopes").BeginArray();
    const std::string scopes_text = call.args.Get("scopes");
    std::string_view scopes = scopes_text;
    size_t start = 0;
    while (start <= scopes.size()) {
      size_t comma = std::min(scopes.find(',', start), scopes.size());
      std::string_view scope = Trim(scopes.substr(start, comma - start));
      if (scope.empty()) return UsageError(call, "--scopes is a list such as invoke,manage");
      w.String(scope);
      start = comma + 1;
    }
    w.EndArray();
  }
  w.EndObject();
  int rc = Report(call, Client(call).Post(Api("/api-keys"), w.str()));
  if (rc == kOk) std::fputs("Store the key now: it is not shown again.\n", stderr);
  return rc;
}

int KeysList(const Call& call) {
  return Report(call, Client(call).Get(Api("/api-keys") + ListQuery(call.args)));
}

int KeysRevoke(const Call& call) {
  const std::string& id = call.args.positional[0];
  int rc = Report(call, Client(call).Delete(Api("/api-keys/") + http::UrlEncode(id)));
  if (rc == kOk) std::fprintf(stderr, "revoked key %s\n", id.c_str());
  return rc;
}

// The secret value from --value V, --value - (stdin) or --value-file F. A file or stdin usually
// ends with a newline that is not part of the secret: one is dropped.
Result<std::string> SecretValue(const Call& call) {
  if (call.args.Has("value") == call.args.Has("value-file")) {
    return Status::InvalidArgument("give the value with exactly one of --value and --value-file");
  }
  std::string value;
  if (call.args.Has("value") && call.args.Get("value") != "-") return call.args.Get("value");
  if (call.args.Has("value")) {
    std::ostringstream in;
    in << std::cin.rdbuf();
    value = in.str();
  } else {
    auto file = ReadFile(call.args.Get("value-file"));
    if (!file.ok()) return Status::InvalidArgument(file.status().message());
    value = std::move(*file);
  }
  if (value.ends_with('\n')) value.pop_back();
  if (value.ends_with('\r')) value.pop_back();
  return value;
}

int SecretsCreate(const Call& call) {
  auto value = SecretValue(call);
  if (!value.ok()) return UsageError(call, value.status().message());
  JsonWriter w;
  w.BeginObject().Field("name", call.args.Get("name")).Field("value", *value).EndObject();
  return Report(call, Client(call).Post(Api("/secrets"), w.str()));
}

int SecretsList(const Call& call) {
  return Report(call, Client(call).Get(Api("/secrets") + ListQuery(call.args)));
}

int SecretsSet(const Call& call) {
  auto value = SecretValue(call);
  if (!value.ok()) return UsageError(call, value.status().message());
  JsonWriter w;
  w.BeginObject().Field("value", *value).EndObject();
  const std::string& id = call.args.positional[0];
  return Report(call, Client(call).Put(Api("/secrets/") + http::UrlEncode(id), w.str()));
}

int SecretsDelete(const Call& call) {
  const std::string& id = call.args.positional[0];
  int rc = Report(call, Client(call).Delete(Api("/secrets/") + http::UrlEncode(id)));
  if (rc == kOk) std::fprintf(stderr, "deleted secret %s\n", id.c_str());
  return rc;
}

// The function_id of a create-function answer, or "".
std::string FunctionIdOf(std::string_view body) {
  auto doc = ParseJson(body);
  simdjson::dom::object obj;
  std::string id;
  if (doc.ok() && doc->root.get_object().get(obj) == simdjson::SUCCESS) {
    GetString(obj, "function_id", &id);
  }
  return id;
}

int Publish(const Call& call) {
  const fs::path dir = call.args.positional[0];
  const fs::path manifest_path = dir / kManifestFile;
  auto text = ReadFile(manifest_path);
  if (!text.ok()) return UsageError(call, text.status().message());
  Manifest manifest;
  std::vector<FieldError> errors = ParseManifest(*text, &manifest);
  if (!errors.empty()) {
    PrintError(manifest_path.string() + " is not a valid manifest");
    for (const auto& e : errors) {
      std::fprintf(stderr, "  %s: %s\n", e.field.c_str(), e.message.c_str());
    }
    return kFailed;
  }
  auto code = ReadFile(dir / manifest.handler);
  if (!code.ok()) {
    PrintError(code.status().message() + " (the manifest's handler)");
    return kFailed;
  }
  std::string bundle;
  if (manifest.bundle) {
    if (manifest.runtime == "javascript") {
      if (Status s = InstallNodeModules(dir); !s.ok()) {
        PrintError(s.message());
        return kFailed;
      }
    }
    auto packed = PackBundle(dir);
    if (!packed.ok()) {
      PrintError("cannot pack " + dir.string() + ": " + packed.status().message());
      return kFailed;
    }
    bundle = std::move(*packed);
    std::fprintf(stderr, "packed %s: %zu bytes\n", dir.c_str(), bundle.size());
  }

  http::HttpClient client = Client(call);
  if (manifest.function_id.empty()) {
    auto created = client.Post(Api("/functions"), FunctionRequestBody(manifest));
    if (!created.ok() || created->status >= 400) return Report(call, created);
    manifest.function_id = FunctionIdOf(created->body);
    if (manifest.function_id.empty()) {
      PrintError("the server's answer has no function_id: " + created->body);
      return kFailed;
    }
    // Written before the version is published, so a retry after a failure below publishes to
    // this function instead of creating another one.
    Status saved = WriteFileAtomically(manifest_path, WithFunctionId(*text, manifest.function_id));
    if (!saved.ok()) {
      PrintError(saved.message() + "; add \"function_id\": \"" + manifest.function_id +
                 "\" to the manifest by hand");
      return kFailed;
    }
    std::fprintf(stderr, "created function %s (saved in %s)\n", manifest.function_id.c_str(),
                 manifest_path.c_str());
  }
  auto published =
      client.Post(Api("/functions/") + http::UrlEncode(manifest.function_id) + "/versions",
                  VersionRequestBody(manifest, *code, bundle));
  if (!published.ok() || published->status >= 400) return Report(call, published);
  JsonWriter w;
  w.BeginObject()
      .Field("function_id", manifest.function_id)
      .Field("version", manifest.version)
      .EndObject();
  PrintJson(w.str());
  return kOk;
}

int Topup(const Call& call) {
  const std::string amount_text = call.args.Get("amount");
  int64_t amount = 0;
  auto [end, ec] =
      std::from_chars(amount_text.data(), amount_text.data() + amount_text.size(), amount);
  if (ec != std::errc() || end != amount_text.data() + amount_text.size()) {
    return UsageError(call, "--amount is an integer number of micro-USD (1 USD = 1000000)");
  }
  JsonWriter w;
  w.BeginObject().Field("amount_micro_usd", amount).EndObject();
  http::HeaderList headers;
  if (call.args.Has("idempotency-key")) {
    headers.emplace_back("Idempotency-Key", call.args.Get("idempotency-key"));
  }
  return Report(call, Client(call).Post(Api("/billing/top-ups"), w.str(), headers));
}

int Balance(const Call& call) {
  return Report(call, Client(call).Get(Api("/billing/balance")));
}

int Ledger(const Call& call) {
  return Report(call, Client(call).Get(Api("/billing/ledger") + ListQuery(call.args)));
}

int Executions(const Call& call) {
  std::string query =
      Query(call.args, {{"function-id", "function_id"}, {"limit", "limit"}, {"cursor", "cursor"}});
  return Report(call, Client(call).Get(Api("/executions") + query));
}

int Invoke(const Call& call) {
  if (call.api_key.empty()) return UsageError(call, "invoke needs --api-key or TOOLGATE_API_KEY");
  if (call.args.Has("event") && call.args.Has("event-file")) {
    return UsageError(call, "give the event with --event or --event-file, not both");
  }
  std::string event = "{}";
  if (call.args.Has("event")) event = call.args.Get("event");
  if (call.args.Has("event-file")) {
    auto file = ReadFile(call.args.Get("event-file"));
    if (!file.ok()) return UsageError(call, file.status().message());
    event = std::move(*file);
  }
  auto parsed = ParseJson(event);
  if (!parsed.ok()) return UsageError(call, "the event is not JSON: " + parsed.status().message());
  JsonWriter body;
  body.BeginObject().Key("event").Raw(ToJson(parsed->root)).EndObject();

  http::HeaderList headers;
  if (call.args.Has("env-keys")) {
    auto keys = core::ParseEnvKeys(call.args.Get("env-keys"));
    if (!keys.ok()) return UsageError(call, keys.status().message());
    headers.emplace_back("X-Env-Keys", call.args.Get("env-keys"));
  }
  std::string path = Api("/functions/") + http::UrlEncode(call.args.positional[0]);
  if (call.args.Has("version")) path += "/" + http::UrlEncode(call.args.Get("version"));
  path += "/invoke";

  http::HttpClient client(call.url);
  client.SetDefaultHeader("Authorization", call.api_key);
  client.SetTimeout(kInvokeTimeout);
  auto r = client.Post(path, body.str(), headers);
  if (!r.ok()) return Report(call, r);
  if (std::string expires = r->Header("X-Api-Key-Expires-At"); !expires.empty()) {
    std::fprintf(stderr, "warning: this API key expires at %s; create a new one\n",
                 expires.c_str());
  }
  // A platform error is problem+json; the handler's own answer, whatever its status, is the
  // invocation envelope and goes to stdout.
  if (r->Header("Content-Type").starts_with("application/problem+json")) return Report(call, r);
  PrintJson(r->body);
  return r->status < 400 ? kOk : kFailed;
}

// The name a new tool takes from its directory: "tools/weather/" -> "weather".
std::string ToolNameFromDir(const fs::path& dir) {
  fs::path normal = fs::absolute(dir).lexically_normal();
  std::string name = normal.filename().string();
  if (name.empty()) name = normal.parent_path().filename().string();
  return name.empty() ? "tool" : name;
}

int New(const Call& call) {
  const fs::path dir = call.args.positional[0];
  const std::string mcp = call.args.Get("mcp", "false");
  if (mcp != "true" && mcp != "false") return UsageError(call, "--mcp takes no value");
  const std::string bundle = call.args.Get("bundle", "false");
  if (bundle != "true" && bundle != "false") return UsageError(call, "--bundle takes no value");
  auto files =
      ToolTemplate(call.args.Get("runtime"), mcp == "true", ToolNameFromDir(dir), bundle == "true");
  if (!files.ok()) return UsageError(call, files.status().message());
  if (Status s = WriteToolTemplate(dir, *files); !s.ok()) {
    PrintError(s.message());
    return kFailed;
  }
  for (const auto& f : *files) std::fprintf(stderr, "wrote %s\n", (dir / f.path).c_str());
  std::fprintf(stderr, "publish it with: toolgate publish %s\n", dir.c_str());
  return kOk;
}

int Help(const Call& call);

const std::vector<Command>& Commands() {
  static const std::vector<Command> kCommands = {
      {.name = "signup",
       .usage = "signup --email E --password P --organization O",
       .summary = "Create a user and an organization, and sign in.",
       .options = {"email", "password", "organization"},
       .required = {"email", "organization"},
       .run = Signup},
      {.name = "login",
       .usage = "login --email E --password P",
       .summary = "Sign in; later commands use the saved session.",
       .options = {"email", "password"},
       .required = {"email"},
       .run = Login},
      {.name = "logout", .usage = "logout", .summary = "End the saved session.", .run = Logout},
      {.name = "keys create",
       .usage = "keys create --name N [--expires-at RFC3339] [--scopes invoke,manage]",
       .summary = "Create an API key; the key is printed once.",
       .options = {"name", "expires-at", "scopes"},
       .required = {"name"},
       .run = KeysCreate},
      {.name = "keys list",
       .usage = "keys list [--limit N] [--cursor C]",
       .summary = "List API keys.",
       .options = {"limit", "cursor"},
       .run = KeysList},
      {.name = "keys revoke",
       .usage = "keys revoke ID",
       .summary = "Revoke an API key.",
       .positional = 1,
       .run = KeysRevoke},
      {.name = "secrets create",
       .usage = "secrets create --name N (--value V | --value - | --value-file F)",
       .summary = "Store a secret (--value - reads stdin).",
       .options = {"name", "value", "value-file"},
       .required = {"name"},
       .run = SecretsCreate},
      {.name = "secrets list",
       .usage = "secrets list [--limit N] [--cursor C]",
       .summary = "List secrets (never their values).",
       .options = {"limit", "cursor"},
       .run = SecretsList},
      {.name = "secrets set",
       .usage = "secrets set ID (--value V | --value - | --value-file F)",
       .summary = "Replace a secret's value.",
       .options = {"value", "value-file"},
       .positional = 1,
       .run = SecretsSet},
      {.name = "secrets delete",
       .usage = "secrets delete ID",
       .summary = "Delete a secret.",
       .positional = 1,
       .run = SecretsDelete},
      {.name = "new",
       .usage = "new DIR --runtime python|javascript|lua [--mcp | --bundle]",
       .summary = "Write a new tool into DIR: toolgate.json and a handler (an MCP server with "
                  "--mcp; with --bundle, a bundle's layout: a module beside the handler, "
                  ".toolgateignore, and package.json for JavaScript), ready for `toolgate "
                  "publish DIR`.",
       .options = {"runtime"},
       .switches = {"mcp", "bundle"},
       .required = {"runtime"},
       .positional = 1,
       .run = New},
      {.name = "publish",
       .usage = "publish DIR",
       .summary = "Publish DIR/toolgate.json and its handler as a new version (creating the "
                  "function on first use); the manifest's price_micro_usd is that version's. "
                  "With \"bundle\": true, DIR is packed as the version's bundle (minus .git and "
                  ".toolgateignore's patterns; npm ci --omit=dev first for JavaScript with a "
                  "package.json and no node_modules).",
       .positional = 1,
       .run = Publish},
      {.name = "topup",
       .usage = "topup --amount MICRO_USD [--idempotency-key K]",
       .summary = "Add to the balance.",
       .options = {"amount", "idempotency-key"},
       .required = {"amount"},
       .run = Topup},
      {.name = "balance", .usage = "balance", .summary = "Show the balance.", .run = Balance},
      {.name = "ledger",
       .usage = "ledger [--limit N] [--cursor C]",
       .summary = "List ledger entries.",
       .options = {"limit", "cursor"},
       .run = Ledger},
      {.name = "invoke",
       .usage = "invoke FUNCTION_ID [--version V] [--event JSON | --event-file F] "
                "[--env-keys 'NAME=secret_id,...']",
       .summary = "Run a function with the API key; exit 0 when its status is below 400.",
       .options = {"version", "event", "event-file", "env-keys"},
       .positional = 1,
       .run = Invoke},
      {.name = "executions",
       .usage = "executions [--function-id ID] [--limit N] [--cursor C]",
       .summary = "List the organization's executions.",
       .options = {"function-id", "limit", "cursor"},
       .run = Executions},
      {.name = "help", .usage = "help", .summary = "Show this list.", .run = Help},
  };
  return kCommands;
}

int Help(const Call&) {
  std::string text =
      "usage: toolgate <command> [options]\n\n"
      "  up [--demo]\n      Start NATS, Redis, PostgreSQL and every service here "
      "(toolgate up --help); --detach runs it in the background.\n"
      "  status [--data-dir DIR]\n      Show what `toolgate up` runs: each child, its pid, the "
      "URL.\n"
      "  down [--data-dir DIR]\n      Stop the system started with `toolgate up --detach`.\n"
      "  keys init [--dir DIR]\n      Create a cluster's keys and credentials (compose, "
      "Kubernetes); existing files are kept.\n";
  for (const Command& c : Commands()) {
    text += "  " + std::string(c.usage) + "\n      " + std::string(c.summary) + "\n";
  }
  text += "\nEvery command takes --url URL (TOOLGATE_URL, default " + std::string(kDefaultUrl) +
          ") and --api-key KEY (TOOLGATE_API_KEY; else the session of `toolgate login`).\n"
          "The password may come from TOOLGATE_PASSWORD instead of --password.\n";
  std::fputs(text.c_str(), stdout);
  return kOk;
}

const Command* FindCommand(std::string_view name) {
  for (const Command& c : Commands()) {
    if (c.name == name) return &c;
  }
  return nullptr;
}

}  // namespace

std::string ParsedArgs::Get(const std::string& name, const std::string& fallback) const {
  auto it = options.find(name);
  return it == options.end() ? fallback : it->second;
}

Result<ParsedArgs> ParseArgs(const std::vector<std::string>& words,
                             const std::set<std::string>& allowed) {
  ParsedArgs out;
  for (size_t i = 0; i < words.size(); ++i) {
    const std::string& word = words[i];
    if (word == "--") {
      out.positional.insert(out.positional.end(), words.begin() + i + 1, words.end());
      break;
    }
    if (!word.starts_with("--")) {
      out.positional.push_back(word);
      continue;
    }
    std::string name = word.substr(2);
    std::string value;
    if (size_t eq = name.find('='); eq != std::string::npos) {
      value = name.substr(eq + 1);
      name.resize(eq);
    } else if (i + 1 < words.size()) {
      value = words[++i];
    } else {
      return Status::InvalidArgument("--" + name + " needs a value");
    }
    if (allowed.count(name) == 0) return Status::InvalidArgument("unknown flag --" + name);
    if (!out.options.emplace(name, value).second) {
      return Status::InvalidArgument("--" + name + " is given twice");
    }
  }
  return out;
}

std::vector<FieldError> ParseManifest(std::string_view text, Manifest* out) {
  std::vector<FieldError> errors;
  auto doc = ParseJson(text);
  if (!doc.ok()) return {{kManifestFile, "is not JSON: " + doc.status().message()}};
  simdjson::dom::object obj;
  if (doc->root.get_object().get(obj) != simdjson::SUCCESS) {
    return {{kManifestFile, "must be a JSON object"}};
  }
  ManifestReader r(obj, &errors);
  for (auto member : obj) {
    if (ManifestMembers().count(member.key) == 0) r.Fail(member.key, "is not a manifest field");
  }
  Manifest m;
  simdjson::dom::element id;
  if (obj["function_id"].get(id) == simdjson::SUCCESS) {
    std::string_view s;
    if (id.get_string().get(s) != simdjson::SUCCESS || !IsUuid(s)) {
      r.Fail("function_id",
             "must be the UUID that toolgate publish wrote; remove it to create a new function");
    } else {
      m.function_id = std::string(s);
    }
  }
  m.name = r.RequiredString("name");
  m.description = r.RequiredString("description");
  m.overview = r.OptionalString("overview");
  m.category = r.RequiredString("category");
  m.sector = r.OptionalString("sector");
  m.tags = r.Strings("tags");
  m.visibility = r.OneOf("visibility", {"public", "private"});
  m.price_micro_usd = r.Int("price_micro_usd", 0, /*required=*/true).value_or(0);
  m.mcp = r.Bool("mcp");
  m.version = r.RequiredString("version");
  if (!m.version.empty() && !core::ParseVersion(m.version)) {
    r.Fail("version", "must be 1 to 4 dot-separated numbers of at most 9 digits, like 1.0.0");
  }
  m.runtime = r.OneOf("runtime", {"python", "javascript", "lua"});
  m.compute_type = r.OneOf("compute_type", {"CPU", "GPU"});
  m.input_schema = r.Raw("input_schema", simdjson::dom::element_type::OBJECT, "an object")
                       .value_or(kDefaultInputSchema);
  m.declared_keys = r.Strings("declared_keys");
  for (const auto& key : m.declared_keys.value_or(std::vector<std::string>{})) {
    if (!core::IsValidEnvKeyName(key)) {
      r.Fail("declared_keys", "\"" + key + "\" must match [A-Za-z_][A-Za-z0-9_]*");
    }
  }
  m.timeout_ms = r.Int("timeout_ms", 1, /*required=*/false);
  m.memory_mb = r.Int("memory_mb", 1, /*required=*/false);
  m.examples = r.Raw("examples", simdjson::dom::element_type::ARRAY, "an array");
  m.handler = r.RequiredString("handler");
  if (fs::path(m.handler).is_absolute()) {
    r.Fail("handler", "must be a path relative to toolgate.json");
  }
  m.bundle = r.Bool("bundle").value_or(false);
  if (errors.empty()) *out = std::move(m);
  return errors;
}

std::string FunctionRequestBody(const Manifest& m) {
  JsonWriter w;
  w.BeginObject().Field("name", m.name).Field("description", m.description);
  if (m.overview) w.Field("overview", *m.overview);
  w.Field("category", m.category);
  if (m.sector) w.Field("sector", *m.sector);
  if (m.tags) {
    w.Key("tags").BeginArray();
    for (const auto& t : *m.tags) w.String(t);
    w.EndArray();
  }
  w.Field("visibility", m.visibility).Field("price_micro_usd", m.price_micro_usd);
  if (m.mcp) w.Field("mcp", *m.mcp);
  w.EndObject();
  return w.Take();
}

std::string VersionRequestBody(const Manifest& m, std::string_view code, std::string_view bundle) {
  JsonWriter w;
  w.BeginObject()
      .Field("version", m.version)
      .Field("runtime", m.runtime)
      .Field("compute_type", m.compute_type);
  if (m.bundle) {
    w.Field("bundle", Base64Encode(bundle)).Field("handler", m.handler);
  } else {
    w.Field("code", code);
  }
  w.Key("input_schema").Raw(m.input_schema);
  if (m.declared_keys) {
    w.Key("declared_keys").BeginArray();
    for (const auto& k : *m.declared_keys) w.String(k);
    w.EndArray();
  }
  if (m.timeout_ms) w.Field("timeout_ms", *m.timeout_ms);
  if (m.memory_mb) w.Field("memory_mb", *m.memory_mb);
  if (m.examples) w.Key("examples").Raw(*m.examples);
  // The manifest's price is the price of the version it publishes: a version's price is fixed
  // at publishing, so editing it in the manifest takes effect with the next version.
  w.Field("price_micro_usd", m.price_micro_usd);
  w.EndObject();
  return w.Take();
}

std::string WithFunctionId(std::string_view text, std::string_view function_id) {
  size_t brace = text.find('{');
  if (brace == std::string_view::npos) return std::string(text);
  size_t next = text.find_first_not_of(" \t\r\n", brace + 1);
  if (next == std::string_view::npos) next = text.size();
  // Repeat the whitespace that precedes the first member, so the new line is indented like it.
  std::string_view gap = text.substr(brace + 1, next - brace - 1);
  std::string member = "\"function_id\": " + JsonWriter::Quote(function_id);
  std::string out(text.substr(0, brace + 1));
  out += gap;
  out += member;
  if (next < text.size() && text[next] != '}') {
    out += ",";
    out += gap.empty() ? " " : gap;
  } else {
    out += gap.empty() ? "" : "\n";
  }
  out += text.substr(next);
  return out;
}

std::string DescribeHttpError(int status, std::string_view body) {
  auto doc = ParseJson(body);
  simdjson::dom::object obj;
  std::string title, detail;
  if (doc.ok() && doc->root.get_object().get(obj) == simdjson::SUCCESS &&
      (GetString(obj, "title", &title) == Field::kOk ||
       GetString(obj, "code", &title) == Field::kOk)) {
    GetString(obj, "detail", &detail);
    std::string out = "error: " + title + (detail.empty() ? "" : ": " + detail) + "\n";
    simdjson::dom::array errors;
    if (obj["errors"].get_array().get(errors) == simdjson::SUCCESS) {
      for (simdjson::dom::element e : errors) {
        simdjson::dom::object fe;
        std::string field, message;
        if (e.get_object().get(fe) != simdjson::SUCCESS) continue;
        GetString(fe, "field", &field);
        GetString(fe, "message", &message);
        out += "  " + (field.empty() ? "" : field + ": ") + message + "\n";
      }
    }
    return out;
  }
  constexpr size_t kMaxBody = 2000;
  std::string out = "error: HTTP " + std::to_string(status);
  std::string_view shown = Trim(body.substr(0, kMaxBody));
  if (!shown.empty()) out += ": " + std::string(shown);
  return out + "\n";
}

namespace {

void AppendPretty(simdjson::dom::element e, int depth, std::string* out) {
  auto newline = [out](int d) {
    out->push_back('\n');
    out->append(static_cast<size_t>(2 * d), ' ');
  };
  simdjson::dom::object obj;
  simdjson::dom::array arr;
  if (e.get_object().get(obj) == simdjson::SUCCESS) {
    if (obj.size() == 0) {
      out->append("{}");
      return;
    }
    out->push_back('{');
    bool first = true;
    for (auto member : obj) {
      if (!first) out->push_back(',');
      first = false;
      newline(depth + 1);
      JsonWriter::AppendQuoted(*out, member.key);
      out->append(": ");
      AppendPretty(member.value, depth + 1, out);
    }
    newline(depth);
    out->push_back('}');
  } else if (e.get_array().get(arr) == simdjson::SUCCESS) {
    if (arr.size() == 0) {
      out->append("[]");
      return;
    }
    out->push_back('[');
    bool first = true;
    for (simdjson::dom::element item : arr) {
      if (!first) out->push_back(',');
      first = false;
      newline(depth + 1);
      AppendPretty(item, depth + 1, out);
    }
    newline(depth);
    out->push_back(']');
  } else {
    out->append(ToJson(e));
  }
}

}  // namespace

std::string PrettyJson(std::string_view text) {
  auto doc = ParseJson(text);
  if (!doc.ok()) return std::string(text);
  std::string out;
  AppendPretty(doc->root, 0, &out);
  return out;
}

int RunClientCommand(const std::vector<std::string>& args) {
  if (args.empty() || args[0] == "--help" || args[0] == "-h") {
    return RunClientCommand({"help"});
  }
  // Two-word commands ("keys create") first, then one-word ones.
  size_t words = 2;
  const Command* command = args.size() >= 2 ? FindCommand(args[0] + " " + args[1]) : nullptr;
  if (command == nullptr) {
    words = 1;
    command = FindCommand(args[0]);
  }
  if (command == nullptr) {
    std::string usages;
    for (const Command& c : Commands()) {
      if (c.name.starts_with(args[0] + " "))
        usages += "usage: toolgate " + std::string(c.usage) + "\n";
    }
    if (usages.empty()) {
      std::fprintf(stderr, "error: unknown command '%s'; run `toolgate help`\n", args[0].c_str());
    } else {
      std::fprintf(stderr, "error: `toolgate %s` needs a subcommand\n%s", args[0].c_str(),
                   usages.c_str());
    }
    return kUsage;
  }
  std::vector<std::string> rest(args.begin() + static_cast<ptrdiff_t>(words), args.end());
  for (auto& word : rest) {
    if (word == "--") break;
    if (word.starts_with("--") && command->switches.count(word.substr(2)) > 0) word += "=true";
  }
  for (const auto& word : rest) {
    if (word == "--help" || word == "-h") {
      std::printf("usage: toolgate %.*s\n  %.*s\n", static_cast<int>(command->usage.size()),
                  command->usage.data(), static_cast<int>(command->summary.size()),
                  command->summary.data());
      return kOk;
    }
  }
  std::set<std::string> allowed = command->options;
  allowed.insert(command->switches.begin(), command->switches.end());
  allowed.insert({"url", "api-key"});
  auto parsed = ParseArgs(rest, allowed);
  Call call{*command, parsed.ok() ? *parsed : ParsedArgs{}, "", ""};
  if (!parsed.ok()) return UsageError(call, parsed.status().message());
  if (call.args.positional.size() != command->positional) {
    return UsageError(call, command->positional == 0
                                ? "unexpected argument '" + call.args.positional[0] + "'"
                                : "wrong number of arguments");
  }
  for (const auto& name : command->required) {
    if (!call.args.Has(name)) return UsageError(call, "--" + name + " is required");
  }
  call.url = call.args.Get("url", Env("TOOLGATE_URL"));
  if (call.url.empty()) call.url = kDefaultUrl;
  call.api_key = call.args.Get("api-key", Env("TOOLGATE_API_KEY"));
  return command->run(call);
}

}  // namespace toolgate::cli
