-- A Toolgate function.
--
-- Toolgate calls service_handler with the caller's event (shaped by input_schema in
-- toolgate.json) and a context (execution_id, function_id, version, caller_org_id, deadline_ms,
-- env). Return a value, or { statusCode = ..., body = ... } to choose the HTTP status. json.encode
-- and json.decode are available.

function service_handler(event, context)
  local name = "world"
  if type(event) == "table" and event.name ~= nil then name = event.name end
  if type(name) ~= "string" then
    return { statusCode = 400, body = { error = "name must be a string" } }
  end
  return { statusCode = 200, body = { message = "Hello, " .. name .. "!" } }
end
