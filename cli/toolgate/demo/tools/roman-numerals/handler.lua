-- Roman numerals: converts 1 to 3999 to Roman numerals and back, in either direction.
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
