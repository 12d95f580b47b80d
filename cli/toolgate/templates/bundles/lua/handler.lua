-- A Toolgate function packed as a bundle: this directory, minus .toolgateignore's patterns.
--
-- require("a.b") loads a/b.lua (or a/b/init.lua) from the bundle, never a module of the machine
-- that runs the tool, and never a C module.
local greet = require("lib.greet")

function service_handler(event, context)
  local name = type(event) == "table" and type(event.name) == "string" and event.name or "world"
  return {statusCode = 200, body = {message = greet.greet(name)}}
end
