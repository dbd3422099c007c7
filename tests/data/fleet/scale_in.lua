local fs = require "fleetsim"
return fs.scenario {
  name = "scale_in", duration = "3000s", bucket = "100s",
  pools = {
    cloud = fs.cloud { gpu = "H100-SXM", count = 2, min = 1, max = 2, provision = "1s",
      autoscaler = fs.autoscaler { metric = "queue", target = 8, interval = "5s",
                                   cooldown = "0s", scale_in_delay = "0s" } },
  },
  workloads = {
    chat = fs.inference { model = "llama-3.1-8b", pool = "cloud", routing = "round_robin",
      arrivals = fs.trace { file = "two_long.csv", time = "time", prompt = "prompt", output = "output" },
      max_wait = "60s" },
  },
}
