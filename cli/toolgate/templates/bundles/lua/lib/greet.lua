-- A module of the bundle, loaded by handler.lua as require("lib.greet").
local M = {}

function M.greet(name)
  return "Hello, " .. name .. "!"
end

return M
