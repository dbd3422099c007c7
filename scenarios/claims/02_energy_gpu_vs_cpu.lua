-- Claim 2: "GPUs use 3 to 8 times less energy than CPU-only systems for the same AI work."
--
-- Two kinds of the same work, each on a two-socket AMD EPYC 9654 server and on H100s:
--   training  Llama-2-7B on 200 million tokens (bf16), 2 CPU sockets against 8 H100s
--   serving   Llama-2-7B answering one user at a time (a closed loop of one user who
--             asks again 1 ms after each answer: batch 1, the latency-bound case), 1 socket against 1 H100
-- and, across GPU generations, the same one user on an A100 and a B200.
-- Pools are rented by the hour (fs.cloud), so a pool draws power only while it holds
-- machines.  Power (docs/power.md): a device holding a model draws its loaded-idle power
-- and, while it works, a share of the range to its TDP by what bounds the work (compute
-- 0.89, memory 0.44); a GPU's server adds 125 W a GPU, a CPU socket's TDP is the
-- server's; the default PUE of 1.58 for both.  Energy per unit of work is the pool's
-- energy_kwh over the work done (a training job: its tokens; serving: output tokens).
--
-- Why the two differ: batch-1 decoding streams the weights once per token, so it is
-- memory-bound and the ratio is about (3350 GB/s / 700 W) / (460.8 GB/s / 360 W), near
-- 4; training is compute-bound, where an H100's 989.5 dense bf16 TFLOP/s per 700 W
-- against 7.4 fp32 TFLOP/s per 360 W is about 70 to 1.  The claim holds when both
-- simulated ratios fall within 3 to 8, is qualified when one does, refuted when none.
local fs = require "fleetsim"

local function one_user(pool)
  return fs.inference { model = "llama-2-7b", precision = "fp16", pool = pool,
                        arrivals = fs.closed_loop { users = 1, think = "1ms" },
                        prompt = fs.constant { value = 256 }, output = fs.constant { value = 256 } }
end

local tokens = 2e8

return fs.scenario {
  name = "02_energy_gpu_vs_cpu",
  description = "energy per token: EPYC 9654 sockets against H100s, training and batch-1 serving",
  duration = "14d",
  bucket = "1d",
  pools = {
    cpu_train = fs.cloud { gpu = "EPYC-9654", max = 2, provision = "1m" },
    gpu_train = fs.cloud { gpu = "H100-SXM", max = 8, provision = "1m" },
    cpu_serve = fs.dedicated { gpu = "EPYC-9654", count = 1 },
    gpu_serve = fs.dedicated { gpu = "H100-SXM", count = 1 },
    a100_serve = fs.dedicated { gpu = "A100-80GB-SXM", count = 1 },
    b200_serve = fs.dedicated { gpu = "B200", count = 1 },
  },
  workloads = {
    train_cpu = fs.training { model = "llama-2-7b", precision = "bf16", tokens = tokens, gpus = 2,
                              pool = "cpu_train" },
    train_gpu = fs.training { model = "llama-2-7b", precision = "bf16", tokens = tokens, gpus = 8,
                              pool = "gpu_train" },
    serve_cpu = one_user("cpu_serve"),
    serve_gpu = one_user("gpu_serve"),
    serve_a100 = one_user("a100_serve"),
    serve_b200 = one_user("b200_serve"),
  },
  claim = fs.claim {
    text = "GPUs use 3 to 8 times less energy than CPU-only systems for the same AI work",
    verdict = function(r)
      local p, w = r.pool, r.workload
      local train = p.cpu_train.energy_kwh / p.gpu_train.energy_kwh    -- the same tokens
      local serve = (p.cpu_serve.energy_kwh / w.serve_cpu.output_tokens)
                    / (p.gpu_serve.energy_kwh / w.serve_gpu.output_tokens)
      local inside = 0
      for _, x in ipairs { train, serve } do
        if x >= 3 and x <= 8 then inside = inside + 1 end
      end
      local function joules(pool, workload)  -- facility joules an output token
        return p[pool].energy_kwh * 3.6e6 / w[workload].output_tokens
      end
      local figure = string.format("per token, the GPU uses %.1fx less energy serving one user "
                                   .. "at a time and %.0fx less training; one user's token "
                                   .. "takes %.1f J on an A100, %.1f on an H100, %.1f on a B200",
                                   serve, train, joules("a100_serve", "serve_a100"),
                                   joules("gpu_serve", "serve_gpu"), joules("b200_serve", "serve_b200"))
      return inside == 2 and "holds" or inside == 1 and "qualified" or "refuted", figure
    end,
  },
}
