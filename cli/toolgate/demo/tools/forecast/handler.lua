-- A priced tool with a declared key: it needs WEATHER_API_KEY, mapped by the caller through
-- X-Env-Keys to one of their secrets. (The sample computes a forecast instead of calling out:
-- tools have no network unless granted.)
function service_handler(event, context)
  local key = context.env.WEATHER_API_KEY
  if key == nil or key == "" then
    return { statusCode = 401, body = { error = "WEATHER_API_KEY is not set" } }
  end
  local city = event.city
  if type(city) ~= "string" or city == "" then
    return { statusCode = 400, body = { error = "event.city must be a non-empty string" } }
  end
  local seed = 0
  for i = 1, #city do seed = (seed * 31 + string.byte(city, i)) % 1000 end
  return {
    city = city,
    temperature_c = 5 + seed % 25,
    conditions = ({ "sunny", "cloudy", "rain", "wind" })[seed % 4 + 1],
  }
end
