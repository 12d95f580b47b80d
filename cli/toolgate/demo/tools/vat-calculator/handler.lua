-- VAT calculator: net, VAT and gross of an amount in cents at a member state's standard rate.
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
