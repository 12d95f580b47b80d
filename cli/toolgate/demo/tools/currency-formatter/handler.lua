-- Currency formatter: an amount in minor units (cents), written the way a locale writes money.
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
