-- A burst absorbed by autoscaling: chat traffic steps from 10 to 40 requests per second
-- for an hour in the middle of the afternoon.  A cloud pool of H100s starts with two
-- GPUs and an autoscaler that keeps about 16 requests in flight per replica (a busy
-- fraction says little here: a replica with one request in its batch is "busy"); each
-- new GPU takes minutes to
-- provision, so the first minutes of the burst queue up before capacity arrives.
-- Read replicas and ttft_p99_s per bucket in timeseries.csv, and compare with
--   --set pools.cloud.autoscaler.target=8        (headroom: fewer late requests, more GPUs)
--   --set pools.cloud.provision.median=30s --set pools.cloud.provision.p99=1m
--                                                (warm pools: capacity in seconds)
local fs = require "fleetsim"

return fs.scenario {
  name = "burst_autoscale",
  duration = "4h",
  bucket = "5m",
  replications = 2,
  pools = {
    cloud = fs.cloud {
      gpu = "H100-SXM",
      count = 2, min = 2, max = 16,
      provision = fs.lognormal { median = "3m", p99 = "8m" },
      autoscaler = fs.autoscaler { metric = "queue", target = 16,
                                   interval = "30s", cooldown = "2m", scale_in_delay = "10m" },
      site = fs.site { rtt = fs.lognormal { median = "40ms", p99 = "120ms" } },
    },
  },
  workloads = {
    chat = fs.inference {
      model = "llama-3.1-8b",
      pool = "cloud",
      arrivals = fs.profile { step = "1h", rates = { 10, 10, 40, 10 } },
      prompt = fs.lognormal { median = 1000, sigma = 1.0 },
      output = fs.lognormal { median = 250, sigma = 0.8 },
      max_wait = "60s",
      slo = { ttft = "500ms" },
      when_full = "preempt",
    },
  },
}
