-- A chatbot replaying one real hour of traffic: the Azure LLM inference trace 2023
-- (conversation), credit "Azure LLM inference trace 2023, Microsoft" (CC-BY 4.0).
--
-- 19,366 requests in an hour (5.4 per second on average, in bursts), prompts of about
-- 1,150 tokens and answers of about 210, served by Llama-3-70B in fp8 on H100s, two GPUs
-- per replica.  The question: how many GPUs keep the 99th percentile time to first
-- token under a second?  Try --set pools.gpus.count=4 and =16, or speed the hour up
-- with --set workloads.chat.arrivals.speedup=2 (twice the traffic).
local fs = require "fleetsim"

return fs.scenario {
  name = "azure_chat",
  duration = "1h",
  bucket = "5m",
  pools = {
    gpus = fs.dedicated { gpu = "H100-SXM", count = 8 },
  },
  workloads = {
    chat = fs.inference {
      model = "llama-3.1-70b", -- the trace has prompts beyond llama-3-70b's 8,192-token context
      precision = "fp8",
      tp = 2,
      pool = "gpus",
      arrivals = fs.trace { file = "traces/azure_llm_2023_conv.csv" }, -- lengths too
      routing = "least_outstanding",
      max_wait = "60s",
      rtt = fs.lognormal { median = "40ms", p99 = "150ms" },
      slo = { ttft = "1s", tpot = "100ms" },
    },
  },
}
