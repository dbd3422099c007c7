-- A plain queue: requests arrive at random (Poisson) and wait for one of 8 servers.
--
-- The teaching point: at 90% utilization, even with 8 servers, most requests wait.
-- Erlang C gives the exact answer for this model (Poisson arrivals, exponential
-- service): a request waits with probability 0.7015, for 0.8769 s on average
-- (P(wait) / (c mu - lambda) = 0.7015 / (8 - 7.2)). Compare wait_probability and
-- queue_wait_mean_s in summary.csv with those figures, then run it again with
-- --set workloads.requests.arrivals.rate=6.4 (80% utilization): Erlang C says 0.4576
-- and 0.2860 s, a third of the wait for 11% less load.
local fs = require "fleetsim"

return fs.scenario {
  name = "mmc_queue",
  description = "M/M/8 at 90% utilization, against Erlang C",
  duration = "2d",
  warmup = "1h",
  bucket = "1h",
  seed = 1,
  replications = 5,
  pools = {
    servers = fs.dedicated { count = 8 },
  },
  workloads = {
    requests = fs.service {
      arrivals = fs.poisson { rate = 7.2 },                -- per second
      service = fs.exponential { mean = "1s" },
      pool = "servers",
    },
  },
}
