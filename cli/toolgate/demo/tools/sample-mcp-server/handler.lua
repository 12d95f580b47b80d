-- A Model Context Protocol tool server: initialize, ping, tools/list and tools/call, with the
-- JSON-RPC errors of the specification. The event is the JSON-RPC request, as an object or as
-- a JSON string.
local SUPPORTED = { ["2024-11-05"] = true, ["2025-03-26"] = true, ["2025-06-18"] = true,
                    ["2025-11-25"] = true }
local LATEST = "2025-11-25"

local TOOLS = {
  {
    name = "add",
    description = "Add two numbers",
    inputSchema = { type = "object",
                    properties = { a = { type = "number" }, b = { type = "number" } },
                    required = { "a", "b" } },
  },
  {
    name = "reverse",
    description = "Reverse a string",
    inputSchema = { type = "object", properties = { text = { type = "string" } },
                    required = { "text" } },
  },
}

local function result(id, value) return { jsonrpc = "2.0", id = id, result = value } end
local function failure(id, code, message)
  return { jsonrpc = "2.0", id = id, error = { code = code, message = message } }
end
local function text(value) return { content = { { type = "text", text = value } } } end

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
  if method == "initialize" then
    local asked = type(params) == "table" and params.protocolVersion or nil
    return result(id, {
      protocolVersion = SUPPORTED[asked] and asked or LATEST,
      capabilities = { tools = { listChanged = false } },
      serverInfo = { name = "toolgate-sample-mcp", version = "1.0.0" },
    })
  elseif method == "ping" then
    return result(id, {})
  elseif method == "tools/list" then
    return result(id, { tools = TOOLS })
  elseif method == "tools/call" then
    if type(params) ~= "table" or type(params.name) ~= "string" then
      return failure(id, -32602, "Invalid params: name is required")
    end
    local args = params.arguments
    if args == nil then args = {} end
    if type(args) ~= "table" then return failure(id, -32602, "Invalid params: arguments") end
    if params.name == "add" then
      if type(args.a) ~= "number" or type(args.b) ~= "number" then
        return failure(id, -32602, "Invalid params: a and b must be numbers")
      end
      return result(id, text(tostring(args.a + args.b)))
    elseif params.name == "reverse" then
      if type(args.text) ~= "string" then
        return failure(id, -32602, "Invalid params: text must be a string")
      end
      return result(id, text(string.reverse(args.text)))
    end
    return failure(id, -32602, "Unknown tool: " .. params.name)
  end
  return failure(id, -32601, "Method not found: " .. method)
end
