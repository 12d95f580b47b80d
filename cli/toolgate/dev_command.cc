#include "dev_command.h"

#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "bundle_pack.h"
#include "dev_vars.h"
#include "human_output.h"
#include "toolgate/base/json.h"

namespace toolgate::cli {
namespace fs = std::filesystem;
namespace {

constexpr int kOk = 0;
constexpr int kFailed = 1;
constexpr int kUsage = 2;
constexpr char kUsageLine[] =
    "usage: toolgate dev DIR [--event FILE] [--env NAME=VALUE]... [--env-file FILE] [--json]\n";

Result<std::string> ReadText(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::InvalidArgument("cannot read " + path.string());
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// A file under /tmp, removed when destroyed; empty path until written.
class TempFile {
 public:
  TempFile() = default;
  ~TempFile() {
    if (!path_.empty()) ::unlink(path_.c_str());
  }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  bool Write(const std::string& bytes) {
    char name[] = "/tmp/toolgate-dev-XXXXXX.tar.gz";
    int fd = ::mkstemps(name, 7);
    if (fd < 0) return false;
    path_ = name;
    bool ok = ::write(fd, bytes.data(), bytes.size()) == static_cast<ssize_t>(bytes.size());
    return ::close(fd) == 0 && ok;
  }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

// Runs argv with `input` on its stdin and stdout read into *out (stderr passes through: the
// executor's own messages). Returns the child's exit status, or -1 when it could not be run.
int RunCapturing(const std::vector<std::string>& argv, const std::string& input, std::string* out) {
  int fds[2];
  if (pipe(fds) != 0) return -1;
  // The input goes through a pipe, never a file or the command line: it holds the keys' values.
  int in_fds[2];
  if (pipe(in_fds) != 0) {
    close(fds[0]);
    close(fds[1]);
    return -1;
  }
  pid_t pid = fork();
  if (pid < 0) {
    for (int fd : {fds[0], fds[1], in_fds[0], in_fds[1]}) close(fd);
    return -1;
  }
  if (pid == 0) {
    dup2(fds[1], STDOUT_FILENO);
    dup2(in_fds[0], STDIN_FILENO);
    for (int fd : {fds[0], fds[1], in_fds[0], in_fds[1]}) close(fd);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execv(args[0], args.data());
    _exit(127);
  }
  close(fds[1]);
  close(in_fds[0]);
  // The executor reads its stdin whole before it runs anything, so writing all of it first
  // cannot wait on the output pipe. A broken pipe (an executor that died) shows in its status.
  std::signal(SIGPIPE, SIG_IGN);
  for (size_t written = 0; written < input.size();) {
    ssize_t n = write(in_fds[1], input.data() + written, input.size() - written);
    if (n <= 0) break;
    written += static_cast<size_t>(n);
  }
  close(in_fds[1]);
  char buf[4096];
  ssize_t n;
  while ((n = read(fds[0], buf, sizeof buf)) > 0) out->append(buf, static_cast<size_t>(n));
  close(fds[0]);
  int status = 0;
  if (waitpid(pid, &status, 0) < 0) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

}  // namespace

Result<std::vector<DevVar>> DevEnvOf(const fs::path& dir, const Manifest& manifest,
                                     const ParsedArgs& args) {
  // --env-file names the file and must exist; the directory's .dev.vars is read when present.
  const fs::path file = args.Has("env-file") ? fs::path(args.Get("env-file")) : dir / kDevVarsFile;
  std::vector<DevVar> from_file;
  if (args.Has("env-file") || fs::exists(file)) {
    auto text = ReadText(file);
    if (!text.ok()) return text.status();
    auto parsed = ParseDevVars(*text, file.string());
    if (!parsed.ok()) return parsed.status();
    from_file = std::move(*parsed);
  }
  std::vector<DevVar> from_words;
  for (const std::string& word : args.GetAll("env")) {
    auto var = ParseEnvWord(word);
    if (!var.ok()) return var.status();
    from_words.push_back(std::move(*var));
  }
  return DevEnv(manifest.declared_keys.value_or(std::vector<std::string>{}), from_file, from_words);
}

Result<std::vector<DevEvent>> DevEvents(const Manifest& manifest,
                                        const std::optional<std::string>& event_file_text) {
  if (event_file_text) {
    auto doc = ParseJson(*event_file_text);
    if (!doc.ok()) {
      return Status::InvalidArgument("the event file is not JSON: " + doc.status().message());
    }
    return std::vector<DevEvent>{{"event", ToJson(doc->root)}};
  }
  std::vector<DevEvent> events;
  if (manifest.examples) {
    auto doc = ParseJson(*manifest.examples);
    simdjson::dom::array examples;
    if (doc.ok() && doc->root.get_array().get(examples) == simdjson::SUCCESS) {
      for (simdjson::dom::element example : examples) {
        simdjson::dom::object fields;
        simdjson::dom::element event;
        if (example.get_object().get(fields) != simdjson::SUCCESS ||
            fields["event"].get(event) != simdjson::SUCCESS) {
          continue;
        }
        std::string title;
        if (GetString(fields, "title", &title) != Field::kOk || title.empty()) {
          title = "example " + std::to_string(events.size() + 1);
        }
        events.push_back({title, ToJson(event)});
      }
    }
  }
  if (events.empty()) events.push_back({"empty event", "{}"});
  return events;
}

std::vector<std::string> DevExecutorArgs(const fs::path& executor, const fs::path& dir,
                                         const Manifest& manifest, std::string_view event_json,
                                         const fs::path& bundle_file, bool env_on_stdin) {
  std::vector<std::string> args = {executor.string(), "--pool",
                                   manifest.compute_type == "GPU" ? "gpu" : "cpu"};
  if (bundle_file.empty()) {
    args.insert(args.end(), {"--run-file", (dir / manifest.handler).string()});
  } else {
    args.insert(args.end(), {"--run-bundle", bundle_file.string(), "--run-runtime",
                             manifest.runtime, "--run-handler", manifest.handler});
  }
  args.insert(args.end(), {"--run-event", std::string(event_json)});
  for (const std::string& host : manifest.egress.value_or(std::vector<std::string>{})) {
    args.insert(args.end(), {"--run-egress", host});
  }
  if (manifest.timeout_ms) {
    args.insert(args.end(), {"--run-timeout-ms", std::to_string(*manifest.timeout_ms)});
  }
  if (manifest.memory_mb) {
    args.insert(args.end(), {"--run-memory-mb", std::to_string(*manifest.memory_mb)});
  }
  if (env_on_stdin) args.insert(args.end(), {"--run-env-file", "/dev/stdin"});
  return args;
}

int RunDev(const std::vector<std::string>& words) {
  std::vector<std::string> rest = words;
  for (auto& w : rest) {
    if (w == "--json") w = "--json=true";
    if (w == "--help" || w == "-h") {
      std::fputs(kUsageLine, stdout);
      return kOk;
    }
  }
  auto args = ParseArgs(rest, {"event", "json", "env-file"}, {"env"});
  if (!args.ok() || args->positional.size() != 1) {
    std::fprintf(stderr, "error: %s\n%s",
                 args.ok() ? "give the tool's directory" : args.status().message().c_str(),
                 kUsageLine);
    return kUsage;
  }
  const bool json = args->Get("json") == "true";
  const fs::path dir = args->positional[0];
  auto text = ReadText(dir / "toolgate.json");
  if (!text.ok()) {
    std::fprintf(stderr, "error: %s\n", text.status().message().c_str());
    return kFailed;
  }
  Manifest manifest;
  std::vector<FieldError> errors = ParseManifest(*text, &manifest);
  if (!errors.empty()) {
    std::fprintf(stderr, "error: %s is not a valid manifest\n", (dir / "toolgate.json").c_str());
    for (const auto& e : errors)
      std::fprintf(stderr, "  %s: %s\n", e.field.c_str(), e.message.c_str());
    return kFailed;
  }
  // The executor's --run-file picks the runtime by the file's extension; the manifest's must
  // agree, or dev would run what publishing would not.
  const std::string expected = manifest.runtime == "python"       ? ".py"
                               : manifest.runtime == "javascript" ? ".js"
                                                                  : ".lua";
  if (!manifest.bundle && fs::path(manifest.handler).extension() != expected) {
    std::fprintf(stderr, "error: the handler of a %s tool must be a %s file for toolgate dev\n",
                 manifest.runtime.c_str(), expected.c_str());
    return kUsage;
  }
  std::optional<std::string> event_text;
  if (args->Has("event")) {
    auto file = ReadText(args->Get("event"));
    if (!file.ok()) {
      std::fprintf(stderr, "error: %s\n%s", file.status().message().c_str(), kUsageLine);
      return kUsage;
    }
    event_text = *file;
  }
  auto env = DevEnvOf(dir, manifest, *args);
  if (!env.ok()) {
    std::fprintf(stderr, "error: %s\n%s", env.status().message().c_str(), kUsageLine);
    return kUsage;
  }
  for (const std::string& key : manifest.declared_keys.value_or(std::vector<std::string>{})) {
    bool given = false;
    for (const DevVar& v : *env) given = given || v.name == key;
    if (!given) {
      std::fprintf(stderr, "note: %s has no value here (give it in %s or with --env)\n",
                   key.c_str(), std::string(kDevVarsFile).c_str());
    }
  }
  const std::string env_json = env->empty() ? "" : DevEnvJson(*env);
  auto events = DevEvents(manifest, event_text);
  if (!events.ok()) {
    std::fprintf(stderr, "error: %s\n%s", events.status().message().c_str(), kUsageLine);
    return kUsage;
  }
  const fs::path executor = fs::read_symlink("/proc/self/exe").parent_path() / "toolgate-executor";
  if (!fs::exists(executor)) {
    std::fprintf(stderr, "error: %s not found; build it beside toolgate (see README)\n",
                 executor.c_str());
    return kFailed;
  }
  // A bundle tool runs as `toolgate publish` would send it: the directory packed (its npm
  // dependencies installed first), checked and unpacked by the executor.
  TempFile bundle_file;
  if (manifest.bundle) {
    if (manifest.runtime == "javascript") {
      if (Status s = InstallNodeModules(dir); !s.ok()) {
        std::fprintf(stderr, "error: %s\n", s.message().c_str());
        return kFailed;
      }
    }
    auto packed = PackBundle(dir);
    if (!packed.ok() || !bundle_file.Write(*packed)) {
      std::fprintf(
          stderr, "error: cannot pack %s: %s\n", dir.c_str(),
          packed.ok() ? "cannot write a temporary file" : packed.status().message().c_str());
      return kFailed;
    }
  }
  int rc = kOk;
  for (const DevEvent& event : *events) {
    std::string out;
    int status = RunCapturing(DevExecutorArgs(executor, dir, manifest, event.event_json,
                                              bundle_file.path(), !env_json.empty()),
                              env_json, &out);
    if (status != 0) rc = kFailed;
    if (json) {
      std::fputs(out.c_str(), stdout);  // the executor's JSON, one object a line
    } else {
      std::printf("== %s: %s\n%s", event.title.c_str(), event.event_json.c_str(),
                  RenderHuman(out, {}).c_str());
    }
    if (status < 0) std::fprintf(stderr, "error: cannot run %s\n", executor.c_str());
  }
  std::fflush(stdout);
  return rc;
}

}  // namespace toolgate::cli
