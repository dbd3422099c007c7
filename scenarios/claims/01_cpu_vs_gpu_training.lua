-- Claim 1: "Training on CPUs instead of GPUs turns days into months."
--
-- The same model (Llama-2-7B, bf16 mixed precision) on the same 10 billion tokens
-- (a continued pre-training or a large fine-tune), once on a two-socket AMD EPYC 9654
-- server (2 x 96 cores, 2 x 7.4 TFLOP/s fp32 at base clock, 2 x 460.8 GB/s) and once
-- on an 8 x H100-SXM node (8 x 989.5 TFLOP/s dense bf16), both rented by the hour, so
-- each pool holds its machines only while its job runs.
--
-- Sizing, from `fleetsim estimate --model llama-2-7b --gpu H100-SXM --gpus 8
-- --train-tokens 1e10`: 6 x 6.7e9 x 1e10 = 4.0e20 FLOPs (Kaplan et al. 2020), about
-- 1.23 days on the node at 48% MFU; the CPUs run at 0.6 of their fp32 peak, so the same
-- work takes months.  Sources: NVIDIA's H100 datasheet and AMD's EPYC 9654
-- specifications (datasheet peaks; fp32 at base clock).
--
-- The verdict compares the jobs' end times (end_s, from the simulation): the claim
-- holds when the GPU run takes days (under 30) and the CPU run at least 30 times longer.
-- Try --set workloads.on_cpu.gpus=1 (one socket) or --set workloads.on_gpu.tokens=1e9.
local fs = require "fleetsim"

local function job(pool, gpus)
  return fs.training { model = "llama-2-7b", precision = "bf16", tokens = 1e10,
                       gpus = gpus, pool = pool }
end

return fs.scenario {
  name = "01_cpu_vs_gpu_training",
  description = "Llama-2-7B on 10B tokens: a 2-socket EPYC 9654 server against 8 H100s",
  duration = "4y",
  bucket = "1d",
  pools = {
    cpu = fs.cloud { gpu = "EPYC-9654", max = 2, provision = "1m" },
    gpu = fs.cloud { gpu = "H100-SXM", max = 8, provision = "1m" },
  },
  workloads = {
    on_cpu = job("cpu", 2),
    on_gpu = job("gpu", 8),
  },
  claim = fs.claim {
    text = "training on CPUs instead of GPUs turns days into months",
    verdict = function(r)
      local cpu, gpu = r.job.on_cpu, r.job.on_gpu
      if not (cpu.completed == 1 and gpu.completed == 1) then
        return "refuted", "a job did not finish within the run (lengthen duration)"
      end
      local cpu_days = (cpu.end_s - cpu.start_s) / 86400
      local gpu_days = (gpu.end_s - gpu.start_s) / 86400
      local ratio = cpu_days / gpu_days
      local figure = string.format("8 x H100: %.2f days; 2 x EPYC-9654: %.0f days (%.1f months), "
                                   .. "%.0f times longer", gpu_days, cpu_days, cpu_days / 30.4, ratio)
      if gpu_days < 30 and ratio >= 30 then return "holds", figure end
      if ratio >= 5 then return "qualified", figure end
      return "refuted", figure
    end,
  },
}
