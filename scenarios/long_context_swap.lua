-- Swap or recompute: what a full cache costs long-context serving (issue 19, item 2).
--
-- One H100 serves Llama-3.1-8B (fp16 weights and cache, 131 kB of cache a token) to
-- long-context requests: prompts of 24,000 tokens (median; lognormal, sigma 0.6, mean
-- 28,700) and answers of 2,000 (sigma 0.7).  The cache holds 427,000 tokens, about 13
-- such requests.  Swept: what the replica does when the cache is full (when_full), at
-- two loads near what the GPU can serve (busy 98% and 99.8%):
--   queue    admit a request only when its prompt and its whole answer fit (no
--            preemption; the cache is reserved, so fewer sequences run at once)
--   preempt  admit when the prompt fits, grow the cache a token at a time, and when it
--            is full preempt the latest sequence and recompute its prefix later (vLLM)
--   swap     preempt alike, but copy its cache to host memory over PCIe and back when
--            readmitted: 24,000 tokens are 3.1 GB, 61 ms a way at 51 GB/s (PCIe gen 5
--            x16 at 80%), against 1.6 s to prefill 26,000 again (fleetsim estimate
--            --model llama-3.1-8b --gpu H100-SXM --prompt 26000)
-- Common random numbers: every point sees the same requests, so the differences in
-- sweep_diff.csv are paired.
--
-- The verdict compares swap with preempt at each load: it holds if swapping serves
-- more requests within the SLO and cuts the mean time to first token by at least 10%
-- at both loads, is qualified if it helps less than that (or at one load only), and is
-- refuted if it does not help.
local fs = require "fleetsim"

return fs.scenario {
  name = "long_context_swap",
  description = "when the cache is full: queue, recompute (preempt) or swap to host memory, "
    .. "for 24k-token prompts on one H100",
  duration = "4h",
  warmup = "10m",
  bucket = "10m",
  replications = 5,
  pools = { gpus = fs.dedicated { gpu = "H100-SXM", count = 1 } },
  workloads = {
    chat = fs.inference {
      model = "llama-3.1-8b", precision = "fp16", pool = "gpus", tp = 1,
      arrivals = fs.poisson { rate = 0.1 },
      prompt = fs.lognormal { median = 24000, sigma = 0.6 },
      output = fs.lognormal { median = 2000, sigma = 0.7 },
      when_full = "swap",
      -- a server's 2 TB of host memory shared by 8 GPUs; bandwidth: the GPU's PCIe link
      host_kv = { size = "256GB" },
      slo = { ttft = "5s", tpot = "50ms" },
    },
  },
  sweep = {
    ["workloads.chat.when_full"] = { "queue", "preempt", "swap" },
    ["workloads.chat.arrivals.rate"] = { 0.1, 0.12 },
  },
  claim = fs.claim {
    text = "swapping preempted sequences' caches to host memory serves long contexts better "
      .. "than recomputing them",
    verdict = function(r)
      local at = {}
      for _, p in ipairs(r.points) do
        local rate = p.values["workloads.chat.arrivals.rate"]
        at[rate] = at[rate] or {}
        at[rate][p.values["workloads.chat.when_full"]] = p
      end
      local helps, big, parts = 0, 0, {}
      for _, rate in ipairs { 0.1, 0.12 } do
        local q, pre, sw = at[rate].queue, at[rate].preempt, at[rate].swap
        local c, s = pre.workload.chat, sw.workload.chat
        local gain = 1 - s.ttft_mean_s / c.ttft_mean_s
        if s.slo_attainment > c.slo_attainment and gain > 0 then helps = helps + 1 end
        if s.slo_attainment > c.slo_attainment and gain >= 0.1 then big = big + 1 end
        parts[#parts + 1] = string.format("at %.2f requests/s (GPU busy %.1f%%) within the SLO "
          .. "%.1f%% swapping, %.1f%% recomputing, %.1f%% queueing; mean TTFT %.1f s against "
          .. "%.1f s (%.0f%% less), %.0f preemptions in 4 h, %.0f GB copied, %.3f%% of the "
          .. "time stalled", rate, 100 * sw.pool.gpus.busy_fraction, 100 * s.slo_attainment,
          100 * c.slo_attainment, 100 * q.workload.chat.slo_attainment, s.ttft_mean_s,
          c.ttft_mean_s, 100 * gain, sw.pool.gpus.kv_preemptions, sw.pool.gpus.kv_swap_gb,
          100 * sw.pool.gpus.kv_swap_stall_fraction)
      end
      local figure = table.concat(parts, "; ")
      if big == 2 then return "holds", figure end
      if helps > 0 then return "qualified", figure end
      return "refuted", figure
    end,
  },
}
