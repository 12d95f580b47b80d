-- Unit converter: length, mass, volume, speed and temperature.
local FACTORS = {
  length = { m = 1, km = 1000, cm = 0.01, mm = 0.001, mi = 1609.344, yd = 0.9144, ft = 0.3048,
             ["in"] = 0.0254 },
  mass = { kg = 1, g = 0.001, mg = 1e-6, t = 1000, lb = 0.45359237, oz = 0.028349523125 },
  volume = { l = 1, ml = 0.001, m3 = 1000, gal = 3.785411784, qt = 0.946352946, cup = 0.2365882365 },
  speed = { ["m/s"] = 1, ["km/h"] = 1 / 3.6, mph = 0.44704, kn = 1852 / 3600 },
}
local TO_CELSIUS = {
  C = function(x) return x end,
  F = function(x) return (x - 32) * 5 / 9 end,
  K = function(x) return x - 273.15 end,
}
local FROM_CELSIUS = {
  C = function(c) return c end,
  F = function(c) return c * 9 / 5 + 32 end,
  K = function(c) return c + 273.15 end,
}

local function rounded(x) return math.floor(x * 1e6 + 0.5) / 1e6 end

function service_handler(event, context)
  local value, from, to = tonumber(event.value), event.from, event.to
  if not value or type(from) ~= "string" or type(to) ~= "string" then
    return { statusCode = 400, body = { error = "send value (a number), from and to (e.g. km, lb, F)" } }
  end
  if TO_CELSIUS[from] and FROM_CELSIUS[to] then
    local result = FROM_CELSIUS[to](TO_CELSIUS[from](value))
    return { value = value, from = from, to = to, result = rounded(result), quantity = "temperature" }
  end
  for quantity, units in pairs(FACTORS) do
    if units[from] and units[to] then
      local result = value * units[from] / units[to]
      return { value = value, from = from, to = to, result = rounded(result), quantity = quantity }
    end
  end
  return { statusCode = 422, body = { error = "cannot convert " .. from .. " to " .. to } }
end
