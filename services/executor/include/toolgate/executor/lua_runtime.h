// LuaRuntime: Lua 5.4 handlers, run in-process in a fresh sandboxed state per invocation.
// WarmLuaRuntime: the same sandbox in one state that is reset between calls (the Lua worker's).
//
// The sandbox (shared/design/architecture.md, "Sandboxing"):
// - Memory: the state's allocator refuses any allocation past the version's memory_mb and
//   records the peak. A call that fails after an allocation was refused gives 500 errorType
//   "MemoryLimitExceeded" (a handler that catches the error and returns normally has handled it).
//   Buffers outside the Lua heap (json's parser and output, the log) are not counted.
// - Time: a count hook checks the deadline (start + timeout_ms) every 1,000 instructions and
//   raises an error that unwinds the state; once past it every further instruction raises again,
//   so pcall cannot swallow it. The outcome is a timeout (408), not a handler error.
// - Libraries: base, string, table, math, utf8 and coroutine only. No dofile, loadfile,
//   collectgarbage or string.dump; load accepts text chunks only; no io or debug; no package
//   or require, but for a bundle version (Invocation::bundle_root), whose require loads Lua
//   modules of the bundle only (text, never C; package.path shows where, package.cpath is ""); `os`
//   holds only time, clock, date and getenv, which returns the caller's mapped secrets and nil for
//   anything else. setmetatable refuses __gc: Lua runs finalizers with hooks off, out of the
//   deadline's reach. print appends to the execution's bounded log. `json` holds encode, decode and
//   the null sentinel (see lua_json.h); `http` holds request, the outbound HTTP facility through
//   the egress gateway (see lua_http.h and egress_fetch.h).
// - Errors raised by the handler (error(), runtime errors, stack overflow) give 500 errorType
//   "LuaError" with Lua's message ("handler.lua:LINE: message"); the traceback goes to the log.
//   No global service_handler function gives "HandlerNotFound"; a return value JSON cannot
//   express (a function, a cycle, NaN) gives "InvalidResult".
//
// Known limit: the hook runs between instructions, so a single library call that loops in C
// without allocating is not interrupted. The two that can loop without bound (string.rep of an
// empty string, table.move over a huge range) are guarded; pattern matching with heavy
// backtracking (string.find(s, ".-.-.-.-x") on a long s) is not. That is why the executor runs
// LuaRuntime inside a sandboxed worker process (lua_worker.h), which is killed at the deadline.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>

#include "toolgate/executor/egress_fetch.h"
#include "toolgate/executor/runtime.h"

namespace toolgate::executor {

class LuaRuntime : public Runtime {
 public:
  // egress: how http.request reaches the egress gateway; without a proxy (the default, and
  // the executor's in-process Lua) every request raises "egress is not available in this
  // sandbox".
  explicit LuaRuntime(RuntimeLimits limits, EgressConfig egress = {})
      : limits_(limits), egress_(std::move(egress)) {}

  std::string_view name() const override { return "lua"; }
  // Thread-safe: each call owns its own lua_State.
  ExecutionOutcome Run(const Invocation& invocation) override;

 private:
  RuntimeLimits limits_;
  EgressConfig egress_;
};

class LuaState;  // one lua_State and its sandbox (lua_runtime.cc)

// Runs calls one at a time in one warm state, reset between calls: an echo call takes about a
// sixth of its time with a new state. The reset leaves nothing of a call for the next one, as a new
// state would not: every table reachable from the globals, the string metatable and the
// registry (the libraries, package.loaded, the upvalues of library functions) gets back its
// contents and metatable as set up, the chunk's _ENV is the globals again and math.random is
// reseeded. What the call made (its coroutines included) is then unreachable; a full collection
// frees it once more than 256 KiB (an eighth of the memory cap if less) has piled up, so a
// call's budget starts at most that far above a new state's. The hook is off between calls and
// set again by each.
//
// The state is replaced by a new one instead of reset when the call did not end cleanly (an
// error, a timeout, a refused allocation: it may have stopped anywhere), when the reset itself
// fails, after max_calls calls, and when a call differs in code, bundle or memory cap.
//
// Not thread-safe: one per thread (the Lua worker serves its calls one at a time).
class WarmLuaRuntime : public Runtime {
 public:
  explicit WarmLuaRuntime(RuntimeLimits limits, EgressConfig egress = {},
                          int64_t max_calls = 10000);
  ~WarmLuaRuntime() override;

  std::string_view name() const override { return "lua"; }
  // Not thread-safe (unlike LuaRuntime::Run): calls must not overlap.
  ExecutionOutcome Run(const Invocation& invocation) override;

  // How many states this runtime has created: a call that found a warm state created none.
  int64_t states_created() const { return states_created_; }

 private:
  // Whether the warm state was set up for calls like invocation.
  bool Fits(const Invocation& invocation) const;

  RuntimeLimits limits_;
  EgressConfig egress_;
  int64_t max_calls_;
  std::unique_ptr<LuaState> state_;  // null before the first call and after a dropped state
  int64_t calls_ = 0;                // served by state_
  int64_t states_created_ = 0;
  // The shape state_ was set up for.
  std::string code_;
  std::string bundle_root_;
  std::string handler_;
  int64_t memory_mb_ = 0;
};

}  // namespace toolgate::executor
