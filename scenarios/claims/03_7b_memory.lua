-- Claim 3: "A 7B-parameter model needs about 28 GB for its weights in fp16, and over
-- 112 GB to train; what that means for H100 (80 GB) vs H200 (141 GB)."
--
-- The arithmetic: weights are parameters x bytes per parameter (fp32 4, fp16 2, int8 1,
-- int4 0.5), so Llama-2-7B (6.74e9 parameters) is 27 GB in fp32, 13.5 GB in fp16, 6.7
-- in int8, 3.4 in int4; mixed-precision Adam keeps 16 bytes a parameter (ZeRO, arXiv
-- 1910.02054): 108 GB before activations.
-- `fleetsim estimate --model llama-2-7b --gpu H200-SXM` gives 108.9 GB per GPU to
-- train on one H200 (activations recomputed), and on an H100 train_min_gpus = 2.
--
-- What the run shows, rather than states: decoding one sequence at a time streams the
-- weights from memory once per token, so the simulated time per output token grows
-- with the bytes of the weights.  Four single-H100 pools serve the model in fp32, fp16,
-- int8 and int4 to one user each; the verdict turns the differences of their tpot into
-- gigabytes read per token (at the catalog bandwidth times 0.92, the share of it H100's
-- weight streams reach in the model's constants table, models/perf_constants.c; the
-- fixed part, kernel floors, the engine's host work, attention and the 16-bit memory
-- passes, cancels in the differences).  Beside them the
-- training job runs on one H200 and on two H100s: both finish, because each is a plan
-- the memory model accepts; --set workloads.train_h100.gpus=1 is refused at load with
-- the memory it needs (try it).
--
-- The verdict judges the claim as stated: 28 GB in fp16 is refuted (13.5 GB; 28 GB is
-- the fp32 figure), whatever the training half says.
local fs = require "fleetsim"

local function one_user(precision)
  return fs.inference { model = "llama-2-7b", precision = precision, pool = precision,
                        arrivals = fs.closed_loop { users = 1, think = "1ms" },
                        prompt = fs.constant { value = 128 }, output = fs.constant { value = 128 } }
end

local bytes_per_param = { fp32 = 4, fp16 = 2, int8 = 1, int4 = 0.5 }

return fs.scenario {
  name = "03_7b_memory",
  description = "Llama-2-7B: weights per precision seen through decode time; training on H100 and H200",
  duration = "30m",
  bucket = "5m",
  pools = {
    fp32 = fs.dedicated { gpu = "H100-SXM", count = 1 },
    fp16 = fs.dedicated { gpu = "H100-SXM", count = 1 },
    int8 = fs.dedicated { gpu = "H100-SXM", count = 1 },
    int4 = fs.dedicated { gpu = "H100-SXM", count = 1 },
    h200 = fs.cloud { gpu = "H200-SXM", max = 1, provision = "1m" },
    h100 = fs.cloud { gpu = "H100-SXM", max = 2, provision = "1m" },
  },
  workloads = {
    fp32 = one_user("fp32"), fp16 = one_user("fp16"), int8 = one_user("int8"), int4 = one_user("int4"),
    train_h200 = fs.training { model = "llama-2-7b", precision = "bf16", tokens = 1e7, gpus = 1,
                               pool = "h200" },
    train_h100 = fs.training { model = "llama-2-7b", precision = "bf16", tokens = 1e7, gpus = 2,
                               pool = "h100" },
  },
  claim = fs.claim {
    text = "a 7B model needs about 28 GB for its weights in fp16 and over 112 GB to train",
    verdict = function(r)
      local w = r.workload
      -- tpot = fixed + weight bytes / (bandwidth x 0.92): two unknowns, fitted on the
      -- widest pair (fp32, int4); then every precision's bytes follow from its tpot
      local bandwidth = fs.devices["H100-SXM"].bandwidth_gbs * 1e9 * 0.92
      local per_byte = (w.fp32.tpot_mean_s - w.int4.tpot_mean_s) / (4 - 0.5)
      local fixed = w.int4.tpot_mean_s - 0.5 * per_byte
      local gb = {}
      for p in pairs(bytes_per_param) do gb[p] = (w[p].tpot_mean_s - fixed) * bandwidth / 1e9 end
      local trained = r.job.train_h200.completed == 1 and r.job.train_h100.completed == 1
      local figure = string.format("weights read per token: fp32 %.1f GB, fp16 %.1f, int8 %.1f, "
        .. "int4 %.1f; training %s on 1 H200 (141 GB) and on 2 H100s (80 GB each)",
        gb.fp32, gb.fp16, gb.int8, gb.int4, trained and "ran" or "did not finish")
      -- judged as stated: 28 GB in fp16.  The run measures the weights; the training half
      -- is what the memory model accepts (one H200 of 127 GB usable, two H100s, not one
      -- H100 of 72 GB usable: `fleetsim estimate` gives 108.9 GB, 16 bytes a parameter
      -- plus recomputed activations), so it bounds the need, it does not measure 112 GB
      if math.abs(gb.fp16 - 28) < 4 and trained then return "holds", figure end
      if math.abs(gb.fp32 - 28) < 4 then
        return "refuted", figure .. " (28 GB is the fp32 figure: in fp16 the weights are half "
          .. "of it; training needs more than one 80 GB H100, as stated)"
      end
      return "refuted", figure
    end,
  },
}
