-- Business days: working days (Monday to Friday, minus the holidays given) from one date to
-- another, both included, and the date that many working days after the start.
local function days_from_civil(y, m, d)  -- days since 1970-01-01 (Howard Hinnant's algorithm)
  y = m <= 2 and y - 1 or y
  local era = (y >= 0 and y or y - 399) // 400
  local yoe = y - era * 400
  local doy = (153 * (m + (m > 2 and -3 or 9)) + 2) // 5 + d - 1
  local doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
  return era * 146097 + doe - 719468
end

local function civil_from_days(z)
  z = z + 719468
  local era = (z >= 0 and z or z - 146096) // 146097
  local doe = z - era * 146097
  local yoe = (doe - doe // 1460 + doe // 36524 - doe // 146096) // 365
  local doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
  local mp = (5 * doy + 2) // 153
  local d = doy - (153 * mp + 2) // 5 + 1
  local m = mp < 10 and mp + 3 or mp - 9
  return string.format("%04d-%02d-%02d", yoe + era * 400 + (m <= 2 and 1 or 0), m, d)
end

local function parse(s)
  if type(s) ~= "string" then return nil end
  local y, m, d = s:match("^(%d%d%d%d)-(%d%d)-(%d%d)$")
  if not y then return nil end
  y, m, d = tonumber(y), tonumber(m), tonumber(d)
  if m < 1 or m > 12 or d < 1 or d > 31 then return nil end
  local day = days_from_civil(y, m, d)
  if civil_from_days(day) ~= s then return nil end  -- e.g. 2027-02-30
  return day
end

local function weekday(day) return (day + 3) % 7 end  -- 0 = Monday (1970-01-01 was a Thursday)

function service_handler(event, context)
  local from, to = parse(event.from), parse(event.to)
  if not from or not to or to < from or to - from > 3660 then
    return { statusCode = 400, body = { error = "send from and to as YYYY-MM-DD, to not before from, at most 10 years apart" } }
  end
  local holidays = {}
  for _, h in ipairs(type(event.holidays) == "table" and event.holidays or {}) do
    local day = parse(h)
    if day then holidays[day] = true end
  end
  local count = 0
  for day = from, to do
    if weekday(day) < 5 and not holidays[day] then count = count + 1 end
  end
  return { from = event.from, to = event.to, business_days = count, calendar_days = to - from + 1 }
end
