-- Pattern matching: backtracking, sets, balances, frontiers, captures and back-references,
-- malformed patterns caught by pcall, and work that runs out of budget.
local fs = require "fleetsim"
local s = ("ab"):rep(50) .. "[x(y)z]" .. ("a"):rep(40)
local found = {}
for _, p in ipairs { "a*a*b", "(a-)b", "%b()", "%f[%a]%a+", "(a)(b)%1%2", "[^%s]+$",
                     "()a?()", "[a-c%]]+", "^(%w+)", "[", "%", "(()", "%1", "%bx", "%fx", "a$b",
                     "x?y?z?$" } do
  local ok, a, b = pcall(string.find, s, p)
  found[#found + 1] = tostring(ok) .. tostring(a) .. tostring(b)
  pcall(string.gsub, s, p, "%0%0", 3)
  pcall(function() for w in s:gmatch(p) do end end)
end
pcall(string.find, ("a"):rep(3000), "a*a*a*a*b")
pcall(string.find, ("x"):rep(1e5), ("x"):rep(99) .. "y", 1, true)
return fs.scenario { duration = "1h", name = "patterns" .. #found,
  pools = { q = fs.dedicated { count = 2 } },
  workloads = { w = fs.service { arrivals = fs.poisson { rate = 1 },
    service = fs.exponential { mean = 1 }, pool = "q" } } }
