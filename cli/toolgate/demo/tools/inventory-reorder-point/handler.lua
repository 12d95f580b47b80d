-- Reorder point: safety stock for a service level, the reorder point, and the economic order
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
