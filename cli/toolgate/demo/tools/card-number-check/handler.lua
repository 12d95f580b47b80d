-- Card number check: the Luhn checksum and the card brand from its prefix. The number is never
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
