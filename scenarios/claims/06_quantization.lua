-- Claim 6: "INT8 or INT4 quantization speeds inference up 2 to 5 times."
--
-- Llama-3-8B on one H100 per configuration, weights in fp16, int8 or int4 (the cache
-- stays 16-bit), serving either one user at a time or 64 users at once (closed loops:
-- each user asks again 1 ms after an answer).  Decode streams the weights every
-- iteration, so at a batch of 1 the time per token falls with the weight bytes (2, 1
-- and 0.5 per parameter) less what does not shrink: kernel floors, the engine's host
-- work per iteration, the 16-bit memory passes and the cache reads; with 64 sequences
-- the cache reads, the host's work per sequence and the products themselves (weight-only
-- int8 and int4 are dequantised and multiplied in 16-bit, so they help only memory-bound
-- work) take a larger share and the gain falls.  The speedup here is the fp16 time per output token over the quantized one.
-- The claim holds if every speedup is within 2 to 5, is qualified if int4's is, and
-- refuted if none is.  Accuracy loss is not modelled.
local fs = require "fleetsim"

local function serve(precision, users)
  return fs.inference { model = "llama-3-8b", precision = precision, pool = precision .. "_" .. users,
                        arrivals = fs.closed_loop { users = users, think = "1ms" },
                        prompt = fs.constant { value = 512 }, output = fs.constant { value = 256 } }
end

local pools, workloads = {}, {}
for _, precision in ipairs { "fp16", "int8", "int4" } do
  for _, users in ipairs { 1, 64 } do
    local name = precision .. "_" .. users
    pools[name] = fs.dedicated { gpu = "H100-SXM", count = 1 }
    workloads[name] = serve(precision, users)
  end
end

return fs.scenario {
  name = "06_quantization",
  description = "time per token of Llama-3-8B in fp16, int8 and int4 on an H100, at batch 1 and 64",
  duration = "20m",
  warmup = "2m",
  bucket = "1m",
  pools = pools,
  workloads = workloads,
  claim = fs.claim {
    text = "INT8 or INT4 quantization speeds inference up 2 to 5 times",
    verdict = function(r)
      local w = r.workload
      local s = {}
      for _, users in ipairs { 1, 64 } do
        for _, p in ipairs { "int8", "int4" } do
          s[p .. "_" .. users] = w["fp16_" .. users].tpot_mean_s / w[p .. "_" .. users].tpot_mean_s
        end
      end
      local figure = string.format("speedup per token over fp16: int8 %.2fx and int4 %.2fx for "
        .. "one user, %.2fx and %.2fx at a batch of 64", s.int8_1, s.int4_1, s.int8_64, s.int4_64)
      local function inside(x) return x >= 2 and x <= 5 end
      if inside(s.int8_1) and inside(s.int4_1) and inside(s.int8_64) and inside(s.int4_64) then
        return "holds", figure
      end
      if inside(s.int4_1) or inside(s.int4_64) then return "qualified", figure end
      return "refuted", figure
    end,
  },
}
