-- The default scenario (make run): a chatbot on dedicated GPUs or on shared cloud GPUs,
-- with a training job beside it.
--
-- The chatbot (Llama-3-8B, 20 requests/s, chat-like lengths) runs twice, on its own:
--   dedicated  6 H100s owned (bought at $280,000 per 8-GPU server, 4 years, colocation
--              and power): always there, the same cost busy or idle
--   shared     up to 6 cloud H100s on demand ($6.88 per GPU-hour), autoscaled from 2,
--              on hosts shared with other tenants (noisy neighbours: contended a fifth of
--              the time, memory-bound work 1.2x to 2x slower then)
-- Beside them a fine-tuning job (Llama-3-8B, 500 million tokens) runs on 8 rented H100s.
-- Read, per workload, ttft_p99_s and tpot_p99_s (the shared pool's tail is longer) and
-- cost_per_mtok_usd, per pool cost_usd and gpus_mean (the shared pool holds fewer GPUs
-- when the traffic allows), and the job's end_s and cost_usd; then open report.html.
local fs = require "fleetsim"

local function chat(pool)
  return fs.inference { model = "llama-3.1-8b", pool = pool, arrivals = fs.poisson { rate = 20 },
                        prompt = fs.lognormal { median = 1000, sigma = 1.0 },
                        output = fs.lognormal { median = 250, sigma = 0.8 },
                        rtt = fs.lognormal { median = "40ms", p99 = "120ms" },
                        max_wait = "60s", when_full = "preempt",
                        slo = { ttft = "500ms", tpot = "20ms" } }
end

return fs.scenario {
  name = "default",
  description = "a chatbot on dedicated or shared (noisy, autoscaled) H100s, a fine-tuning job beside it",
  duration = "2h",
  warmup = "10m",
  bucket = "10m",
  replications = 3,
  pools = {
    dedicated = fs.dedicated { gpu = "H100-SXM", count = 6,
                               cost = fs.owned { purchase_usd = 280000, gpus_per_server = 8,
                                                 hosting_usd_per_month = 2500 } },
    shared = fs.cloud { gpu = "H100-SXM", count = 2, min = 2, max = 6,
                        provision = fs.lognormal { median = "3m", p99 = "8m" },
                        autoscaler = fs.autoscaler { metric = "queue", target = 16 },
                        noisy = fs.noisy { calm = "20m", contended = "5m",
                                           slowdown = fs.uniform { low = 1.2, high = 2.0 } },
                        cost = fs.on_demand { usd_per_hour = 6.88 } },
    training = fs.cloud { gpu = "H100-SXM", max = 8, provision = "3m",
                          cost = fs.on_demand { usd_per_hour = 6.88 } },
  },
  workloads = {
    chat_dedicated = chat("dedicated"),
    chat_shared = chat("shared"),
    finetune = fs.training { model = "llama-3.1-8b", precision = "bf16", tokens = 5e8, gpus = 8,
                             pool = "training", checkpoint = { every = "30m", write = "1m" } },
  },
}
