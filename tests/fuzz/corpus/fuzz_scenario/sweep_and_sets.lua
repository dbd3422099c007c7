--set pools.q.count=3
--set workloads.w.arrivals.rate=90/min
--set sweep.duration=nope
local fs = require "fleetsim"
return fs.scenario {
  duration = "2h", bucket = "10m", replications = 2,
  pools = { q = fs.dedicated { count = 2 } },
  workloads = { w = fs.service { arrivals = fs.poisson { rate = "60/min" },
    service = fs.lognormal { median = "1s", p99 = "5s" }, pool = "q", queue_limit = 10 } },
  sweep = { ["pools.q.count"] = { 2, 3 }, ["workloads.w.arrivals.rate"] = { "1/s", 1.2 } },
}
