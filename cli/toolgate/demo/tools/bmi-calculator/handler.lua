-- BMI calculator: body mass index and its WHO category for an adult.
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
