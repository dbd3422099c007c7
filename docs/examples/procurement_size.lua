-- How many bought H100s (whole 8-GPU servers) docs/procurement.md's chatbot needs for a
-- p99 time to first token under 1 s: a search in steps of 8.
local fs = require "fleetsim"

return fs.scenario {
  name = "procurement_size",
  duration = "30m", warmup = "5m", replications = 3,
  pools = { bought = fs.dedicated { gpu = "H100-SXM", count = 8 } },
  workloads = {
    chat = fs.inference {
      model = "llama-3-70b", pool = "bought",
      arrivals = fs.poisson { rate = 50 },
      prompt = fs.lognormal { median = 1000, sigma = 1.0 },
      output = fs.lognormal { median = 250, sigma = 0.8 },
      max_wait = "60s", slo = { ttft = "1s" },
    },
  },
  search = fs.search { key = "pools.bought.count", target = "ttft_p99_s <= 1",
                       low = 8, high = 64, step = 8, subject = "chat" },
}
