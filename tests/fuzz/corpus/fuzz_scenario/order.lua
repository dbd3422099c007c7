-- Deterministic order: pairs and next over mixed keys, objects as keys, tostring,
-- string.format's %s and %p, print's escaping, and a routing function with state.
local fs = require "fleetsim"
local t = { b = 1, [3] = 1, a = 1, [true] = 1, [-1.5] = 1, [false] = 1, [2^53] = 1 }
local a, b = {}, {}
t[a] = 1
local keys = {}
for k in pairs(t) do keys[#keys + 1] = tostring(k) end
t[b] = 2
pcall(function() for k in pairs({ [{}] = 1, [{}] = 2 }) do end end)
local k = nil repeat k = next(t, k) until k == nil
pcall(next, t, "no such key")
pcall(string.format, "%p", t)
print(string.format("%s %5.2s %q", t, "abc", "\27[2J\0"), "\27]0;x\7", "\xc2\x9b", "\xff")
local calls = 0
return fs.scenario { duration = "10m", name = table.concat(keys, "_"), replications = 2,
  pools = { g = fs.dedicated { gpu = "H100-SXM", count = 2 } },
  workloads = { chat = fs.inference { model = "llama-3-8b", pool = "g", max_wait = "30s",
    prompt = 100, output = 20, arrivals = fs.poisson { rate = 2 },
    routing = function(replicas) calls = calls + 1 return math.random(#replicas) end } } }
