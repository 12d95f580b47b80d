-- A priced tool with a declared key and declared egress: it calls a weather service with the
-- caller's WEATHER_API_KEY (mapped through X-Env-Keys to one of their secrets), through the
-- egress gateway. In the demo the service is the one `toolgate up --demo` runs on the loopback,
-- and the seeder writes its address where DEMO_WEATHER_SERVICE stands, here and in the egress
-- list of toolgate.json.
local SERVICE = "http://DEMO_WEATHER_SERVICE"

local function escape(text)
  return (text:gsub("[^%w%-_%.~]", function(c) return string.format("%%%02X", string.byte(c)) end))
end

function service_handler(event, context)
  local key = context.env.WEATHER_API_KEY
  if key == nil or key == "" then
    return { statusCode = 401, body = { error = "WEATHER_API_KEY is not set" } }
  end
  local city = event.city
  if type(city) ~= "string" or city == "" then
    return { statusCode = 400, body = { error = "event.city must be a non-empty string" } }
  end
  local ok, response = pcall(http.request, {
    url = SERVICE .. "/v1/forecast?city=" .. escape(city),
    headers = { ["X-Api-Key"] = key },
    timeout_ms = 3000,
  })
  if not ok then
    return { statusCode = 502, body = { error = "the weather service cannot be reached: " .. tostring(response) } }
  end
  if response.status ~= 200 then
    return { statusCode = 502, body = { error = "the weather service answered " .. response.status } }
  end
  return json.decode(response.body)
end
