-- Claim 10: "GPT-3 cost between $0.5M and $4.6M to train; a large run uses 25,000 A100s
-- for 90 days."
--
-- GPT-3 175B (its published shape, lua/fleetsim/models.lua) on its 300 billion tokens,
-- 2,048-token sequences, a global batch of 1,536 sequences (3.2M tokens, the paper's),
-- bf16 mixed precision:
--   gpt3        on 1,024 A100-40GB rented on demand at $2.74 per GPU-hour (AWS p4d,
--               AWS's price page, 2026-11); the planner picks tp 4, pp 8, dp 32
--   on_25k      the same job on 24,576 A100-80GB (the claim's "25,000"), to see how
--               long such a fleet needs for GPT-3
-- The public estimate: 3.14e23 FLOPs (the GPT-3 paper, Brown et al. 2020, arXiv
-- 2005.14165), ~355 V100-years at 28 TFLOP/s sustained, ~$4.6M at $1.50 per GPU-hour.
-- FLOPs = 6 x parameters x tokens (Kaplan et al. 2020).
--
-- The verdict: the cost part holds if the simulated cost of the 1,024-GPU run lies in
-- $0.5M to $4.6M; the scale part holds if GPT-3 would keep 25,000 A100s busy for
-- months.  The figure says how many GPT-3s 25,000 A100s for 90 days would train.
-- Try --set pools.a100.cost.usd_per_hour=1.10 (a reserved three-year price).
local fs = require "fleetsim"

local function gpt3(pool, gpus)
  return fs.training { model = "gpt-3-175b", precision = "bf16", tokens = 3e11, seq_len = 2048,
                       global_batch = 1536, gpus = gpus, pool = pool }
end

return fs.scenario {
  name = "10_gpt3_cost",
  description = "GPT-3 175B on 300B tokens: 1,024 A100s on demand, and 24,576 A100s",
  duration = "60d",
  bucket = "1d",
  pools = {
    a100 = fs.cloud { gpu = "A100-40GB-SXM", max = 1024, provision = "5m",
                      cost = fs.on_demand { usd_per_hour = 2.74 } },
    a100_25k = fs.cloud { gpu = "A100-80GB-SXM", max = 24576, provision = "5m",
                          cost = fs.on_demand { usd_per_hour = 3.43 } },
  },
  workloads = { gpt3 = gpt3("a100", 1024), on_25k = gpt3("a100_25k", 24576) },
  claim = fs.claim {
    text = "GPT-3 cost between $0.5M and $4.6M to train; a large run uses 25,000 A100s for 90 days",
    verdict = function(r)
      local job, big = r.job.gpt3, r.job.on_25k
      if job.completed ~= 1 or big.completed ~= 1 then
        return "refuted", "a job did not finish within the run (lengthen duration)"
      end
      local days = (job.end_s - job.start_s) / 86400
      local big_days = (big.end_s - big.start_s) / 86400
      local gpt3s = 24576 * 90 * 24 / big.gpu_hours     -- GPT-3 runs in 90 days of 24,576 GPUs
      local figure = string.format("$%.2fM on 1,024 A100s in %.1f days (%.0fk GPU-hours, MFU %.0f%%); "
        .. "24,576 A100s train GPT-3 in %.1f days, so 90 days of them is %.0f GPT-3s",
        job.cost_usd / 1e6, days, job.gpu_hours / 1e3, 100 * job.mfu_effective, big_days, gpt3s)
      local cost_ok = job.cost_usd >= 0.5e6 and job.cost_usd <= 4.6e6
      local scale_ok = big_days >= 30
      if cost_ok and scale_ok then return "holds", figure end
      if cost_ok then return "qualified", figure .. " (a GPT-4-class budget, not GPT-3's)" end
      return "refuted", figure
    end,
  },
}
