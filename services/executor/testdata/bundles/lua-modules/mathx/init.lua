local M = {}
function M.square(n) return n * n end
return M
