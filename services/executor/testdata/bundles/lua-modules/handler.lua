-- A bundle's entry file: two modules of the bundle, one a plain file, one a directory.
local strings = require("lib.strings")
local mathx = require("mathx")

function service_handler(event, context)
  return {greeting = strings.greet(event.name), square = mathx.square(event.n),
          same = require("lib.strings") == strings}
end
