-- Five ways to pay for the same eight H100s serving the same chatbot, over three years:
-- bought, rented by the month, reserved, on demand and on spot.  Each pool gets the same
-- requests (streams = "chat"), so the run opens with the five options ranked by their
-- cost over the horizon in cash, the best marked.
--
-- Prices, each with its source: bought at the catalog's dated price of a used H100 SXM
-- ($23,500, RunLocalAI Pulse, Q1 2026: fs.owned states none) plus $2,500 a month of
-- colocation per 8-GPU server (as scenarios/buy_or_rent.lua); by the month at Lambda's
-- 8x H100 SXM on-demand $3.99 a GPU-hour times 730 hours ($2,912.70 a GPU-month, an
-- assumption: a monthly contract at the hourly rate); reserved at AWS's p5 capacity-block
-- rate, $4.916 a GPU-hour (2024-12); on demand at AWS p5 after the 2025 cut, $6.88
-- (2026-11); spot at GCP's a3-highgpu spot GPU price, $5.86 (2026-09).  Try
-- --set workloads.on_bought.arrivals.rate=40 (and the same for the others) for a busier
-- chatbot, or horizon = "1y".
local fs = require "fleetsim"

local function chat(pool)
  return fs.inference {
    model = "llama-3.1-8b", pool = pool, streams = "chat",
    arrivals = fs.poisson { rate = 20 },
    prompt = fs.lognormal { median = 1000, sigma = 1.0 },
    output = fs.lognormal { median = 250, sigma = 0.8 },
    max_wait = "60s", slo = { ttft = "500ms" }, when_full = "preempt",
  }
end

local function eight(cost)
  return fs.dedicated { gpu = "H100-SXM", count = 8, cost = cost }
end

return fs.scenario {
  name = "five_ways_to_pay",
  duration = "2h", warmup = "10m", replications = 2, horizon = "3y",
  pools = {
    bought = eight(fs.owned { gpus_per_server = 8, hosting_usd_per_month = 2500 }),
    monthly = eight(fs.monthly { usd_per_gpu = 2912.70 }),
    reserved = eight(fs.reserved { gpus = 8, usd_per_hour = 4.916, term = "1y" }),
    on_demand = eight(fs.on_demand { usd_per_hour = 6.88 }),
    spot = eight(fs.spot { usd_per_hour = 5.86 }),
  },
  workloads = {
    on_bought = chat("bought"), on_monthly = chat("monthly"), on_reserved = chat("reserved"),
    on_on_demand = chat("on_demand"), on_spot = chat("spot"),
  },
}
