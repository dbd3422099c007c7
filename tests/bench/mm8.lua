-- The benchmark's M/M/8 at rho 0.9 (make bench): 2,000,000 customers arrive, on average,
-- in 277,778 s at 7.2 per second.  Also runnable by hand:
--   build/fleetsim run tests/bench/mm8.lua -o /tmp/mm8
local fs = require "fleetsim"

return fs.scenario {
  name = "bench_mm8",
  duration = 2000000 / 7.2,
  seed = 1,
  pools = { servers = fs.dedicated { count = 8 } },
  workloads = {
    mm8 = fs.service {
      arrivals = fs.poisson { rate = 7.2 },
      service = fs.exponential { mean = 1 },
      pool = "servers",
    },
  },
}
