// The Lua worker: WarmLuaRuntime (lua_runtime.h) inside a sandboxed worker process, speaking the
// frame protocol of worker_protocol.h (binary toolgate-lua-worker, installed as
// runtimes/lua/toolgate-lua-worker).
//
// Why a process for Lua, which sandboxes itself in-process: the instruction hook that enforces
// the deadline cannot interrupt a single library call that loops in C, and Lua's pattern matcher
// backtracks without bound (string.find(string.rep("a", 300), ".-.-.-.-x")). In-process such a
// call would hold an executor thread forever; in a worker it is killed at the deadline like any
// other, and only its worker is replaced.
//
// Calls run in one warm lua_State reset between calls (WarmLuaRuntime), so nothing of a call
// survives into the next even inside a worker. The worker answers kValue with the call's normalised
// {"statusCode", "body"} (which normalises to itself), kError for handler errors, kTimeout when the
// hook stopped the handler; what the handler printed, and its traceback, go to fd 1, the execution
// log.
#pragma once

#include "toolgate/executor/egress_fetch.h"

namespace toolgate::executor {

// Serves one worker's life: reads frames from requests, answers on replies, writes logs to
// log_fd. Handlers' http.request goes out as egress says (the worker's environment:
// EgressConfigFromEnvironment). Returns the process exit code when the executor closes requests
// (0) or breaks the protocol (2).
int ServeLuaWorker(int requests, int replies, int log_fd, const EgressConfig& egress = {});

}  // namespace toolgate::executor
