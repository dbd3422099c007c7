-- docs/procurement.md's chatbot on H200s, with a limit on the time per output token as
-- well: how many bought H200s (whole 8-GPU servers) keep both p99s within their SLO, the
-- tensor parallelism left to fleetsim.  A search in steps of 8 over both conditions.
local fs = require "fleetsim"

return fs.scenario {
  name = "procurement_h200",
  duration = "30m", warmup = "5m", replications = 3,
  pools = { bought = fs.dedicated { gpu = "H200-SXM", count = 8 } },
  workloads = {
    chat = fs.inference {
      model = "llama-3-70b", pool = "bought",
      arrivals = fs.poisson { rate = 50 },
      prompt = fs.lognormal { median = 1000, sigma = 1.0 },
      output = fs.lognormal { median = 250, sigma = 0.8 },
      max_wait = "60s", slo = { ttft = "1s", tpot = "50ms" },
    },
  },
  search = fs.search { key = "pools.bought.count",
                       target = "ttft_p99_s <= 1 and tpot_p99_s <= 0.05",
                       low = 8, high = 128, step = 8, subject = "chat" },
}
