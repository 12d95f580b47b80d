#include "toolgate/executor/lua_runtime.h"

#include <gtest/gtest.h>
#include <simdjson.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <lua.hpp>
#include <string>
#include <vector>

#include "testing/notice_recorder.h"

namespace toolgate::executor {
namespace {

using Kind = ExecutionOutcome::Kind;

// JSON text with object keys sorted, so that documents compare regardless of key order.
std::string Canonical(simdjson::dom::element e) {
  switch (e.type()) {
    case simdjson::dom::element_type::OBJECT: {
      std::vector<std::pair<std::string, std::string>> fields;
      simdjson::dom::object object = e.get_object().value_unsafe();
      for (auto field : object) {
        fields.emplace_back(std::string(field.key), Canonical(field.value));
      }
      std::sort(fields.begin(), fields.end());
      std::string out = "{";
      for (const auto& [key, value] : fields) {
        if (out.size() > 1) out += ",";
        out += "\"" + key + "\":" + value;
      }
      return out + "}";
    }
    case simdjson::dom::element_type::ARRAY: {
      std::string out = "[";
      simdjson::dom::array array = e.get_array().value_unsafe();
      for (auto child : array) {
        if (out.size() > 1) out += ",";
        out += Canonical(child);
      }
      return out + "]";
    }
    default:
      return simdjson::minify(e);
  }
}

std::string Canonical(std::string_view json) {
  simdjson::dom::parser parser;
  simdjson::padded_string padded(json);
  simdjson::dom::element root;
  if (parser.parse(padded).get(root) != simdjson::SUCCESS) {
    ADD_FAILURE() << "not JSON: " << json;
    return "";
  }
  return Canonical(root);
}

// A string field of a JSON object.
std::string Field(std::string_view json, std::string_view key) {
  simdjson::dom::parser parser;
  simdjson::padded_string padded(json);
  std::string_view value;
  if (parser.parse(padded)[key].get_string().get(value) != simdjson::SUCCESS) return "<absent>";
  return std::string(value);
}

class LuaRuntimeTest : public ::testing::Test {
 protected:
  ExecutionOutcome Run(std::string_view code, std::string_view event = "{}",
                       int64_t timeout_ms = 5000, int64_t memory_mb = 64,
                       std::vector<EnvVar> env = {}) {
    Invocation inv;
    inv.code = code;
    inv.event_json = event;
    inv.execution_id = "exec-1";
    inv.function_id = "9b2f6a1c-0d3e-4f5a-8b7c-1d2e3f4a5b6c";
    inv.version = "1.2.0";
    inv.caller_org_id = "org-7";
    inv.timeout_ms = timeout_ms;
    inv.memory_mb = memory_mb;
    inv.env = std::move(env);
    inv.notices = notices_;
    return LuaRuntime(limits_, egress_).Run(inv);
  }

  // Runs code and expects a 500 of the given errorType; returns errorMessage.
  std::string ExpectError(std::string_view code, std::string_view type, int64_t memory_mb = 64) {
    ExecutionOutcome out = Run(code, "{}", 5000, memory_mb);
    EXPECT_EQ(out.kind, Kind::kCompleted);
    EXPECT_EQ(out.status_code, 500) << out.body;
    EXPECT_EQ(Field(out.body, "errorType"), type) << code << "\n" << out.body;
    return Field(out.body, "errorMessage");
  }

  RuntimeLimits limits_;
  EgressConfig egress_;            // none: http.request says egress is not available
  NoticeSink* notices_ = nullptr;  // where Run's calls send their notices; null: not wanted
};

constexpr const char* kLuaNotices = R"lua(
  function service_handler(event)
    progress(1, 3, "one")
    progress(2, 3)
    log("info", {step = 2}, "steps")
    progress(3)
    log("warning", "almost")
    return {ok = true}
  end)lua";

TEST_F(LuaRuntimeTest, ProgressAndLogReachTheSinkInOrder) {
  testing::NoticeRecorder recorder;
  notices_ = &recorder.sink;
  ExecutionOutcome out = Run(kLuaNotices);
  EXPECT_EQ(out.status_code, 200) << out.body;
  EXPECT_EQ(out.body, R"({"ok":true})");
  testing::ExpectTheFiveNotices(recorder.seen);
}

TEST_F(LuaRuntimeTest, WithoutASinkNoticesAreNoOpsAndTheResultIsTheSame) {
  ExecutionOutcome out = Run(kLuaNotices);
  EXPECT_EQ(out.status_code, 200) << out.body;
  EXPECT_EQ(out.body, R"({"ok":true})");
}

TEST_F(LuaRuntimeTest, NoticesPastTheBoundsAreDropped) {
  testing::NoticeRecorder recorder;
  notices_ = &recorder.sink;
  ExecutionOutcome out = Run(R"lua(
    function service_handler()
      log("info", string.rep("x", 20000))
      for i = 1, 1000 do progress(i, 1000) end
      return "done"
    end)lua");
  EXPECT_EQ(out.body, R"("done")");
  ASSERT_EQ(recorder.seen.size(), 100u);
  EXPECT_EQ(recorder.seen.front().progress, 1);
  EXPECT_EQ(recorder.seen.back().progress, 100);
  EXPECT_EQ(recorder.sink.dropped(), 901u);
}

TEST_F(LuaRuntimeTest, BadNoticeArgumentsAreErrorsTheHandlerSees) {
  testing::NoticeRecorder recorder;
  notices_ = &recorder.sink;
  std::string message = ExpectError("function service_handler() log('loud', 1) end", "LuaError");
  EXPECT_NE(message.find("log: level must be one of debug, info"), std::string::npos) << message;
  EXPECT_NE(message.find("got 'loud'"), std::string::npos) << message;
  message = ExpectError("function service_handler() progress('half') end", "LuaError");
  EXPECT_NE(message.find("bad argument #1 to 'progress'"), std::string::npos) << message;
  message = ExpectError("function service_handler() log('info', function() end) end", "LuaError");
  EXPECT_NE(message.find("log: data cannot be encoded as JSON"), std::string::npos) << message;
  // Caught, it is the handler's to handle; and nothing was sent.
  ExecutionOutcome out = Run(R"lua(
    function service_handler() return {caught = not pcall(log, "verbose", "x")} end)lua");
  EXPECT_EQ(out.body, R"({"caught":true})");
  EXPECT_TRUE(recorder.seen.empty());
  notices_ = nullptr;  // the level is checked when nobody wants the notice, too
  ExpectError("function service_handler() log('loud', 1) end", "LuaError");
}

TEST_F(LuaRuntimeTest, EchoReturnsTheEvent) {
  std::string event = R"({"a":[1,2,{"b":null}],"s":"x","n":1.5,"t":true,"o":{"k":"v"}})";
  ExecutionOutcome out = Run("function service_handler(event) return event end", event);
  EXPECT_EQ(out.kind, Kind::kCompleted);
  EXPECT_EQ(out.status_code, 200);
  EXPECT_EQ(Canonical(out.body), Canonical(event));
}

TEST_F(LuaRuntimeTest, StringEventArrivesAsALuaString) {
  ExecutionOutcome out =
      Run("function service_handler(event) return {t = type(event), v = event} end", R"("hello")");
  EXPECT_EQ(out.status_code, 200);
  EXPECT_EQ(Canonical(out.body), R"({"t":"string","v":"hello"})");
}

TEST_F(LuaRuntimeTest, ExplicitStatusCodeWithStringBody) {
  ExecutionOutcome out =
      Run(R"(function service_handler() return {statusCode = 201, body = "created"} end)");
  EXPECT_EQ(out.status_code, 201);
  EXPECT_EQ(out.body, "created");
}

TEST_F(LuaRuntimeTest, ExplicitStatusCodeWithTableBody) {
  ExecutionOutcome out =
      Run(R"(function service_handler() return {statusCode = 400, body = {error = "bad"}} end)");
  EXPECT_EQ(out.status_code, 400);
  EXPECT_EQ(out.body, R"({"error":"bad"})");
}

TEST_F(LuaRuntimeTest, StatusCodeWithoutBodyGivesNull) {
  ExecutionOutcome out = Run("function service_handler() return {statusCode = 204} end");
  EXPECT_EQ(out.status_code, 204);
  EXPECT_EQ(out.body, "null");
}

TEST_F(LuaRuntimeTest, StatusCodeOutOfRangeIsInvalid) {
  ExpectError("function service_handler() return {statusCode = 99} end", "InvalidStatusCode");
}

TEST_F(LuaRuntimeTest, NonObjectReturnValues) {
  struct Case {
    const char* value;
    const char* body;
  };
  for (const Case& c : std::vector<Case>{{"42", "42"},
                                         {"'hi'", R"("hi")"},
                                         {"nil", "null"},
                                         {"true", "true"},
                                         {"{1, 2, 3}", "[1,2,3]"},
                                         {"{}", "{}"},
                                         {"2.5", "2.5"}}) {
    ExecutionOutcome out =
        Run(std::string("function service_handler() return ") + c.value + " end");
    EXPECT_EQ(out.status_code, 200) << c.value;
    EXPECT_EQ(out.body, c.body) << c.value;
  }
}

TEST_F(LuaRuntimeTest, JsonRoundTrip) {
  ExecutionOutcome out = Run(R"lua(
    function service_handler()
      local doc = '{"a":{"b":[1,2.5,{"c":null}],"d":"é☃😀\\u00e9"},"e":[],"f":{},' ..
                  '"g":[null,null],"h":-9007199254740993,"i":true,"j":"tab\\tquote\\""}'
      local t = json.decode(doc)
      assert(t.a.b[3].c == json.null, "null sentinel")
      assert(math.type(t.a.b[1]) == "integer", "integer")
      assert(t.a.b[2] == 2.5, "float")
      assert(t.a.d == "é☃😀é", "unicode")
      assert(#t.g == 2 and t.g[1] == json.null, "nulls keep array length")
      assert(t.h == -9007199254740993, "64-bit integer")
      assert(t.j == 'tab\tquote"', "escapes")
      local again = json.decode(json.encode(t))
      assert(again.a.d == t.a.d and again.h == t.h and again.g[2] == json.null, "round trip")
      return {
        encoded = json.encode(t),
        empty = json.encode({}),
        array = json.encode({1, "two", false, json.null}),
        nested = json.encode({x = {y = {z = {}}}}),
        null = json.encode(json.null),
        nil_value = json.encode(nil),
        str = json.encode('é\n"q"'),
        float = json.encode(0.1),
        int = json.encode(-7),
        decoded_string = json.decode('"plain"'),
      }
    end)lua");
  ASSERT_EQ(out.status_code, 200) << out.body;
  EXPECT_EQ(Canonical(Field(out.body, "encoded")),
            Canonical(R"({"a":{"b":[1,2.5,{"c":null}],"d":"é☃😀é"},"e":{},"f":{},)"
                      R"("g":[null,null],"h":-9007199254740993,"i":true,"j":"tab\tquote\""})"));
  EXPECT_EQ(Field(out.body, "empty"), "{}");
  EXPECT_EQ(Field(out.body, "array"), R"([1,"two",false,null])");
  EXPECT_EQ(Field(out.body, "nested"), R"({"x":{"y":{"z":{}}}})");
  EXPECT_EQ(Field(out.body, "null"), "null");
  EXPECT_EQ(Field(out.body, "nil_value"), "null");
  EXPECT_EQ(Field(out.body, "str"), R"("é\n\"q\"")");
  EXPECT_EQ(Field(out.body, "float"), "0.1");
  EXPECT_EQ(Field(out.body, "int"), "-7");
  EXPECT_EQ(Field(out.body, "decoded_string"), "plain");
}

TEST_F(LuaRuntimeTest, JsonTablesThatAreNotSequencesBecomeObjects) {
  ExecutionOutcome out = Run(R"lua(
    function service_handler()
      return {mixed = json.encode({1, 2, x = 3}), sparse = json.encode({[1] = 1, [3] = 3}),
              zero = json.encode({[0] = "z"}), float_key = json.encode({[1.5] = true})}
    end)lua");
  ASSERT_EQ(out.status_code, 200) << out.body;
  EXPECT_EQ(Canonical(Field(out.body, "mixed")), R"({"1":1,"2":2,"x":3})");
  EXPECT_EQ(Canonical(Field(out.body, "sparse")), R"({"1":1,"3":3})");
  EXPECT_EQ(Field(out.body, "zero"), R"({"0":"z"})");
  EXPECT_EQ(Field(out.body, "float_key"), R"({"1.5":true})");
}

TEST_F(LuaRuntimeTest, JsonErrorsAreLuaErrors) {
  ExecutionOutcome out = Run(R"lua(
    local function err(f, ...)
      local ok, e = pcall(f, ...)
      assert(not ok, "expected an error")
      return e
    end
    function service_handler()
      local cycle = {}
      cycle.self = cycle
      local deep = {}
      local cur = deep
      for i = 1, 1100 do cur.x = {}; cur = cur.x end
      return {
        cycle = err(json.encode, cycle),
        deep = err(json.encode, deep),
        fn = err(json.encode, {f = print}),
        nan = err(json.encode, 0/0),
        inf = err(json.encode, math.huge),
        bad = err(json.decode, "{nope"),
        notstring = err(json.decode, {}),
        key = err(json.encode, {[true] = 1}),
        utf8 = err(json.encode, "\xff"),
        noarg = err(json.encode),
      }
    end)lua");
  ASSERT_EQ(out.status_code, 200) << out.body;
  EXPECT_NE(
      Field(out.body, "cycle").find("json.encode: cannot encode a table that contains itself"),
      std::string::npos);
  EXPECT_NE(Field(out.body, "deep").find("deeper than 1000"), std::string::npos);
  EXPECT_NE(Field(out.body, "fn").find("cannot encode a function value"), std::string::npos);
  EXPECT_NE(Field(out.body, "nan").find("NaN"), std::string::npos);
  EXPECT_NE(Field(out.body, "inf").find("infinity"), std::string::npos);
  EXPECT_NE(Field(out.body, "bad").find("json.decode: invalid JSON"), std::string::npos);
  EXPECT_NE(Field(out.body, "notstring").find("string expected"), std::string::npos);
  EXPECT_NE(Field(out.body, "key").find("key of type boolean"), std::string::npos);
  EXPECT_NE(Field(out.body, "utf8").find("UTF-8"), std::string::npos);
  EXPECT_NE(Field(out.body, "noarg").find("value expected"), std::string::npos);
}

TEST_F(LuaRuntimeTest, ContextCarriesTheInvocationAndTheMappedSecrets) {
  ExecutionOutcome out = Run(R"lua(
    function service_handler(event, context)
      local count = 0
      for _ in pairs(context.env) do count = count + 1 end
      return {
        execution_id = context.execution_id, function_id = context.function_id,
        version = context.version, caller_org_id = context.caller_org_id,
        deadline_ok = context.deadline_ms > 0 and context.deadline_ms <= 5000,
        env_count = count, env_key = context.env.API_KEY,
        getenv = os.getenv("API_KEY"), other = os.getenv("OTHER"),
        path_hidden = os.getenv("PATH") == nil, home_hidden = os.getenv("HOME") == nil,
        unknown_hidden = os.getenv("NOPE") == nil,
      }
    end)lua",
                             "{}", 5000, 64, {{"API_KEY", "s3cret"}, {"OTHER", "v"}});
  ASSERT_EQ(out.status_code, 200) << out.body;
  EXPECT_EQ(
      Canonical(out.body),
      Canonical(R"({"execution_id":"exec-1","function_id":"9b2f6a1c-0d3e-4f5a-8b7c-1d2e3f4a5b6c",
                 "version":"1.2.0","caller_org_id":"org-7","deadline_ok":true,"env_count":2,
                 "env_key":"s3cret","getenv":"s3cret","other":"v","path_hidden":true,
                 "home_hidden":true,"unknown_hidden":true})"));
}

TEST_F(LuaRuntimeTest, NoSecretsMeansAnEmptyEnv) {
  ExecutionOutcome out =
      Run("function service_handler(e, c) return {n = next(c.env) == nil, "
          "p = os.getenv('PATH') == nil} end");
  EXPECT_EQ(Canonical(out.body), R"({"n":true,"p":true})");
}

TEST_F(LuaRuntimeTest, ForbiddenFacilitiesFail) {
  for (const char* snippet : {
           "return io.open('/etc/passwd')",
           "return io.write('x')",
           "os.execute('true')",
           "os.exit(1)",
           "os.remove('/tmp/toolgate-executor-test')",
           "os.rename('a', 'b')",
           "return os.tmpname()",
           "return require('io')",
           "return package.loaded",
           "return debug.getinfo(1)",
           "return dofile('/etc/passwd')",
           "return loadfile('/etc/passwd')",
           "return string.dump(service_handler)",
           "return ('').dump(service_handler)",
           "collectgarbage()",
           "return collectgarbage('count')",
       }) {
    std::string message =
        ExpectError(std::string("function service_handler() ") + snippet + " end", "LuaError");
    EXPECT_NE(message.find("nil value"), std::string::npos) << snippet << ": " << message;
  }
}

TEST_F(LuaRuntimeTest, OnlyTheSafeLibrariesAreThere) {
  ExecutionOutcome out = Run(R"lua(
    local function keys(t)
      local out = {}
      for k in pairs(t) do out[#out + 1] = k end
      table.sort(out)
      return table.concat(out, ",")
    end
    function service_handler()
      return {os = keys(os), dump = string.dump == nil, string_meta_dump = ("").dump == nil,
              io = io == nil, debug = debug == nil, package = package == nil,
              require = require == nil, loadstring = loadstring == nil}
    end)lua");
  ASSERT_EQ(out.status_code, 200) << out.body;
  EXPECT_EQ(Canonical(out.body),
            Canonical(R"({"os":"clock,date,getenv,time","dump":true,"string_meta_dump":true,
                 "io":true,"debug":true,"package":true,"require":true,"loadstring":true})"));
}

// What pcall(http.request, <args>) gives: "ok" or the error value.
constexpr const char* kHttpProbe = R"lua(
  function service_handler(event)
    local ok, err = pcall(http.request, load("return " .. event.args)())
    return {result = ok and "ok" or err}
  end)lua";

TEST_F(LuaRuntimeTest, HttpWithoutEgressRaisesTheMessageAsItIs) {
  ExecutionOutcome out = Run(kHttpProbe, R"({"args":"{url = 'https://example.com/'}"})");
  ASSERT_EQ(out.status_code, 200) << out.body;
  // No "handler.lua:N:" position: handlers compare the message itself.
  EXPECT_EQ(Field(out.body, "result"), "egress is not available in this sandbox");
}

TEST_F(LuaRuntimeTest, HttpArgumentsAreCheckedBeforeAnythingIsSent) {
  egress_.proxy = "127.0.0.1:1";  // nothing listens there: a request that went out would fail
  const std::pair<const char*, const char*> cases[] = {
      {"nil", "bad argument #1"},
      {"{}", "http.request: url is required"},
      {"{url = 5}", "http.request: url must be a string"},
      {"{url = 'ftp://example.com/'}", "not an absolute http:// or https:// URL"},
      {"{url = 'example.com'}", "not an absolute http:// or https:// URL"},
      {"{url = 'http://example.com/', method = 'GET X'}", "not an HTTP method"},
      {"{url = 'http://example.com/', headers = 'x'}", "http.request: headers must be a table"},
      {"{url = 'http://example.com/', headers = {'x'}}", "headers must map names to strings"},
      {"{url = 'http://example.com/', headers = {['X-A'] = 'a' .. string.char(13, 10) .. 'X: b'}}",
       "header X-A is not a valid header"},
      {"{url = 'http://example.com/', timeout_ms = -1}", "timeout_ms must be a positive integer"},
      {"{url = 'http://example.com/', timeout_ms = 1.5}", "timeout_ms must be a positive integer"},
  };
  for (const auto& [args, message] : cases) {
    ExecutionOutcome out = Run(kHttpProbe, std::string(R"({"args":")") + args + R"("})", 5000, 64);
    ASSERT_EQ(out.status_code, 200) << args << ": " << out.body;
    EXPECT_NE(Field(out.body, "result").find(message), std::string::npos)
        << args << ": " << Field(out.body, "result");
  }
}

TEST_F(LuaRuntimeTest, HttpWhenTheGatewayCannotBeReachedIsAnError) {
  egress_.proxy = "127.0.0.1:1";
  ExecutionOutcome out = Run(kHttpProbe, R"({"args":"{url = 'http://example.com/?key=secret'}"})");
  ASSERT_EQ(out.status_code, 200) << out.body;
  std::string result = Field(out.body, "result");
  EXPECT_EQ(result.rfind("the request to example.com failed: ", 0), 0u) << result;
  EXPECT_EQ(result.find("secret"), std::string::npos) << result;
}

// The bytecode of `return 42`, as a Lua string literal.
std::string BinaryChunkLiteral() {
  lua_State* L = luaL_newstate();
  EXPECT_EQ(luaL_loadstring(L, "return 42"), LUA_OK);
  std::string bytes;
  lua_dump(
      L,
      [](lua_State*, const void* p, size_t n, void* ud) {
        static_cast<std::string*>(ud)->append(static_cast<const char*>(p), n);
        return 0;
      },
      &bytes, 0);
  lua_close(L);
  std::string literal = "\"";
  for (unsigned char c : bytes) literal += "\\" + std::to_string(c);
  return literal + "\"";
}

TEST_F(LuaRuntimeTest, LoadAcceptsTextChunksOnly) {
  ExecutionOutcome out = Run("local chunk = " + BinaryChunkLiteral() + R"lua(
    function service_handler()
      local f1, e1 = load(chunk)
      local f2, e2 = load(chunk, "c", "b")
      local f3, e3 = load(chunk, "c", "bt", {})
      return {rejected = f1 == nil and f2 == nil and f3 == nil, e1 = e1, e2 = e2, e3 = e3,
              text = load("return 1 + 1")(), env = load("return x", "c", "t", {x = 5})(),
              reader = load(coroutine.wrap(function() coroutine.yield("return ") coroutine.yield("7") end))()}
    end)lua");
  ASSERT_EQ(out.status_code, 200) << out.body;
  EXPECT_NE(out.body.find(R"("rejected":true)"), std::string::npos) << out.body;
  for (const char* key : {"e1", "e2", "e3"}) {
    EXPECT_NE(Field(out.body, key).find("attempt to load a binary chunk"), std::string::npos)
        << out.body;
  }
  EXPECT_NE(out.body.find(R"("text":2)"), std::string::npos) << out.body;
  EXPECT_NE(out.body.find(R"("env":5)"), std::string::npos) << out.body;
  EXPECT_NE(out.body.find(R"("reader":7)"), std::string::npos) << out.body;
}

TEST_F(LuaRuntimeTest, InfiniteLoopTimesOut) {
  ExecutionOutcome out = Run("function service_handler() while true do end end", "{}", 100);
  EXPECT_EQ(out.kind, Kind::kTimeout);
}

TEST_F(LuaRuntimeTest, InfiniteLoopInTheChunkTimesOut) {
  ExecutionOutcome out = Run("while true do end", "{}", 100);
  EXPECT_EQ(out.kind, Kind::kTimeout);
}

TEST_F(LuaRuntimeTest, PcallCannotSwallowTheTimeout) {
  ExecutionOutcome out = Run(R"lua(
    function service_handler()
      while true do pcall(function() while true do end end) end
    end)lua",
                             "{}", 100);
  EXPECT_EQ(out.kind, Kind::kTimeout);
}

TEST_F(LuaRuntimeTest, LoopsInCoroutinesTimeOut) {
  ExecutionOutcome wrapped =
      Run("function service_handler() coroutine.wrap(function() while true do end end)() end", "{}",
          100);
  EXPECT_EQ(wrapped.kind, Kind::kTimeout);
  ExecutionOutcome resumed = Run(R"lua(
    function service_handler()
      while true do coroutine.resume(coroutine.create(function() while true do end end)) end
    end)lua",
                                 "{}", 100);
  EXPECT_EQ(resumed.kind, Kind::kTimeout);
}

TEST_F(LuaRuntimeTest, FinalizersAreRefused) {
  // Lua runs __gc with hooks off: a looping finalizer would escape the deadline.
  for (const char* metatable : {"{__gc = function() while true do end end}", "{__gc = false}"}) {
    std::string message = ExpectError(
        std::string("setmetatable({}, ") + metatable + ") function service_handler() end",
        "LuaError");
    EXPECT_NE(message.find("__gc metamethods are not supported"), std::string::npos) << message;
  }
  ExecutionOutcome out = Run(R"lua(
    function service_handler()
      local t = setmetatable({}, {__index = function(_, k) return k .. "!" end})
      local mt = getmetatable(t)
      mt.__gc = function() while true do end end  -- too late: t is not marked for finalization
      return t.hi
    end)lua");
  EXPECT_EQ(out.body, R"("hi!")");
}

TEST_F(LuaRuntimeTest, GuardedLibraryLoopsEnd) {
  ExecutionOutcome rep =
      Run("function service_handler() return string.rep('', 1e18) .. ('').rep('', 1e18, '') end");
  EXPECT_EQ(rep.body, R"("")");
  std::string message =
      ExpectError("function service_handler() table.move({}, 1, 1e15, 1) end", "LuaError");
  EXPECT_NE(message.find("too many elements"), std::string::npos) << message;
  ExecutionOutcome move =
      Run("function service_handler() return table.move({1, 2, 3}, 1, 3, 2, {}) end");
  EXPECT_EQ(move.body, R"({"2":1,"3":2,"4":3})");
}

TEST_F(LuaRuntimeTest, GrowingTableHitsTheMemoryLimit) {
  std::string message =
      ExpectError("function service_handler() local t = {} while true do t[#t + 1] = {} end end",
                  "MemoryLimitExceeded", 16);
  EXPECT_NE(message.find("16 MB"), std::string::npos) << message;
}

TEST_F(LuaRuntimeTest, StringBombsHitTheMemoryLimit) {
  ExpectError("function service_handler() return string.rep('x', 1e9) end", "MemoryLimitExceeded",
              16);
  ExpectError("function service_handler() local s = 'x' while true do s = s .. s end end",
              "MemoryLimitExceeded", 16);
  ExpectError(
      "function service_handler() local t = {} for i = 1, 1e7 do t[i] = 'abcdefgh' end "
      "return table.concat(t) end",
      "MemoryLimitExceeded", 16);
}

TEST_F(LuaRuntimeTest, MemoryLimitDuringJsonDecode) {
  ExpectError(
      "function service_handler() local s = '[' .. string.rep('[1,2,3,4],', 400000) .. '1]' "
      "return #json.decode(s) end",
      "MemoryLimitExceeded", 16);
}

TEST_F(LuaRuntimeTest, DeepRecursionIsAHandlerErrorAndTheRuntimeCarriesOn) {
  std::string message = ExpectError(
      "local function f(n) return f(n + 1) + 1 end function service_handler() return f(1) end",
      "LuaError", 128);
  EXPECT_NE(message.find("stack overflow"), std::string::npos) << message;
  ExecutionOutcome after = Run("function service_handler(e) return e end", R"({"ok":true})");
  EXPECT_EQ(after.status_code, 200);
  EXPECT_EQ(after.body, R"({"ok":true})");
}

TEST_F(LuaRuntimeTest, ErrorGivesA500WithItsMessageAndTheTracebackInTheLog) {
  ExecutionOutcome out = Run("function service_handler()\n  error('boom')\nend");
  EXPECT_EQ(out.status_code, 500);
  EXPECT_EQ(Field(out.body, "errorType"), "LuaError");
  EXPECT_EQ(Field(out.body, "errorMessage"), "handler.lua:2: boom");
  EXPECT_NE(out.logs.find("stack traceback"), std::string::npos) << out.logs;
}

TEST_F(LuaRuntimeTest, ErrorObjectsThatAreNotStrings) {
  EXPECT_EQ(ExpectError("function service_handler() error({code = 1}) end", "LuaError"),
            "(error object is a table value)");
  EXPECT_EQ(ExpectError("function service_handler() error(42) end", "LuaError"), "42");
}

TEST_F(LuaRuntimeTest, ErrorMessagesAreValidUtf8) {
  ExecutionOutcome out = Run("function service_handler() error('bad \\xff byte', 0) end");
  EXPECT_EQ(out.status_code, 500);
  EXPECT_TRUE(simdjson::validate_utf8(out.body.data(), out.body.size()));
  EXPECT_EQ(Field(out.body, "errorMessage"), "bad \xEF\xBF\xBD byte");
}

TEST_F(LuaRuntimeTest, ReturningAFunctionIsAnInvalidResult) {
  std::string message = ExpectError("function service_handler() return print end", "InvalidResult");
  EXPECT_NE(message.find("function"), std::string::npos) << message;
  ExpectError("function service_handler() return {f = print} end", "InvalidResult");
  ExpectError("function service_handler() local t = {} t[1] = t return t end", "InvalidResult");
}

TEST_F(LuaRuntimeTest, ResponseTooLarge) {
  limits_.max_response_bytes = 1024;
  ExpectError("function service_handler() return string.rep('x', 2000) end", "ResponseTooLarge");
  ExpectError(
      "function service_handler() return {statusCode = 200, body = string.rep('x', 2000)} end",
      "ResponseTooLarge");
  ExpectError("function service_handler() return string.rep('\\1', 100000) end",
              "ResponseTooLarge");
  ExecutionOutcome fits = Run("function service_handler() return string.rep('x', 1000) end");
  EXPECT_EQ(fits.status_code, 200);
}

TEST_F(LuaRuntimeTest, MissingHandler) {
  ExpectError("x = 1", "HandlerNotFound");
  ExpectError("service_handler = 5", "HandlerNotFound");
}

TEST_F(LuaRuntimeTest, SyntaxErrorIsALuaError) {
  std::string message = ExpectError("function service_handler( end", "LuaError");
  EXPECT_EQ(message.rfind("handler.lua:1:", 0), 0u) << message;
}

TEST_F(LuaRuntimeTest, MemoryAndTimeAreMeasured) {
  ExecutionOutcome small = Run("function service_handler() return 1 end");
  EXPECT_GE(small.memory_used_mb, 1);
  // The handler's time, in milliseconds: one that spins for 30 ms of its own CPU time (which
  // cannot be more than the wall-clock time it ran) reports at least 30.
  ExecutionOutcome spinning =
      Run("function service_handler()\n"
          "  local start = os.clock()\n"
          "  while os.clock() - start < 0.03 do end\n"
          "  return 1\n"
          "end");
  EXPECT_EQ(spinning.body, "1");
  EXPECT_GE(spinning.runtime_ms, 30);
  ExecutionOutcome big =
      Run("function service_handler() local s = string.rep('x', 20 * 1024 * 1024) return #s end");
  EXPECT_EQ(big.body, "20971520");
  EXPECT_GE(big.memory_used_mb, 21);
  EXPECT_LE(big.memory_used_mb, 64);
}

TEST_F(LuaRuntimeTest, PrintGoesToTheLog) {
  ExecutionOutcome out =
      Run("function service_handler() print('hello', 1, nil, true) print() return 0 end");
  EXPECT_EQ(out.logs, "hello\t1\tnil\ttrue\n\n");
}

TEST_F(LuaRuntimeTest, TheLogIsBounded) {
  limits_.max_log_bytes = 100;
  ExecutionOutcome out =
      Run("function service_handler() for i = 1, 50 do print('abcdefghij') end return 0 end");
  EXPECT_EQ(out.status_code, 200);
  EXPECT_EQ(out.logs.size(), 100 + std::string("\n[truncated]\n").size());
  EXPECT_EQ(out.logs.substr(out.logs.size() - 13), "\n[truncated]\n");
}

TEST_F(LuaRuntimeTest, TheLogIsValidUtf8) {
  ExecutionOutcome out = Run("function service_handler() print('a\\xffb') return 0 end");
  EXPECT_EQ(out.logs,
            "a\xEF\xBF\xBD"
            "b\n");
}

// WarmLuaRuntime: each attack runs in one call and must be invisible to the next call on the
// same state. The attack call returns the check too, which shows the attack took effect there.
class WarmLuaRuntimeTest : public ::testing::Test {
 protected:
  ExecutionOutcome Call(std::string_view code, std::string_view event = "{}",
                        int64_t timeout_ms = 5000, int64_t memory_mb = 64) {
    Invocation inv;
    inv.code = code;
    inv.event_json = event;
    inv.execution_id = "exec-1";
    inv.function_id = "fn-1";
    inv.version = "1";
    inv.caller_org_id = "org-7";
    inv.timeout_ms = timeout_ms;
    inv.memory_mb = memory_mb;
    if (!bundle_root_.empty()) {
      inv.code = "";
      inv.bundle_root = bundle_root_;
      inv.handler = "main.lua";
    }
    return runtime_.Run(inv);
  }

  // Runs attack then, on the same warm state, a call that only evaluates check (a Lua
  // expression that is true when nothing of the attack is left).
  void ExpectNothingLeaks(const std::string& attack, const std::string& check) {
    std::string code = "function service_handler(event)\n  if event.attack then\n" + attack +
                       "\n  end\n  return " + check + "\nend";
    if (!bundle_root_.empty()) WriteFile("main.lua", code);
    ExecutionOutcome attacked = Call(code, R"({"attack":true})");
    EXPECT_EQ(attacked.body, "false") << "the attack did not take effect:\n" << attack;
    ExecutionOutcome after = Call(code);
    EXPECT_EQ(after.status_code, 200) << after.body;
    EXPECT_EQ(after.body, "true") << "left behind by:\n" << attack;
    EXPECT_EQ(runtime_.states_created(), 1) << "the state was not recycled";
  }

  void WriteFile(const std::string& name, const std::string& text) {
    FILE* f = std::fopen((bundle_root_ + "/" + name).c_str(), "w");
    ASSERT_NE(f, nullptr);
    std::fwrite(text.data(), 1, text.size(), f);
    std::fclose(f);
  }
  void MakeBundle() {
    char pattern[] = "/tmp/warm-lua-XXXXXX";
    ASSERT_NE(::mkdtemp(pattern), nullptr);
    bundle_root_ = pattern;
  }
  ~WarmLuaRuntimeTest() override {
    if (!bundle_root_.empty()) {
      for (const char* name : {"main.lua", "counter.lua"}) {
        std::remove((bundle_root_ + "/" + name).c_str());
      }
      ::rmdir(bundle_root_.c_str());
    }
  }

  RuntimeLimits limits_;
  WarmLuaRuntime runtime_{limits_};
  std::string bundle_root_;
};

TEST_F(WarmLuaRuntimeTest, ANewGlobalIsGone) {
  ExpectNothingLeaks("leaked = 'secret'", "leaked == nil");
}

TEST_F(WarmLuaRuntimeTest, ARawsetGlobalIsGone) {
  ExpectNothingLeaks("rawset(_G, 'leaked', 1)", "rawget(_G, 'leaked') == nil");
}

TEST_F(WarmLuaRuntimeTest, ReplacedAndRemovedGlobalsComeBack) {
  ExpectNothingLeaks("pairs = nil; os = nil; print = function() end; json = {}",
                     "type(pairs) == 'function' and os ~= nil and os.time ~= nil and "
                     "json.encode ~= nil and print ~= nil");
}

TEST_F(WarmLuaRuntimeTest, AReplacedLibraryFunctionComesBack) {
  ExpectNothingLeaks("string.format = function() return 'pwned' end; table.leak = 1",
                     "string.format('%d', 7) == '7' and table.leak == nil");
}

TEST_F(WarmLuaRuntimeTest, AKeyOnlyRemovedComesBack) {
  // Nothing added or replaced: the reset's only clue is a key fewer than the snapshot holds.
  ExpectNothingLeaks("string.rep = nil; rawset(_G, 'select', nil)",
                     "string.rep ~= nil and select ~= nil");
}

TEST_F(WarmLuaRuntimeTest, TheGuardedLibraryFunctionsComeBack) {
  // The originals behind the guards are out of reach; the guards must be what the next call
  // finds, not whatever replaced them.
  ExpectNothingLeaks(
      "setmetatable = function(t) return t end; load = function() return function() end end",
      "not pcall(setmetatable, {}, {__gc = true}) and load('\\27Lua', 'x', 'b') == nil");
}

TEST_F(WarmLuaRuntimeTest, AMetatableOnTheGlobalsIsGone) {
  ExpectNothingLeaks("setmetatable(_G, {__index = function() return 'ghost' end})",
                     "undefined_name == nil and getmetatable(_G) == nil");
}

TEST_F(WarmLuaRuntimeTest, AMetatableOnALibraryIsGone) {
  ExpectNothingLeaks("setmetatable(string, {__index = function() return 'ghost' end})",
                     "string.nothing == nil and getmetatable(string) == nil");
}

TEST_F(WarmLuaRuntimeTest, TheStringMetatableComesBack) {
  ExpectNothingLeaks(
      "local mt = getmetatable('')\n"
      "mt.__index = {upper = function() return 'pwned' end}\n"
      "mt.__add = function() return 'pwned' end\n"
      "mt.__call = function() return 'pwned' end\n"
      "setmetatable(mt, {__index = function() return 'ghost' end})",
      "('a'):upper() == 'A' and '1' + '2' == 3 and getmetatable('').__call == nil and "
      "getmetatable(getmetatable('')) == nil and getmetatable('').__index == string");
}

TEST_F(WarmLuaRuntimeTest, TheChunksEnvironmentComesBack) {
  // _ENV is an upvalue the handler shares with the cached chunk.
  ExpectNothingLeaks("local G = _G\n_ENV = G.setmetatable({marker = 'stale'}, {__index = G})",
                     "marker == nil");
}

TEST_F(WarmLuaRuntimeTest, ASuspendedCoroutineIsGone) {
  ExpectNothingLeaks(
      "co = coroutine.create(function() coroutine.yield() end)\n"
      "coroutine.resume(co)\n"
      "string.co = co\n"
      "getmetatable('').co = co",
      "co == nil and string.co == nil and getmetatable('').co == nil");
}

TEST_F(WarmLuaRuntimeTest, MathRandomIsReseeded) {
  ExpectNothingLeaks("math.randomseed(7)",
                     "(function() local a = math.random(1, 1 << 40) math.randomseed(7) "
                     "return a ~= math.random(1, 1 << 40) end)()");
}

TEST_F(WarmLuaRuntimeTest, EachCallDrawsOtherRandomNumbers) {
  std::string code = "function service_handler() return tostring(math.random(1, 1 << 50)) end";
  std::string first = Call(code).body;
  EXPECT_NE(Call(code).body, first);
  EXPECT_EQ(runtime_.states_created(), 1);
}

TEST_F(WarmLuaRuntimeTest, RequiredModulesAndPackageLoadedAreForgotten) {
  MakeBundle();
  WriteFile("counter.lua", "return {count = 0}");
  ExpectNothingLeaks(
      "require('counter').count = 5\npackage.loaded.fake = 'planted'\npackage.path = 'x'",
      "require('counter').count == 0 and not pcall(require, 'fake') and package.path ~= 'x'");
}

TEST_F(WarmLuaRuntimeTest, TheNextCallsMemoryBudgetStartsAfresh) {
  // The first call keeps 25 MiB alive in a global; the next one must neither see it counted
  // (its peak) nor lose it from its own 64 MiB budget (building a 25 MiB string takes 50).
  std::string code =
      "function service_handler(event)\n"
      "  if event.fill then hoard = string.rep('x', 25 << 20) end\n"
      "  if event.again then local t = string.rep('y', 25 << 20) return #t end\n"
      "  return 0\n"
      "end";
  EXPECT_GE(Call(code, R"({"fill":true})").memory_used_mb, 25);
  ExecutionOutcome idle = Call(code);
  EXPECT_LE(idle.memory_used_mb, 2);
  ExecutionOutcome again = Call(code, R"({"again":true})");
  EXPECT_EQ(again.status_code, 200) << again.body;
  EXPECT_EQ(runtime_.states_created(), 1);
}

TEST_F(WarmLuaRuntimeTest, EachCallHasItsOwnDeadline) {
  std::string code = "function service_handler(event) while event.loop do end return 1 end";
  EXPECT_EQ(Call(code).body, "1");
  EXPECT_EQ(Call(code, R"({"loop":true})", 100).kind, Kind::kTimeout);
  EXPECT_EQ(runtime_.states_created(), 1);
  // Stopped mid-way: the next call gets a new state.
  EXPECT_EQ(Call(code).body, "1");
  EXPECT_EQ(runtime_.states_created(), 2);
}

TEST_F(WarmLuaRuntimeTest, AnErrorReplacesTheState) {
  std::string code =
      "function service_handler(event) if event.fail then leaked = 1 error('boom') end "
      "return leaked == nil end";
  EXPECT_EQ(Call(code).body, "true");
  EXPECT_EQ(Field(Call(code, R"({"fail":true})").body, "errorType"), "LuaError");
  EXPECT_EQ(Call(code).body, "true");
  EXPECT_EQ(runtime_.states_created(), 2);
}

TEST_F(WarmLuaRuntimeTest, AStateServesAtMostMaxCallsAndOneShape) {
  WarmLuaRuntime runtime(limits_, {}, 2);
  Invocation inv;
  inv.code = "function service_handler() return 1 end";
  inv.event_json = "{}";
  for (int i = 0; i < 3; ++i) EXPECT_EQ(runtime.Run(inv).body, "1");
  EXPECT_EQ(runtime.states_created(), 2);
  inv.code = "function service_handler() return 2 end";
  EXPECT_EQ(runtime.Run(inv).body, "2");
  EXPECT_EQ(runtime.states_created(), 3);
}

TEST_F(WarmLuaRuntimeTest, ASyntaxErrorIsReportedOnEveryCall) {
  for (int i = 0; i < 2; ++i) {
    EXPECT_EQ(Field(Call("function service_handler(").body, "errorType"), "LuaError");
  }
}

}  // namespace
}  // namespace toolgate::executor
