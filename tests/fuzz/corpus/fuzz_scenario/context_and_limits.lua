--set duration=101y
local fs = require "fleetsim"
fs.devices["H100-SXM"].memory = "lots"
return fs.scenario {
  name = "\27[2Jlimits", duration = "1h", description = "\27]0;title\7",
  pools = { g = fs.dedicated { gpu = "H100-SXM", count = 1 } },
  workloads = { chat = fs.inference { model = "llama-3-8b", pool = "g",
    arrivals = fs.poisson { rate = 1 }, prompt = fs.uniform { low = 100, high = 9000 },
    output = 10, max_wait = "1s" } },
  sweep = { seed = { 1, 2, 3 } },
}
