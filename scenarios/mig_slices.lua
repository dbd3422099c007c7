-- MIG slices serving a small model against whole GPUs.
--
-- Two A100-80GB serve Llama 3.2 1B either whole (two replicas, each with the GPU's 108
-- SMs and 2 TB/s) or cut into seven 1g.10gb slices each (fourteen replicas, each with
-- 14 SMs, 10 GB and an eighth of the bandwidth).  A slice decodes a token far more
-- slowly than a whole GPU, but fourteen replicas queue less; and with MIG some SMs sit
-- unused (98 of 108 on an A100), while slices busy at once still contend for memory
-- bandwidth (bandwidth_interference).  A third pool time-slices each GPU among seven
-- tenants instead: a tenant alone runs at the whole GPU's speed, but with k busy each
-- gets 1/k of the time, less a context switch per turn.  Compare tpot, ttft and e2e
-- between workloads "whole", "sliced" and "time_sliced", then try
-- --set pools.sliced.mig=3g.40gb, or a heavier load with
-- --set workloads.sliced.arrivals.rate=60 --set workloads.whole.arrivals.rate=60.
local fs = require "fleetsim"

-- Llama 3.2 1B (Meta's model card: 1.24B parameters, 16 layers, hidden 2048,
-- 32 query and 8 key-value heads, feed-forward 8192, vocabulary 128,256).
fs.models["llama-3.2-1b"] = {
  layers = 16, hidden = 2048, heads = 32, kv_heads = 8, ffn = 8192, gated = true,
  vocab = 128256, params = 1.24e9, context = 131072, tied = true,
}

local function chat(pool)
  return fs.inference {
    model = "llama-3.2-1b",
    pool = pool,
    arrivals = fs.poisson { rate = 20 },
    prompt = fs.lognormal { median = 500, sigma = 0.8 },
    output = fs.lognormal { median = 150, sigma = 0.7 },
    max_wait = "60s",
    slo = { ttft = "200ms", tpot = "30ms" },
    when_full = "preempt",
  }
end

return fs.scenario {
  name = "mig_slices",
  duration = "1h",
  warmup = "5m",
  bucket = "5m",
  replications = 3,
  pools = {
    whole = fs.dedicated { gpu = "A100-80GB-SXM", count = 2 },
    sliced = fs.dedicated { gpu = "A100-80GB-SXM", count = 2, mig = "1g.10gb",
                            bandwidth_interference = 0.15 },
    time_sliced = fs.dedicated { gpu = "A100-80GB-SXM", count = 2,
                                 time_slicing = fs.time_slicing { tenants = 7 } },
  },
  workloads = {
    whole = chat("whole"),
    sliced = chat("sliced"),
    time_sliced = chat("time_sliced"),
  },
}
