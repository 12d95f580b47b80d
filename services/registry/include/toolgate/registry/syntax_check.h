// Syntax checks for handler code at publish time: the code is compiled, never run.
//
// Each check returns OK when the code compiles; InvalidArgument whose message is the compiler's
// (e.g. "handler:3: 'end' expected near <eof>"); NotFound when the runtime's toolchain is not
// installed on this server; Unavailable or Timeout when the check itself could not finish.
// Thread-safe. Python and JavaScript checks start a process (tens of milliseconds): publishing
// is not a hot path.
#pragma once

#include <functional>
#include <string_view>

#include "toolgate/base/status.h"

namespace toolgate::registry {

// luaL_loadbufferx on a fresh lua_State, text chunks only; the chunk is named "handler".
Status CheckLuaSyntax(std::string_view code);
// /usr/bin/python3 parses the code with ast.parse; messages read "handler.py:LINE:COL: msg".
Status CheckPythonSyntax(std::string_view code);
// node --check on a temporary copy; messages name the file handler.js.
Status CheckJavaScriptSyntax(std::string_view code);

// Dispatches on runtime ("lua", "python", "javascript"); InvalidArgument for another runtime.
Status CheckSyntax(std::string_view runtime, std::string_view code);

// The check a publish request runs, replaceable in tests.
using SyntaxChecker = std::function<Status(std::string_view runtime, std::string_view code)>;

}  // namespace toolgate::registry
