-- Slugify: a URL slug from a title. Accented Latin letters lose their accents; every run of
-- other characters becomes one dash.
local PLAIN = {
  ["á"] = "a", ["à"] = "a", ["â"] = "a", ["ä"] = "a", ["ã"] = "a", ["å"] = "a", ["æ"] = "ae",
  ["ç"] = "c", ["é"] = "e", ["è"] = "e", ["ê"] = "e", ["ë"] = "e", ["í"] = "i", ["ì"] = "i",
  ["î"] = "i", ["ï"] = "i", ["ñ"] = "n", ["ó"] = "o", ["ò"] = "o", ["ô"] = "o", ["ö"] = "o",
  ["õ"] = "o", ["ø"] = "o", ["œ"] = "oe", ["ú"] = "u", ["ù"] = "u", ["û"] = "u", ["ü"] = "u",
  ["ý"] = "y", ["ÿ"] = "y", ["ß"] = "ss", ["É"] = "e", ["À"] = "a", ["Ç"] = "c", ["Ö"] = "o",
  ["Ü"] = "u", ["Ñ"] = "n",
}

function service_handler(event, context)
  local text = event.text
  if type(text) ~= "string" then
    return { statusCode = 400, body = { error = "event.text must be a string" } }
  end
  local max = math.tointeger(event.max_length) or 80
  local parts, pending_dash = {}, false
  for _, code in utf8.codes(text) do
    local ch = utf8.char(code)
    local plain = PLAIN[ch] or (code < 128 and ch:lower() or "")
    if plain:match("^[a-z0-9]+$") then
      if pending_dash and #parts > 0 then parts[#parts + 1] = "-" end
      parts[#parts + 1] = plain
      pending_dash = false
    else
      pending_dash = true
    end
  end
  local slug = table.concat(parts)
  if #slug > max then slug = (slug:sub(1, max):gsub("%-+$", "")) end
  return { slug = slug }
end
