#include "toolgate/executor/lua_runtime.h"

#include <fcntl.h>
#include <sodium.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <initializer_list>
#include <lua.hpp>
#include <memory>
#include <vector>

#include "lua_http.h"
#include "lua_json.h"
#include "toolgate/base/log.h"
#include "toolgate/base/time.h"

// A Lua error unwinds with longjmp, skipping C++ destructors. Every C function below that calls
// into Lua keeps its C++ state in the Sandbox (which outlives the lua_State) and holds no local
// with a destructor across a call that may raise.

namespace toolgate::executor {
namespace {

constexpr int kHookInstructions = 1000;
constexpr const char* kChunkName = "=handler.lua";  // messages read "handler.lua:3: boom"
constexpr size_t kMaxTracebackBytes = 8 << 10;

// The memory one state may hold; the allocator's user data.
struct MemoryBudget {
  size_t limit = 0;
  size_t used = 0;
  size_t peak = 0;
  bool refused = false;  // an allocation was refused at least once
};

void* Allocate(void* ud, void* ptr, size_t osize, size_t nsize) {
  auto* budget = static_cast<MemoryBudget*>(ud);
  if (ptr == nullptr) osize = 0;  // osize then names the kind of object, not a size
  if (nsize == 0) {
    std::free(ptr);
    budget->used -= osize;
    return nullptr;
  }
  if (nsize > osize && nsize - osize > budget->limit - budget->used) {
    budget->refused = true;
    return nullptr;
  }
  void* block = std::realloc(ptr, nsize);
  if (block == nullptr) {
    if (nsize <= osize) return ptr;  // Lua assumes shrinking never fails; the block still fits
    budget->refused = true;
    return nullptr;
  }
  budget->used = budget->used - osize + nsize;
  budget->peak = std::max(budget->peak, budget->used);
  return block;
}

// A state's C++ side, reachable from every thread (coroutine) of its lua_State through the
// state's extra space, which Lua copies into each new thread. Owned by the LuaState, so it
// outlives the lua_State and every coroutine a handler left behind. The fields above `invocation`
// live as long as the state; the rest belong to the call being run (BeginCall resets them).
struct Sandbox {
  Sandbox(const RuntimeLimits& limits, const EgressConfig& egress) : log(limits.max_log_bytes) {
    http.egress = egress;
  }

  // The state's.
  MemoryBudget memory;
  lua::JsonWorkspace json;
  lua::HttpWorkspace http;
  // A bundle version: the entry file's source and chunk name, the directories require searches
  // (the bundle's root, then the entry's directory), and the module require is loading.
  std::string entry_code;
  std::string entry_chunk;
  std::vector<std::string> module_dirs;
  std::string module_source;
  std::string module_chunk;
  std::string module_path;
  uint64_t seed = 0;        // where math.random's seeds for the next calls come from
  bool recyclable = false;  // the state will be reset for further calls: it needs a snapshot
  bool set_up = false;      // the libraries are open (and the snapshot taken)

  // The call's.
  const Invocation* invocation = nullptr;
  LogBuffer log;
  std::string traceback;
  int64_t start_us = 0;  // the chunk started running; 0 before
  int64_t end_us = 0;    // service_handler returned; 0 if it did not
  int64_t deadline_us = 0;
  bool timed_out = false;  // the hook raised the deadline error
  bool handler_missing = false;
  size_t max_result_bytes = 0;
  lua::EncodeStatus encode_status = lua::EncodeStatus::kOk;
  std::string result_json;
  std::string encode_error;
  Notice notice;             // the notice progress() or log() is making
  std::string notice_error;  // log()'s encoding error before it is raised

  void BeginCall(const Invocation& inv, const RuntimeLimits& limits) {
    invocation = &inv;
    log = LogBuffer(limits.max_log_bytes);
    traceback.clear();
    start_us = end_us = deadline_us = 0;
    timed_out = handler_missing = false;
    encode_status = lua::EncodeStatus::kOk;
    result_json.clear();
    encode_error.clear();
    http.deadline_us = 0;
    http.result.reset();
    memory.peak = memory.used;
    memory.refused = false;
  }
};

Sandbox& SandboxOf(lua_State* L) {
  return **static_cast<Sandbox**>(lua_getextraspace(L));
}

void DeadlineHook(lua_State* L, lua_Debug*) {
  Sandbox& sb = SandboxOf(L);
  if (!sb.timed_out) {
    if (MonotonicUs() < sb.deadline_us) return;
    sb.timed_out = true;
  }
  // From now on every instruction raises again, so a pcall in the handler cannot keep it going.
  lua_sethook(L, DeadlineHook, LUA_MASKCOUNT, 1);
  lua_pushliteral(L, "the handler ran past its deadline");
  lua_error(L);
}

// http.request failed at the call's deadline: the call ends as if the hook had fired.
int DeadlinePassed(lua_State* L) {
  SandboxOf(L).timed_out = true;
  lua_sethook(L, DeadlineHook, LUA_MASKCOUNT, 1);
  lua_pushliteral(L, "the handler ran past its deadline");
  return lua_error(L);
}

int Panic(lua_State*) {
  log::Error("lua panic: an error escaped protected mode");
  std::abort();
}

// The message handler of the outer pcall: records the traceback for the log and passes the
// error object on unchanged.
int AddTraceback(lua_State* L) {
  Sandbox& sb = SandboxOf(L);
  // Past the memory cap a traceback cannot be built; past the deadline it would say nothing.
  if (sb.memory.refused || sb.timed_out) return 1;
  const char* message = lua_type(L, 1) == LUA_TSTRING ? lua_tostring(L, 1) : nullptr;
  luaL_traceback(L, L, message, 1);
  size_t n;
  const char* text = lua_tolstring(L, -1, &n);
  sb.traceback.assign(text, std::min(n, kMaxTracebackBytes));
  lua_pop(L, 1);
  return 1;
}

// Calls upvalue 1 (the original library function) with this call's arguments.
int CallOriginal(lua_State* L) {
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_insert(L, 1);
  lua_call(L, lua_gettop(L) - 1, LUA_MULTRET);
  return lua_gettop(L);
}

// load() for text chunks only: a crafted binary chunk can crash the VM.
int LoadTextOnly(lua_State* L) {
  lua_settop(L, std::max(lua_gettop(L), 3));  // keeps an env argument, and its absence
  lua_pushliteral(L, "t");
  lua_replace(L, 3);
  return CallOriginal(L);
}

// string.rep of an empty string and separator loops n times in C, out of the hook's reach;
// its answer is "" whatever n is.
int GuardedRep(lua_State* L) {
  size_t length, separator;
  luaL_checklstring(L, 1, &length);
  lua_Integer n = luaL_checkinteger(L, 2);
  luaL_optlstring(L, 3, "", &separator);
  if (n <= 0 || length + separator == 0) {
    lua_pushliteral(L, "");
    return 1;
  }
  return CallOriginal(L);
}

// table.move over a range longer than any table the memory cap allows copies absent entries in
// C for as long as the range is, out of the hook's reach. An entry takes at least 16 bytes.
int GuardedMove(lua_State* L) {
  lua_Integer first = luaL_checkinteger(L, 2);
  lua_Integer last = luaL_checkinteger(L, 3);
  if (last >= first) {
    lua_Unsigned count = static_cast<lua_Unsigned>(last) - static_cast<lua_Unsigned>(first) + 1;
    lua_Unsigned max_count = SandboxOf(L).memory.limit / 16;
    if (count - 1 >= max_count) return luaL_error(L, "table.move: too many elements to move");
  }
  return CallOriginal(L);
}

// setmetatable without finalizers: Lua runs __gc with hooks off, so a finalizer that loops would
// escape the deadline, and lua_close would run it too. Only a metatable with __gc at this call
// marks a table for finalization; one added later is ignored.
int GuardedSetMetatable(lua_State* L) {
  if (lua_type(L, 2) == LUA_TTABLE) {
    lua_pushliteral(L, "__gc");
    bool finalizer = lua_rawget(L, 2) != LUA_TNIL;  // raw, as Lua's own check is
    lua_pop(L, 1);
    if (finalizer) return luaL_error(L, "setmetatable: __gc metamethods are not supported");
  }
  return CallOriginal(L);
}

int Print(lua_State* L) {
  Sandbox& sb = SandboxOf(L);
  if (sb.log.truncated()) return 0;
  int n = lua_gettop(L);
  for (int i = 1; i <= n; ++i) {
    size_t length;
    const char* text = luaL_tolstring(L, i, &length);
    if (i > 1) sb.log.Append("\t");
    sb.log.Append(std::string_view(text, length));
    lua_pop(L, 1);
  }
  sb.log.Append("\n");
  return 0;
}

// os.getenv: the caller's mapped secrets, nil for every other name.
int GetEnv(lua_State* L) {
  size_t length;
  const char* name = luaL_checklstring(L, 1, &length);
  for (const EnvVar& var : SandboxOf(L).invocation->env) {
    if (var.name == std::string_view(name, length)) {
      lua_pushlstring(L, var.value.data(), var.value.size());
      return 1;
    }
  }
  lua_pushnil(L);
  return 1;
}

// progress(progress, total, message) and log(level, data, logger): the handler's notices
// (runtime.h). The arguments are checked whether or not the caller wants notices, so that a
// mistake shows in every call; the rest is skipped when nobody does, or the call's bounds are
// spent (the sink drops it uncounted by bytes: no encoding).
// The call's sink when it takes another notice; nullptr when there is none, or when it is full
// (the drop counted), so that no notice is made for nothing.
NoticeSink* SinkForNotice(Sandbox& sb) {
  NoticeSink* sink = sb.invocation->notices;
  if (sink == nullptr) return nullptr;
  if (!sink->accepting()) {
    sink->Drop();
    return nullptr;
  }
  return sink;
}

int Progress(lua_State* L) {
  Sandbox& sb = SandboxOf(L);
  lua_settop(L, 3);
  const lua_Number progress = luaL_checknumber(L, 1);
  const bool has_total = !lua_isnil(L, 2);
  const lua_Number total = has_total ? luaL_checknumber(L, 2) : 0;
  size_t message_length = 0;
  const char* message = lua_isnil(L, 3) ? "" : luaL_checklstring(L, 3, &message_length);
  if (!std::isfinite(progress) || (has_total && !std::isfinite(total))) {
    return luaL_error(L, "progress: progress and total must be finite numbers");
  }
  NoticeSink* sink = SinkForNotice(sb);
  if (sink == nullptr) return 0;
  Notice& n = sb.notice;
  n.kind = Notice::Kind::kProgress;
  n.progress = progress;
  n.total = total;
  n.has_total = has_total;
  n.message.assign(message, message_length);
  n.level.clear();
  n.data_json.clear();
  n.logger.clear();
  sink->Offer(std::move(n));
  return 0;
}

int Log(lua_State* L) {
  Sandbox& sb = SandboxOf(L);
  lua_settop(L, 3);
  size_t level_length = 0;
  const char* level = luaL_checklstring(L, 1, &level_length);
  if (!IsNoticeLevel(std::string_view(level, level_length))) {
    return luaL_error(L,
                      "log: level must be one of debug, info, notice, warning, error, critical, "
                      "alert, emergency; got '%s'",
                      level);
  }
  size_t logger_length = 0;
  const char* logger = lua_isnil(L, 3) ? "" : luaL_checklstring(L, 3, &logger_length);
  NoticeSink* sink = SinkForNotice(sb);
  if (sink == nullptr) return 0;
  Notice& n = sb.notice;
  // Encoding stops past the largest notice the sink takes: a huge value costs no more.
  lua::EncodeStatus status =
      lua::EncodeJson(L, 2, NoticeLimits{}.max_notice_bytes, &n.data_json, &sb.notice_error);
  if (status == lua::EncodeStatus::kInvalid) {
    return luaL_error(L, "log: data cannot be encoded as JSON: %s", sb.notice_error.c_str());
  }
  if (status == lua::EncodeStatus::kTooLarge) {
    sink->Drop();
    return 0;
  }
  n.kind = Notice::Kind::kLog;
  n.progress = n.total = 0;
  n.has_total = false;
  n.message.clear();
  n.level.assign(level, level_length);
  n.logger.assign(logger, logger_length);
  sink->Offer(std::move(n));
  return 0;
}

// Replaces field `name` of the table on top of the stack by fn, with the original as upvalue.
void Wrap(lua_State* L, const char* name, lua_CFunction fn) {
  lua_getfield(L, -1, name);
  lua_pushcclosure(L, fn, 1);
  lua_setfield(L, -2, name);
}

void OpenLibraries(lua_State* L, Sandbox& sb) {
  static const luaL_Reg kLibraries[] = {
      {LUA_GNAME, luaopen_base},       {LUA_STRLIBNAME, luaopen_string},
      {LUA_TABLIBNAME, luaopen_table}, {LUA_MATHLIBNAME, luaopen_math},
      {LUA_UTF8LIBNAME, luaopen_utf8}, {LUA_COLIBNAME, luaopen_coroutine},
  };
  for (const luaL_Reg& lib : kLibraries) {
    luaL_requiref(L, lib.name, lib.func, 1);
    lua_pop(L, 1);
  }

  lua_pushglobaltable(L);
  for (const char* name : {"dofile", "loadfile", "collectgarbage"}) {
    lua_pushnil(L);
    lua_setfield(L, -2, name);
  }
  Wrap(L, "load", LoadTextOnly);
  Wrap(L, "setmetatable", GuardedSetMetatable);
  lua_pushcfunction(L, Print);
  lua_setfield(L, -2, "print");
  lua_pushcfunction(L, Progress);
  lua_setfield(L, -2, "progress");
  lua_pushcfunction(L, Log);
  lua_setfield(L, -2, "log");
  lua_pop(L, 1);

  lua_getglobal(L, LUA_STRLIBNAME);
  lua_pushnil(L);
  lua_setfield(L, -2, "dump");
  Wrap(L, "rep", GuardedRep);
  lua_pop(L, 1);

  lua_getglobal(L, LUA_TABLIBNAME);
  Wrap(L, "move", GuardedMove);
  lua_pop(L, 1);

  // os: the clock and calendar, and getenv over the mapped secrets; nothing that touches the
  // process or the file system.
  lua_pushcfunction(L, luaopen_os);
  lua_call(L, 0, 1);
  lua_createtable(L, 0, 4);
  for (const char* name : {"time", "clock", "date"}) {
    lua_getfield(L, -2, name);
    lua_setfield(L, -2, name);
  }
  lua_pushcfunction(L, GetEnv);
  lua_setfield(L, -2, "getenv");
  lua_setglobal(L, "os");
  lua_pop(L, 1);

  sb.json.max_encoded_bytes = sb.memory.limit;
  lua::PushJsonLibrary(L, &sb.json);
  lua_setglobal(L, "json");

  // A response larger than the state may hold could not become a string anyway.
  sb.http.egress.max_body_bytes = sb.memory.limit;
  sb.http.deadline_passed = DeadlinePassed;
  lua::PushHttpLibrary(L, &sb.http);
  lua_setglobal(L, "http");
}

// The contents of the regular file at path into *out; false when there is none or it cannot be
// read. Calls nothing of Lua.
bool ReadRegularFile(const std::string& path, std::string* out) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  struct stat st;
  bool ok = ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
  out->clear();
  char buf[16 << 10];
  while (ok) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) ok = false;
    if (n <= 0) break;
    out->append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  return ok;
}

// A module name require accepts: segments of letters, digits, '_' and '-' joined by '.', so the
// file it names is always inside the bundle.
bool IsModuleName(std::string_view name) {
  if (name.empty() || name.front() == '.' || name.back() == '.') return false;
  char previous = 0;
  for (char c : name) {
    bool word = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                c == '_' || c == '-';
    if (!word && !(c == '.' && previous != '.')) return false;
    previous = c;
  }
  return true;
}

// Finds module name in sb.module_dirs (<dir>/a/b.lua, then <dir>/a/b/init.lua for "a.b") and
// reads it into sb.module_source. Calls nothing of Lua.
bool FindModule(Sandbox& sb, std::string_view name) {
  std::string relative(name);
  std::replace(relative.begin(), relative.end(), '.', '/');
  for (const std::string& dir : sb.module_dirs) {
    for (const char* suffix : {".lua", "/init.lua"}) {
      sb.module_path = dir + "/" + relative + suffix;
      if (ReadRegularFile(sb.module_path, &sb.module_source)) {
        sb.module_chunk = "@" + sb.module_path.substr(sb.module_dirs.front().size() + 1);
        return true;
      }
    }
  }
  return false;
}

// require for a bundle version: a module of the bundle, run once and kept in package.loaded
// (upvalue 1) like Lua's own, but never a file outside the bundle nor a C module, whatever
// package.path says.
int BundleRequire(lua_State* L) {
  size_t length;
  const char* name = luaL_checklstring(L, 1, &length);
  lua_settop(L, 1);
  if (lua_getfield(L, lua_upvalueindex(1), name) != LUA_TNIL) return 1;
  lua_pop(L, 1);
  Sandbox& sb = SandboxOf(L);
  if (!IsModuleName(std::string_view(name, length))) {
    return luaL_error(L,
                      "module '%s' not found: a module name is letters, digits, '_' and '-' "
                      "joined by '.'",
                      name);
  }
  if (!FindModule(sb, std::string_view(name, length))) {
    return luaL_error(L, "module '%s' not found in the bundle", name);
  }
  if (luaL_loadbufferx(L, sb.module_source.data(), sb.module_source.size(), sb.module_chunk.c_str(),
                       "t") != LUA_OK) {
    return lua_error(L);
  }
  lua_pushvalue(L, 1);
  lua_pushstring(L, sb.module_path.c_str());
  lua_call(L, 2, 1);
  if (lua_isnil(L, -1)) {
    lua_pop(L, 1);
    lua_pushboolean(L, 1);
  }
  lua_pushvalue(L, -1);
  lua_setfield(L, lua_upvalueindex(1), name);
  return 1;
}

// package and require for a bundle version: package.loaded holds the libraries and the modules
// required so far; package.path shows where require looks (changing it changes nothing);
// package.cpath is empty, since no C module is ever loaded.
void OpenBundleModules(lua_State* L, const Sandbox& sb) {
  lua_createtable(L, 0, 3);
  lua_createtable(L, 0, 8);
  for (const char* lib : {LUA_GNAME, LUA_STRLIBNAME, LUA_TABLIBNAME, LUA_MATHLIBNAME,
                          LUA_UTF8LIBNAME, LUA_COLIBNAME, "os", "json"}) {
    lua_getglobal(L, lib);
    lua_setfield(L, -2, lib);
  }
  lua_pushvalue(L, -1);
  lua_pushcclosure(L, BundleRequire, 1);
  lua_setglobal(L, "require");
  lua_setfield(L, -2, "loaded");
  std::string path;
  for (const std::string& dir : sb.module_dirs) {
    path += (path.empty() ? "" : ";") + dir + "/?.lua;" + dir + "/?/init.lua";
  }
  lua_pushlstring(L, path.data(), path.size());
  lua_setfield(L, -2, "path");
  lua_pushliteral(L, "");
  lua_setfield(L, -2, "cpath");
  lua_setglobal(L, "package");
}

void SetStringField(lua_State* L, const char* key, std::string_view value) {
  lua_pushlstring(L, value.data(), value.size());
  lua_setfield(L, -2, key);
}

void PushContext(lua_State* L, const Sandbox& sb) {
  const Invocation& inv = *sb.invocation;
  lua_createtable(L, 0, 6);
  SetStringField(L, "execution_id", inv.execution_id);
  SetStringField(L, "function_id", inv.function_id);
  SetStringField(L, "version", inv.version);
  SetStringField(L, "caller_org_id", inv.caller_org_id);
  lua_pushinteger(L, std::max<int64_t>(0, (sb.deadline_us - MonotonicUs()) / 1000));
  lua_setfield(L, -2, "deadline_ms");
  lua_createtable(L, 0, static_cast<int>(inv.env.size()));
  for (const EnvVar& var : inv.env) {
    lua_pushlstring(L, var.name.data(), var.name.size());
    lua_pushlstring(L, var.value.data(), var.value.size());
    lua_rawset(L, -3);
  }
  lua_setfield(L, -2, "env");
}

// The pristine state, kept in the registry under this key: a table (never itself restored) with
//   tables:     {table, copy of its contents, its metatable or false, the copy's key count} for
//               every table the handler can reach from the globals, the string metatable or
//               the registry
//   string_mt:  the metatable of strings
//   randomseed: math.randomseed as opened, to reseed math.random for each call
//   chunk:      the version's compiled chunk, loaded once per state
constexpr const char* kPristineKey = "toolgate.pristine";

void PushPristine(lua_State* L) {
  lua_getfield(L, LUA_REGISTRYINDEX, kPristineKey);
}

// Appends the value on top of the stack to the array at index `pending` (popping it) when it
// is a table or a function: the things whose contents or upvalues the snapshot looks into.
void Enqueue(lua_State* L, int pending) {
  int type = lua_type(L, -1);
  if (type != LUA_TTABLE && type != LUA_TFUNCTION) {
    lua_pop(L, 1);
    return;
  }
  lua_rawseti(L, pending, static_cast<lua_Integer>(lua_rawlen(L, pending)) + 1);
}

// Records every table reachable from the registry (which holds the globals and the loaded
// libraries), from the string metatable and from the upvalues of reachable functions. Runs
// under the set-up's pcall: it allocates.
void TakeSnapshot(lua_State* L) {
  lua_createtable(L, 0, 4);
  int holder = lua_gettop(L);
  lua_pushvalue(L, holder);
  lua_setfield(L, LUA_REGISTRYINDEX, kPristineKey);
  lua_createtable(L, 32, 0);
  int tables = lua_gettop(L);
  lua_pushvalue(L, tables);
  lua_setfield(L, holder, "tables");
  lua_createtable(L, 0, 64);
  int seen = lua_gettop(L);
  for (int own : {holder, tables}) {  // the snapshot is not part of what it restores
    lua_pushvalue(L, own);
    lua_pushboolean(L, 1);
    lua_rawset(L, seen);
  }
  lua_createtable(L, 64, 0);
  int pending = lua_gettop(L);

  lua_pushliteral(L, "");
  lua_getmetatable(L, -1);
  lua_remove(L, -2);
  lua_pushvalue(L, -1);
  lua_setfield(L, holder, "string_mt");
  Enqueue(L, pending);
  lua_pushvalue(L, LUA_REGISTRYINDEX);
  Enqueue(L, pending);
  lua_getglobal(L, LUA_MATHLIBNAME);
  lua_getfield(L, -1, "randomseed");
  lua_setfield(L, holder, "randomseed");
  lua_pop(L, 1);

  for (lua_Integer n; (n = static_cast<lua_Integer>(lua_rawlen(L, pending))) > 0;) {
    lua_rawgeti(L, pending, n);
    lua_pushnil(L);
    lua_rawseti(L, pending, n);
    int item = lua_gettop(L);
    lua_pushvalue(L, item);
    if (lua_rawget(L, seen) != LUA_TNIL) {
      lua_pop(L, 2);
      continue;
    }
    lua_pop(L, 1);
    lua_pushvalue(L, item);
    lua_pushboolean(L, 1);
    lua_rawset(L, seen);
    if (lua_type(L, item) == LUA_TFUNCTION) {
      for (int i = 1; lua_getupvalue(L, item, i) != nullptr; ++i) Enqueue(L, pending);
      lua_pop(L, 1);
      continue;
    }
    lua_createtable(L, 4, 0);  // the entry
    lua_pushvalue(L, item);
    lua_rawseti(L, -2, 1);
    lua_newtable(L);  // the copy
    lua_Integer keys = 0;
    lua_pushnil(L);
    while (lua_next(L, item) != 0) {
      ++keys;
      lua_pushvalue(L, -2);
      lua_pushvalue(L, -2);
      lua_rawset(L, -5);
      Enqueue(L, pending);  // the value
      lua_pushvalue(L, -1);
      Enqueue(L, pending);  // the key
    }
    lua_rawseti(L, -2, 2);
    lua_pushinteger(L, keys);
    lua_rawseti(L, -2, 4);
    if (lua_getmetatable(L, item)) {
      lua_pushvalue(L, -1);
      Enqueue(L, pending);
    } else {
      lua_pushboolean(L, 0);
    }
    lua_rawseti(L, -2, 3);
    lua_rawseti(L, tables, static_cast<lua_Integer>(lua_rawlen(L, tables)) + 1);
    lua_pop(L, 1);  // the item
  }
  lua_settop(L, holder - 1);
}

// Makes the table at index t hold exactly what the table at index copy, of copy_keys keys,
// holds, raw.
void RestoreContents(lua_State* L, int t, int copy, lua_Integer copy_keys) {
  lua_Integer unchanged = 0;  // keys of t holding the copy's value
  lua_pushnil(L);
  while (lua_next(L, t) != 0) {  // keys added or changed: back to the copy's value (maybe nil)
    lua_pushvalue(L, -2);
    lua_rawget(L, copy);
    if (!lua_rawequal(L, -1, -2)) {
      lua_pushvalue(L, -3);
      lua_insert(L, -2);
      lua_rawset(L, t);  // assigning an existing field keeps lua_next's traversal valid
    } else {
      ++unchanged;
      lua_pop(L, 1);
    }
    lua_pop(L, 1);
  }
  // Every key of the copy is in t with its value: none was removed, and the walk below, as
  // long as the one above, can be skipped. This is what a call that left the table alone costs.
  if (unchanged == copy_keys) return;
  lua_pushnil(L);
  while (lua_next(L, copy) != 0) {  // keys removed
    lua_pushvalue(L, -2);
    if (lua_rawget(L, t) == LUA_TNIL) {
      lua_pop(L, 1);
      lua_pushvalue(L, -2);
      lua_insert(L, -2);
      lua_rawset(L, t);
    } else {
      lua_pop(L, 2);
    }
  }
}

// SplitMix64: the next seed of the sequence *state walks.
uint64_t NextSeed(uint64_t& state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// Puts back everything TakeSnapshot recorded and reseeds math.random. Run under pcall: re-adding a
// removed key may allocate.
int RestoreSnapshot(lua_State* L) {
  PushPristine(L);
  int holder = lua_gettop(L);
  lua_getfield(L, holder, "tables");
  int tables = lua_gettop(L);
  lua_Integer n = static_cast<lua_Integer>(lua_rawlen(L, tables));
  for (lua_Integer i = 1; i <= n; ++i) {
    lua_rawgeti(L, tables, i);
    int entry = lua_gettop(L);
    lua_rawgeti(L, entry, 1);
    int t = entry + 1;
    // The metatable first: a __mode the handler set would otherwise let the collector drop what
    // is being put back.
    if (lua_rawgeti(L, entry, 3) == LUA_TBOOLEAN) {
      lua_pop(L, 1);
      lua_pushnil(L);
    }
    lua_setmetatable(L, t);
    lua_rawgeti(L, entry, 2);
    lua_rawgeti(L, entry, 4);
    const lua_Integer keys = lua_tointeger(L, -1);
    lua_pop(L, 1);
    RestoreContents(L, t, t + 1, keys);
    lua_settop(L, entry - 1);
  }
  lua_pushliteral(L, "");
  lua_getfield(L, holder, "string_mt");
  lua_setmetatable(L, -2);
  // Not Lua's own seed (the time and the state's address), which repeats for every call of the
  // same second.
  lua_getfield(L, holder, "randomseed");
  Sandbox& sb = SandboxOf(L);
  lua_pushinteger(L, static_cast<lua_Integer>(NextSeed(sb.seed)));
  lua_pushinteger(L, static_cast<lua_Integer>(NextSeed(sb.seed)));
  lua_call(L, 2, 0);
  lua_settop(L, 0);
  return 0;
}

// Pushes the version's chunk, ready to run with the state's globals as its _ENV: compiled at
// the state's first call and kept; a later call resets the _ENV upvalue, which the previous
// run could have assigned.
void PushChunk(lua_State* L, const Sandbox& sb) {
  if (lua_getfield(L, LUA_REGISTRYINDEX, kPristineKey) != LUA_TTABLE) {
    lua_pop(L, 1);
    lua_newtable(L);  // a state for one call keeps its chunk nowhere
  }
  if (lua_getfield(L, -1, "chunk") == LUA_TFUNCTION) {
    lua_remove(L, -2);
    lua_rawgeti(L, LUA_REGISTRYINDEX, LUA_RIDX_GLOBALS);
    if (lua_setupvalue(L, -2, 1) == nullptr) lua_pop(L, 1);
    return;
  }
  lua_pop(L, 1);
  std::string_view code = sb.invocation->code;
  const char* chunk = kChunkName;
  if (!sb.module_dirs.empty()) {
    code = sb.entry_code;
    chunk = sb.entry_chunk.c_str();
  }
  if (luaL_loadbufferx(L, code.data(), code.size(), chunk, "t") != LUA_OK) {
    lua_error(L);
  }
  lua_pushvalue(L, -1);
  lua_setfield(L, -3, "chunk");
  lua_remove(L, -2);
}

// The whole invocation, run under the outer pcall: the state's set-up at its first call (which
// may hit the memory cap), the chunk, service_handler(event, context) and encoding its return
// value.
int RunInvocation(lua_State* L) {
  Sandbox& sb = SandboxOf(L);
  const Invocation& inv = *sb.invocation;
  if (!sb.set_up) {
    OpenLibraries(L, sb);
    if (!sb.module_dirs.empty()) OpenBundleModules(L, sb);
    if (sb.recyclable) TakeSnapshot(L);
    sb.set_up = true;
  }
  PushChunk(L, sb);
  sb.start_us = MonotonicUs();
  sb.deadline_us = sb.start_us + inv.timeout_ms * 1000;
  sb.http.deadline_us = sb.deadline_us;
  lua_sethook(L, DeadlineHook, LUA_MASKCOUNT, kHookInstructions);
  lua_call(L, 0, 0);
  if (lua_getglobal(L, "service_handler") != LUA_TFUNCTION) {
    sb.handler_missing = true;
    return luaL_error(L, "no global function service_handler(event, context) is defined");
  }
  lua::PushDecodedJson(L, &sb.json, inv.event_json);
  PushContext(L, sb);
  lua_call(L, 2, 1);
  sb.end_us = MonotonicUs();
  sb.encode_status = lua::EncodeJson(L, -1, sb.max_result_bytes, &sb.result_json, &sb.encode_error);
  return 0;
}

// The error object at idx as text, without running metamethods.
std::string ErrorText(lua_State* L, int idx) {
  switch (lua_type(L, idx)) {
    case LUA_TSTRING: {
      size_t n;
      const char* s = lua_tolstring(L, idx, &n);
      return std::string(s, n);
    }
    case LUA_TNUMBER: {
      if (lua_isinteger(L, idx)) return std::to_string(lua_tointeger(L, idx));
      char buf[32];
      std::snprintf(buf, sizeof(buf), "%.14g", lua_tonumber(L, idx));
      return buf;
    }
    default:
      return std::string("(error object is a ") + luaL_typename(L, idx) + " value)";
  }
}

}  // namespace

// One lua_State with the sandbox's libraries and the C++ side (Sandbox) its functions reach,
// serving calls of one shape (lua_runtime.h, WarmLuaRuntime) one at a time. Not thread-safe.
class LuaState {
 public:
  // A state for calls like invocation: its memory cap and bundle. recyclable: the set-up takes
  // the snapshot Reset needs (a state for one call skips that cost). Null with *failed
  // completed when the bundle's entry file cannot be read or Lua cannot create a state.
  static std::unique_ptr<LuaState> Create(const Invocation& invocation, const RuntimeLimits& limits,
                                          const EgressConfig& egress, bool recyclable,
                                          ExecutionOutcome* failed) {
    auto sb = std::make_unique<Sandbox>(limits, egress);
    sb->recyclable = recyclable;
    if (recyclable) randombytes_buf(&sb->seed, sizeof sb->seed);  // once per state, not per call
    sb->memory.limit = static_cast<size_t>(std::max<int64_t>(invocation.memory_mb, 1)) << 20;
    // Room for a body of the largest size with every byte escaped (\u00XX), and the envelope.
    sb->max_result_bytes = limits.max_response_bytes * 6 + 4096;
    if (!invocation.bundle_root.empty()) {
      std::string root(invocation.bundle_root);
      std::string entry = root + "/" + std::string(invocation.handler);
      if (!ReadRegularFile(entry, &sb->entry_code)) {
        CompleteWithError("HandlerNotFound",
                          "cannot read the bundle's entry file " + std::string(invocation.handler),
                          failed);
        return nullptr;
      }
      // Messages read "src/main.lua:3: boom", as they would in the publisher's directory.
      sb->entry_chunk = "@" + std::string(invocation.handler);
      sb->module_dirs.push_back(root);
      std::string entry_dir = entry.substr(0, entry.rfind('/'));
      if (entry_dir != root) sb->module_dirs.push_back(entry_dir);
    }
    lua_State* L = lua_newstate(Allocate, &sb->memory);
    if (L == nullptr) {
      failed->kind = ExecutionOutcome::Kind::kPlatformFailure;
      failed->failure = "cannot create a Lua state";
      return nullptr;
    }
    lua_atpanic(L, Panic);
    *static_cast<Sandbox**>(lua_getextraspace(L)) = sb.get();
    return std::unique_ptr<LuaState>(new LuaState(std::move(sb), L, limits));
  }

  ~LuaState() { lua_close(L_); }
  LuaState(const LuaState&) = delete;
  LuaState& operator=(const LuaState&) = delete;

  // Runs one call to its end. *reusable: whether it ended cleanly (the handler returned), the
  // only case in which Reset may recycle the state; after an error or a timeout the state may
  // be mid-way through anything and is dropped instead.
  ExecutionOutcome Run(const Invocation& invocation, bool* reusable) {
    Sandbox& sb = *sb_;
    sb.BeginCall(invocation, limits_);
    lua_settop(L_, 0);
    lua_pushcfunction(L_, AddTraceback);
    lua_pushcfunction(L_, RunInvocation);
    int status = lua_pcall(L_, 0, 0, 1);
    int64_t stopped_us = MonotonicUs();
    std::string error = status == LUA_OK ? std::string() : ErrorText(L_, -1);
    lua_sethook(L_, nullptr, 0, 0);
    lua_settop(L_, 0);
    *reusable = status == LUA_OK && !sb.timed_out && !sb.memory.refused;

    ExecutionOutcome out;
    if (sb.start_us != 0) {
      int64_t end_us = sb.end_us != 0 ? sb.end_us : stopped_us;
      out.runtime_ms = std::max<int64_t>(0, (end_us - sb.start_us) / 1000);
    }
    out.memory_used_mb = MemoryUsedMb(sb.memory.peak);
    out.logs = sb.log.Take();
    if (!sb.traceback.empty()) out.logs += ToValidUtf8(sb.traceback) + "\n";

    if (sb.timed_out) {
      out.kind = ExecutionOutcome::Kind::kTimeout;
    } else if (status == LUA_ERRMEM || (status != LUA_OK && sb.memory.refused)) {
      CompleteWithError("MemoryLimitExceeded",
                        "the handler exceeded its memory limit of " +
                            std::to_string(invocation.memory_mb) + " MB",
                        &out);
    } else if (status != LUA_OK) {
      CompleteWithError(sb.handler_missing ? "HandlerNotFound" : "LuaError", error, &out);
    } else if (sb.encode_status == lua::EncodeStatus::kInvalid) {
      CompleteWithError("InvalidResult",
                        "the handler's return value cannot be encoded as JSON: " + sb.encode_error,
                        &out);
    } else if (sb.encode_status == lua::EncodeStatus::kTooLarge) {
      CompleteWithError("ResponseTooLarge",
                        "the handler's return value is larger than the response limit of " +
                            std::to_string(limits_.max_response_bytes) + " bytes",
                        &out);
    } else {
      CompleteWithReturnValue(sb.result_json, limits_, &out);
    }
    sb.invocation = nullptr;
    return out;
  }

  // Back to the state as set up: every table the handler could reach from the globals, the
  // string metatable and the registry holds what it held and has the metatable it had, and
  // what the call made is collected (its memory, its coroutines). False when that failed (it
  // ran out of memory): drop the state.
  bool Reset() {
    lua_settop(L_, 0);
    lua_pushcfunction(L_, RestoreSnapshot);
    if (lua_pcall(L_, 0, 0, 0) != LUA_OK) return false;
    // What the call made is unreachable now. A full collection costs more than the rest of the
    // reset, so it runs only once the garbage carried over passes a bound: the next call's
    // budget then starts at most that far above a new state's (and Lua collects before it
    // refuses an allocation).
    MemoryBudget& memory = sb_->memory;
    if (memory.used > collected_bytes_ + std::min(kMaxCarriedGarbage, memory.limit / 8)) {
      lua_gc(L_, LUA_GCCOLLECT);
      collected_bytes_ = memory.used;
    }
    return !memory.refused;
  }

 private:
  LuaState(std::unique_ptr<Sandbox> sb, lua_State* L, const RuntimeLimits& limits)
      : sb_(std::move(sb)), L_(L), limits_(limits) {}

  static constexpr size_t kMaxCarriedGarbage = 256 << 10;

  std::unique_ptr<Sandbox> sb_;  // outlives L_: declared first, destroyed last
  lua_State* L_;
  RuntimeLimits limits_;
  size_t collected_bytes_ = 0;  // what the state held after its last full collection
};

ExecutionOutcome LuaRuntime::Run(const Invocation& invocation) {
  ExecutionOutcome out;
  std::unique_ptr<LuaState> state =
      LuaState::Create(invocation, limits_, egress_, /*recyclable=*/false, &out);
  if (state == nullptr) return out;
  bool reusable = false;
  return state->Run(invocation, &reusable);
}

WarmLuaRuntime::WarmLuaRuntime(RuntimeLimits limits, EgressConfig egress, int64_t max_calls)
    : limits_(limits), egress_(std::move(egress)), max_calls_(std::max<int64_t>(max_calls, 1)) {}

WarmLuaRuntime::~WarmLuaRuntime() = default;

bool WarmLuaRuntime::Fits(const Invocation& invocation) const {
  return invocation.code == code_ && invocation.bundle_root == bundle_root_ &&
         invocation.handler == handler_ && invocation.memory_mb == memory_mb_;
}

ExecutionOutcome WarmLuaRuntime::Run(const Invocation& invocation) {
  if (state_ != nullptr && (calls_ >= max_calls_ || !Fits(invocation))) state_.reset();
  if (state_ == nullptr) {
    ExecutionOutcome failed;
    state_ = LuaState::Create(invocation, limits_, egress_, /*recyclable=*/true, &failed);
    if (state_ == nullptr) return failed;
    ++states_created_;
    calls_ = 0;
    code_ = invocation.code;
    bundle_root_ = invocation.bundle_root;
    handler_ = invocation.handler;
    memory_mb_ = invocation.memory_mb;
  }
  bool reusable = false;
  ExecutionOutcome out = state_->Run(invocation, &reusable);
  ++calls_;
  if (!reusable || !state_->Reset()) state_.reset();
  return out;
}

}  // namespace toolgate::executor
