-- A week-long training run on dedicated, on-demand cloud and spot GPUs.
--
-- The same job (Llama 3 8B, 450 billion tokens, 64 H100s, a checkpoint every hour that
-- takes 2 minutes to write) runs in three pools:
--   dedicated  72 GPUs owned (8 spare): the job starts at once; after a failure it
--              restarts on a spare while the failed GPU is repaired
--   on_demand  64 GPUs rented when the job asks, each after a provisioning delay; a
--              failed GPU is replaced by a new one
--   spot       the same, cheaper, but a GPU is taken back now and then, with two
--              minutes' notice: enough to write a checkpoint, so a preemption costs the
--              wait for a replacement and a restart, not lost work
-- Every GPU fails at random with an MTBF of 50,000 hours (Meta's Llama 3 report: 419
-- unexpected interruptions in 54 days on 16,384 GPUs is about 50,700 GPU-hours each),
-- and a failure loses the work since the last checkpoint.  Compare end_s (days =
-- end_s / 86400), gpu_hours, goodput and restarts per job, and the pools' gpu_hours and
-- preemptions (an owned pool holds its GPUs the whole run).  Try --set
-- pools.dedicated.count=64 (no spares: a failure waits a day for the repair),
-- --set pools.spot.notice=30s (shorter than a checkpoint write: each
-- preemption now loses up to an hour) or --set workloads.on_spot.checkpoint.every=4h.
local fs = require "fleetsim"

local function job(pool)
  return fs.training {
    model = "llama-3-8b", precision = "bf16", tokens = 4.5e11, gpus = 64, pool = pool,
    checkpoint = { every = "1h", write = "2m" },
    restart = "10m",                   -- reload the checkpoint, warm the data loaders
  }
end

local mtbf = "50000h"

return fs.scenario {
  name = "training_week",
  duration = "14d",
  bucket = "6h",
  replications = 5,
  pools = {
    dedicated = fs.dedicated { gpu = "H100-SXM", count = 72, mtbf = mtbf, repair = "1d" },
    on_demand = fs.cloud { gpu = "H100-SXM", max = 64, provision = fs.lognormal {
                             median = "4m", p99 = "15m" }, mtbf = mtbf },
    spot = fs.spot { gpu = "H100-SXM", max = 64, provision = fs.lognormal {
                       median = "4m", p99 = "15m" }, mtbf = mtbf,
                     preemption_rate = "0.005/h", notice = "2m" },  -- one per GPU per 200 hours
  },
  workloads = {
    on_dedicated = job("dedicated"),
    on_demand = job("on_demand"),
    on_spot = job("spot"),
  },
}
