#include "commands.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <termios.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>

#include "api_client.h"
#include "bundle_pack.h"
#include "cli_config.h"
#include "dev_command.h"
#include "execution_feed.h"
#include "human_output.h"
#include "launcher.h"
#include "templates.h"
#include "toolgate/base/crypto.h"
#include "toolgate/base/json.h"
#include "toolgate/base/json_writer.h"
#include "toolgate/base/strings.h"
#include "toolgate/core/cost.h"
#include "toolgate/core/env_keys.h"
#include "toolgate/core/function_model.h"
#include "toolgate/core/version.h"
#include "toolgate/http_client/http_client.h"
#include "trace_command.h"
#include "version_bump.h"

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
      "function_id",  "name",         "description",     "overview",     "category",  "sector",
      "tags",         "visibility",   "price_micro_usd", "mcp",          "version",   "runtime",
      "compute_type", "input_schema", "declared_keys",   "timeout_ms",   "memory_mb", "examples",
      "handler",      "bundle",       "egress",          "output_schema"};
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

// ---- Commands ----

struct Command;

// One run of a command: its parsed words and where and as whom to connect.
struct Call {
  const Command& command;
  ParsedArgs args;
  std::string url;
  std::string api_key;
  std::string profile_name;  // --profile, TOOLGATE_PROFILE or "default"
  Profile profile;           // as the configuration file holds it
  bool json = false;         // --json: the server's JSON instead of text for people
};

using Runner = int (*)(const Call&);
// The commands that read their own words (`up`, `status`, `down`, `trace`, `version`).
using WordsRunner = int (*)(const std::vector<std::string>&);

struct Command {
  std::string_view name;   // "keys create"
  std::string_view usage;  // what follows "toolgate "
  std::string_view summary;
  std::set<std::string> options = {};   // beyond the global ones (GlobalOptions)
  std::set<std::string> switches = {};  // options given without a value ("--mcp" is "--mcp=true")
  std::set<std::string> required = {};  // options that must be given
  size_t positional = 0;                // how many positional words it takes
  Runner run = nullptr;
  TableView view = {};              // how a list answer reads without --json
  WordsRunner words_run = nullptr;  // set instead of run: gets the words after the name
  size_t max_positional = 0;        // more than `positional` may be given, up to this
};

// Options every table-driven command takes.
const std::set<std::string>& GlobalOptions() {
  static const std::set<std::string> kOptions = {"url", "api-key", "profile"};
  return kOptions;
}

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

// An answer on stdout: indented JSON with --json, else the command's text for people.
void PrintAnswer(const Call& call, std::string_view body) {
  if (body.empty()) return;
  if (call.json) {
    PrintJson(body);
    return;
  }
  std::fputs(RenderHuman(body, call.command.view).c_str(), stdout);
}

// Saves the profile of call (its URL and session) into the configuration file, keeping the
// other profiles as they are.
Status SaveProfile(const Call& call, const Profile& profile) {
  const fs::path path = CliConfigPath();
  auto config = LoadCliConfig(path);
  if (!config.ok()) return config.status();
  config->profiles[call.profile_name] = profile;
  return SaveCliConfig(path, *config);
}

ApiClient Client(const Call& call) {
  return ApiClient(call.url, call.api_key, call.profile.session);
}

// Prints a failed request on stderr. Returns the exit code.
int ReportFailure(const Call& call, const Result<http::HttpResponse>& r) {
  if (!r.ok()) {
    PrintError(r.status().message());
    if (r.status().code() == Status::Code::kUnavailable) {
      std::fprintf(stderr,
                   "hint: is Toolgate running at %s? (--url, TOOLGATE_URL or `toolgate login "
                   "--url`)\n",
                   call.url.c_str());
    }
    return kFailed;
  }
  std::fputs(DescribeHttpError(r->status, r->body).c_str(), stderr);
  if (r->status == 401 && call.api_key.empty() && call.profile.session.empty()) {
    std::fputs("hint: run `toolgate login`, or set TOOLGATE_API_KEY\n", stderr);
  }
  return kFailed;
}

bool Succeeded(const Result<http::HttpResponse>& r) {
  return r.ok() && r->status < 400;
}

// Prints what a request came back with: the answer on stdout below 400, the error on stderr
// otherwise. Returns the exit code.
int Report(const Call& call, const Result<http::HttpResponse>& r) {
  if (!Succeeded(r)) return ReportFailure(call, r);
  PrintAnswer(call, r->body);
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
  if (!Succeeded(r)) return ReportFailure(call, r);
  std::string token = client.Cookie("tg_session");
  if (token.empty()) {
    PrintError("the server answered without a tg_session cookie");
    return kFailed;
  }
  // The server's URL is remembered with the session, so later commands need no --url.
  if (Status saved = SaveProfile(call, Profile{call.url, token}); !saved.ok()) {
    PrintError(saved.message());
    return kFailed;
  }
  PrintAnswer(call, r->body);
  std::fprintf(stderr, "signed in to %s; session saved in %s (profile %s)\n", call.url.c_str(),
               CliConfigPath().c_str(), call.profile_name.c_str());
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
  if (call.profile.session.empty()) {
    std::fputs("not signed in\n", stderr);
    return kOk;
  }
  http::HttpClient client(call.url);
  client.SetDefaultHeader("Cookie", "tg_session=" + call.profile.session);
  client.SetDefaultHeader("X-Toolgate-CSRF", "1");
  auto r = client.Post(Api("/auth/logout"), "");
  if (!r.ok()) return ReportFailure(call, r);  // the session still holds: keep it to retry
  // The profile keeps its URL; only the session goes.
  if (Status saved = SaveProfile(call, Profile{call.profile.url, ""}); !saved.ok()) {
    PrintError(saved.message());
    return kFailed;
  }
  // 401: the server had already ended the session; the local copy is gone now too.
  if (r->status >= 400 && r->status != 401) return ReportFailure(call, r);
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
      std::string_view scope = TrimAsciiWhitespace(scopes.substr(start, comma - start));
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

// `publish --bump PART`: sets manifest->version to the version after the highest one
// published (the manifest's own version when none is), and writes it into the manifest so that
// the file says what was published. Returns the exit code.
int ApplyBump(const Call& call, ApiClient& client, const fs::path& manifest_path,
              Manifest* manifest) {
  auto r = client.Get(Api("/functions/") + http::UrlEncode(manifest->function_id));
  if (!Succeeded(r)) return ReportFailure(call, r);
  auto doc = ParseJson(r->body);
  simdjson::dom::object obj;
  simdjson::dom::array versions;
  std::vector<std::string> published;
  if (doc.ok() && doc->root.get_object().get(obj) == simdjson::SUCCESS &&
      obj["versions"].get_array().get(versions) == simdjson::SUCCESS) {
    for (simdjson::dom::element v : versions) {
      simdjson::dom::object fields;
      std::string version;
      if (v.get_object().get(fields) == simdjson::SUCCESS &&
          GetString(fields, "version", &version) == Field::kOk) {
        published.push_back(version);
      }
    }
  }
  const std::string highest = HighestVersion(published);
  if (highest.empty()) return kOk;  // the first version: the manifest's as written
  auto next = BumpVersion(highest, call.args.Get("bump"));
  if (!next.ok()) return UsageError(call, next.status().message());
  auto text = ReadFile(manifest_path);
  if (!text.ok()) {
    PrintError(text.status().message());
    return kFailed;
  }
  auto updated = WithVersion(*text, *next);
  Status saved = updated.ok() ? WriteFileAtomically(manifest_path, *updated) : updated.status();
  if (!saved.ok()) {
    PrintError(saved.message());
    return kFailed;
  }
  std::fprintf(stderr, "version %s -> %s (saved in %s)\n", highest.c_str(), next->c_str(),
               manifest_path.c_str());
  manifest->version = *next;
  return kOk;
}

// What `publish` prints once the version is out: where to call it, and a curl line to try it
// with the manifest's first example (or an empty event).
void PrintPublished(const Call& call, const Manifest& manifest) {
  std::string base = call.url;
  while (base.ends_with('/')) base.pop_back();
  const std::string function_url = base + Api("/functions/") + manifest.function_id;
  const std::string invoke_url = function_url + "/invoke";
  const std::string version_url = function_url + "/" + manifest.version + "/invoke";
  const std::string curl =
      CurlLine(invoke_url, core::FirstExampleEvent(manifest.examples.value_or("")));
  if (call.json) {
    JsonWriter w;
    w.BeginObject()
        .Field("function_id", manifest.function_id)
        .Field("version", manifest.version)
        .Field("invoke_url", invoke_url)
        .Field("version_invoke_url", version_url)
        .Field("curl", curl)
        .EndObject();
    PrintJson(w.str());
    return;
  }
  std::printf(
      "published %s %s (function %s)\n"
      "invoke URL:    %s\n"
      "this version:  %s\n"
      "try it:\n  %s\n",
      manifest.name.c_str(), manifest.version.c_str(), manifest.function_id.c_str(),
      invoke_url.c_str(), version_url.c_str(), curl.c_str());
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
  if (call.args.Has("bump")) {
    // Checked before anything is created, so a typo leaves no function behind.
    if (auto checked = BumpVersion("0", call.args.Get("bump")); !checked.ok()) {
      return UsageError(call, checked.status().message());
    }
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

  ApiClient client = Client(call);
  if (manifest.function_id.empty()) {
    auto created = client.Post(Api("/functions"), FunctionRequestBody(manifest));
    if (!Succeeded(created)) return ReportFailure(call, created);
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
  if (call.args.Has("bump")) {
    if (int rc = ApplyBump(call, client, manifest_path, &manifest); rc != kOk) return rc;
  }
  auto published =
      client.Post(Api("/functions/") + http::UrlEncode(manifest.function_id) + "/versions",
                  VersionRequestBody(manifest, *code, bundle));
  if (!Succeeded(published)) return ReportFailure(call, published);
  PrintPublished(call, manifest);
  return kOk;
}

// The `funding` of a GET /billing/balance answer ("grants", "checkout", "demo"), or "".
std::string FundingOf(std::string_view body) {
  auto doc = ParseJson(body);
  simdjson::dom::object obj;
  std::string funding;
  if (doc.ok() && doc->root.get_object().get(obj) == simdjson::SUCCESS) {
    GetString(obj, "funding", &funding);
  }
  return funding;
}

// `topup` with checkout funding: creates a checkout session and prints its payment page, which
// the member opens to pay; the balance grows once the payment provider confirms the payment.
int CheckoutTopup(const Call& call, ApiClient& client, const std::string& body,
                  const http::HeaderList& headers) {
  auto r = client.Post(Api("/billing/checkout-sessions"), body, headers);
  if (!Succeeded(r)) return ReportFailure(call, r);
  if (call.json) {
    PrintAnswer(call, r->body);
    return kOk;
  }
  auto doc = ParseJson(r->body);
  simdjson::dom::object obj;
  std::string url, id;
  if (!doc.ok() || doc->root.get_object().get(obj) != simdjson::SUCCESS ||
      GetString(obj, "checkout_url", &url) != Field::kOk) {
    PrintError("the server's answer has no checkout_url: " + r->body);
    return kFailed;
  }
  GetString(obj, "checkout_session_id", &id);
  std::printf("Open this page to pay: %s\n", url.c_str());
  std::fprintf(stderr,
               "checkout session %s; the balance grows once the payment is confirmed "
               "(`toolgate balance`)\n",
               id.c_str());
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
  ApiClient client = Client(call);
  // Where the system's credit comes from decides what a top-up is: with checkout funding it is
  // bought, on the payment page of a checkout session, and credited once the payment is made.
  auto balance = client.Get(Api("/billing/balance"));
  if (Succeeded(balance) && FundingOf(balance->body) == "checkout") {
    return CheckoutTopup(call, client, w.str(), headers);
  }
  auto r = client.Post(Api("/billing/top-ups"), w.str(), headers);
  if (r.ok() && r->status == 403 &&
      r->body.find("\"funding_by_grant_only\"") != std::string::npos) {
    ReportFailure(call, r);
    std::fputs(
        "hint: members cannot add credit on this system; credit comes from the operator, who "
        "grants it with `toolgate admin grant`. Ask your operator.\n",
        stderr);
    return kFailed;
  }
  return Report(call, r);
}

// "12.5" USD in micro-USD; nullopt for anything but a non-negative decimal with at most 6
// decimals (a micro-USD is the ledger's unit).
std::optional<int64_t> MicroUsdOfUsd(std::string_view usd) {
  auto nano = core::ParseNanoDecimal(usd);
  if (!nano || *nano % 1000 != 0) return std::nullopt;
  return *nano / 1000;
}

int AdminGrant(const Call& call) {
  auto amount = MicroUsdOfUsd(call.args.Get("amount-usd"));
  if (!amount || *amount == 0) {
    return UsageError(call, "--amount-usd is a positive number of USD, at most 6 decimals");
  }
  const std::string org = call.args.Get("organization");
  if (!IsUuid(org)) return UsageError(call, "--organization is an organization id (a UUID)");
  JsonWriter w;
  w.BeginObject()
      .Field("amount_micro_usd", *amount)
      .Field("reason", call.args.Get("reason"))
      .EndObject();
  http::HeaderList headers;
  if (call.args.Has("idempotency-key")) {
    headers.emplace_back("Idempotency-Key", call.args.Get("idempotency-key"));
  }
  return Report(
      call, Client(call).Post(Api("/admin/organizations/" + org + "/credits"), w.str(), headers));
}

// ---- Notifications ----

constexpr const char* kNotificationsPath = "/billing/notifications";

// Sets the organization's notification endpoint: the URL (positional: --url names the Toolgate
// server) and, with --events, the event types it subscribes to (comma-separated).
int NotificationsSet(const Call& call) {
  JsonWriter w;
  w.BeginObject().Field("url", call.args.positional[0]);
  if (call.args.Has("events")) {
    w.Key("events").BeginArray();
    const std::string events = call.args.Get("events");
    std::string_view rest = events;
    while (!rest.empty()) {
      const size_t comma = rest.find(',');
      w.String(rest.substr(0, comma));
      if (comma == std::string_view::npos) break;
      rest.remove_prefix(comma + 1);
    }
    w.EndArray();
  }
  w.EndObject();
  auto r = Client(call).Put(Api(kNotificationsPath), w.Take());
  const int rc = Report(call, r);
  if (rc == kOk && r->status == 201) {
    std::fputs(
        "keep the secret: it signs every notification and is shown only now (a new one: "
        "`toolgate notifications rotate-secret`)\n",
        stderr);
  }
  return rc;
}

int NotificationsShow(const Call& call) {
  return Report(call, Client(call).Get(Api(kNotificationsPath)));
}

int NotificationsDelete(const Call& call) {
  const int rc = Report(call, Client(call).Delete(Api(kNotificationsPath)));
  if (rc == kOk) std::fputs("deleted the notification endpoint\n", stderr);
  return rc;
}

int NotificationsRotateSecret(const Call& call) {
  const int rc =
      Report(call, Client(call).Post(Api(std::string(kNotificationsPath) + "/rotate-secret"), ""));
  if (rc == kOk) {
    std::fputs("the old secret no longer signs; give the new one to your receiver\n", stderr);
  }
  return rc;
}

// Sends one notification.test and exits 0 only when the endpoint accepted it.
int NotificationsTest(const Call& call) {
  auto r = Client(call).Post(Api(std::string(kNotificationsPath) + "/test"), "");
  if (Report(call, r) != kOk) return kFailed;
  auto doc = ParseJson(r->body);
  bool delivered = false;
  simdjson::dom::object answer;
  if (doc.ok() && doc->root.get_object().get(answer) == simdjson::SUCCESS) {
    GetBool(answer, "delivered", &delivered);
  }
  return delivered ? kOk : kFailed;
}

// ---- The webhook secret (asynchronous calls' callbacks) ----

constexpr const char* kWebhookSecretPath = "/webhooks/secret";

// Makes the organization's webhook secret, or rotates it: the answer holds the secret, shown
// this once.
int WebhooksRotateSecret(const Call& call) {
  auto r = Client(call).Post(Api(kWebhookSecretPath), "");
  if (Report(call, r) != kOk) return kFailed;
  std::fputs(
      "keep the secret: it signs every callback of your asynchronous calls and is shown only "
      "now\n",
      stderr);
  auto doc = ParseJson(r->body);
  simdjson::dom::object answer;
  std::string previous_until;
  if (doc.ok() && doc->root.get_object().get(answer) == simdjson::SUCCESS &&
      GetString(answer, "previous_valid_until", &previous_until) == Field::kOk) {
    std::fprintf(stderr,
                 "the previous secret also signs until %s: give the new one to your receivers "
                 "before then\n",
                 previous_until.c_str());
  }
  return kOk;
}

int WebhooksShow(const Call& call) {
  auto r = Client(call).Get(Api(kWebhookSecretPath));
  if (r.ok() && r->status == 404) {
    ReportFailure(call, r);
    std::fputs("hint: make one with `toolgate webhooks rotate-secret`\n", stderr);
    return kFailed;
  }
  return Report(call, r);
}

// ---- Earnings and payouts ----

int AdminPayout(const Call& call) {
  auto amount = MicroUsdOfUsd(call.args.Get("amount-usd"));
  if (!amount || *amount == 0) {
    return UsageError(call, "--amount-usd is a positive number of USD, at most 6 decimals");
  }
  const std::string org = call.args.Get("organization");
  if (!IsUuid(org)) return UsageError(call, "--organization is an organization id (a UUID)");
  JsonWriter w;
  w.BeginObject()
      .Field("amount_micro_usd", *amount)
      .Field("reference", call.args.Get("reference"))
      .EndObject();
  http::HeaderList headers;
  if (call.args.Has("idempotency-key")) {
    headers.emplace_back("Idempotency-Key", call.args.Get("idempotency-key"));
  }
  return Report(
      call, Client(call).Post(Api("/admin/organizations/" + org + "/payouts"), w.str(), headers));
}

int AdminPayouts(const Call& call) {
  const std::string org = call.args.Get("organization");
  if (!IsUuid(org)) return UsageError(call, "--organization is an organization id (a UUID)");
  return Report(call, Client(call).Get(Api("/admin/organizations/" + org + "/payouts") +
                                       ListQuery(call.args)));
}

// The statement as a table (or JSON with --json), or with --csv the CSV statement as the server
// wrote it, for a spreadsheet.
int Earnings(const Call& call) {
  std::string query;
  for (const char* bound : {"from", "to"}) {
    if (!call.args.Has(bound)) continue;
    query += (query.empty() ? "?" : "&") + std::string(bound) + "=" +
             http::UrlEncode(call.args.Get(bound));
  }
  const bool csv = call.args.Get("csv", "false") == "true";
  http::HeaderList headers;
  headers.emplace_back("Accept", csv ? "text/csv" : "application/json");
  auto r = Client(call).Send("GET", Api("/billing/earnings") + query, {}, headers);
  if (!Succeeded(r)) return ReportFailure(call, r);
  if (csv) {
    std::fwrite(r->body.data(), 1, r->body.size(), stdout);
    return kOk;
  }
  if (call.json) {
    PrintJson(r->body);
    return kOk;
  }
  std::fputs(RenderHuman(r->body, call.command.view).c_str(), stdout);
  auto doc = ParseJson(r->body);
  simdjson::dom::object statement;
  if (doc.ok() && doc->root.get_object().get(statement) == simdjson::SUCCESS) {
    int64_t net = 0, payouts = 0, payable = 0;
    simdjson::dom::object totals;
    if (statement["totals"].get_object().get(totals) == simdjson::SUCCESS) {
      GetInt(totals, "net_micro_usd", &net);
    }
    GetInt(statement, "payouts_micro_usd", &payouts);
    GetInt(statement, "payable_micro_usd", &payable);
    std::printf("net earnings %lld micro-USD; paid out in the period %lld; payable now %lld\n",
                static_cast<long long>(net), static_cast<long long>(payouts),
                static_cast<long long>(payable));
  }
  return kOk;
}

// ---- Spending limits and usage ----

// "/api/v1/billing/budget", or the key's budget with --key.
Result<std::string> BudgetPath(const Call& call) {
  if (!call.args.Has("key")) return Api("/billing/budget");
  const std::string key = call.args.Get("key");
  if (!IsUuid(key)) {
    return Status::InvalidArgument("--key is an API key's id (a UUID, `toolgate keys list`)");
  }
  return Api("/api-keys/" + key + "/budget");
}

int BudgetReport(const Call& call, const Result<http::HttpResponse>& r) {
  if (!Succeeded(r)) return ReportFailure(call, r);
  if (call.json) {
    PrintJson(r->body);
  } else {
    std::fputs(RenderBudget(r->body).c_str(), stdout);
  }
  return kOk;
}

int BudgetShow(const Call& call) {
  auto path = BudgetPath(call);
  if (!path.ok()) return UsageError(call, path.status().message());
  return BudgetReport(call, Client(call).Get(*path));
}

// Changes only the limits named: the other one keeps the value the server holds now (a PUT
// sets both, so the current budget is read first).
int BudgetSet(const Call& call) {
  auto path = BudgetPath(call);
  if (!path.ok()) return UsageError(call, path.status().message());
  LimitChanges changes;
  for (auto [option, change] :
       {std::pair{"daily-usd", &changes.daily}, std::pair{"monthly-usd", &changes.monthly}}) {
    if (!call.args.Has(option)) continue;
    auto limit = ParseLimitUsd(call.args.Get(option));
    if (!limit.ok())
      return UsageError(call, "--" + std::string(option) + " " + limit.status().message());
    *change = *limit;
  }
  if (!changes.daily && !changes.monthly) {
    return UsageError(call, "give --daily-usd, --monthly-usd or both (a number of USD, or none)");
  }
  ApiClient client = Client(call);
  auto current = client.Get(*path);
  if (!Succeeded(current)) return ReportFailure(call, current);
  auto body = BudgetRequestBody(current->body, changes);
  if (!body.ok()) {
    PrintError(body.status().message());
    return kFailed;
  }
  return BudgetReport(call, client.Put(*path, *body));
}

int Usage(const Call& call) {
  const std::string group = call.args.Get("group-by", "day");
  std::string_view column;
  if (group == "key") column = "key_id";
  if (group == "function") column = "function_id";
  if (group == "day") column = "day";
  if (column.empty()) return UsageError(call, "--group-by is key, function or day");
  std::string query = "?group_by=" + group;
  for (const char* bound : {"from", "to"}) {
    if (call.args.Has(bound))
      query += "&" + std::string(bound) + "=" + http::UrlEncode(call.args.Get(bound));
  }
  auto r = Client(call).Get(Api("/billing/usage") + query);
  if (!Succeeded(r)) return ReportFailure(call, r);
  if (call.json) {
    PrintJson(r->body);
    return kOk;
  }
  const TableView view = {"items",
                          {{group == "day"   ? "DAY"
                            : group == "key" ? "KEY"
                                             : "FUNCTION",
                            column},
                           {"CALLS", "calls"},
                           {"SPENT_MICRO_USD", "spent_micro_usd"}}};
  std::fputs(RenderHuman(r->body, view).c_str(), stdout);
  return kOk;
}

int Balance(const Call& call) {
  return Report(call, Client(call).Get(Api("/billing/balance")));
}

int Ledger(const Call& call) {
  return Report(call, Client(call).Get(Api("/billing/ledger") + ListQuery(call.args)));
}

int ExecutionsList(const Call& call) {
  std::string query =
      Query(call.args, {{"function-id", "function_id"}, {"limit", "limit"}, {"cursor", "cursor"}});
  return Report(call, Client(call).Get(Api("/executions") + query));
}

int ExecutionsShow(const Call& call) {
  return Report(call,
                Client(call).Get(Api("/executions/") + http::UrlEncode(call.args.positional[0])));
}

// The event of --event JSON or --event-file F ("{}" when neither is given), checked to be JSON.
Result<std::string> EventArgument(const Call& call) {
  if (call.args.Has("event") && call.args.Has("event-file")) {
    return Status::InvalidArgument("give the event with --event or --event-file, not both");
  }
  std::string event = "{}";
  if (call.args.Has("event")) event = call.args.Get("event");
  if (call.args.Has("event-file")) {
    auto file = ReadFile(call.args.Get("event-file"));
    if (!file.ok()) return Status::InvalidArgument(file.status().message());
    event = std::move(*file);
  }
  auto parsed = ParseJson(event);
  if (!parsed.ok()) {
    return Status::InvalidArgument("the event is not JSON: " + parsed.status().message());
  }
  return ToJson(parsed->root);
}

// An Idempotency-Key as the API takes it: 1 to 255 printable ASCII characters.
bool IsIdempotencyKey(std::string_view key) {
  return !key.empty() && key.size() <= 255 &&
         std::all_of(key.begin(), key.end(), [](char c) { return c >= 0x20 && c <= 0x7e; });
}

// The execution_id of an answer (202 of an asynchronous call, a cancel's), or "".
std::string ExecutionIdOf(std::string_view body) {
  auto doc = ParseJson(body);
  simdjson::dom::object obj;
  std::string id;
  if (doc.ok() && doc->root.get_object().get(obj) == simdjson::SUCCESS) {
    GetString(obj, "execution_id", &id);
  }
  return id;
}

int Invoke(const Call& call) {
  if (call.api_key.empty() && call.profile.session.empty()) {
    return UsageError(call, "sign in with `toolgate login`, or give --api-key or TOOLGATE_API_KEY");
  }
  auto event = EventArgument(call);
  if (!event.ok()) return UsageError(call, event.status().message());
  JsonWriter body;
  body.BeginObject().Key("event").Raw(*event).EndObject();

  const bool async = call.args.Has("async");
  http::HeaderList headers;
  if (call.args.Has("env-keys")) {
    auto keys = core::ParseEnvKeys(call.args.Get("env-keys"));
    if (!keys.ok()) return UsageError(call, keys.status().message());
    headers.emplace_back("X-Env-Keys", call.args.Get("env-keys"));
  }
  if (async) headers.emplace_back("Prefer", "respond-async");
  if (call.args.Has("callback-url")) {
    // The API refuses a callback on a synchronous call (400 invalid_callback_url); say so first.
    if (!async) return UsageError(call, "--callback-url needs --async");
    const std::string url = call.args.Get("callback-url");
    if (!url.starts_with("https://") && !url.starts_with("http://")) {
      return UsageError(call, "--callback-url is an http or https URL");
    }
    headers.emplace_back("X-Callback-Url", url);
  }
  if (call.args.Has("idempotency-key")) {
    const std::string key = call.args.Get("idempotency-key");
    if (!IsIdempotencyKey(key)) {
      return UsageError(call, "--idempotency-key is 1 to 255 printable ASCII characters");
    }
    headers.emplace_back("Idempotency-Key", key);
  }
  std::string path = Api("/functions/") + http::UrlEncode(call.args.positional[0]);
  if (call.args.Has("version")) path += "/" + http::UrlEncode(call.args.Get("version"));
  path += "/invoke";

  // The API key when one is given, else the session: the edge runs a call signed in by the
  // session like the web app's "Try it", with the same checks and billing.
  ApiClient client = Client(call);
  client.SetTimeout(kInvokeTimeout);
  auto r = client.Post(path, body.str(), headers);
  if (!r.ok()) return ReportFailure(call, r);
  if (std::string expires = r->Header("X-Api-Key-Expires-At"); !expires.empty()) {
    std::fprintf(stderr, "warning: this API key expires at %s; create a new one\n",
                 expires.c_str());
  }
  // A platform error is problem+json; the handler's own answer, whatever its status, is the
  // invocation envelope and goes to stdout.
  if (r->Header("Content-Type").starts_with("application/problem+json")) {
    const int rc = ReportFailure(call, r);
    if (r->status == 409 && r->body.find("\"callback_secret_missing\"") != std::string::npos) {
      std::fputs(
          "hint: callbacks are signed with your organization's webhook secret; make it with "
          "`toolgate webhooks rotate-secret`\n",
          stderr);
    }
    return rc;
  }
  if (r->Header("Idempotent-Replayed") == "true") {
    std::fputs(
        "this Idempotency-Key was used before: the first call's answer, not run or charged "
        "again\n",
        stderr);
  }
  PrintAnswer(call, r->body);
  // 202: queued (--async), or a repeated Idempotency-Key whose first call is still under way.
  if (r->status == 202) {
    const std::string id = ExecutionIdOf(r->body);
    if (!id.empty()) {
      std::fprintf(stderr,
                   "execution %s is under way: `toolgate executions wait %s` waits for its "
                   "result, `toolgate executions cancel %s` stops it\n",
                   id.c_str(), id.c_str(), id.c_str());
    }
  }
  return r->status < 400 ? kOk : kFailed;
}

// ---- Functions, versions, live logs ----

int FunctionsList(const Call& call) {
  return Report(call, Client(call).Get(Api("/workspace/tools")));
}

int FunctionsShow(const Call& call) {
  return Report(call,
                Client(call).Get(Api("/functions/") + http::UrlEncode(call.args.positional[0])));
}

int FunctionsDelete(const Call& call) {
  const std::string& id = call.args.positional[0];
  int rc = Report(call, Client(call).Delete(Api("/functions/") + http::UrlEncode(id)));
  if (rc == kOk) std::fprintf(stderr, "deleted function %s\n", id.c_str());
  return rc;
}

// ---- The workspace ----

// The columns of `workspace list`: the functions the organization owns, then those it added.
const std::vector<Column> kWorkspaceOwnedColumns = {{"FUNCTION", "function_id"},
                                                    {"NAME", "name"},
                                                    {"LATEST", "latest_version"},
                                                    {"RUNTIME", "runtime"},
                                                    {"VISIBILITY", "visibility"}};
const std::vector<Column> kWorkspaceAddedColumns = {{"FUNCTION", "function_id"},
                                                    {"NAME", "name"},
                                                    {"LATEST", "latest_version"},
                                                    {"RUNTIME", "runtime"},
                                                    {"PRICE_MICRO_USD", "price_micro_usd"}};

int WorkspaceAdd(const Call& call) {
  const std::string& id = call.args.positional[0];
  JsonWriter w;
  w.BeginObject().Field("function_id", id).EndObject();
  int rc = Report(call, Client(call).Post(Api("/workspace/tools"), w.str()));
  if (rc == kOk) std::fprintf(stderr, "added function %s to the workspace\n", id.c_str());
  return rc;
}

int WorkspaceRemove(const Call& call) {
  const std::string& id = call.args.positional[0];
  int rc = Report(call, Client(call).Delete(Api("/workspace/tools/") + http::UrlEncode(id)));
  if (rc == kOk) std::fprintf(stderr, "removed function %s from the workspace\n", id.c_str());
  return rc;
}

// The compact JSON of obj's member `name` ("[]" when absent).
std::string MemberJson(simdjson::dom::object obj, std::string_view name) {
  simdjson::dom::element e;
  return obj[name].get(e) == simdjson::SUCCESS ? ToJson(e) : "[]";
}

int WorkspaceList(const Call& call) {
  auto r = Client(call).Get(Api("/workspace/tools"));
  if (!Succeeded(r)) return ReportFailure(call, r);
  auto doc = ParseJson(r->body);
  simdjson::dom::object obj;
  if (call.json || !doc.ok() || doc->root.get_object().get(obj) != simdjson::SUCCESS) {
    PrintJson(r->body);
    return kOk;
  }
  // The two halves of the workspace, each its own table.
  std::string text = "owned:\n" + RenderTable(MemberJson(obj, "owned"), kWorkspaceOwnedColumns) +
                     "\nadded:\n" + RenderTable(MemberJson(obj, "added"), kWorkspaceAddedColumns);
  std::fputs(text.c_str(), stdout);
  return kOk;
}

std::string EnvKeysPath(const Call& call) {
  return Api("/workspace/tools/") + http::UrlEncode(call.args.positional[0]) + "/env-keys";
}

// The secret ids of the organization's secrets by name, read page by page.
Result<std::map<std::string, std::string>> SecretIdsByName(ApiClient& client) {
  std::map<std::string, std::string> out;
  std::string cursor;
  do {
    std::string path = Api("/secrets?limit=100");
    if (!cursor.empty()) path += "&cursor=" + http::UrlEncode(cursor);
    auto r = client.Get(path);
    if (!r.ok()) return r.status();
    if (r->status >= 400) {
      std::string text = DescribeHttpError(r->status, r->body);
      if (text.starts_with("error: ")) text.erase(0, 7);
      return Status::Unavailable(std::string(TrimAsciiWhitespace(text)));
    }
    auto doc = ParseJson(r->body);
    simdjson::dom::object obj;
    simdjson::dom::array items;
    if (!doc.ok() || doc->root.get_object().get(obj) != simdjson::SUCCESS ||
        obj["items"].get_array().get(items) != simdjson::SUCCESS) {
      return Status::Unavailable("the server's list of secrets has no items");
    }
    for (simdjson::dom::element item : items) {
      simdjson::dom::object fields;
      std::string id, name;
      if (item.get_object().get(fields) == simdjson::SUCCESS &&
          GetString(fields, "id", &id) == Field::kOk &&
          GetString(fields, "name", &name) == Field::kOk) {
        out[name] = id;
      }
    }
    cursor.clear();
    GetString(obj, "next_cursor", &cursor);
  } while (!cursor.empty());
  return out;
}

int EnvKeysSet(const Call& call) {
  // Every word after the function is NAME=SECRET, or several joined by commas.
  std::string joined;
  for (size_t i = 1; i < call.args.positional.size(); ++i) {
    joined += (joined.empty() ? "" : ",") + call.args.positional[i];
  }
  auto mappings = core::ParseEnvKeys(joined);
  if (!mappings.ok()) return UsageError(call, mappings.status().message());
  ApiClient client = Client(call);
  // A secret is named by its id or by its name; names are looked up once, when one is used.
  std::optional<std::map<std::string, std::string>> ids;
  std::string env_keys;
  for (const core::EnvKeyMapping& m : *mappings) {
    std::string id = m.secret_id;
    if (!IsUuid(id)) {
      if (!ids) {
        auto listed = SecretIdsByName(client);
        if (!listed.ok()) {
          PrintError("cannot list your secrets: " + listed.status().message());
          return kFailed;
        }
        ids = std::move(*listed);
      }
      auto it = ids->find(id);
      if (it == ids->end()) {
        PrintError("no secret named \"" + id + "\" (for " + m.name +
                   "); create it with `toolgate secrets create --name " + id + "`");
        return kFailed;
      }
      id = it->second;
    }
    env_keys += (env_keys.empty() ? "" : ",") + m.name + "=" + id;
  }
  JsonWriter w;
  w.BeginObject().Field("env_keys", env_keys).EndObject();
  auto r = client.Put(EnvKeysPath(call), w.str());
  if (!Succeeded(r)) return ReportFailure(call, r);
  std::fprintf(stderr, "function %s gets %zu secret(s) on the workspace MCP endpoint (/mcp): %s\n",
               call.args.positional[0].c_str(), mappings->size(), env_keys.c_str());
  return kOk;
}

int EnvKeysShow(const Call& call) {
  auto r = Client(call).Get(EnvKeysPath(call));
  if (!Succeeded(r)) return ReportFailure(call, r);
  if (call.json) {
    PrintJson(r->body);
    return kOk;
  }
  // One row per key, from the stored NAME=secret-id list.
  auto doc = ParseJson(r->body);
  simdjson::dom::object obj;
  std::string stored;
  if (!doc.ok() || doc->root.get_object().get(obj) != simdjson::SUCCESS ||
      GetString(obj, "env_keys", &stored) != Field::kOk) {
    PrintJson(r->body);
    return kOk;
  }
  auto mappings = core::ParseEnvKeys(stored);
  if (!mappings.ok()) {
    PrintJson(r->body);
    return kOk;
  }
  JsonWriter rows;
  rows.BeginArray();
  for (const auto& m : *mappings) {
    rows.BeginObject().Field("key", m.name).Field("secret_id", m.secret_id).EndObject();
  }
  rows.EndArray();
  std::fputs(RenderTable(rows.str(), {{"KEY", "key"}, {"SECRET_ID", "secret_id"}}).c_str(), stdout);
  return kOk;
}

int EnvKeysClear(const Call& call) {
  int rc = Report(call, Client(call).Delete(EnvKeysPath(call)));
  if (rc == kOk) {
    std::fprintf(stderr, "cleared the secret mapping of function %s\n",
                 call.args.positional[0].c_str());
  }
  return rc;
}

int VersionsList(const Call& call) {
  auto r = Client(call).Get(Api("/functions/") + http::UrlEncode(call.args.positional[0]));
  if (!Succeeded(r)) return ReportFailure(call, r);
  // The versions are part of the function's detail; this command shows only them.
  auto doc = ParseJson(r->body);
  simdjson::dom::object obj;
  simdjson::dom::element versions;
  if (!doc.ok() || doc->root.get_object().get(obj) != simdjson::SUCCESS ||
      obj["versions"].get(versions) != simdjson::SUCCESS || !versions.is_array()) {
    PrintError("the server's answer has no versions: " + r->body);
    return kFailed;
  }
  JsonWriter w;
  w.BeginObject().Key("items").Raw(ToJson(versions)).EndObject();
  PrintAnswer(call, w.str());
  return kOk;
}

std::string VersionPath(const Call& call) {
  return Api("/functions/") + http::UrlEncode(call.args.positional[0]) + "/versions/" +
         http::UrlEncode(call.args.positional[1]);
}

int VersionsDeprecate(const Call& call) {
  const std::string undo = call.args.Get("undo", "false");
  JsonWriter w;
  w.BeginObject().Field("deprecated", undo != "true").EndObject();
  return Report(call, Client(call).Send("PATCH", VersionPath(call), w.str()));
}

int VersionsUnpublish(const Call& call) {
  int rc = Report(call, Client(call).Delete(VersionPath(call)));
  if (rc == kOk) {
    std::fprintf(stderr, "unpublished version %s; its number is never published again\n",
                 call.args.positional[1].c_str());
  }
  return rc;
}

// What `logs` reads per request of GET /executions.
constexpr int64_t kExecutionPageSize = 50;

// Set by SIGINT and SIGTERM while `logs --follow` runs: Ctrl-C ends it cleanly.
volatile std::sig_atomic_t g_stop_following = 0;

void StopFollowing(int) {
  g_stop_following = 1;
}

// One page of the function's executions, newest first.
Result<ExecutionPage> ReadExecutionPage(ApiClient& client, const std::string& function_id,
                                        const std::string& cursor) {
  std::string path = Api("/executions?function_id=") + http::UrlEncode(function_id) +
                     "&limit=" + std::to_string(kExecutionPageSize);
  if (!cursor.empty()) path += "&cursor=" + http::UrlEncode(cursor);
  auto r = client.Get(path);
  if (!r.ok()) return r.status();
  if (r->status >= 400) return Status::Unavailable(DescribeHttpError(r->status, r->body));
  auto doc = ParseJson(r->body);
  simdjson::dom::object obj;
  simdjson::dom::array items;
  if (!doc.ok() || doc->root.get_object().get(obj) != simdjson::SUCCESS ||
      obj["items"].get_array().get(items) != simdjson::SUCCESS) {
    return Status::Unavailable("the server's answer has no items");
  }
  ExecutionPage page;
  for (simdjson::dom::element item : items) {
    simdjson::dom::object fields;
    std::string id;
    if (item.get_object().get(fields) == simdjson::SUCCESS &&
        GetString(fields, "execution_id", &id) == Field::kOk) {
      page.ids.push_back(id);
    }
  }
  GetString(obj, "next_cursor", &page.next_cursor);
  return page;
}

// One execution as `logs` prints it: a line of what happened, then its log lines indented.
std::string ExecutionLogText(std::string_view detail_json) {
  auto doc = ParseJson(detail_json);
  simdjson::dom::object obj;
  if (!doc.ok() || doc->root.get_object().get(obj) != simdjson::SUCCESS) {
    return std::string(detail_json) + "\n";
  }
  std::string created, id, version, logs;
  int64_t status = 0, runtime_ms = 0;
  GetString(obj, "created_at", &created);
  GetString(obj, "execution_id", &id);
  GetString(obj, "version", &version);
  GetString(obj, "logs", &logs);
  GetInt(obj, "status_code", &status);
  GetInt(obj, "runtime_ms", &runtime_ms);
  std::string out = created + "  " + id + "  v" + version + "  " + std::to_string(status) + "  " +
                    std::to_string(runtime_ms) + " ms\n";
  size_t start = 0;
  while (start < logs.size()) {
    size_t end = std::min(logs.find('\n', start), logs.size());
    out += "  " + logs.substr(start, end - start) + "\n";
    start = end + 1;
  }
  return out;
}

// The integer value of option `name` (fallback when absent), when it lies in min..max.
std::optional<int64_t> IntOption(const Call& call, const std::string& name, int64_t fallback,
                                 int64_t min, int64_t max) {
  if (!call.args.Has(name)) return fallback;
  const std::string text = call.args.Get(name);
  int64_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || value < min || value > max) {
    return std::nullopt;
  }
  return value;
}

int Logs(const Call& call) {
  const std::string& function_id = call.args.positional[0];
  auto interval_ms = IntOption(call, "interval-ms", 1000, 100, 3'600'000);
  if (!interval_ms) return UsageError(call, "--interval-ms is 100 to 3600000 milliseconds");
  auto limit = IntOption(call, "limit", 10, 0, kExecutionPageSize);
  if (!limit) return UsageError(call, "--limit is 0 to " + std::to_string(kExecutionPageSize));
  const bool follow = call.args.Get("follow", "false") == "true";
  ApiClient client = Client(call);
  // The first poll is the backlog: the latest executions, like tail's last lines.
  ExecutionFeed feed(
      [&](const std::string& cursor) { return ReadExecutionPage(client, function_id, cursor); },
      static_cast<size_t>(*limit));
  auto print = [&](const std::string& id) {
    auto r = client.Get(Api("/executions/") + http::UrlEncode(id));
    if (!Succeeded(r)) return ReportFailure(call, r);
    if (call.json) {
      std::fprintf(stdout, "%s\n", r->body.c_str());  // one object a line
    } else {
      std::fputs(ExecutionLogText(r->body).c_str(), stdout);
    }
    std::fflush(stdout);
    return kOk;
  };
  if (follow) {
    std::signal(SIGINT, StopFollowing);
    std::signal(SIGTERM, StopFollowing);
  }
  auto backlog = feed.Poll();
  if (!backlog.ok()) {
    PrintError(backlog.status().message());
    return kFailed;
  }
  for (const auto& id : *backlog) {
    if (int rc = print(id); rc != kOk) return rc;
  }
  if (!follow) return kOk;
  std::fprintf(stderr, "following the executions of %s (Ctrl-C to stop)\n", function_id.c_str());
  while (g_stop_following == 0) {
    // A signal cuts the wait short: nanosleep returns early with EINTR.
    struct timespec pause = {static_cast<time_t>(*interval_ms / 1000),
                             static_cast<long>(*interval_ms % 1000) * 1'000'000L};
    nanosleep(&pause, nullptr);
    if (g_stop_following != 0) break;
    auto fresh = feed.Poll();
    if (!fresh.ok()) {
      // A restarting server or a dropped connection: say so, keep following.
      PrintError(fresh.status().message());
      continue;
    }
    for (const auto& id : *fresh) print(id);
  }
  return kOk;
}

// `executions wait`'s exit code when --timeout-s passed before the execution finished.
constexpr int kStillRunning = 3;
// The longest --timeout-s: a finished execution stays readable for 7 days.
constexpr int64_t kMaxWaitS = 7 * 24 * 3600;

std::string ExecutionPath(const std::string& id) {
  return Api("/executions/") + http::UrlEncode(id);
}

// Reads the execution every --interval-ms until its status is final, then prints it as
// `executions show` does. Exit 0 when it succeeded, 1 when it ended otherwise (failed,
// timed_out, cancelled) or a request failed, 3 when --timeout-s passed first.
int ExecutionsWait(const Call& call) {
  const std::string& id = call.args.positional[0];
  auto interval_ms = IntOption(call, "interval-ms", 1000, 100, 3'600'000);
  if (!interval_ms) return UsageError(call, "--interval-ms is 100 to 3600000 milliseconds");
  auto timeout_s = IntOption(call, "timeout-s", 0, 1, kMaxWaitS);
  if (!timeout_s) {
    return UsageError(call, "--timeout-s is 1 to " + std::to_string(kMaxWaitS) + " seconds");
  }
  ExecutionWaitOptions options;
  options.interval = std::chrono::milliseconds(*interval_ms);
  if (call.args.Has("timeout-s")) options.timeout = std::chrono::seconds(*timeout_s);

  ApiClient client = Client(call);
  std::optional<Result<http::HttpResponse>> last;  // the latest answer, for ReportFailure
  ExecutionWaitIo io;
  io.fetch = [&]() -> Result<std::string> {
    last = client.Get(ExecutionPath(id));
    const auto& r = *last;
    if (!r.ok()) return Status::Unavailable(r.status().message());
    if (r->status < 400) return r->body;
    std::string text = DescribeHttpError(r->status, r->body);
    if (text.starts_with("error: ")) text.erase(0, 7);
    text = std::string(TrimAsciiWhitespace(text));
    // A server that is restarting or overloaded answers again later; a refusal does not change.
    if (r->status >= 500 || r->status == 429) return Status::Unavailable(text);
    return Status::InvalidArgument(text);
  };
  io.pause = [](std::chrono::milliseconds pause) {
    struct timespec wait = {static_cast<time_t>(pause.count() / 1000),
                            static_cast<long>(pause.count() % 1000) * 1'000'000L};
    nanosleep(&wait, nullptr);
  };
  io.now = [] { return std::chrono::steady_clock::now(); };
  io.on_status = [&](const std::string& status) {
    if (!IsFinalExecutionStatus(status)) {
      std::fprintf(stderr, "execution %s is %s\n", id.c_str(), status.c_str());
    }
  };
  io.on_retry = [](const Status& failure) { PrintError(failure.message() + " (still waiting)"); };
  auto waited = WaitForExecution(io, options);
  if (!waited.ok()) {
    if (last && !Succeeded(*last)) return ReportFailure(call, *last);
    PrintError(waited.status().message());
    return kFailed;
  }
  if (!waited->finished) {
    PrintError("execution " + id + " is still " + waited->status + " after " +
               std::to_string(*timeout_s) + " s; wait again with `toolgate executions wait " + id +
               "`, or stop it with `toolgate executions cancel " + id + "`");
    return kStillRunning;
  }
  PrintAnswer(call, waited->document);
  std::fprintf(stderr, "execution %s %s\n", id.c_str(), waited->status.c_str());
  return waited->status == "succeeded" ? kOk : kFailed;
}

int ExecutionsCancel(const Call& call) {
  const std::string& id = call.args.positional[0];
  auto r = Client(call).Post(ExecutionPath(id) + "/cancel", "");
  if (r.ok() && r->status == 409) {
    ReportFailure(call, r);
    std::fprintf(stderr, "hint: `toolgate executions show %s` shows how it ended\n", id.c_str());
    return kFailed;
  }
  if (Report(call, r) != kOk) return kFailed;
  if (ExecutionStatusOf(r->body) == "cancelled") {
    std::fprintf(stderr, "cancelled execution %s: it never ran and nothing is charged\n",
                 id.c_str());
  } else {
    std::fprintf(stderr,
                 "execution %s is being stopped: it ends cancelled, charged for the time it ran "
                 "(`toolgate executions wait %s`)\n",
                 id.c_str(), id.c_str());
  }
  return kOk;
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
int Completion(const Call& call);

int PrintVersion(const std::vector<std::string>&) {
  std::printf("toolgate %s\n", TOOLGATE_VERSION);
  return kOk;
}

// The columns of the list answers, read without --json.
const TableView kKeysView = {"items",
                             {{"ID", "id"},
                              {"NAME", "name"},
                              {"PREFIX", "prefix"},
                              {"SCOPES", "scopes"},
                              {"EXPIRES", "expires_at"},
                              {"CREATED", "created_at"}}};
const TableView kSecretsView = {
    "items",
    {{"ID", "id"}, {"NAME", "name"}, {"CREATED", "created_at"}, {"UPDATED", "updated_at"}}};
const TableView kFunctionsView = {"owned",
                                  {{"FUNCTION", "function_id"},
                                   {"NAME", "name"},
                                   {"LATEST", "latest_version"},
                                   {"RUNTIME", "runtime"},
                                   {"VISIBILITY", "visibility"},
                                   {"PRICE_MICRO_USD", "price_micro_usd"}}};
const TableView kVersionsView = {"items",
                                 {{"VERSION", "version"},
                                  {"DEPRECATED", "deprecated"},
                                  {"RUNTIME", "runtime"},
                                  {"COMPUTE", "compute_type"},
                                  {"PRICE_MICRO_USD", "price_micro_usd"},
                                  {"PUBLISHED", "published_at"}}};
const TableView kExecutionsView = {"items",
                                   {{"EXECUTION", "execution_id"},
                                    {"FUNCTION", "function_id"},
                                    {"VERSION", "version"},
                                    {"STATUS", "status_code"},
                                    {"MS", "runtime_ms"},
                                    {"COST_MICRO_USD", "cost.total_micro_usd"},
                                    {"CREATED", "created_at"}}};
const TableView kEarningsView = {"items",
                                 {{"DATE", "date"},
                                  {"FUNCTION", "function_id"},
                                  {"NAME", "function_name"},
                                  {"CALLS", "calls"},
                                  {"GROSS_MICRO_USD", "gross_micro_usd"},
                                  {"COMMISSION_MICRO_USD", "commission_micro_usd"},
                                  {"NET_MICRO_USD", "net_micro_usd"}}};
const TableView kPayoutsView = {"items",
                                {{"PAYOUT", "payout_id"},
                                 {"AMOUNT_MICRO_USD", "amount_micro_usd"},
                                 {"REFERENCE", "reference"},
                                 {"CREATED", "created_at"}}};
const TableView kLedgerView = {"items",
                               {{"ENTRY", "id"},
                                {"TYPE", "type"},
                                {"AMOUNT_MICRO_USD", "amount_micro_usd"},
                                {"EXECUTION", "execution_id"},
                                {"CREATED", "created_at"}}};

const std::vector<Command>& Commands() {
  static const std::vector<Command> kCommands = {
      {.name = "up",
       .usage = "up [--demo] [--detach] [--data-dir DIR] [--http-port P] [--no-egress] "
                "[--egress-allow-cidr CIDR] [--egress-deny-cidr CIDR] [--otlp-endpoint URL]",
       .summary = "Start NATS, Redis, PostgreSQL and every service here (toolgate up --help); "
                  "--detach runs it in the background.",
       .options = {"data-dir", "http-port", "host", "egress-allow-cidr", "egress-deny-cidr",
                   "otlp-endpoint"},
       .switches = {"demo", "detach", "no-egress"},
       .words_run = RunUp},
      {.name = "status",
       .usage = "status [--data-dir DIR] [--json]",
       .summary = "Show what `toolgate up` runs: each child, its pid, the URL.",
       .options = {"data-dir"},
       .switches = {"json"},
       .words_run = RunStatus},
      {.name = "down",
       .usage = "down [--data-dir DIR]",
       .summary = "Stop the system started with `toolgate up --detach`.",
       .options = {"data-dir"},
       .words_run = RunDown},
      {.name = "trace",
       .usage = "trace TRACE_ID [--data-dir DIR]",
       .summary = "One call's path through the services, from their span logs.",
       .options = {"data-dir"},
       .words_run = RunTrace},
      {.name = "version",
       .usage = "version",
       .summary = "Print the version.",
       .words_run = PrintVersion},
      {.name = "signup",
       .usage = "signup --email E --password P --organization O [--url URL] [--profile NAME]",
       .summary = "Create a user and an organization, and sign in (the profile remembers the "
                  "server and the session).",
       .options = {"email", "password", "organization"},
       .required = {"email", "organization"},
       .run = Signup},
      {.name = "login",
       .usage = "login --email E --password P [--url URL] [--profile NAME]",
       .summary = "Sign in; the profile remembers the server and the session for later "
                  "commands.",
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
       .run = KeysList,
       .view = kKeysView},
      {.name = "keys revoke",
       .usage = "keys revoke ID",
       .summary = "Revoke an API key.",
       .positional = 1,
       .run = KeysRevoke},
      {.name = "keys init",
       .usage = "keys init [--dir DIR]",
       .summary = "Create a cluster's keys and credentials (compose, Kubernetes); existing files "
                  "are kept.",
       .options = {"dir"},
       .words_run = RunKeysInit},
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
       .run = SecretsList,
       .view = kSecretsView},
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
      {.name = "dev",
       .usage = "dev DIR [--event FILE] [--env NAME=VALUE]... [--env-file FILE]",
       .summary = "Run DIR's tool here, in the executor's sandbox and runtime, with the event "
                  "of FILE or each of the manifest's examples; nothing is published or billed. "
                  "Its declared keys get the values of DIR/.dev.vars (or --env-file) and --env.",
       .options = {"event", "env", "env-file"},
       .switches = {"json"},
       .positional = 1,
       .words_run = RunDev},
      {.name = "publish",
       .usage = "publish DIR [--bump patch|minor|major]",
       .summary = "Publish DIR/toolgate.json and its handler as a new version (creating the "
                  "function on first use); the manifest's price_micro_usd is that version's. "
                  "With \"bundle\": true, DIR is packed as the version's bundle (minus .git and "
                  ".toolgateignore's patterns; npm ci --omit=dev first for JavaScript with a "
                  "package.json and no node_modules). --bump publishes the version after the "
                  "highest published one and writes it into the manifest.",
       .options = {"bump"},
       .positional = 1,
       .run = Publish},
      {.name = "functions list",
       .usage = "functions list",
       .summary = "List your organization's functions.",
       .run = FunctionsList,
       .view = kFunctionsView},
      {.name = "functions show",
       .usage = "functions show FUNCTION_ID",
       .summary = "Show a function: its listing, versions, and last 7 days.",
       .positional = 1,
       .run = FunctionsShow},
      {.name = "functions delete",
       .usage = "functions delete FUNCTION_ID",
       .summary = "Delete a function for good (its past executions and ledger rows stay).",
       .positional = 1,
       .run = FunctionsDelete},
      {.name = "workspace list",
       .usage = "workspace list",
       .summary = "List the workspace: the functions your organization owns and the public "
                  "ones it added (the tools of the MCP endpoint /mcp).",
       .run = WorkspaceList},
      {.name = "workspace add",
       .usage = "workspace add FUNCTION_ID",
       .summary = "Add another organization's public function to the workspace.",
       .positional = 1,
       .run = WorkspaceAdd},
      {.name = "workspace remove",
       .usage = "workspace remove FUNCTION_ID",
       .summary = "Remove an added function from the workspace.",
       .positional = 1,
       .run = WorkspaceRemove},
      {.name = "workspace env-keys set",
       .usage = "workspace env-keys set FUNCTION_ID KEY=SECRET...",
       .summary = "Give a workspace function's declared keys your secrets (SECRET: a secret's "
                  "name or id) on calls through /mcp without X-Env-Keys; replaces the "
                  "stored mapping.",
       .positional = 2,
       .run = EnvKeysSet,
       .max_positional = 65},
      {.name = "workspace env-keys show",
       .usage = "workspace env-keys show FUNCTION_ID",
       .summary = "Show which secret each declared key gets on /mcp (ids, never values).",
       .positional = 1,
       .run = EnvKeysShow},
      {.name = "workspace env-keys clear",
       .usage = "workspace env-keys clear FUNCTION_ID",
       .summary = "Forget the stored mapping; /mcp calls then need X-Env-Keys.",
       .positional = 1,
       .run = EnvKeysClear},
      {.name = "versions list",
       .usage = "versions list FUNCTION_ID",
       .summary = "List a function's published versions.",
       .positional = 1,
       .run = VersionsList,
       .view = kVersionsView},
      {.name = "versions deprecate",
       .usage = "versions deprecate FUNCTION_ID VERSION [--undo]",
       .summary = "Mark a version deprecated (it still runs; the detail shows it); --undo "
                  "clears the mark.",
       .switches = {"undo"},
       .positional = 2,
       .run = VersionsDeprecate},
      {.name = "versions unpublish",
       .usage = "versions unpublish FUNCTION_ID VERSION",
       .summary = "Unpublish a version for good: calls pinned to it fail, the latest is the "
                  "next highest, and its number is never published again.",
       .positional = 2,
       .run = VersionsUnpublish},
      {.name = "topup",
       .usage = "topup --amount MICRO_USD [--idempotency-key K]",
       .summary = "Add credit: buy it on a checkout page where the system's funding is "
                  "checkout (prints the page to open), or add play money where it is demo.",
       .options = {"amount", "idempotency-key"},
       .required = {"amount"},
       .run = Topup},
      {.name = "admin create",
       .usage = "admin create --email E [--password-file F] [--data-dir DIR]",
       .summary = "Create a platform operator on the system `toolgate up` runs on DIR (its "
                  "database, directly); prints a generated password once unless F has one.",
       .options = {"email", "password-file", "data-dir"},
       .words_run = RunAdminCreate},
      {.name = "admin grant",
       .usage = "admin grant --organization ID --amount-usd N --reason TEXT "
                "[--idempotency-key K]",
       .summary = "As an operator, grant credit to an organization; the ledger shows who and "
                  "why.",
       .options = {"organization", "amount-usd", "reason", "idempotency-key"},
       .required = {"organization", "amount-usd", "reason"},
       .run = AdminGrant},
      {.name = "admin payout",
       .usage = "admin payout --organization ID --amount-usd N --reference TEXT "
                "[--idempotency-key K]",
       .summary = "As an operator, record money sent to an organization for its earnings (at "
                  "most what it may be paid out); the ledger shows who and the reference.",
       .options = {"organization", "amount-usd", "reference", "idempotency-key"},
       .required = {"organization", "amount-usd", "reference"},
       .run = AdminPayout},
      {.name = "admin payouts",
       .usage = "admin payouts --organization ID [--limit N] [--cursor C]",
       .summary = "As an operator, list an organization's payouts, newest first.",
       .options = {"organization", "limit", "cursor"},
       .required = {"organization"},
       .run = AdminPayouts,
       .view = kPayoutsView},
      {.name = "earnings",
       .usage = "earnings [--from RFC3339] [--to RFC3339] [--csv]",
       .summary = "The organization's earnings from other organizations' calls of its functions, "
                  "per UTC day and function, less the commission (default: the last 30 days); "
                  "--csv prints the CSV statement.",
       .options = {"from", "to", "csv"},
       .switches = {"csv"},
       .run = Earnings,
       .view = kEarningsView},
      {.name = "balance", .usage = "balance", .summary = "Show the balance.", .run = Balance},
      {.name = "budget show",
       .usage = "budget show [--key KEY_ID]",
       .summary = "Show the organization's daily and monthly spending limits (or an API key's) "
                  "and what was spent against them this UTC day and month.",
       .options = {"key"},
       .run = BudgetShow},
      {.name = "budget set",
       .usage = "budget set [--key KEY_ID] [--daily-usd N|none] [--monthly-usd N|none]",
       .summary = "Set or clear (none) the organization's spending limits, or an API key's; a "
                  "limit not named keeps its value.",
       .options = {"key", "daily-usd", "monthly-usd"},
       .run = BudgetSet},
      {.name = "usage",
       .usage = "usage [--group-by key|function|day] [--from RFC3339] [--to RFC3339]",
       .summary = "What the organization's calls cost, per API key, function or UTC day (default: "
                  "this month).",
       .options = {"group-by", "from", "to"},
       .run = Usage},
      {.name = "notifications set",
       .usage = "notifications set URL [--events TYPE,...]",
       .summary = "Send the organization's notifications (budget.threshold_reached: a spending "
                  "limit at 80 % and 100 %) as signed webhooks to URL (https); prints the signing "
                  "secret once, when the endpoint is new.",
       .options = {"events"},
       .positional = 1,
       .run = NotificationsSet},
      {.name = "notifications show",
       .usage = "notifications show",
       .summary = "Show the notification endpoint (never its secret).",
       .run = NotificationsShow},
      {.name = "notifications delete",
       .usage = "notifications delete",
       .summary = "Stop sending notifications: delete the endpoint.",
       .run = NotificationsDelete},
      {.name = "notifications rotate-secret",
       .usage = "notifications rotate-secret",
       .summary = "Replace the endpoint's signing secret and print the new one.",
       .run = NotificationsRotateSecret},
      {.name = "notifications test",
       .usage = "notifications test",
       .summary = "Send a signed notification.test to the endpoint now; exit 0 when it answered "
                  "2xx.",
       .run = NotificationsTest},
      {.name = "webhooks rotate-secret",
       .usage = "webhooks rotate-secret",
       .summary = "Make the organization's webhook secret, which signs the callbacks of "
                  "asynchronous calls, or replace it (the previous one signs too for 24 hours); "
                  "prints it once.",
       .run = WebhooksRotateSecret},
      {.name = "webhooks show",
       .usage = "webhooks show",
       .summary = "Show when the webhook secret was made and until when the previous one signs "
                  "(never the secret).",
       .run = WebhooksShow},
      {.name = "ledger",
       .usage = "ledger [--limit N] [--cursor C]",
       .summary = "List ledger entries.",
       .options = {"limit", "cursor"},
       .run = Ledger,
       .view = kLedgerView},
      {.name = "invoke",
       .usage = "invoke FUNCTION_ID [--version V] [--event JSON | --event-file F] "
                "[--env-keys 'NAME=secret_id,...'] [--async [--callback-url URL]] "
                "[--idempotency-key K]",
       .summary = "Run a function with the API key, else the session; exit 0 when its status "
                  "is below 400. --async queues it (Prefer: respond-async) and prints the "
                  "execution id at once (exit 0 on 202), its outcome later POSTed to "
                  "--callback-url if given; --idempotency-key K makes a repeat with K return "
                  "the first call's answer instead of running again.",
       .options = {"version", "event", "event-file", "env-keys", "callback-url", "idempotency-key"},
       .switches = {"async"},
       .positional = 1,
       .run = Invoke},
      {.name = "executions list",
       .usage = "executions list [--function-id ID] [--limit N] [--cursor C]",
       .summary = "List the organization's executions, newest first.",
       .options = {"function-id", "limit", "cursor"},
       .run = ExecutionsList,
       .view = kExecutionsView},
      {.name = "executions show",
       .usage = "executions show EXECUTION_ID",
       .summary = "Show one execution, with its logs when your organization owns the function.",
       .positional = 1,
       .run = ExecutionsShow},
      {.name = "executions wait",
       .usage = "executions wait EXECUTION_ID [--timeout-s N] [--interval-ms MS]",
       .summary = "Poll an execution (every --interval-ms, 1000) until it is succeeded, failed, "
                  "timed_out or cancelled, then show it; exit 0 when it succeeded, 1 when it "
                  "ended otherwise, 3 when --timeout-s passed first.",
       .options = {"timeout-s", "interval-ms"},
       .positional = 1,
       .run = ExecutionsWait},
      {.name = "executions cancel",
       .usage = "executions cancel EXECUTION_ID",
       .summary = "Stop an asynchronous execution: a queued one never runs and is not charged, "
                  "a running one is stopped and charged for the time it ran; exit 1 once it "
                  "has finished.",
       .positional = 1,
       .run = ExecutionsCancel},
      {.name = "logs",
       .usage = "logs FUNCTION_ID [--limit N] [--follow] [--interval-ms MS]",
       .summary = "Print the logs of the function's latest N executions (10); --follow then "
                  "prints each new one as it comes, until Ctrl-C.",
       .options = {"limit", "interval-ms"},
       .switches = {"follow"},
       .positional = 1,
       .run = Logs},
      {.name = "completion",
       .usage = "completion bash|zsh",
       .summary = "Print the shell completion script (bash: source <(toolgate completion "
                  "bash); zsh: source <(toolgate completion zsh)).",
       .positional = 1,
       .run = Completion},
      {.name = "help", .usage = "help", .summary = "Show this list.", .run = Help},
  };
  return kCommands;
}

int Help(const Call&) {
  std::string text = "usage: toolgate <command> [options]\n\n";
  for (const Command& c : Commands()) {
    text += "  " + std::string(c.usage) + "\n      " + std::string(c.summary) + "\n";
  }
  text +=
      "\nThe commands that talk to a server take --url URL (TOOLGATE_URL; else the "
      "profile's, saved by `toolgate login`; else " +
      std::string(kDefaultUrl) +
      "), --profile NAME (TOOLGATE_PROFILE, default \"default\"), --api-key KEY "
      "(TOOLGATE_API_KEY; else the profile's session) and --json (the server's JSON "
      "instead of tables).\n"
      "The password may come from TOOLGATE_PASSWORD instead of --password.\n";
  std::fputs(text.c_str(), stdout);
  return kOk;
}

int Completion(const Call& call) {
  auto script = CompletionScript(call.args.positional[0], CompletionCommands());
  if (!script.ok()) return UsageError(call, script.status().message());
  std::fputs(script->c_str(), stdout);
  return kOk;
}

const Command* FindCommand(std::string_view name) {
  for (const Command& c : Commands()) {
    if (c.name == name) return &c;
  }
  return nullptr;
}

}  // namespace

Result<std::optional<int64_t>> ParseLimitUsd(std::string_view text) {
  if (text == "none") return std::optional<int64_t>();
  const size_t point = text.find('.');
  const std::string_view whole = text.substr(0, point);
  const std::string_view fraction =
      point == std::string_view::npos ? std::string_view() : text.substr(point + 1);
  const auto digits = [](std::string_view d) {
    return std::all_of(d.begin(), d.end(), [](char c) { return c >= '0' && c <= '9'; });
  };
  if (whole.empty() || !digits(whole) || !digits(fraction) ||
      (point != std::string_view::npos && fraction.empty())) {
    return Status::InvalidArgument("is a number of USD such as 5 or 2.50, or none");
  }
  if (fraction.size() > 6) {
    return Status::InvalidArgument("has more than 6 decimals (a micro-USD is the smallest amount)");
  }
  // 10^18 micro-USD, the API's largest limit, is 10^12 USD: 13 digits before the point.
  constexpr int64_t kMaxMicroUsd = 1'000'000'000'000'000'000;
  std::string_view significant = whole.substr(std::min(whole.find_first_not_of('0'), whole.size()));
  if (significant.size() > 13) return Status::InvalidArgument("is above 1000000000000 USD");
  int64_t micro = 0;
  for (char c : significant) micro = micro * 10 + (c - '0');
  micro *= 1'000'000;
  int64_t scale = 100'000;
  for (char c : fraction) {
    micro += (c - '0') * scale;
    scale /= 10;
  }
  if (micro > kMaxMicroUsd) return Status::InvalidArgument("is above 1000000000000 USD");
  if (micro == 0) {
    return Status::InvalidArgument("must be more than 0 USD (none removes the limit)");
  }
  return std::optional<int64_t>(micro);
}

Result<std::string> BudgetRequestBody(std::string_view current_budget_json,
                                      const LimitChanges& changes) {
  auto doc = ParseJson(current_budget_json);
  simdjson::dom::object obj;
  if (!doc.ok() || doc->root.get_object().get(obj) != simdjson::SUCCESS) {
    return Status::InvalidArgument("the server's budget is not a JSON object");
  }
  JsonWriter w;
  w.BeginObject();
  for (auto [member, change] : {std::pair{"daily_micro_usd", &changes.daily},
                                std::pair{"monthly_micro_usd", &changes.monthly}}) {
    std::optional<int64_t> limit;
    if (change->has_value()) {
      limit = **change;
    } else {
      int64_t held = 0;
      Field found = GetInt(obj, member, &held);
      if (found == Field::kWrongType) {
        return Status::InvalidArgument("the server's budget has a " + std::string(member) +
                                       " that is not an integer");
      }
      if (found == Field::kOk) limit = held;
    }
    w.Key(member);
    if (limit) {
      w.Int(*limit);
    } else {
      w.Null();
    }
  }
  w.EndObject();
  return w.str();
}

std::string ParsedArgs::Get(const std::string& name, const std::string& fallback) const {
  auto it = options.find(name);
  return it == options.end() ? fallback : it->second;
}

std::vector<std::string> ParsedArgs::GetAll(const std::string& name) const {
  auto it = repeated.find(name);
  return it == repeated.end() ? std::vector<std::string>{} : it->second;
}

Result<ParsedArgs> ParseArgs(const std::vector<std::string>& words,
                             const std::set<std::string>& allowed,
                             const std::set<std::string>& repeatable) {
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
    const size_t eq = name.find('=');
    if (eq != std::string::npos) name.resize(eq);
    // The name is judged before its value: a misspelt flag said it "needs a value" when last.
    const bool is_repeatable = repeatable.count(name) > 0;
    if (allowed.count(name) == 0 && !is_repeatable) {
      return Status::InvalidArgument("unknown flag --" + name);
    }
    std::string value;
    if (eq != std::string::npos) {
      value = word.substr(eq + 3);
    } else if (i + 1 < words.size()) {
      value = words[++i];
    } else {
      return Status::InvalidArgument("--" + name + " needs a value");
    }
    if (is_repeatable) {
      out.repeated[name].push_back(std::move(value));
    } else if (!out.options.emplace(name, value).second) {
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
  m.output_schema = r.Raw("output_schema", simdjson::dom::element_type::OBJECT, "an object");
  m.declared_keys = r.Strings("declared_keys");
  for (const auto& key : m.declared_keys.value_or(std::vector<std::string>{})) {
    if (!core::IsValidEnvKeyName(key)) {
      r.Fail("declared_keys", "\"" + key + "\" must match [A-Za-z_][A-Za-z0-9_]*");
    }
  }
  // Each entry is the server's to judge (core::EgressList): the manifest only carries them.
  m.egress = r.Strings("egress");
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
  if (m.output_schema) w.Key("output_schema").Raw(*m.output_schema);
  if (m.declared_keys) {
    w.Key("declared_keys").BeginArray();
    for (const auto& k : *m.declared_keys) w.String(k);
    w.EndArray();
  }
  if (m.egress) {
    w.Key("egress").BeginArray();
    for (const auto& host : *m.egress) w.String(host);
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

namespace {

// The index just past the string literal that opens at text[open] (a '"'); text.size() when it
// never closes.
size_t StringLiteralEnd(std::string_view text, size_t open) {
  for (size_t i = open + 1; i < text.size(); ++i) {
    if (text[i] == '\\') {
      ++i;
    } else if (text[i] == '"') {
      return i + 1;
    }
  }
  return text.size();
}

size_t SkipBlanks(std::string_view text, size_t i) {
  while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
  return i;
}

}  // namespace

Result<std::string> WithVersion(std::string_view text, std::string_view version) {
  int depth = 0;
  bool key_next = false;  // in the top-level object, where a member's name comes next
  for (size_t i = 0; i < text.size();) {
    const char c = text[i];
    if (c == '"') {
      const size_t end = StringLiteralEnd(text, i);
      if (depth == 1 && key_next) {
        key_next = false;
        if (text.substr(i, end - i) == "\"version\"") {
          size_t value = SkipBlanks(text, end);
          if (value < text.size() && text[value] == ':') value = SkipBlanks(text, value + 1);
          if (value >= text.size() || text[value] != '"') break;
          return std::string(text.substr(0, value)) + JsonWriter::Quote(version) +
                 std::string(text.substr(StringLiteralEnd(text, value)));
        }
      }
      i = end;
      continue;
    }
    if (c == '{' || c == '[') {
      ++depth;
      key_next = depth == 1 && c == '{';
    } else if (c == '}' || c == ']') {
      --depth;
    } else if (c == ',' && depth == 1) {
      key_next = true;
    }
    ++i;
  }
  return Status::InvalidArgument("the manifest has no \"version\" string to update");
}

std::string CurlLine(std::string_view invoke_url, std::string_view event_json) {
  return "curl -X POST " + ShellQuote(invoke_url) +
         " -H \"Authorization: $TOOLGATE_API_KEY\" -H 'Content-Type: application/json' -d " +
         ShellQuote("{\"event\":" + std::string(event_json) + "}");
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
  std::string_view shown = TrimAsciiWhitespace(body.substr(0, kMaxBody));
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

std::vector<CompletionCommand> CompletionCommands() {
  std::vector<CompletionCommand> out;
  for (const Command& c : Commands()) {
    CompletionCommand entry{std::string(c.name), std::string(c.summary), {}};
    std::set<std::string> flags = c.options;
    flags.insert(c.switches.begin(), c.switches.end());
    if (c.run != nullptr) {  // the commands that talk to a server
      flags.insert(GlobalOptions().begin(), GlobalOptions().end());
      flags.insert("json");
    }
    for (const auto& f : flags) entry.flags.push_back("--" + f);
    out.push_back(std::move(entry));
  }
  return out;
}

int RunClientCommand(const std::vector<std::string>& args) {
  if (args.empty() || args[0] == "--help" || args[0] == "-h") {
    return RunClientCommand({"help"});
  }
  if (args[0] == "--version") return RunClientCommand({"version"});
  if (args[0].starts_with("--")) {
    const std::string name = args[0].substr(2, args[0].find('=') - 2);
    std::fprintf(stderr, "error: unknown flag --%s; a command comes first (run `toolgate help`)\n",
                 name.c_str());
    return kUsage;
  }
  // The longest command name first: three words ("workspace env-keys set"), two ("keys
  // create"), then one.
  size_t words = std::min<size_t>(3, args.size());
  const Command* command = nullptr;
  std::string prefix;  // the longest run of words some command starts with
  for (; words > 0 && command == nullptr; --words) {
    std::string name = args[0];
    for (size_t i = 1; i < words; ++i) name += " " + args[i];
    command = FindCommand(name);
    if (command != nullptr) break;
    if (prefix.empty()) {
      for (const Command& c : Commands()) {
        if (c.name.starts_with(name + " ")) prefix = name;
      }
    }
  }
  if (command == nullptr) {
    std::string usages;
    for (const Command& c : Commands()) {
      if (!prefix.empty() && c.name.starts_with(prefix + " "))
        usages += "usage: toolgate " + std::string(c.usage) + "\n";
    }
    if (usages.empty()) {
      std::fprintf(stderr, "error: unknown command '%s'; run `toolgate help`\n", args[0].c_str());
    } else {
      std::fprintf(stderr, "error: `toolgate %s` needs a subcommand\n%s", prefix.c_str(),
                   usages.c_str());
    }
    return kUsage;
  }
  std::vector<std::string> rest(args.begin() + static_cast<ptrdiff_t>(words), args.end());
  std::set<std::string> switches = command->switches;
  if (command->run != nullptr) switches.insert("json");
  for (auto& word : rest) {
    if (word == "--") break;
    if (word.starts_with("--") && switches.count(word.substr(2)) > 0) word += "=true";
  }
  // These read their own words (their --help included).
  if (command->words_run != nullptr) return command->words_run(rest);
  for (const auto& word : rest) {
    if (word == "--help" || word == "-h") {
      std::printf("usage: toolgate %.*s\n  %.*s\n", static_cast<int>(command->usage.size()),
                  command->usage.data(), static_cast<int>(command->summary.size()),
                  command->summary.data());
      return kOk;
    }
  }
  std::set<std::string> allowed = command->options;
  allowed.insert(switches.begin(), switches.end());
  allowed.insert(GlobalOptions().begin(), GlobalOptions().end());
  auto parsed = ParseArgs(rest, allowed);
  Call call{*command, parsed.ok() ? *parsed : ParsedArgs{}, "", "", "", {}, false};
  if (!parsed.ok()) return UsageError(call, parsed.status().message());
  const size_t most = std::max(command->positional, command->max_positional);
  if (call.args.positional.size() < command->positional || call.args.positional.size() > most) {
    return UsageError(call, command->positional == 0
                                ? "unexpected argument '" + call.args.positional[0] + "'"
                                : "wrong number of arguments");
  }
  for (const auto& name : command->required) {
    if (!call.args.Has(name)) return UsageError(call, "--" + name + " is required");
  }
  for (const auto& name : switches) {
    if (call.args.Has(name) && call.args.Get(name) != "true") {
      return UsageError(call, "--" + name + " takes no value");
    }
  }
  call.json = call.args.Has("json");
  call.profile_name = call.args.Get("profile", Env("TOOLGATE_PROFILE"));
  if (call.profile_name.empty()) call.profile_name = kDefaultProfile;
  if (!IsValidProfileName(call.profile_name)) {
    return UsageError(call, "a profile name is 1 to 64 of A-Z a-z 0-9 _ . -");
  }
  auto config = LoadCliConfig(CliConfigPath());
  if (!config.ok()) {
    PrintError(config.status().message());
    return kFailed;
  }
  if (auto it = config->profiles.find(call.profile_name); it != config->profiles.end()) {
    call.profile = it->second;
  } else if (call.profile_name != kDefaultProfile && call.command.name != "login" &&
             call.command.name != "signup") {
    // A misspelt profile would otherwise quietly talk to the default server, signed out.
    PrintError("no profile \"" + call.profile_name + "\" in " + CliConfigPath().string() +
               "; create it with `toolgate login --profile " + call.profile_name + " --url URL`");
    return kUsage;
  }
  call.url = call.args.Get("url", Env("TOOLGATE_URL"));
  if (call.url.empty()) call.url = call.profile.url;
  if (call.url.empty()) call.url = kDefaultUrl;
  call.api_key = call.args.Get("api-key", Env("TOOLGATE_API_KEY"));
  return command->run(call);
}

}  // namespace toolgate::cli
