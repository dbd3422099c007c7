-- Coroutines: __close handlers that close others (nested up to the sandbox's bound),
-- wrapped coroutines that fail while closing, yields across pcall.
local fs = require "fleetsim"
local cos = {}
for i = 1, 8 do
  cos[i] = coroutine.create(function()
    local x <close> = setmetatable({}, { __close = function()
      if cos[i + 1] then pcall(coroutine.close, cos[i + 1]) end
      error("closing " .. i)
    end })
    coroutine.yield(i)
  end)
  coroutine.resume(cos[i])
end
pcall(coroutine.close, cos[1])
local w = coroutine.wrap(function()
  local y <close> = setmetatable({}, { __close = function() coroutine.yield() end })
  coroutine.yield(1)
  error("wrapped")
end)
pcall(w) pcall(w) pcall(w)
pcall(coroutine.close, coroutine.running())
local gen = coroutine.wrap(function() for i = 1, 3 do pcall(coroutine.yield, i) end end)
return fs.scenario { duration = "1h", name = "co" .. gen(),
  pools = { q = fs.dedicated { count = 2 } },
  workloads = { w = fs.service { arrivals = fs.poisson { rate = 1 },
    service = fs.exponential { mean = 1 }, pool = "q" } } }
