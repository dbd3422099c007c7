-- The procurement question of docs/procurement.md: Llama-3-70B chat at 50 requests/s with
-- a p99 time to first token under 1 s, on bought 8-GPU H100 servers or on rented H100s,
-- over 3 years.  Both pools see the same requests (streams = "chat"), send 2 TB of
-- responses a day and pay their site's internet transit (a quote of $0.50 per Mbps a
-- month at the 95th percentile: change it to yours).
local fs = require "fleetsim"

local function chat(pool)
  return fs.inference {
    model = "llama-3-70b", pool = pool, streams = "chat",
    arrivals = fs.poisson { rate = 50 },                      -- requests per second
    prompt = fs.lognormal { median = 1000, sigma = 1.0 },     -- tokens
    output = fs.lognormal { median = 250, sigma = 0.8 },
    max_wait = "60s", slo = { ttft = "1s" },
    egress_per_day = "2TB",                                   -- responses sent to users
  }
end

return fs.scenario {
  name = "procurement",
  duration = "30m", warmup = "5m", replications = 3,
  horizon = "3y",                                             -- costs projected to 3 years
  pools = {
    bought = fs.dedicated { gpu = "H100-SXM", count = 40,
                            cost = fs.owned { purchase_usd = 280000, gpus_per_server = 8,
                                              years = 4, hosting_usd_per_month = 2500,
                                              transit = 0.5 } },  -- USD per Mbps a month
    rented = fs.dedicated { gpu = "H100-SXM", count = 40,
                            cost = fs.monthly { usd_per_gpu = 2500, transit = 0.5 } },
  },
  workloads = { on_bought = chat("bought"), on_rented = chat("rented") },
}
