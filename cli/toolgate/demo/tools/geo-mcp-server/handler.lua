-- Geo MCP server: distance and midpoint between two coordinates, as Model Context Protocol
-- tools (initialize, ping, tools/list, tools/call).
local TOOLS = {
  {
    name = "distance",
    description = "Great-circle distance in kilometres between two points",
    inputSchema = { type = "object", required = { "from", "to" }, properties = {
      from = { type = "object", properties = { lat = { type = "number" }, lon = { type = "number" } } },
      to = { type = "object", properties = { lat = { type = "number" }, lon = { type = "number" } } },
    } },
  },
  {
    name = "midpoint",
    description = "The geographic midpoint of two points",
    inputSchema = { type = "object", required = { "from", "to" }, properties = {
      from = { type = "object" }, to = { type = "object" },
    } },
  },
}

local function reply(id, result) return { jsonrpc = "2.0", id = id, result = result } end
local function fail(id, code, message)
  return { jsonrpc = "2.0", id = id, error = { code = code, message = message } }
end
local function text(value) return { content = { { type = "text", text = value } } } end

local function point(p)
  if type(p) ~= "table" or type(p.lat) ~= "number" or type(p.lon) ~= "number" then return nil end
  return math.rad(p.lat), math.rad(p.lon)
end

function service_handler(event, context)
  local request = event
  if type(event) == "string" then
    local ok, decoded = pcall(json.decode, event)
    if not ok then return fail(json.null, -32700, "Parse error") end
    request = decoded
  end
  if type(request) ~= "table" then return fail(json.null, -32600, "Invalid Request") end
  local id = request.id == nil and json.null or request.id
  if request.jsonrpc ~= "2.0" or type(request.method) ~= "string" then
    return fail(id, -32600, "Invalid Request")
  end
  local method, params = request.method, request.params
  if method == "initialize" then
    return reply(id, {
      protocolVersion = "2024-11-05",
      capabilities = { tools = { listChanged = false } },
      serverInfo = { name = "atlas-geo", version = "1.2.0" },
    })
  elseif method == "ping" then
    return reply(id, {})
  elseif method == "tools/list" then
    return reply(id, { tools = TOOLS })
  elseif method ~= "tools/call" then
    return fail(id, -32601, "Method not found: " .. method)
  end
  if type(params) ~= "table" or type(params.arguments) ~= "table" then
    return fail(id, -32602, "Invalid params: name and arguments are required")
  end
  local lat1, lon1 = point(params.arguments.from)
  local lat2, lon2 = point(params.arguments.to)
  if not lat1 or not lat2 then
    return fail(id, -32602, "Invalid params: from and to must be {lat, lon} numbers")
  end
  if params.name == "distance" then
    local a = math.sin((lat2 - lat1) / 2) ^ 2
      + math.cos(lat1) * math.cos(lat2) * math.sin((lon2 - lon1) / 2) ^ 2
    local km = 2 * 6371.0088 * math.asin(math.min(1, math.sqrt(a)))
    return reply(id, text(string.format("%.1f km", km)))
  elseif params.name == "midpoint" then
    local bx = math.cos(lat2) * math.cos(lon2 - lon1)
    local by = math.cos(lat2) * math.sin(lon2 - lon1)
    local lat = math.atan(math.sin(lat1) + math.sin(lat2), math.sqrt((math.cos(lat1) + bx) ^ 2 + by ^ 2))
    local lon = lon1 + math.atan(by, math.cos(lat1) + bx)
    return reply(id, text(string.format("%.5f, %.5f", math.deg(lat), math.deg(lon))))
  end
  return fail(id, -32602, "Unknown tool: " .. tostring(params.name))
end
