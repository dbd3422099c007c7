local fs = require "fleetsim"
return fs.scenario {
  name = "drain_drops", duration = "100s", bucket = "10s",
  pools = {
    spot = fs.spot { gpu = "H100-SXM", count = 1, max = 1, provision = "1s",
                     preemption_times = { 1 }, notice = "1000s" },
  },
  workloads = {
    chat = fs.inference { model = "llama-3-8b", pool = "spot", max_batch = 1,
      arrivals = fs.trace { file = "drain_drops.csv", time = "time", prompt = "prompt", output = "output" },
      max_wait = "8s" },
  },
}
