// The demo catalogue's data: organizations, and tools with their code. Every handler is real,
// runnable code; each compiles at publish time like any author's.
#include "demo/catalogue.h"

namespace toolgate::cli {

const std::vector<DemoOrganization>& DemoPublishers() {
  static const std::vector<DemoOrganization> kPublishers = {
      {"Toolgate Samples", "samples@toolgate.local"},
      {"Northwind Analytics", "tools@northwind.example"},
      {"Helix Labs", "ml@helix.example"},
      {"Atlas Geo", "dev@atlasgeo.example"},
      {"Ledgerly", "api@ledgerly.example"},
  };
  return kPublishers;
}

const std::vector<DemoOrganization>& DemoCallers() {
  static const std::vector<DemoOrganization> kCallers = {
      {"Demo", "demo@toolgate.local"},
      {"Acme Retail", "ops@acme.example"},
      {"Globex Logistics", "platform@globex.example"},
  };
  return kCallers;
}

namespace {

constexpr int kSamples = 0, kNorthwind = 1, kHelix = 2, kAtlas = 3, kLedgerly = 4;

constexpr std::string_view kSlugify =
    R"lua(-- Slugify: a URL slug from a title. Accented Latin letters lose their accents; every run of
-- other characters becomes one dash.
local PLAIN = {
  ["á"] = "a", ["à"] = "a", ["â"] = "a", ["ä"] = "a", ["ã"] = "a", ["å"] = "a", ["æ"] = "ae",
  ["ç"] = "c", ["é"] = "e", ["è"] = "e", ["ê"] = "e", ["ë"] = "e", ["í"] = "i", ["ì"] = "i",
  ["î"] = "i", ["ï"] = "i", ["ñ"] = "n", ["ó"] = "o", ["ò"] = "o", ["ô"] = "o", ["ö"] = "o",
  ["õ"] = "o", ["ø"] = "o", ["œ"] = "oe", ["ú"] = "u", ["ù"] = "u", ["û"] = "u", ["ü"] = "u",
  ["ý"] = "y", ["ÿ"] = "y", ["ß"] = "ss", ["É"] = "e", ["À"] = "a", ["Ç"] = "c", ["Ö"] = "o",
  ["Ü"] = "u", ["Ñ"] = "n",
}

function service_handler(event, context)
  local text = event.text
  if type(text) ~= "string" then
    return { statusCode = 400, body = { error = "event.text must be a string" } }
  end
  local max = math.tointeger(event.max_length) or 80
  local parts, pending_dash = {}, false
  for _, code in utf8.codes(text) do
    local ch = utf8.char(code)
    local plain = PLAIN[ch] or (code < 128 and ch:lower() or "")
    if plain:match("^[a-z0-9]+$") then
      if pending_dash and #parts > 0 then parts[#parts + 1] = "-" end
      parts[#parts + 1] = plain
      pending_dash = false
    else
      pending_dash = true
    end
  end
  local slug = table.concat(parts)
  if #slug > max then slug = (slug:sub(1, max):gsub("%-+$", "")) end
  return { slug = slug }
end
)lua";

constexpr std::string_view kWordCount =
    R"lua(-- Word count: words, characters, sentences, paragraphs and reading time of a text.
function service_handler(event, context)
  local text = event.text
  if type(text) ~= "string" then
    return { statusCode = 400, body = { error = "event.text must be a string" } }
  end
  local words = 0
  for _ in text:gmatch("%S+") do words = words + 1 end
  local sentences = 0
  for _ in text:gmatch("[^%.!?]+[%.!?]+") do sentences = sentences + 1 end
  if sentences == 0 and words > 0 then sentences = 1 end
  local paragraphs = 0
  for block in (text .. "\n\n"):gmatch("(.-)\n[ \t]*\n") do
    if block:match("%S") then paragraphs = paragraphs + 1 end
  end
  local per_minute = tonumber(event.words_per_minute) or 230
  return {
    words = words,
    characters = utf8.len(text) or #text,
    sentences = sentences,
    paragraphs = paragraphs,
    reading_time_seconds = math.ceil(words / per_minute * 60),
  }
end
)lua";

constexpr std::string_view kEmailValidator =
    R"lua(-- Email validator: syntax (the practical subset of RFC 5322 that mail providers accept),
-- likely typos of popular domains, and disposable-address providers. It makes no network
-- call: it does not look up MX records.
local DISPOSABLE = {
  ["mailinator.com"] = true, ["10minutemail.com"] = true, ["guerrillamail.com"] = true,
  ["tempmail.com"] = true, ["yopmail.com"] = true, ["trashmail.com"] = true,
}
local TYPOS = {
  ["gmial.com"] = "gmail.com", ["gmai.com"] = "gmail.com", ["gnail.com"] = "gmail.com",
  ["hotmial.com"] = "hotmail.com", ["yaho.com"] = "yahoo.com", ["outlok.com"] = "outlook.com",
}

local function label_ok(label)
  return label:match("^[a-z0-9][a-z0-9-]*$") ~= nil and label:sub(-1) ~= "-" and #label <= 63
end

function service_handler(event, context)
  if type(event.email) ~= "string" then
    return { statusCode = 400, body = { error = "event.email must be a string" } }
  end
  local email = event.email:match("^%s*(.-)%s*$")
  local reasons = {}
  local user, domain = email:match("^([^@]+)@([^@]+)$")
  if not user then
    reasons[#reasons + 1] = "must contain exactly one @ with text on both sides"
  else
    domain = domain:lower()
    if #user > 64 then reasons[#reasons + 1] = "the part before @ is over 64 characters" end
    if not user:match("^[%w!#$%%&'*+/=?^_`{|}~.-]+$") then
      reasons[#reasons + 1] = "the part before @ has characters mail servers refuse"
    end
    if user:sub(1, 1) == "." or user:sub(-1) == "." or user:find("..", 1, true) then
      reasons[#reasons + 1] = "dots may not start, end or repeat before @"
    end
    local labels = {}
    for label in (domain .. "."):gmatch("([^.]*)%.") do labels[#labels + 1] = label end
    local domain_ok = #labels >= 2 and labels[#labels]:match("^%a%a+$") ~= nil
    for _, label in ipairs(labels) do domain_ok = domain_ok and label_ok(label) end
    if not domain_ok then reasons[#reasons + 1] = "the domain is not a valid host name" end
  end
  local result = {
    email = email,
    valid = #reasons == 0,
    reasons = reasons,
    disposable = domain ~= nil and DISPOSABLE[domain] == true,
  }
  if user and TYPOS[domain] then result.suggestion = user .. "@" .. TYPOS[domain] end
  return result
end
)lua";

constexpr std::string_view kPasswordStrength =
    R"lua(-- Password strength: an entropy estimate from length and character classes, lowered for
-- common passwords and repeated characters. The password is never returned.
local COMMON = {
  password = true, ["123456"] = true, ["123456789"] = true, qwerty = true, letmein = true,
  welcome = true, admin = true, iloveyou = true, monkey = true, dragon = true,
  ["password1"] = true, ["qwerty123"] = true,
}
local LABELS = { "very weak", "weak", "fair", "strong", "very strong" }

function service_handler(event, context)
  local password = event.password
  if type(password) ~= "string" then
    return { statusCode = 400, body = { error = "event.password must be a string" } }
  end
  local pool = 0
  if password:find("%l") then pool = pool + 26 end
  if password:find("%u") then pool = pool + 26 end
  if password:find("%d") then pool = pool + 10 end
  if password:find("[^%w]") then pool = pool + 33 end
  local length = utf8.len(password) or #password
  local bits = pool > 0 and length * math.log(pool, 2) or 0
  local advice = {}
  if COMMON[password:lower()] then
    bits = math.min(bits, 10)
    advice[#advice + 1] = "This is one of the most common passwords."
  end
  if password:find("(.)%1%1") then
    bits = bits * 0.8
    advice[#advice + 1] = "Avoid a character three times in a row."
  end
  if length < 12 then advice[#advice + 1] = "Use at least 12 characters." end
  if pool < 95 then advice[#advice + 1] = "Mix upper and lower case, digits and symbols." end
  local score = bits < 28 and 0 or bits < 36 and 1 or bits < 60 and 2 or bits < 80 and 3 or 4
  return {
    score = score,
    label = LABELS[score + 1],
    entropy_bits = math.floor(bits + 0.5),
    advice = advice,
  }
end
)lua";

constexpr std::string_view kLoanCalculator =
    R"lua(-- Loan calculator: the monthly payment of a fixed-rate loan, total interest, and the first
-- months of the amortization schedule, rounded to cents.
local function cents(x) return math.floor(x * 100 + 0.5) / 100 end

function service_handler(event, context)
  local principal = tonumber(event.principal)
  local rate = tonumber(event.annual_rate_percent)
  local years = tonumber(event.years)
  if not principal or principal <= 0 or not rate or rate < 0 or not years or years <= 0
      or years > 50 then
    return { statusCode = 400, body = {
      error = "send principal (> 0), annual_rate_percent (>= 0) and years (up to 50)" } }
  end
  local n = math.floor(years * 12 + 0.5)
  local r = rate / 100 / 12
  local payment = r == 0 and principal / n or principal * r / (1 - (1 + r) ^ -n)
  local months = math.min(n, math.tointeger(event.schedule_months) or 12)
  local schedule, balance = {}, principal
  for month = 1, months do
    local interest = balance * r
    balance = balance - (payment - interest)
    schedule[#schedule + 1] = {
      month = month,
      interest = cents(interest),
      principal = cents(payment - interest),
      balance = cents(math.max(balance, 0)),
    }
  end
  return {
    monthly_payment = cents(payment),
    payments = n,
    total_paid = cents(payment * n),
    total_interest = cents(payment * n - principal),
    schedule = schedule,
  }
end
)lua";

constexpr std::string_view kVatCalculator =
    R"lua(-- VAT calculator: net, VAT and gross of an amount in cents at a member state's standard rate.
-- Rates are in per mille so that 25.5 % stays exact; every amount is an integer.
local RATES = {
  AT = 200, BE = 210, BG = 200, HR = 250, CY = 190, CZ = 210, DK = 250, EE = 240, FI = 255,
  FR = 200, DE = 190, GR = 240, HU = 270, IE = 230, IT = 220, LV = 210, LT = 210, LU = 170,
  MT = 180, NL = 210, PL = 230, PT = 230, RO = 210, SK = 230, SI = 220, ES = 210, SE = 250,
}

function service_handler(event, context)
  local country = type(event.country) == "string" and event.country:upper() or ""
  local rate = RATES[country]
  local amount = math.tointeger(event.amount_cents)
  if not rate then
    return { statusCode = 400, body = { error = "event.country must be an EU country code, e.g. DE" } }
  end
  if not amount or amount < 0 then
    return { statusCode = 400, body = { error = "event.amount_cents must be a whole number >= 0" } }
  end
  local net, vat
  if event.includes_vat then
    net = (amount * 2000 // (1000 + rate) + 1) // 2  -- rounded half up
    vat = amount - net
  else
    net = amount
    vat = (amount * rate * 2 // 1000 + 1) // 2
  end
  return {
    country = country,
    rate_per_mille = rate,
    net_cents = net,
    vat_cents = vat,
    gross_cents = net + vat,
  }
end
)lua";

constexpr std::string_view kCurrencyFormatter =
    R"lua(-- Currency formatter: an amount in minor units (cents), written the way a locale writes money.
local CURRENCIES = {
  USD = { symbol = "$", digits = 2 }, EUR = { symbol = "€", digits = 2 },
  GBP = { symbol = "£", digits = 2 }, JPY = { symbol = "¥", digits = 0 },
  CHF = { symbol = "CHF", digits = 2 }, BRL = { symbol = "R$", digits = 2 },
  INR = { symbol = "₹", digits = 2 },
}
local LOCALES = {
  ["en-US"] = { group = ",", decimal = ".", before = true, space = false },
  ["en-GB"] = { group = ",", decimal = ".", before = true, space = false },
  ["de-DE"] = { group = ".", decimal = ",", before = false, space = true },
  ["fr-FR"] = { group = " ", decimal = ",", before = false, space = true },
  ["pt-BR"] = { group = ".", decimal = ",", before = true, space = true },
  ["ja-JP"] = { group = ",", decimal = ".", before = true, space = false },
}

local function grouped(digits, separator)
  local changed
  repeat
    digits, changed = digits:gsub("^(%d+)(%d%d%d)", "%1" .. separator .. "%2")
  until changed == 0
  return digits
end

function service_handler(event, context)
  local code = type(event.currency) == "string" and event.currency:upper() or "USD"
  local locale_name = type(event.locale) == "string" and event.locale or "en-US"
  local currency, locale = CURRENCIES[code], LOCALES[locale_name]
  local minor = math.tointeger(event.amount_minor)
  if not currency or not locale or not minor then
    return { statusCode = 400, body = {
      error = "send amount_minor (an integer), currency (USD, EUR, GBP, JPY, CHF, BRL, INR) "
        .. "and locale (en-US, en-GB, de-DE, fr-FR, pt-BR, ja-JP)" } }
  end
  local negative = minor < 0
  if negative then minor = -minor end
  local unit = 1
  for _ = 1, currency.digits do unit = unit * 10 end
  local text = grouped(tostring(minor // unit), locale.group)
  if currency.digits > 0 then
    text = text .. locale.decimal .. string.format("%0" .. currency.digits .. "d", minor % unit)
  end
  local gap = locale.space and " " or ""
  text = locale.before and currency.symbol .. gap .. text or text .. gap .. currency.symbol
  if negative then text = "-" .. text end
  return { formatted = text, currency = code, locale = locale_name }
end
)lua";

constexpr std::string_view kUnitConverter =
    R"lua(-- Unit converter: length, mass, volume, speed and temperature.
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
)lua";

constexpr std::string_view kBmi =
    R"lua(-- BMI calculator: body mass index and its WHO category for an adult.
local CATEGORIES = {
  { below = 18.5, name = "underweight" },
  { below = 25, name = "healthy weight" },
  { below = 30, name = "overweight" },
  { below = math.huge, name = "obesity" },
}

function service_handler(event, context)
  local kg, cm = tonumber(event.weight_kg), tonumber(event.height_cm)
  if not kg or not cm or kg <= 0 or cm <= 0 or cm > 300 then
    return { statusCode = 400, body = { error = "send weight_kg and height_cm, both positive" } }
  end
  local bmi = kg / (cm / 100) ^ 2
  local category
  for _, c in ipairs(CATEGORIES) do
    if bmi < c.below then category = c.name break end
  end
  local low, high = 18.5 * (cm / 100) ^ 2, 24.9 * (cm / 100) ^ 2
  return {
    bmi = math.floor(bmi * 10 + 0.5) / 10,
    category = category,
    healthy_weight_kg = { min = math.floor(low * 10 + 0.5) / 10, max = math.floor(high * 10 + 0.5) / 10 },
    note = "BMI is a screening measure, not a diagnosis.",
  }
end
)lua";

constexpr std::string_view kHaversine =
    R"lua(-- Haversine distance: the great-circle distance and initial bearing between two points.
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
)lua";

constexpr std::string_view kShippingQuote =
    R"lua(-- Shipping quote: billable weight (the greater of actual and volumetric weight, L x W x H /
-- 5000) and the price of a parcel by zone and service, in cents.
local RATES = {  -- base cents, cents per started kg
  domestic = { standard = { 450, 90 }, express = { 950, 160 } },
  eu = { standard = { 1100, 220 }, express = { 2400, 380 } },
  international = { standard = { 2200, 540 }, express = { 4500, 900 } },
}
local DAYS = {
  domestic = { standard = "2-3", express = "1" },
  eu = { standard = "4-6", express = "2" },
  international = { standard = "7-14", express = "3-5" },
}

function service_handler(event, context)
  local zone, service = event.zone or "domestic", event.service or "standard"
  local kg = tonumber(event.weight_kg)
  local d = type(event.dimensions_cm) == "table" and event.dimensions_cm or {}
  local l, w, h = tonumber(d.length), tonumber(d.width), tonumber(d.height)
  if not RATES[zone] or not RATES[zone][service] then
    return { statusCode = 400, body = {
      error = "zone is domestic, eu or international; service is standard or express" } }
  end
  if not kg or kg <= 0 or not l or not w or not h or l <= 0 or w <= 0 or h <= 0 then
    return { statusCode = 400, body = {
      error = "send weight_kg and dimensions_cm {length, width, height}, all positive" } }
  end
  local volumetric = l * w * h / 5000
  local billable = math.max(kg, volumetric)
  local base, per_kg = RATES[zone][service][1], RATES[zone][service][2]
  local price = base + per_kg * math.ceil(billable)
  return {
    zone = zone,
    service = service,
    volumetric_weight_kg = math.floor(volumetric * 100 + 0.5) / 100,
    billable_weight_kg = math.ceil(billable),
    price_cents = price,
    delivery_days = DAYS[zone][service],
  }
end
)lua";

constexpr std::string_view kCsvToJson =
    R"lua(-- CSV to JSON: rows of objects keyed by the header row. Handles quoted fields, doubled quotes
-- inside them, and line breaks inside quotes (RFC 4180).
local function parse(text, sep)
  local rows, row, field, i, n, quoted = {}, {}, {}, 1, #text, false
  while i <= n do
    local c = text:sub(i, i)
    if quoted then
      if c == '"' then
        if text:sub(i + 1, i + 1) == '"' then
          field[#field + 1] = '"'
          i = i + 1
        else
          quoted = false
        end
      else
        field[#field + 1] = c
      end
    elseif c == '"' then
      quoted = true
    elseif c == sep then
      row[#row + 1] = table.concat(field)
      field = {}
    elseif c == "\n" or c == "\r" then
      if c == "\r" and text:sub(i + 1, i + 1) == "\n" then i = i + 1 end
      row[#row + 1] = table.concat(field)
      rows[#rows + 1] = row
      row, field = {}, {}
    else
      field[#field + 1] = c
    end
    i = i + 1
  end
  if #field > 0 or #row > 0 then
    row[#row + 1] = table.concat(field)
    rows[#rows + 1] = row
  end
  return rows, quoted
end

function service_handler(event, context)
  if type(event.csv) ~= "string" then
    return { statusCode = 400, body = { error = "event.csv must be a string" } }
  end
  local sep = type(event.delimiter) == "string" and #event.delimiter == 1 and event.delimiter or ","
  local rows, unterminated = parse(event.csv, sep)
  if unterminated then
    return { statusCode = 422, body = { error = "a quoted field is never closed" } }
  end
  if #rows == 0 then return { columns = {}, rows = {} } end
  local header, out = rows[1], {}
  for r = 2, #rows do
    local object = {}
    for c, name in ipairs(header) do object[name] = rows[r][c] or "" end
    out[#out + 1] = object
  end
  return { columns = header, rows = out }
end
)lua";

constexpr std::string_view kIbanValidator =
    R"lua(-- IBAN validator: country length and the ISO 13616 mod-97 check digits; prints the IBAN in
-- groups of four.
local LENGTHS = {
  AT = 20, BE = 16, BG = 22, CH = 21, CY = 28, CZ = 24, DE = 22, DK = 18, EE = 20, ES = 24,
  FI = 18, FR = 27, GB = 22, GR = 27, HR = 21, HU = 28, IE = 22, IS = 26, IT = 27, LI = 21,
  LT = 20, LU = 20, LV = 21, MT = 31, NL = 18, NO = 15, PL = 28, PT = 25, RO = 24, SE = 24,
  SI = 19, SK = 24,
}

local function mod97(iban)
  local rearranged = iban:sub(5) .. iban:sub(1, 4)
  local remainder = 0
  for ch in rearranged:gmatch(".") do
    local value = ch:match("%d") and tonumber(ch) or (ch:byte() - 55)
    local digits = tostring(value)
    for d in digits:gmatch("%d") do remainder = (remainder * 10 + tonumber(d)) % 97 end
  end
  return remainder
end

function service_handler(event, context)
  if type(event.iban) ~= "string" then
    return { statusCode = 400, body = { error = "event.iban must be a string" } }
  end
  local iban = event.iban:gsub("[%s%-]", ""):upper()
  local country = iban:sub(1, 2)
  local reason
  if not iban:match("^%u%u%d%d%w+$") then
    reason = "an IBAN is two letters, two check digits and the account, letters and digits only"
  elseif not LENGTHS[country] then
    reason = "unknown or unsupported country " .. country
  elseif #iban ~= LENGTHS[country] then
    reason = "an IBAN of " .. country .. " has " .. LENGTHS[country] .. " characters, not " .. #iban
  elseif mod97(iban) ~= 1 then
    reason = "the check digits do not match: a character is mistyped"
  end
  return {
    valid = reason == nil,
    country = country,
    formatted = (iban:gsub("(....)", "%1 "):gsub("%s+$", "")),
    reason = reason,
  }
end
)lua";

constexpr std::string_view kLuhn =
    R"lua(-- Card number check: the Luhn checksum and the card brand from its prefix. The number is never
-- returned, only its last four digits.
local function brand(n)
  local two, four = tonumber(n:sub(1, 2)), tonumber(n:sub(1, 4))
  if n:sub(1, 1) == "4" then return "visa" end
  if (two >= 51 and two <= 55) or (four >= 2221 and four <= 2720) then return "mastercard" end
  if two == 34 or two == 37 then return "amex" end
  if n:sub(1, 4) == "6011" or two == 65 then return "discover" end
  return "unknown"
end

function service_handler(event, context)
  local number = type(event.number) == "string" and event.number:gsub("[%s%-]", "") or ""
  if not number:match("^%d+$") or #number < 12 or #number > 19 then
    return { statusCode = 400, body = { error = "event.number must be 12 to 19 digits" } }
  end
  local sum, double = 0, false
  for i = #number, 1, -1 do
    local d = tonumber(number:sub(i, i))
    if double then
      d = d * 2
      if d > 9 then d = d - 9 end
    end
    sum = sum + d
    double = not double
  end
  return { valid = sum % 10 == 0, brand = brand(number), last4 = number:sub(-4) }
end
)lua";

constexpr std::string_view kSentiment =
    R"lua(-- Sentiment score: a lexicon-based score from -1 (negative) to 1 (positive) for short English
-- texts such as reviews, with negation ("not good") and intensifiers ("very good").
local LEXICON = {
  good = 2, great = 3, excellent = 4, amazing = 4, love = 3, loved = 3, like = 1, happy = 2,
  fast = 1, easy = 2, helpful = 2, perfect = 4, recommend = 2, reliable = 2, friendly = 2,
  bad = -2, poor = -2, terrible = -4, awful = -4, hate = -3, hated = -3, slow = -1, broken = -3,
  difficult = -1, disappointing = -3, disappointed = -3, useless = -3, rude = -3, late = -1,
  expensive = -1, refund = -1, worst = -4, best = 3, fine = 1, okay = 0, buggy = -2,
}
local NEGATIONS = { ["not"] = true, ["no"] = true, ["never"] = true, ["don't"] = true,
                    ["didn't"] = true, ["isn't"] = true, ["wasn't"] = true }
local INTENSIFIERS = { very = 1.5, really = 1.5, extremely = 2, so = 1.3, quite = 1.2 }

function service_handler(event, context)
  if type(event.text) ~= "string" then
    return { statusCode = 400, body = { error = "event.text must be a string" } }
  end
  local total, hits, negate, boost = 0, 0, 0, 1
  local matched = {}
  for word in event.text:lower():gmatch("[%a']+") do
    if NEGATIONS[word] then
      negate = 3  -- the next three words are negated
    elseif INTENSIFIERS[word] then
      boost = INTENSIFIERS[word]
    else
      local value = LEXICON[word]
      if value then
        if negate > 0 then value = -value * 0.75 end
        total = total + value * boost
        hits = hits + 1
        matched[#matched + 1] = word
      end
      boost = 1
      negate = math.max(0, negate - 1)
    end
  end
  local score = hits == 0 and 0 or total / math.sqrt(total * total + 15)
  score = math.floor(score * 1000 + 0.5) / 1000
  local label = score > 0.2 and "positive" or score < -0.2 and "negative" or "neutral"
  return { score = score, label = label, matched_words = matched }
end
)lua";

constexpr std::string_view kRoman =
    R"lua(-- Roman numerals: converts 1 to 3999 to Roman numerals and back, in either direction.
local VALUES = { 1000, 900, 500, 400, 100, 90, 50, 40, 10, 9, 5, 4, 1 }
local SYMBOLS = { "M", "CM", "D", "CD", "C", "XC", "L", "XL", "X", "IX", "V", "IV", "I" }
local DIGIT = { I = 1, V = 5, X = 10, L = 50, C = 100, D = 500, M = 1000 }

local function to_roman(n)
  local out = {}
  for i, v in ipairs(VALUES) do
    while n >= v do
      out[#out + 1] = SYMBOLS[i]
      n = n - v
    end
  end
  return table.concat(out)
end

local function from_roman(s)
  local total = 0
  for i = 1, #s do
    local v, next_v = DIGIT[s:sub(i, i)], DIGIT[s:sub(i + 1, i + 1)] or 0
    if not v then return nil end
    total = total + (v < next_v and -v or v)
  end
  -- Only the canonical spelling counts: IIII or VX are not numerals.
  if total < 1 or total > 3999 or to_roman(total) ~= s then return nil end
  return total
end

function service_handler(event, context)
  local n = math.tointeger(event.number)
  if n then
    if n < 1 or n > 3999 then
      return { statusCode = 400, body = { error = "number must be from 1 to 3999" } }
    end
    return { number = n, roman = to_roman(n) }
  end
  if type(event.roman) == "string" then
    local value = from_roman(event.roman:upper())
    if not value then
      return { statusCode = 400, body = { error = event.roman .. " is not a Roman numeral" } }
    end
    return { number = value, roman = event.roman:upper() }
  end
  return { statusCode = 400, body = { error = "send number (1 to 3999) or roman (e.g. MMXXVII)" } }
end
)lua";

constexpr std::string_view kBusinessDays =
    R"lua(-- Business days: working days (Monday to Friday, minus the holidays given) from one date to
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
)lua";

constexpr std::string_view kReorderPoint =
    R"lua(-- Reorder point: safety stock for a service level, the reorder point, and the economic order
-- quantity (EOQ) when annual demand and costs are given.
local Z = { [0.9] = 1.2816, [0.95] = 1.6449, [0.975] = 1.96, [0.98] = 2.0537, [0.99] = 2.3263,
            [0.995] = 2.5758 }

function service_handler(event, context)
  local mean, sd = tonumber(event.daily_demand_mean), tonumber(event.daily_demand_sd) or 0
  local lead = tonumber(event.lead_time_days)
  local level = tonumber(event.service_level) or 0.95
  local z = Z[level]
  if not mean or mean < 0 or sd < 0 or not lead or lead <= 0 then
    return { statusCode = 400, body = {
      error = "send daily_demand_mean, daily_demand_sd and lead_time_days (positive numbers)" } }
  end
  if not z then
    return { statusCode = 400, body = {
      error = "service_level must be one of 0.9, 0.95, 0.975, 0.98, 0.99, 0.995" } }
  end
  local safety = z * sd * math.sqrt(lead)
  local result = {
    safety_stock = math.ceil(safety),
    reorder_point = math.ceil(mean * lead + safety),
    service_level = level,
  }
  local annual, order_cost, holding = tonumber(event.annual_demand), tonumber(event.order_cost),
    tonumber(event.holding_cost_per_unit_year)
  if annual and order_cost and holding and annual > 0 and order_cost > 0 and holding > 0 then
    result.economic_order_quantity = math.ceil(math.sqrt(2 * annual * order_cost / holding))
  end
  return result
end
)lua";

constexpr std::string_view kMarkdownTable =
    R"lua(-- Markdown table: rows of objects as a GitHub-flavoured Markdown table, columns in the order
-- given (or sorted by name), with pipes escaped and numbers right-aligned.
local function cell(v)
  if v == nil or v == json.null then return "" end
  local s = type(v) == "table" and json.encode(v) or tostring(v)
  return (s:gsub("|", "\\|"):gsub("[\r\n]+", " "))
end

function service_handler(event, context)
  local rows = event.rows
  if type(rows) ~= "table" then
    return { statusCode = 400, body = { error = "event.rows must be an array of objects" } }
  end
  local columns = type(event.columns) == "table" and event.columns or nil
  if not columns then
    local seen = {}
    columns = {}
    for _, row in ipairs(rows) do
      for k in pairs(row) do
        if not seen[k] then seen[k] = true columns[#columns + 1] = k end
      end
    end
    table.sort(columns)
  end
  local numeric = {}
  for _, c in ipairs(columns) do
    numeric[c] = #rows > 0
    for _, row in ipairs(rows) do
      if row[c] ~= nil and type(row[c]) ~= "number" then numeric[c] = false end
    end
  end
  local lines = { "| " .. table.concat(columns, " | ") .. " |" }
  local rule = {}
  for _, c in ipairs(columns) do rule[#rule + 1] = numeric[c] and "---:" or "---" end
  lines[#lines + 1] = "| " .. table.concat(rule, " | ") .. " |"
  for _, row in ipairs(rows) do
    local cells = {}
    for _, c in ipairs(columns) do cells[#cells + 1] = cell(row[c]) end
    lines[#lines + 1] = "| " .. table.concat(cells, " | ") .. " |"
  end
  return { markdown = table.concat(lines, "\n") }
end
)lua";

constexpr std::string_view kTipSplitter =
    R"lua(-- Tip splitter: the tip and each person's share of a bill, in cents; the cents that do not
-- divide evenly go to the first people, so the shares always add up to the total.
function service_handler(event, context)
  local bill = math.tointeger(event.bill_cents)
  local percent = tonumber(event.tip_percent) or 15
  local people = math.tointeger(event.people) or 1
  if not bill or bill < 0 or percent < 0 or percent > 100 or people < 1 or people > 100 then
    return { statusCode = 400, body = {
      error = "send bill_cents (a whole number), tip_percent (0 to 100) and people (1 to 100)" } }
  end
  local tip = math.floor(bill * percent / 100 + 0.5)
  local total = bill + tip
  local shares = {}
  for i = 1, people do
    shares[i] = total // people + (i <= total % people and 1 or 0)
  end
  return { tip_cents = tip, total_cents = total, shares_cents = shares }
end
)lua";

constexpr std::string_view kGeoMcp =
    R"lua(-- Geo MCP server: distance and midpoint between two coordinates, as Model Context Protocol
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
)lua";

constexpr std::string_view kStatistics =
    R"py(# Statistics summary: count, mean, median, standard deviation, quartiles and extremes of a
# list of numbers.
import math
import statistics


def service_handler(event, context):
    values = event.get("values") if isinstance(event, dict) else None
    if not isinstance(values, list) or not values:
        return {"statusCode": 400, "body": {"error": "event.values must be a non-empty list of numbers"}}
    if not all(isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) for v in values):
        return {"statusCode": 400, "body": {"error": "every value must be a finite number"}}
    summary = {
        "count": len(values),
        "mean": statistics.fmean(values),
        "median": statistics.median(values),
        "min": min(values),
        "max": max(values),
    }
    if len(values) >= 2:
        summary["stdev"] = statistics.stdev(values)
        summary["quartiles"] = statistics.quantiles(values, n=4)
    return summary
)py";

constexpr std::string_view kEmbeddings =
    R"py(# Text embeddings: deterministic 256-dimension vectors by feature hashing of words and word
# pairs, L2-normalised, for similarity search prototypes. The same text always gives the same
# vector, on every run.
import hashlib
import math
import re

DIMENSIONS = 256


def embed(text):
    words = re.findall(r"[a-z0-9']+", text.lower())
    features = words + [a + " " + b for a, b in zip(words, words[1:])]
    vector = [0.0] * DIMENSIONS
    for feature in features:
        digest = hashlib.blake2b(feature.encode(), digest_size=8).digest()
        index = int.from_bytes(digest[:4], "little") % DIMENSIONS
        sign = 1.0 if digest[4] & 1 else -1.0
        vector[index] += sign
    norm = math.sqrt(sum(v * v for v in vector)) or 1.0
    return [round(v / norm, 6) for v in vector]


def service_handler(event, context):
    texts = event.get("texts") if isinstance(event, dict) else None
    if not isinstance(texts, list) or not texts or not all(isinstance(t, str) for t in texts):
        return {"statusCode": 400, "body": {"error": "event.texts must be a non-empty list of strings"}}
    if len(texts) > 256:
        return {"statusCode": 400, "body": {"error": "at most 256 texts per call"}}
    return {"dimensions": DIMENSIONS, "embeddings": [embed(t) for t in texts]}
)py";

constexpr std::string_view kCosineRanker =
    R"py(# Cosine similarity ranker: ranks candidate vectors by cosine similarity to a query vector and
# returns the top k, for retrieval over embeddings.
import math


def cosine(a, b):
    dot = sum(x * y for x, y in zip(a, b))
    norm = math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b))
    return dot / norm if norm else 0.0


def service_handler(event, context):
    query = event.get("query") if isinstance(event, dict) else None
    candidates = event.get("candidates") if isinstance(event, dict) else None
    if not isinstance(query, list) or not isinstance(candidates, list):
        return {"statusCode": 400, "body": {"error": "send query (a vector) and candidates ([{id, vector}])"}}
    k = event.get("k", 5)
    scored = []
    for candidate in candidates:
        vector = candidate.get("vector") if isinstance(candidate, dict) else None
        if not isinstance(vector, list) or len(vector) != len(query):
            return {"statusCode": 400, "body": {"error": "every candidate needs a vector as long as the query"}}
        scored.append({"id": candidate.get("id"), "score": round(cosine(query, vector), 6)})
    scored.sort(key=lambda item: item["score"], reverse=True)
    return {"results": scored[: max(1, int(k))]}
)py";

constexpr std::string_view kJwtDecoder =
    R"js(// JWT decoder: the header and claims of a JSON Web Token, and whether it has expired. It does
// NOT verify the signature: never trust a decoded token for access decisions.
function decodePart(part) {
  const base64 = part.replace(/-/g, "+").replace(/_/g, "/");
  return JSON.parse(Buffer.from(base64, "base64").toString("utf8"));
}

function service_handler(event, context) {
  const token = event && typeof event.token === "string" ? event.token.trim() : "";
  const parts = token.split(".");
  if (parts.length !== 3) {
    return { statusCode: 400, body: { error: "event.token must be a JWT: three dot-separated parts" } };
  }
  let header, claims;
  try {
    header = decodePart(parts[0]);
    claims = decodePart(parts[1]);
  } catch (e) {
    return { statusCode: 422, body: { error: "the header or the claims are not base64url JSON" } };
  }
  const now = Math.floor(Date.now() / 1000);
  const result = { header, claims, signature_verified: false };
  if (typeof claims.exp === "number") {
    result.expires_at = new Date(claims.exp * 1000).toISOString();
    result.expired = claims.exp <= now;
  }
  if (typeof claims.iat === "number") result.issued_at = new Date(claims.iat * 1000).toISOString();
  return result;
}

// Exported where the runtime loads handlers as CommonJS modules.
if (typeof module !== "undefined") module.exports = { service_handler };
)js";

constexpr std::string_view kColorPalette =
    R"js(// Color palette: tints and shades of a colour, and its WCAG contrast ratio against white and
// black text.
function parseHex(hex) {
  const m = /^#?([0-9a-f]{6})$/i.exec(hex || "");
  if (!m) return null;
  const n = parseInt(m[1], 16);
  return [(n >> 16) & 255, (n >> 8) & 255, n & 255];
}

function toHex(rgb) {
  return "#" + rgb.map((c) => Math.round(c).toString(16).padStart(2, "0")).join("");
}

function mix(rgb, target, amount) {
  return rgb.map((c, i) => c + (target[i] - c) * amount);
}

function luminance(rgb) {
  const [r, g, b] = rgb.map((c) => {
    const s = c / 255;
    return s <= 0.03928 ? s / 12.92 : Math.pow((s + 0.055) / 1.055, 2.4);
  });
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
}

function contrast(a, b) {
  const [hi, lo] = [luminance(a), luminance(b)].sort((x, y) => y - x);
  return Math.round(((hi + 0.05) / (lo + 0.05)) * 100) / 100;
}

function service_handler(event, context) {
  const rgb = parseHex(event && event.color);
  if (!rgb) return { statusCode: 400, body: { error: "event.color must be a hex colour such as #1e88e5" } };
  const steps = [0.2, 0.4, 0.6, 0.8];
  const white = [255, 255, 255];
  const black = [0, 0, 0];
  return {
    color: toHex(rgb),
    tints: steps.map((s) => toHex(mix(rgb, white, s))),
    shades: steps.map((s) => toHex(mix(rgb, black, s))),
    contrast: { on_white: contrast(rgb, white), on_black: contrast(rgb, black) },
    readable_text: contrast(rgb, white) >= contrast(rgb, black) ? "#ffffff" : "#000000",
  };
}

// Exported where the runtime loads handlers as CommonJS modules.
if (typeof module !== "undefined") module.exports = { service_handler };
)js";

// Reviews, by the stars they go with.
constexpr std::string_view kGreat =
    "Does exactly what it says; we call it thousands of times a day.";
constexpr std::string_view kSolid = "Solid and fast. The examples got us started in minutes.";
constexpr std::string_view kGood = "Works well; a couple more options would make it perfect.";
constexpr std::string_view kMixed = "Useful, but we had to post-process the output.";
constexpr std::string_view kWeak = "Too limited for our use case.";

}  // namespace

const std::vector<DemoTool>& DemoCatalogue() {
  static const std::vector<DemoTool> kTools = {
      {kNorthwind,
       "Slugify",
       "Turns titles into clean, URL-safe slugs.",
       "## Slugify\n\nLower-cases, strips accents (`Crème` becomes `creme`) and joins words with "
       "dashes. Set `max_length` to cut long titles on a word boundary.",
       "Text",
       "Publishing",
       {"text", "url", "seo"},
       0,
       false,
       "lua",
       "CPU",
       kSlugify,
       R"({"text": "Crème Brûlée: 10 Easy Recipes!", "max_length": 40})",
       {6, 3, 2},
       {{5, kGreat}, {5, kSolid}, {4, kGood}}},
      {kNorthwind,
       "Word Count",
       "Words, sentences, paragraphs and reading time of any text.",
       "Counts words, characters (Unicode-aware), sentences and paragraphs, and estimates the "
       "reading time at `words_per_minute` (230 by default).",
       "Text",
       "Publishing",
       {"text", "analytics", "writing"},
       0,
       false,
       "lua",
       "CPU",
       kWordCount,
       R"({"text": "Toolgate runs tools. It bills per call.\n\nIt is fast."})",
       {3, 1, 0},
       {{4, kGood}, {0, {}}, {0, {}}}},
      {kNorthwind,
       "Email Validator",
       "Checks email syntax, catches domain typos and flags disposable addresses.",
       "Validates the address the way mail providers do, suggests a fix for common domain typos "
       "(`gmial.com`) and flags disposable providers. It makes no network call.",
       "Data quality",
       "Marketing",
       {"email", "validation", "crm"},
       500,
       false,
       "lua",
       "CPU",
       kEmailValidator,
       R"({"email": "jane.doe@gmial.com"})",
       {4, 5, 2},
       {{4, kSolid}, {4, kGood}, {3, kMixed}}},
      {kNorthwind,
       "Password Strength",
       "Scores a password from very weak to very strong, with advice.",
       "Estimates entropy from length and character classes, penalises common passwords and "
       "repeats, and explains how to improve. The password is never stored or returned.",
       "Security",
       "Cybersecurity",
       {"password", "security", "auth"},
       0,
       false,
       "lua",
       "CPU",
       kPasswordStrength,
       R"({"password": "correct horse battery staple"})",
       {2, 2, 0},
       {{5, kSolid}, {4, kGood}, {0, {}}}},
      {kLedgerly,
       "Loan Calculator",
       "Monthly payment, total interest and amortization schedule of a fixed-rate loan.",
       "## Loan calculator\n\nSend `principal`, `annual_rate_percent` and `years`; get the monthly "
       "payment, totals and the first `schedule_months` months of the schedule.",
       "Finance",
       "Banking",
       {"loan", "mortgage", "amortization"},
       1000,
       false,
       "lua",
       "CPU",
       kLoanCalculator,
       R"({"principal": 250000, "annual_rate_percent": 4.2, "years": 25})",
       {5, 3, 4},
       {{5, kGreat}, {4, kSolid}, {5, kGreat}}},
      {kLedgerly,
       "VAT Calculator",
       "Net, VAT and gross amounts for every EU member state.",
       "Integer arithmetic on cents at each member state's standard rate; set `includes_vat` to "
       "split a gross amount.",
       "Finance",
       "E-commerce",
       {"tax", "vat", "pricing", "eu"},
       0,
       false,
       "lua",
       "CPU",
       kVatCalculator,
       R"({"country": "DE", "amount_cents": 10000})",
       {4, 6, 1},
       {{5, kSolid}, {5, kGreat}, {4, kGood}}},
      {kLedgerly,
       "Currency Formatter",
       "Formats money for a locale: $1,234.56 or 1.234,56 €.",
       "Amounts are integers in minor units (cents), so nothing is lost to floating point.",
       "Finance",
       "E-commerce",
       {"currency", "formatting", "i18n"},
       0,
       false,
       "lua",
       "CPU",
       kCurrencyFormatter,
       R"({"amount_minor": 123456, "currency": "EUR", "locale": "de-DE"})",
       {2, 4, 0},
       {{4, kGood}, {5, kSolid}, {0, {}}}},
      {kLedgerly,
       "IBAN Validator",
       "Validates IBANs: country length and mod-97 check digits.",
       "Catches mistyped account numbers before a payment fails. Prints the IBAN in groups of "
       "four.",
       "Finance",
       "Banking",
       {"iban", "validation", "payments"},
       300,
       false,
       "lua",
       "CPU",
       kIbanValidator,
       R"({"iban": "DE89 3704 0044 0532 0130 00"})",
       {3, 0, 3},
       {{5, kGreat}, {0, {}}, {4, kSolid}}},
      {kLedgerly,
       "Card Number Check",
       "Luhn checksum and brand of a payment card number.",
       "Returns whether the number passes the Luhn check, the brand, and the last four digits "
       "only.",
       "Finance",
       "Payments",
       {"cards", "validation", "payments"},
       0,
       false,
       "lua",
       "CPU",
       kLuhn,
       R"({"number": "4111 1111 1111 1111"})",
       {1, 2, 0},
       {{4, kGood}, {4, kSolid}, {0, {}}}},
      {kLedgerly,
       "Tip Splitter",
       "Splits a bill and tip fairly, to the cent.",
       "The cents that do not divide evenly go to the first people, so the shares always add up.",
       "Finance",
       "Hospitality",
       {"restaurants", "payments"},
       0,
       false,
       "lua",
       "CPU",
       kTipSplitter,
       R"({"bill_cents": 8650, "tip_percent": 18, "people": 3})",
       {1, 0, 0},
       {{5, kGreat}, {0, {}}, {0, {}}}},
      {kAtlas,
       "Haversine Distance",
       "Great-circle distance and bearing between two coordinates.",
       "Kilometres, miles and the initial bearing, from `{lat, lon}` pairs in degrees.",
       "Geo",
       "Logistics",
       {"geo", "distance", "maps"},
       200,
       false,
       "lua",
       "CPU",
       kHaversine,
       R"({"from": {"lat": 38.7223, "lon": -9.1393}, "to": {"lat": 40.4168, "lon": -3.7038}})",
       {3, 2, 6},
       {{4, kGood}, {4, kSolid}, {5, kGreat}}},
      {kAtlas,
       "Shipping Quote",
       "Parcel price by zone and service, with volumetric weight.",
       "Billable weight is the greater of actual and volumetric weight (L × W × H / 5000). "
       "Prices in cents, with delivery days.",
       "Logistics",
       "Logistics",
       {"shipping", "pricing", "parcels"},
       1500,
       false,
       "lua",
       "CPU",
       kShippingQuote,
       R"({"weight_kg": 2.4, "dimensions_cm": {"length": 40, "width": 30, "height": 20}, "zone": "eu", "service": "express"})",
       {0, 3, 7},
       {{0, {}}, {3, kMixed}, {4, kSolid}}},
      {kAtlas,
       "Geo MCP server",
       "MCP tools for distance and midpoint between coordinates.",
       "A Model Context Protocol server: `initialize`, `tools/list` and `tools/call` with the "
       "tools `distance` and `midpoint`.",
       "AI agents",
       "Logistics",
       {"mcp", "geo", "agents"},
       0,
       true,
       "lua",
       "CPU",
       kGeoMcp,
       R"({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "distance", "arguments": {"from": {"lat": 51.5072, "lon": -0.1276}, "to": {"lat": 48.8566, "lon": 2.3522}}}})",
       {2, 0, 2},
       {{5, kSolid}, {0, {}}, {4, kGood}}},
      {kAtlas,
       "Business Days",
       "Working days between two dates, minus your holidays.",
       "Counts Monday to Friday from `from` to `to` (both included), leaving out the `holidays` "
       "you list.",
       "Productivity",
       "Human resources",
       {"dates", "calendar", "payroll"},
       0,
       false,
       "lua",
       "CPU",
       kBusinessDays,
       R"({"from": "2027-12-20", "to": "2027-12-31", "holidays": ["2027-12-24", "2027-12-31"]})",
       {1, 1, 1},
       {{3, kMixed}, {4, kGood}, {4, kSolid}}},
      {kNorthwind,
       "Unit Converter",
       "Length, mass, volume, speed and temperature conversions.",
       "Metric and imperial units: `km`, `mi`, `lb`, `oz`, `gal`, `mph`, `C`, `F`, `K` and more.",
       "Utilities",
       "Engineering",
       {"units", "conversion"},
       0,
       false,
       "lua",
       "CPU",
       kUnitConverter,
       R"({"value": 26.2, "from": "mi", "to": "km"})",
       {3, 1, 2},
       {{4, kGood}, {5, kSolid}, {4, kGood}}},
      {kNorthwind,
       "Roman Numerals",
       "Converts numbers to Roman numerals and back.",
       "From 1 to 3999; only canonical numerals are accepted (`IIII` is not one).",
       "Utilities",
       "Education",
       {"numbers", "conversion"},
       0,
       false,
       "lua",
       "CPU",
       kRoman,
       R"({"number": 2027})",
       {1, 0, 0},
       {{5, kGreat}, {0, {}}, {0, {}}}},
      {kNorthwind,
       "CSV to JSON",
       "Parses CSV (quotes, escapes, line breaks) into JSON rows.",
       "RFC 4180 parsing with a configurable `delimiter`; the header row names the fields.",
       "Data",
       "Developer tools",
       {"csv", "json", "conversion"},
       0,
       false,
       "lua",
       "CPU",
       kCsvToJson,
       R"({"csv": "sku,name,qty\nA-1,\"Widget, large\",4\nB-2,Gadget,12"})",
       {2, 3, 1},
       {{4, kSolid}, {4, kGood}, {2, kWeak}}},
      {kNorthwind,
       "Markdown Table",
       "Turns rows of JSON objects into a Markdown table.",
       "Columns in the order you give (or alphabetical); numbers are right-aligned and pipes "
       "escaped.",
       "Text",
       "Developer tools",
       {"markdown", "tables", "docs"},
       0,
       false,
       "lua",
       "CPU",
       kMarkdownTable,
       R"({"rows": [{"tool": "Slugify", "calls": 1200}, {"tool": "Word Count", "calls": 830}], "columns": ["tool", "calls"]})",
       {1, 0, 1},
       {{4, kGood}, {0, {}}, {3, kMixed}}},
      {kHelix,
       "Sentiment Score",
       "Positive, neutral or negative: a fast sentiment score.",
       "Lexicon-based scoring for short English texts such as reviews and tickets, with negation "
       "and intensifiers. Deterministic and cheap.",
       "AI",
       "Marketing",
       {"sentiment", "nlp", "reviews"},
       800,
       false,
       "lua",
       "CPU",
       kSentiment,
       R"({"text": "The support team was really helpful, but delivery was slow."})",
       {4, 4, 2},
       {{4, kSolid}, {3, kMixed}, {4, kGood}}},
      {kHelix,
       "BMI Calculator",
       "Body mass index and WHO category for adults.",
       "A screening measure with the healthy weight range for the height given.",
       "Health",
       "Healthcare",
       {"health", "fitness"},
       0,
       false,
       "lua",
       "CPU",
       kBmi,
       R"({"weight_kg": 72, "height_cm": 178})",
       {1, 0, 0},
       {{0, {}}, {0, {}}, {0, {}}}},
      {kHelix,
       "Inventory Reorder Point",
       "Safety stock, reorder point and economic order quantity.",
       "Classic inventory math for a target service level; add annual demand and costs for the "
       "EOQ.",
       "Operations",
       "Retail",
       {"inventory", "supply-chain", "forecasting"},
       1000,
       false,
       "lua",
       "CPU",
       kReorderPoint,
       R"({"daily_demand_mean": 40, "daily_demand_sd": 12, "lead_time_days": 7, "service_level": 0.95, "annual_demand": 14600, "order_cost": 50, "holding_cost_per_unit_year": 2.5})",
       {0, 5, 3},
       {{0, {}}, {5, kGreat}, {4, kSolid}}},
      {kHelix,
       "Statistics Summary",
       "Mean, median, deviation and quartiles of a list of numbers.",
       "Python's `statistics` module behind an API: count, mean, median, standard deviation, "
       "quartiles, minimum and maximum.",
       "Data",
       "Research",
       {"statistics", "analytics", "python"},
       500,
       false,
       "python",
       "CPU",
       kStatistics,
       R"({"values": [12, 15, 11, 19, 14, 22, 17]})",
       {},
       {}},
      {kHelix,
       "Text Embeddings",
       "Deterministic 256-dimension text embeddings, on GPU compute.",
       "Feature-hashed word and word-pair vectors, L2-normalised: the same text always gives the "
       "same vector. Up to 256 texts per call.",
       "AI",
       "Media",
       {"embeddings", "nlp", "gpu"},
       20000,
       false,
       "python",
       "GPU",
       kEmbeddings,
       R"({"texts": ["fast parcel delivery", "quick package shipping"]})",
       {},
       {}},
      {kHelix,
       "Cosine Similarity Ranker",
       "Ranks vectors by cosine similarity to a query.",
       "Send a query vector and `candidates` as `{id, vector}`; get the top `k` by similarity. "
       "Pairs well with Text Embeddings.",
       "AI",
       "Media",
       {"embeddings", "search", "gpu"},
       5000,
       false,
       "python",
       "GPU",
       kCosineRanker,
       R"({"query": [0.1, 0.7, 0.2], "candidates": [{"id": "a", "vector": [0.1, 0.6, 0.3]}, {"id": "b", "vector": [0.9, 0.1, 0.0]}], "k": 1})",
       {},
       {}},
      {kSamples,
       "JWT Decoder",
       "Decodes a JSON Web Token's header and claims.",
       "Shows the header, the claims and whether the token has expired. It does **not** verify "
       "signatures.",
       "Security",
       "Developer tools",
       {"jwt", "auth", "debugging"},
       0,
       false,
       "javascript",
       "CPU",
       kJwtDecoder,
       R"({"token": "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkphbmUiLCJpYXQiOjE4MDAwMDAwMDB9.c2lnbmF0dXJl"})",
       {},
       {}},
      {kSamples,
       "Color Palette",
       "Tints, shades and WCAG contrast of a colour.",
       "Four tints and four shades of a hex colour, its contrast ratio with white and black, and "
       "the more readable text colour.",
       "Design",
       "Media",
       {"color", "design", "accessibility"},
       0,
       false,
       "javascript",
       "CPU",
       kColorPalette,
       R"({"color": "#1e88e5"})",
       {},
       {}},
  };
  return kTools;
}

}  // namespace toolgate::cli
