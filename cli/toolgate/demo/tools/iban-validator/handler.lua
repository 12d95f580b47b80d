-- IBAN validator: country length and the ISO 13616 mod-97 check digits; prints the IBAN in
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
