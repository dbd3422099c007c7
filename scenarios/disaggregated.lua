-- Prefill and decode apart (DistServe, Splitwise) against the same GPUs colocated.
--
-- Eight H100s serve Llama-3.1-8B (fp16, a replica a GPU) to 40 requests a second of long
-- prompts (lognormal, median 2,000 tokens) and short answers (median 200), under tight
-- objectives on both phases together: the first token within 300 ms and every later one
-- within 20 ms on average (TPOT).  Two workloads draw the same requests (streams):
--   split     disaggregated: `prefill` GPUs prefill and make the first token, the
--             prompt's cache (131,072 bytes a token) crosses a 50 GB/s link per prefill
--             replica (10 us), `decode` GPUs make the rest;
--   together  the eight GPUs colocated, continuous batching with chunked prefill.
-- The sweep tries every split of the eight GPUs (1:7 ... 7:1: the ratio search, all of
-- it), and the verdict reads goodput, requests a second meeting both objectives, per
-- GPU: the best split against the colocated fleet.
--
-- The engine is the 2024 vLLM (vllm-2024) that DistServe and Splitwise measured their
-- colocated baselines on, with its host work in series with the GPU.  Under the default
-- engine (vllm: the host's work hidden under the GPU's step) both ways serve nearly every
-- request within the SLOs at this load, and the split gains nothing: try
--   --set workloads.split.engine=vllm --set workloads.together.engine=vllm
--
-- Why it can win: colocated, every iteration that carries a prefill chunk (up to 8,192
-- tokens) makes the sequences decoding beside it wait, so TPOT meets prefill's bursts;
-- apart, decode iterations carry one token a sequence and prefill queues alone.  Why it
-- can lose: each phase has only its share of the GPUs, so a wrong ratio starves one of
-- them (1:7 cannot prefill 40 requests a second, 7:1 cannot decode them).
local fs = require "fleetsim"

local gpus = 8
local rate = 40
local prompt = fs.lognormal { median = 2000, sigma = 0.6 }
local output = fs.lognormal { median = 200, sigma = 0.6 }
local slo = { ttft = "300ms", tpot = "20ms" }

-- the split's workload and the colocated one, the same but for where they run
local function workload(extra)
  local w = { model = "llama-3.1-8b", precision = "fp16", tp = 1, streams = "chat",
              engine = "vllm-2024",
              arrivals = fs.poisson { rate = rate }, prompt = prompt, output = output,
              max_wait = "30s", slo = slo }
  for k, v in pairs(extra) do w[k] = v end
  return fs.inference(w)
end

local split_key = "pools.prefill.count"
local prefill, decode = {}, {}
for p = 1, gpus - 1 do prefill[#prefill + 1], decode[#decode + 1] = p, gpus - p end

return fs.scenario {
  name = "disaggregated",
  description = "prefill:decode split of 8 H100s against the 8 colocated, at tight TTFT and TPOT",
  duration = "10m",
  replications = 3,
  warmup = "1m",
  bucket = "1m",
  pools = {
    prefill = fs.dedicated { gpu = "H100-SXM", count = 4 },
    decode = fs.dedicated { gpu = "H100-SXM", count = 4 },
    colocated = fs.dedicated { gpu = "H100-SXM", count = gpus },
  },
  workloads = {
    split = workload { pool = "prefill", decode = { pool = "decode", tp = 1 },
                       kv_link = { bandwidth = "50GB/s", latency = "10us", shared = "per_replica" } },
    together = workload { pool = "colocated" },
  },
  sweep = { zip = { [split_key] = prefill, ["pools.decode.count"] = decode } },
  claim = fs.claim {
    text = "disaggregating prefill and decode serves more requests within both SLOs per GPU",
    verdict = function(r)
      -- requests a second meeting both SLOs (split's goodput_per_s), from the shares:
      -- slo_attainment counts completed and dropped requests, served_rate_per_s the
      -- completed ones a second
      local function goodput(w)
        if w.requests_completed == 0 then return 0 end
        return w.slo_attainment * (w.requests_completed + w.requests_dropped)
               * w.served_rate_per_s / w.requests_completed
      end
      local best, at, colocated
      for _, p in ipairs(r.points) do
        local s = goodput(p.workload.split) / gpus
        if not best or s > best then best, at = s, p end
        colocated = goodput(p.workload.together) / gpus  -- the same at every point
      end
      local p = at.values[split_key]
      local figure = string.format("best split %d prefill : %d decode GPUs, %.2f requests/s per "
        .. "GPU within both SLOs (%.1f%% of requests) against %.2f colocated (%.1f%%): %+.0f%%",
        p, gpus - p, best, 100 * at.workload.split.slo_attainment, colocated,
        100 * at.workload.together.slo_attainment, 100 * (best / colocated - 1))
      local verdict = best > 1.05 * colocated and "holds"
                      or best >= 0.95 * colocated and "qualified" or "refuted"
      return verdict, figure
    end,
  },
}
