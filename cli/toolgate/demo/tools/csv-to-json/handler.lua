-- CSV to JSON: rows of objects keyed by the header row. Handles quoted fields, doubled quotes
-- inside them, and line breaks inside quotes (RFC 4180).
local function parse(text, sep)
  local rows, row, field, i, n, quoted = {}, {}, {}, 1, #text, false
  while i <= n do
    local c = text:sub(i, i)
    if quoted then
      if c == '"' then
        if text:sub(i + 1, i + 1) == '"' then
          field[#field + 1] = '"'
          i = i + 1
        else
          quoted = false
        end
      else
        field[#field + 1] = c
      end
    elseif c == '"' then
      quoted = true
    elseif c == sep then
      row[#row + 1] = table.concat(field)
      field = {}
    elseif c == "\n" or c == "\r" then
      if c == "\r" and text:sub(i + 1, i + 1) == "\n" then i = i + 1 end
      row[#row + 1] = table.concat(field)
      rows[#rows + 1] = row
      row, field = {}, {}
    else
      field[#field + 1] = c
    end
    i = i + 1
  end
  if #field > 0 or #row > 0 then
    row[#row + 1] = table.concat(field)
    rows[#rows + 1] = row
  end
  return rows, quoted
end

function service_handler(event, context)
  if type(event.csv) ~= "string" then
    return { statusCode = 400, body = { error = "event.csv must be a string" } }
  end
  local sep = type(event.delimiter) == "string" and #event.delimiter == 1 and event.delimiter or ","
  local rows, unterminated = parse(event.csv, sep)
  if unterminated then
    return { statusCode = 422, body = { error = "a quoted field is never closed" } }
  end
  if #rows == 0 then return { columns = {}, rows = {} } end
  local header, out = rows[1], {}
  for r = 2, #rows do
    local object = {}
    for c, name in ipairs(header) do object[name] = rows[r][c] or "" end
    out[#out + 1] = object
  end
  return { columns = header, rows = out }
end
