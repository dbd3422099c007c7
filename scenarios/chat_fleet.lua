-- A chat service on a dedicated H100 fleet: how many GPUs for 40 requests per second
-- at a p99 time to first token under 200 ms?
--
-- Prompts and answers have the long-tailed lengths of chat traffic (lognormal; the
-- Azure LLM inference trace 2023 has a median prompt near 1,000 tokens and answers
-- near 250).  Replicas run Llama-3.1-8B in fp16 with continuous batching, their tensor
-- parallelism chosen against the SLO (`fleetsim check` prints each tp tried and the one
-- kept); requests go to the replica with the fewest outstanding requests.  Try
--   fleetsim run scenarios/chat_fleet.lua --set pools.gpus.count=4
-- and watch ttft_p99_s and slo_attainment in summary.csv.
local fs = require "fleetsim"

return fs.scenario {
  name = "chat_fleet",
  duration = "1h",
  warmup = "5m",
  bucket = "5m",
  replications = 3,
  pools = {
    gpus = fs.dedicated { gpu = "H100-SXM", count = 8 },
  },
  workloads = {
    chat = fs.inference {
      model = "llama-3.1-8b",
      precision = "fp16",
      pool = "gpus",
      arrivals = fs.poisson { rate = 40 },
      prompt = fs.lognormal { median = 1000, sigma = 1.0 },
      output = fs.lognormal { median = 250, sigma = 0.8 },
      routing = "least_outstanding",
      max_wait = "30s",
      rtt = fs.lognormal { median = "40ms", p99 = "120ms" },
      slo = { ttft = "200ms", tpot = "50ms" },
      when_full = "preempt",            -- grow the cache a token at a time, as vLLM
    },
  },
}
