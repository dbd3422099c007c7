-- The same chatbot on dedicated GPUs and on shared cloud GPUs with noisy neighbours.
--
-- Both pools have 6 H100s and serve the same traffic (each workload its own draw of
-- it).  On the shared hosts a neighbour turns up now and
-- then (calm spells of 20 minutes on average, contended ones of 5) and slows
-- memory-bound work by 1.2x to 2x while it stays; compute-bound work suffers a fifth as
-- much (fs.noisy's compute_sensitivity).  Decode streams weights and cache from memory,
-- so the time per output token (tpot) and the tail of the time to first token grow,
-- and they spread: compare tpot_p99_s, ttft_p99_s and their intervals between
-- workloads "dedicated" and "shared".  Try --set pools.shared.noisy.slowdown.high=3
-- (neighbours that slow memory-bound work by up to 3x).
local fs = require "fleetsim"

local function chat(pool)
  return fs.inference {
    model = "llama-3.1-8b",
    pool = pool,
    arrivals = fs.poisson { rate = 30 },
    prompt = fs.lognormal { median = 1000, sigma = 1.0 },
    output = fs.lognormal { median = 250, sigma = 0.8 },
    max_wait = "60s",
    slo = { ttft = "200ms", tpot = "20ms" },
    when_full = "preempt",
  }
end

return fs.scenario {
  name = "noisy_neighbours",
  duration = "2h",
  warmup = "10m",
  bucket = "10m",
  replications = 5,
  pools = {
    dedicated = fs.dedicated { gpu = "H100-SXM", count = 6 },
    shared = fs.cloud {
      gpu = "H100-SXM", count = 6, max = 6,
      noisy = fs.noisy { calm = "20m", contended = "5m",
                         slowdown = fs.uniform { low = 1.2, high = 2.0 } },
    },
  },
  workloads = {
    dedicated = chat("dedicated"),
    shared = chat("shared"),
  },
}
