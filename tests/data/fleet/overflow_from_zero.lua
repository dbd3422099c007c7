local fs = require "fleetsim"
return fs.scenario {
  name = "overflow_from_zero", duration = "1h", bucket = "5m",
  pools = {
    own = fs.dedicated { gpu = "H100-SXM", count = 1 },
    burst = fs.cloud { gpu = "H100-SXM", count = 0, min = 0, max = 4, provision = "30s",
      autoscaler = fs.autoscaler { metric = "queue", target = 8, interval = "10s", cooldown = "0s" } },
  },
  workloads = {
    chat = fs.inference { model = "llama-3-8b", pool = "own", overflow = "burst",
      engine = "vllm-2024",
      arrivals = fs.poisson { rate = 60 },
      prompt = fs.lognormal { median = 1000, sigma = 1.0 },
      output = fs.lognormal { median = 250, sigma = 0.8 },
      max_wait = "10s" },
  },
}
