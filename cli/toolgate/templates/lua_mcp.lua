-- A Model Context Protocol (MCP) server, run by Toolgate.
--
-- Each call's event is one JSON-RPC 2.0 request, as a table or as a JSON string; the handler
-- answers it with a JSON-RPC response. MCP clients connect to
-- {base_url}/mcp/functions/{function_id} with an API key (see docs/mcp.md).
-- To add a tool, describe it in TOOLS and run it in call_tool. An empty table encodes as {}, so
-- never leave a JSON array (such as "required") empty: leave it out.

local SUPPORTED_VERSIONS = { ["2024-11-05"] = true, ["2025-03-26"] = true,
                             ["2025-06-18"] = true, ["2025-11-25"] = true }
local LATEST_VERSION = "2025-11-25"
local SERVER_INFO = { name = "{{server_name}}", version = "0.1.0" }

local TOOLS = {
  {
    name = "divide",
    description = "Divide a by b.",
    inputSchema = { type = "object",
                    properties = { a = { type = "number" }, b = { type = "number" } },
                    required = { "a", "b" } },
  },
  {
    name = "echo",
    description = "Answer with the text it is given.",
    inputSchema = { type = "object", properties = { text = { type = "string" } },
                    required = { "text" } },
  },
}

local function text_result(text, is_error)
  return { content = { { type = "text", text = text } }, isError = is_error == true }
end

-- Returns the tool's result, or nil and the message of a -32602 error.
local function call_tool(name, args)
  if name == "divide" then
    if type(args.a) ~= "number" or type(args.b) ~= "number" then
      return nil, "Invalid params: a and b must be numbers"
    end
    -- The tool ran and failed: a result with isError, which the model gets to read.
    if args.b == 0 then return text_result("Cannot divide by zero.", true) end
    return text_result(tostring(args.a / args.b))
  elseif name == "echo" then
    if type(args.text) ~= "string" then return nil, "Invalid params: text must be a string" end
    return text_result(args.text)
  end
  return nil, "Unknown tool: " .. name
end

local function result(id, value) return { jsonrpc = "2.0", id = id, result = value } end
local function failure(id, code, message)
  return { jsonrpc = "2.0", id = id, error = { code = code, message = message } }
end

function service_handler(event, context)
  local request = event
  if type(event) == "string" then
    local ok, decoded = pcall(json.decode, event)
    if not ok then return failure(json.null, -32700, "Parse error") end
    request = decoded
  end
  if type(request) ~= "table" then return failure(json.null, -32600, "Invalid Request") end
  local id = request.id
  if id == nil then id = json.null end
  if request.jsonrpc ~= "2.0" or type(request.method) ~= "string" then
    return failure(id, -32600, "Invalid Request: jsonrpc must be \"2.0\" and method a string")
  end
  local method, params = request.method, request.params
  if params == nil or params == json.null then params = {} end
  if type(params) ~= "table" then
    return failure(id, -32602, "Invalid params: params must be an object")
  end

  if method == "initialize" then
    local asked = params.protocolVersion
    return result(id, {
      protocolVersion = SUPPORTED_VERSIONS[asked] and asked or LATEST_VERSION,
      capabilities = { tools = { listChanged = false } },
      serverInfo = SERVER_INFO,
    })
  elseif method == "ping" then
    return result(id, {})
  elseif method == "tools/list" then
    return result(id, { tools = TOOLS })
  elseif method == "tools/call" then
    local args = params.arguments
    if args == nil or args == json.null then args = {} end
    if type(params.name) ~= "string" then
      return failure(id, -32602, "Invalid params: name is required")
    end
    if type(args) ~= "table" then
      return failure(id, -32602, "Invalid params: arguments must be an object")
    end
    local value, message = call_tool(params.name, args)
    if value == nil then return failure(id, -32602, message) end
    return result(id, value)
  end
  return failure(id, -32601, "Method not found: " .. method)
end
