-- Haversine distance: the great-circle distance and initial bearing between two points.
local EARTH_KM = 6371.0088

local function point(p)
  if type(p) ~= "table" then return nil end
  local lat, lon = tonumber(p.lat), tonumber(p.lon)
  if not lat or not lon or math.abs(lat) > 90 or math.abs(lon) > 180 then return nil end
  return math.rad(lat), math.rad(lon)
end

function service_handler(event, context)
  local lat1, lon1 = point(event.from)
  local lat2, lon2 = point(event.to)
  if not lat1 or not lat2 then
    return { statusCode = 400, body = { error = "send from and to as {lat, lon} in degrees" } }
  end
  local dlat, dlon = lat2 - lat1, lon2 - lon1
  local a = math.sin(dlat / 2) ^ 2 + math.cos(lat1) * math.cos(lat2) * math.sin(dlon / 2) ^ 2
  local km = 2 * EARTH_KM * math.asin(math.min(1, math.sqrt(a)))
  local y = math.sin(dlon) * math.cos(lat2)
  local x = math.cos(lat1) * math.sin(lat2) - math.sin(lat1) * math.cos(lat2) * math.cos(dlon)
  local bearing = (math.deg(math.atan(y, x)) + 360) % 360
  return {
    km = math.floor(km * 1000 + 0.5) / 1000,
    miles = math.floor(km / 1.609344 * 1000 + 0.5) / 1000,
    initial_bearing_degrees = math.floor(bearing * 10 + 0.5) / 10,
  }
end
