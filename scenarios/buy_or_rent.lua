-- Buy, or rent by the hour?  The same chatbot on eight H100s bought outright and on
-- H100s rented on demand that follow the day's traffic.
--
-- Bought: one 8-GPU server at $280,000, depreciated over 4 years to a 10% residual,
-- $2,500 a month of colocation, paying its own power (PUE 1.4, $0.08/kWh).  Rented: the
-- AWS p5 price after the 2025 cut ($6.88 per GPU-hour, AWS's price page, 2026-11),
-- per-second billing, AWS egress tiers, an autoscaler between 2 and 8 GPUs.  The
-- traffic follows the clock (fs.diurnal), so the bought server idles at night while
-- the rented pool shrinks.  Read cost_usd per pool, cost_per_mtok_usd and ttft_p99_s
-- per workload, and run,bought_vs_rented,break_even_months: how many months of this
-- traffic pay for the purchase; the run opens with the two options ranked.  Try a
-- cheaper cloud: --set pools.rented.cost.usd_per_hour=3.99.
local fs = require "fleetsim"

local day = {
  4, 3, 2, 2, 2, 3, 6, 12, 20, 28, 32, 34,
  36, 38, 40, 40, 38, 34, 28, 22, 16, 12, 8, 6,
}

local function chat(pool)
  return fs.inference {
    model = "llama-3.1-8b", pool = pool,
    streams = "chat", -- the same requests on both pools: the run ranks the two options
    arrivals = fs.diurnal { rates = day },
    prompt = fs.lognormal { median = 1000, sigma = 1.0 },
    output = fs.lognormal { median = 250, sigma = 0.8 },
    max_wait = "60s", slo = { ttft = "500ms" }, when_full = "preempt",
    response_bytes_per_token = 4,
  }
end

return fs.scenario {
  name = "buy_or_rent",
  duration = "1d",
  bucket = "1h",
  replications = 3,
  pools = {
    bought = fs.dedicated {
      gpu = "H100-SXM", count = 8,
      cost = fs.owned { purchase_usd = 280000, gpus_per_server = 8, years = 4, residual = 0.1,
                        hosting_usd_per_month = 2500, pue = 1.4, usd_per_kwh = 0.08 },
    },
    rented = fs.cloud {
      gpu = "H100-SXM", count = 2, min = 2, max = 8,
      provision = fs.lognormal { median = "3m", p99 = "8m" },
      autoscaler = fs.autoscaler { metric = "queue", target = 16, scale_in_delay = "15m" },
      cost = fs.on_demand { usd_per_hour = 6.88, egress = "AWS" },
    },
  },
  workloads = {
    chat_bought = chat("bought"),
    chat_rented = chat("rented"),
  },
}
