-- The tutorial's first scenario (docs/tutorial.md): a chatbot on 4 owned H100s.
local fs = require "fleetsim"

return fs.scenario {
  name = "my_chat",
  duration = "1h", warmup = "5m", replications = 3,   -- simulated time, ignored start, runs
  pools = {
    gpus = fs.dedicated { gpu = "H100-SXM", count = 4,
                          cost = fs.monthly { usd_per_gpu = 2500 } },
  },
  workloads = {
    chat = fs.inference {
      model = "llama-3.1-8b", pool = "gpus",
      arrivals = fs.poisson { rate = 20 },                       -- requests per second
      prompt = fs.lognormal { median = 1000, sigma = 1.0 },      -- tokens
      output = fs.lognormal { median = 250, sigma = 0.8 },
      slo = { ttft = "500ms" },
    },
  },
}
