-- A chatbot on 8 H100 replicas routed by a Lua function (docs/serving.md, "Routing in
-- Lua"): the built-in least_outstanding policy written in Lua.  It gives the same bytes
-- as the built-in one, which --set workloads.chat.routing=least_outstanding selects.
local fs = require "fleetsim"

local function least_outstanding(replicas, request)
  local best = 1
  for i = 2, #replicas do
    if replicas[i].outstanding < replicas[best].outstanding then best = i end
  end
  return best
end

return fs.scenario {
  name = "lua_routing", duration = "1h", seed = 1,
  pools = { gpus = fs.dedicated { gpu = "H100-SXM", count = 8 } },
  workloads = {
    chat = fs.inference {
      model = "llama-3-8b", pool = "gpus", arrivals = fs.poisson { rate = 40 },
      prompt = fs.lognormal { median = 1000, sigma = 1.0 },
      output = fs.lognormal { median = 250, sigma = 0.8 },
      routing = least_outstanding,
    },
  },
}
