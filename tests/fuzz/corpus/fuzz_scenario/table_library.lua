-- The table functions: bounds at the integer limits, metamethods, huge lengths, sorts.
local fs = require "fleetsim"
local t = {}
for i = 1, 1000 do t[i] = (i * 7919) % 1000 end
table.insert(t, 1, -1) table.insert(t, 500, -2) table.remove(t, 1) table.remove(t)
table.move(t, 1, 100, 50) table.move(t, 1, 10, 1, {})
table.sort(t) table.sort(t, function(a, b) return a > b end)
local p = setmetatable({}, { __index = function(_, i) return i end, __newindex = function() end,
                             __len = function() return 5 end })
table.insert(p, 1, "x") table.remove(p, 2) table.concat(p, ",")
for _, f in ipairs { -- mistakes first, then work past the budget, which stops the file
  function() table.unpack({}, 1, 1e8) end, function() table.concat({ {} }) end,
  function() table.sort({ 1, "x" }) end, function() table.remove({}, math.mininteger) end,
  function() table.move({}, -1, math.maxinteger, 1) end, function() table.insert({}, 5, 1) end,
  function() table.insert(setmetatable({}, { __len = function() return 1e15 end }), 1, 0) end,
} do pcall(f) end
return fs.scenario { duration = "1h", name = "tables" .. table.concat(t, "", 1, 3),
  pools = { q = fs.dedicated { count = 2 } },
  workloads = { w = fs.service { arrivals = fs.poisson { rate = 1 },
    service = fs.exponential { mean = 1 }, pool = "q" } } }
