-- Capacity in tiers: owned GPUs first, a reserved cloud block next, on-demand last.
--
-- A chat service (Llama-3.1-8B, a day of diurnal traffic peaking at 60 requests a
-- second) is served by four groups of replicas, stated as a list (`groups`):
--   owned     4 H100s bought, the workload's own pool;
--   older     2 A100s already on site, a serve group beside it: each new request goes
--             to the pool whose least loaded replica holds the fewest requests;
--   reserved  2 H100s on a one-year reservation, the first overflow pool: it takes new
--             requests once every owned and older replica holds 24 (`overflow_threshold`,
--             and the older group's `threshold`);
--   burst     on-demand H100s, from none up to 8, the second overflow pool: it takes
--             new requests once every reserved replica holds 24 too, and its autoscaler
--             orders GPUs for the demand that reaches it (3 minutes to provision).
-- Read the pools' overflow_fraction (the share of the requests each overflow pool
-- served), their replicas over the day, and the workload's cost per million tokens;
-- try more reserved GPUs (--set pools.reserved.count=4 --set
-- pools.reserved.cost.gpus=4) to see how much on-demand time they save.
local fs = require "fleetsim"

local day = {
  6, 4, 3, 3, 3, 5, 9, 18, 30, 42, 50, 55,
  58, 60, 60, 58, 54, 48, 40, 32, 24, 18, 12, 8,
}

return fs.scenario {
  name = "tiered_capacity",
  description = "owned, then reserved, then on-demand GPUs for one chat service",
  duration = "1d",
  bucket = "1h",
  warmup = "10m",
  replications = 2,
  pools = {
    owned = fs.dedicated {
      gpu = "H100-SXM", count = 4,
      cost = fs.owned { purchase_usd = 280000, gpus_per_server = 8, years = 4, residual = 0.1,
                        hosting_usd_per_month = 2500, pue = 1.4, usd_per_kwh = 0.08 },
    },
    older = fs.dedicated {
      gpu = "A100-80GB-SXM", count = 2,
      cost = fs.owned { purchase_usd = 0, gpus_per_server = 8, years = 1,
                        hosting_usd_per_month = 600, pue = 1.4, usd_per_kwh = 0.08 },
    },
    reserved = fs.dedicated {
      gpu = "H100-SXM", count = 2,
      cost = fs.reserved { gpus = 2, usd_per_hour = 4.916, term = "1y" },
    },
    burst = fs.cloud {
      gpu = "H100-SXM", count = 0, min = 0, max = 8,
      provision = fs.lognormal { median = "3m", p99 = "8m" },
      autoscaler = fs.autoscaler { metric = "queue", target = 16, scale_in_delay = "15m" },
      cost = fs.on_demand { usd_per_hour = 6.88, egress = "AWS" },
    },
  },
  workloads = {
    chat = fs.inference {
      model = "llama-3.1-8b", pool = "owned", tp = 1,
      arrivals = fs.diurnal { rates = day },
      prompt = fs.lognormal { median = 1000, sigma = 1.0 },
      output = fs.lognormal { median = 250, sigma = 0.8 },
      max_wait = "60s", slo = { ttft = "500ms" }, when_full = "preempt",
      overflow_threshold = 24,
      groups = {
        { role = "serve", pool = "older", tp = 1, threshold = 24 },
        { role = "overflow", pool = "reserved", tp = 1, threshold = 24 },
        { role = "overflow", pool = "burst", tp = 1 },
      },
    },
  },
}
