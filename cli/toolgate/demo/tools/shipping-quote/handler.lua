-- Shipping quote: billable weight (the greater of actual and volumetric weight, L x W x H /
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
