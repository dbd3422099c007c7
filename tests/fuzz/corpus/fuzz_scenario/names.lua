local fs = require "fleetsim"
return fs.scenario {
  name = "names", duration = "1h", bucket = "10m",
  pools = { ["x/y"] = fs.dedicated { count = 2 }, x_y = fs.dedicated { count = 1 } },
  workloads = { ["a,\"b\nc"] = fs.service { arrivals = fs.poisson { rate = 1 },
    service = fs.exponential { mean = 1 }, pool = "x/y" } },
}
