-- Claim 4: "A batch size of 16 to 32 per GPU works well."
--
-- One H100 serving Llama-3-8B (fp16) to 256 users who ask again as soon as they have
-- their answer (a closed loop: the GPU always has work), swept over the most sequences
-- a batch may hold (max_batch, from 1 to 256).  Decode reads all the weights once per
-- iteration whatever the batch, so a larger batch shares that read among more tokens:
-- throughput rises almost linearly until the batch's compute and its key-value cache
-- reads catch up with the weight read, then flattens, while every sequence's time per
-- token (tpot) grows and the cache fills (kv_cache_utilization_mean: the memory the
-- batch holds).  Roofline: the knee is near peak FLOP/s / bandwidth = 989.5e12 /
-- 3.35e12, about 300 FLOPs per byte, reached for fp16 weights at a batch of about 150
-- with no cache; the cache reads of 768-token contexts bring it lower.
--
-- The verdict reads two knees off the sweep: the largest batch whose time per token
-- stays within 25% of a batch of 1 (interactive use), and the smallest batch reaching
-- 80% of the best throughput (offline use).  The claim holds if both are 16 to 32, is
-- qualified if one is, refuted if neither.  (The rule of thumb comes from training,
-- where a small per-GPU batch also helps generalisation; that the simulator cannot see.)
local fs = require "fleetsim"

return fs.scenario {
  name = "04_batch_size",
  description = "throughput, time per token and cache against max_batch on one H100",
  duration = "2h",
  warmup = "30m",                 -- at a batch of 1 the 256 users' first round takes 7 min
  bucket = "10m",
  pools = { gpu = fs.dedicated { gpu = "H100-SXM", count = 1 } },
  workloads = {
    chat = fs.inference { model = "llama-3-8b", precision = "fp16", pool = "gpu",
                          arrivals = fs.closed_loop { users = 256, think = "1ms" },
                          prompt = fs.constant { value = 512 }, output = fs.constant { value = 256 },
                          max_batch = 32 },
  },
  sweep = { ["workloads.chat.max_batch"] = { 1, 2, 4, 8, 16, 32, 64, 128, 256 } },
  claim = fs.claim {
    text = "a batch size of 16 to 32 per GPU works well",
    verdict = function(r)
      local key, points = "workloads.chat.max_batch", r.points
      local one = points[1].workload.chat           -- the sweep starts at a batch of 1
      local best = 0
      for _, p in ipairs(points) do
        best = math.max(best, p.workload.chat.throughput_tokens_per_s)
      end
      local latency_knee, throughput_knee, at = 1, nil, {}
      for _, p in ipairs(points) do
        local b, c = p.values[key], p.workload.chat
        at[b] = { c = c, cache = p.pool.gpu.kv_cache_utilization_mean }
        if c.tpot_mean_s <= 1.25 * one.tpot_mean_s then latency_knee = b end
        if not throughput_knee and c.throughput_tokens_per_s >= 0.8 * best then throughput_knee = b end
      end
      local k = at[latency_knee]
      local figure = string.format("up to a batch of %d a token takes within 25%% of batch 1's "
        .. "(%.1f ms against %.1f), at %.0fx its throughput, cache %.0f%% full; 80%% of the best "
        .. "throughput (%.0f tokens/s) needs a batch of %d", latency_knee, 1e3 * k.c.tpot_mean_s,
        1e3 * one.tpot_mean_s, k.c.throughput_tokens_per_s / one.throughput_tokens_per_s,
        100 * k.cache, best, throughput_knee)
      local function inside(b) return b >= 16 and b <= 32 end
      local n = (inside(latency_knee) and 1 or 0) + (inside(throughput_knee) and 1 or 0)
      return n == 2 and "holds" or n == 1 and "qualified" or "refuted", figure
    end,
  },
}
