-- Email validator: syntax (the practical subset of RFC 5322 that mail providers accept),
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
