#include "dev_command.h"

#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>

#include "bundle_pack.h"
#include "human_output.h"
#include "toolgate/base/json.h"

namespace toolgate::cli {
namespace fs = std::filesystem;
namespace {

constexpr int kOk = 0;
constexpr int kFailed = 1;
constexpr int kUsage = 2;
constexpr char kUsageLine[] = "usage: toolgate dev DIR [--event FILE] [--json]\n";

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

// Runs argv with stdout read into *out (stderr passes through: the executor's own messages).
// Returns the child's exit status, or -1 when it could not be run.
int RunCapturing(const std::vector<std::string>& argv, std::string* out) {
  int fds[2];
  if (pipe(fds) != 0) return -1;
  pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    return -1;
  }
  if (pid == 0) {
    dup2(fds[1], STDOUT_FILENO);
    close(fds[0]);
    close(fds[1]);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execv(args[0], args.data());
    _exit(127);
  }
  close(fds[1]);
  char buf[4096];
  ssize_t n;
  while ((n = read(fds[0], buf, sizeof buf)) > 0) out->append(buf, static_cast<size_t>(n));
  close(fds[0]);
  int status = 0;
  if (waitpid(pid, &status, 0) < 0) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

}  // namespace

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
                                         const fs::path& bundle_file) {
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
  auto args = ParseArgs(rest, {"event", "json"});
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
    int status = RunCapturing(
        DevExecutorArgs(executor, dir, manifest, event.event_json, bundle_file.path()), &out);
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
