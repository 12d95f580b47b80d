#include "toolgate/registry/syntax_check.h"

#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <lua.hpp>
#include <memory>
#include <string>

#include "subprocess.h"

namespace toolgate::registry {
namespace {

constexpr int kCheckTimeoutMs = 10'000;

std::string TrimTrailing(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' ')) s.pop_back();
  return s;
}

void ReplaceAll(std::string& s, std::string_view from, std::string_view to) {
  for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size())) {
    s.replace(at, from.size(), to);
  }
}

// Node's report, minus what only concerns node itself: the stack of its own loader and the
// "Node.js vX" trailer, and blank lines. What is left is the location, the offending line with a
// caret, and the error.
std::string CleanNodeMessage(std::string output, const std::string& path) {
  ReplaceAll(output, path, "handler.js");
  std::string kept;
  size_t start = 0;
  while (start < output.size()) {
    size_t end = output.find('\n', start);
    if (end == std::string::npos) end = output.size();
    std::string_view line(output.data() + start, end - start);
    start = end + 1;
    if (line.empty() || line.rfind("    at ", 0) == 0 || line.rfind("Node.js v", 0) == 0) {
      continue;
    }
    kept.append(line).push_back('\n');
  }
  return TrimTrailing(kept);
}

// A private directory holding one file, removed with it.
class TempFile {
 public:
  static Result<std::unique_ptr<TempFile>> Create(std::string_view name, std::string_view data) {
    const char* tmp = std::getenv("TMPDIR");
    std::string dir = std::string(tmp && *tmp ? tmp : "/tmp") + "/toolgate-check-XXXXXX";
    if (mkdtemp(dir.data()) == nullptr) return Status::Unavailable("cannot create a temp dir");
    std::unique_ptr<TempFile> f(new TempFile(dir, dir + "/" + std::string(name)));
    std::ofstream out(f->path_, std::ios::binary);
    out.write(data.data(), static_cast<std::streamsize>(data.size()));
    if (!out.flush()) return Status::Unavailable("cannot write " + f->path_);
    return f;
  }
  ~TempFile() {
    unlink(path_.c_str());
    rmdir(dir_.c_str());
  }
  const std::string& path() const { return path_; }

 private:
  TempFile(std::string dir, std::string path) : dir_(std::move(dir)), path_(std::move(path)) {}
  std::string dir_;
  std::string path_;
};

}  // namespace

Status CheckLuaSyntax(std::string_view code) {
  std::unique_ptr<lua_State, decltype(&lua_close)> L(luaL_newstate(), lua_close);
  if (!L) return Status::Unavailable("lua: out of memory");
  int rc = luaL_loadbufferx(L.get(), code.data(), code.size(), "=handler", "t");
  if (rc == LUA_OK) return Status::Ok();
  const char* msg = lua_tostring(L.get(), -1);
  return Status::InvalidArgument(msg ? msg : "does not compile");
}

Status CheckPythonSyntax(std::string_view code) {
  // -I -S: isolated, no site packages; the script only parses.
  static const std::string kScript =
      "import ast, sys\n"
      "try:\n"
      "    ast.parse(sys.stdin.buffer.read(), 'handler.py')\n"
      "except SyntaxError as e:\n"
      "    print(f'handler.py:{e.lineno}:{e.offset}: {e.msg}')\n"
      "    sys.exit(1)\n"
      "except ValueError as e:\n"
      "    print(f'handler.py: {e}')\n"
      "    sys.exit(1)\n";
  auto out = RunProcess({"/usr/bin/python3", "-I", "-S", "-c", kScript}, code, kCheckTimeoutMs);
  if (!out.ok()) return out.status();
  if (out->exit_code == 0) return Status::Ok();
  if (out->exit_code == 1) return Status::InvalidArgument(TrimTrailing(out->output));
  return Status::Unavailable("python3 syntax check exited with " + std::to_string(out->exit_code));
}

Status CheckJavaScriptSyntax(std::string_view code) {
  // .cjs: node parses it as a CommonJS script whatever package.json lies above the temp dir.
  auto file = TempFile::Create("handler.cjs", code);
  if (!file.ok()) return file.status();
  auto out = RunProcess({"node", "--check", (*file)->path()}, "", kCheckTimeoutMs);
  if (!out.ok()) return out.status();
  if (out->exit_code == 0) return Status::Ok();
  if (out->exit_code == 1) {
    return Status::InvalidArgument(CleanNodeMessage(std::move(out->output), (*file)->path()));
  }
  return Status::Unavailable("node --check exited with " + std::to_string(out->exit_code));
}

Status CheckSyntax(std::string_view runtime, std::string_view code) {
  if (runtime == "lua") return CheckLuaSyntax(code);
  if (runtime == "python") return CheckPythonSyntax(code);
  if (runtime == "javascript") return CheckJavaScriptSyntax(code);
  return Status::InvalidArgument("unknown runtime " + std::string(runtime));
}

}  // namespace toolgate::registry
