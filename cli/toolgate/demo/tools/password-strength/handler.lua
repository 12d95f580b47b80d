-- Password strength: an entropy estimate from length and character classes, lowered for
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
