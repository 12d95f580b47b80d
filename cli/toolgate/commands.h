// The management CLI: every `toolgate` command except `up` talks to the management API over
// HTTP (base URL from --url, TOOLGATE_URL, default http://127.0.0.1:8080).
//
// Profiles (cli_config.h): `toolgate login` and `signup` save the server's URL and the session
// in a profile (--profile, TOOLGATE_PROFILE, else "default"); the server is then --url, else
// TOOLGATE_URL, else the profile's URL, else http://127.0.0.1:8080.
//
// Credentials: --api-key or TOOLGATE_API_KEY (sent as Authorization), else the profile's
// session (the tg_session cookie). A request the key lacks the scope for goes again with the
// session, so a narrow key never hides a sign-in.
//
// Output: text for people on stdout (tables for lists); --json prints the server's JSON,
// indented. Errors on stderr as "error: <title>: <detail>", one more line per field error.
// Exit codes: 0 success, 1 a failed request (HTTP status >= 400, server unreachable, bad
// manifest), 2 a usage error.
//
// Below RunClientCommand are the pure pieces the commands are built from, exposed for tests.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "completion.h"
#include "toolgate/base/status.h"

namespace toolgate::cli {

// The command table as the shell completion scripts need it (completion.h): every command's
// words, summary and flags, global ones included.
std::vector<CompletionCommand> CompletionCommands();

// Runs one command; args[0] is the command ("login", "keys", "publish", "help", ...), the rest
// its words and options. Returns the process exit code. Not thread-safe (reads the environment
// and the session file, writes stdout and stderr).
int RunClientCommand(const std::vector<std::string>& args);

// A command's words after the command name: positional arguments and options.
struct ParsedArgs {
  std::vector<std::string> positional;
  std::map<std::string, std::string> options;  // name without the leading "--"
  // The values of a repeatable option, in the order given (see ParseArgs).
  std::map<std::string, std::vector<std::string>> repeated;

  bool Has(const std::string& name) const {
    return options.count(name) > 0 || repeated.count(name) > 0;
  }
  // The option's value, or fallback when it was not given.
  std::string Get(const std::string& name, const std::string& fallback = "") const;
  // Every value of a repeatable option; empty when it was not given.
  std::vector<std::string> GetAll(const std::string& name) const;
};

// Every option takes a value: "--name value" or "--name=value". "-" (stdin) and words not
// starting with "--" are positional; after "--" every word is. An option in `repeatable` may be
// given several times (ParsedArgs::repeated); any other, once. InvalidArgument, with a message
// for the user, for an option in neither set ("unknown flag --x", whether or not a value
// follows), an option without a value, or one given twice.
Result<ParsedArgs> ParseArgs(const std::vector<std::string>& words,
                             const std::set<std::string>& allowed,
                             const std::set<std::string>& repeatable = {});

struct FieldError {
  std::string field;
  std::string message;
};

// toolgate.json, the manifest of `toolgate publish DIR`. Optional members hold a value only when
// the manifest has them, so the requests carry exactly what the author wrote.
struct Manifest {
  std::string function_id;  // empty until the function has been created
  // The function (POST /functions).
  std::string name;
  std::string description;
  std::optional<std::string> overview;
  std::string category;
  std::optional<std::string> sector;
  std::optional<std::vector<std::string>> tags;
  std::string visibility;  // "public" | "private"
  int64_t price_micro_usd = 0;
  std::optional<bool> mcp;
  // The version (POST /functions/{id}/versions).
  std::string version;
  std::string runtime;       // "python" | "javascript" | "lua"
  std::string compute_type;  // "CPU" | "GPU"
  std::string input_schema;  // JSON text; {"type":"object"} when the manifest has none
  std::optional<std::string> output_schema;  // JSON text of an object schema; none by default
  std::optional<std::vector<std::string>> declared_keys;
  // Where the handler may connect ("api.example.com", "*.example.com:8443", "*"); absent: nowhere.
  std::optional<std::vector<std::string>> egress;
  std::optional<int64_t> timeout_ms;
  std::optional<int64_t> memory_mb;
  std::optional<std::string> examples;  // JSON array text
  std::string handler;                  // the code's file, relative to the manifest
  // The version is a bundle: the manifest's directory packed (bundle_pack.h), handler its entry.
  bool bundle = false;
};

// Parses and checks the manifest's shape: required members, types, enumerations, the version
// syntax, declared key names. Range rules (timeouts, memory, GPU runtimes) are the server's to
// judge. Returns every problem found; when it returns none, *out is filled.
std::vector<FieldError> ParseManifest(std::string_view text, Manifest* out);

// The JSON bodies of POST /functions and POST /functions/{id}/versions; both carry the
// manifest's price (the function's default, and the published version's own).
std::string FunctionRequestBody(const Manifest& manifest);
// A bundle version (manifest.bundle) sends bundle (the .tar.gz, in base64) and the handler
// instead of code.
std::string VersionRequestBody(const Manifest& manifest, std::string_view code,
                               std::string_view bundle = {});

// manifest_text with "function_id": id inserted as the object's first member, keeping the
// author's formatting of everything else.
std::string WithFunctionId(std::string_view manifest_text, std::string_view function_id);

// What to print on stderr for an HTTP error: "error: <title>: <detail>" and one indented
// "<field>: <message>" line per field error for a problem+json body; the status and the body
// for anything else. Ends with a newline.
std::string DescribeHttpError(int status, std::string_view body);

// manifest_text with the value of its top-level "version" member replaced by version, keeping
// everything else byte for byte. InvalidArgument when the manifest has no string "version".
Result<std::string> WithVersion(std::string_view manifest_text, std::string_view version);

// A shell line that invokes invoke_url with event_json and the key in $TOOLGATE_API_KEY, quoted
// for POSIX shells.
std::string CurlLine(std::string_view invoke_url, std::string_view event_json);

// A spending limit as `toolgate budget set` takes it: a decimal number of USD with at most 6
// decimals ("5", "2.50", "0.000001"), read exactly (integers, no floating point), as micro-USD
// from 1 to 10^18, the API's range; "none" is no limit (nullopt). InvalidArgument, with the
// end of a sentence naming the flag ("is a number of USD ..."), for anything else, 0 included.
Result<std::optional<int64_t>> ParseLimitUsd(std::string_view text);

// What `toolgate budget set` changes: for each limit, nothing (not given: the server's value
// stays), or its new value (an inner nullopt removes the limit).
struct LimitChanges {
  std::optional<std::optional<int64_t>> daily;
  std::optional<std::optional<int64_t>> monthly;
};

// The body of PUT /billing/budget (or /api-keys/{id}/budget): {"daily_micro_usd",
// "monthly_micro_usd"}, each the change's value, else the one in current_budget_json (the GET's
// answer; null there is no limit). InvalidArgument when current_budget_json is not a budget.
Result<std::string> BudgetRequestBody(std::string_view current_budget_json,
                                      const LimitChanges& changes);

// text indented two spaces per level when it is JSON; text unchanged otherwise.
std::string PrettyJson(std::string_view text);

}  // namespace toolgate::cli
