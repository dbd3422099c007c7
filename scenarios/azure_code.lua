-- Code completion replaying one real hour: the Azure LLM inference trace 2023 (code),
-- credit "Azure LLM inference trace 2023, Microsoft" (CC-BY 4.0).
--
-- Code requests are the opposite of chat: long prompts (about 2,050 tokens of context)
-- and very short answers (about 28 tokens), so prefill dominates and time to first
-- token is the whole experience.  Llama-3-8B on four L4s against two H100s: compare
-- ttft_p99_s with --set pools.gpus.gpu=H100-SXM --set pools.gpus.count=2.
local fs = require "fleetsim"

return fs.scenario {
  name = "azure_code",
  duration = "1h",
  bucket = "5m",
  pools = {
    gpus = fs.dedicated { gpu = "L4", count = 4 },
  },
  workloads = {
    code = fs.inference {
      model = "llama-3-8b",
      precision = "int8",
      pool = "gpus",
      arrivals = fs.trace { file = "traces/azure_llm_2023_code.csv" },
      routing = "shortest_tokens",
      max_wait = "60s",
      rtt = "20ms",
      slo = { ttft = "500ms" },
    },
  },
}
