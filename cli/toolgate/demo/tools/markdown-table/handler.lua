-- Markdown table: rows of objects as a GitHub-flavoured Markdown table, columns in the order
-- given (or sorted by name), with pipes escaped and numbers right-aligned.
local function cell(v)
  if v == nil or v == json.null then return "" end
  local s = type(v) == "table" and json.encode(v) or tostring(v)
  return (s:gsub("|", "\\|"):gsub("[\r\n]+", " "))
end

function service_handler(event, context)
  local rows = event.rows
  if type(rows) ~= "table" then
    return { statusCode = 400, body = { error = "event.rows must be an array of objects" } }
  end
  local columns = type(event.columns) == "table" and event.columns or nil
  if not columns then
    local seen = {}
    columns = {}
    for _, row in ipairs(rows) do
      for k in pairs(row) do
        if not seen[k] then seen[k] = true columns[#columns + 1] = k end
      end
    end
    table.sort(columns)
  end
  local numeric = {}
  for _, c in ipairs(columns) do
    numeric[c] = #rows > 0
    for _, row in ipairs(rows) do
      if row[c] ~= nil and type(row[c]) ~= "number" then numeric[c] = false end
    end
  end
  local lines = { "| " .. table.concat(columns, " | ") .. " |" }
  local rule = {}
  for _, c in ipairs(columns) do rule[#rule + 1] = numeric[c] and "---:" or "---" end
  lines[#lines + 1] = "| " .. table.concat(rule, " | ") .. " |"
  for _, row in ipairs(rows) do
    local cells = {}
    for _, c in ipairs(columns) do cells[#cells + 1] = cell(row[c]) end
    lines[#lines + 1] = "| " .. table.concat(cells, " | ") .. " |"
  end
  return { markdown = table.concat(lines, "\n") }
end
