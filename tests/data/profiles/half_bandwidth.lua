local fs = require "fleetsim"
return fs.scenario { duration = "10m", name = "p",
  pools = { plain = fs.dedicated { gpu = "H100-SXM", count = 1 },
            slow = fs.dedicated { gpu = "H100-SXM", count = 1, profile = "h100_half_bandwidth.lua" } },
  workloads = {
    a = fs.inference { model = "llama-3-8b", pool = "plain", arrivals = fs.poisson { rate = 0.2 }, prompt = 200, output = 300 },
    b = fs.inference { model = "llama-3-8b", pool = "slow", arrivals = fs.poisson { rate = 0.2 }, prompt = 200, output = 300 },
  } }
