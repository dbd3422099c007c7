-- A day of chat traffic that follows the clock: quiet at night, a peak in the
-- afternoon (hourly rates, requests per second, midnight first).  A fixed fleet sized
-- for the peak idles at night; sized for the average, it misses the SLO in the
-- afternoon.  Read utilization and ttft_p99_s per hour in timeseries.csv, then try
-- --set pools.gpus.count=4.
local fs = require "fleetsim"

return fs.scenario {
  name = "diurnal_day",
  duration = "1d",
  bucket = "1h",
  pools = {
    gpus = fs.dedicated { gpu = "H100-SXM", count = 8 },
  },
  workloads = {
    chat = fs.inference {
      model = "llama-3.1-8b",
      pool = "gpus",
      arrivals = fs.diurnal { rates = {
        4, 3, 2, 2, 2, 3, 6, 12, 20, 28, 32, 34,
        36, 38, 40, 40, 38, 34, 28, 22, 16, 12, 8, 6,
      } },
      prompt = fs.lognormal { median = 1000, sigma = 1.0 },
      output = fs.lognormal { median = 250, sigma = 0.8 },
      max_wait = "60s",
      rtt = fs.lognormal { median = "40ms", p99 = "120ms" },
      slo = { ttft = "300ms" },
    },
  },
}
