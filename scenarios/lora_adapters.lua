-- Multi-LoRA: 500 fine-tuned adapters of one base model on one fleet, or a fleet each?
--
-- Llama-3.1-8B (fp16) on 4 H100s (four replicas of tp 1) serves chat for 500 LoRA
-- adapters of rank 16 on q, k, v and o (S-LoRA's setting, arXiv 2311.03285), their
-- requests drawn by a Zipf law of exponent 1 (the hottest takes 15% of them, the 100
-- coldest 3% together).  Each replica holds `slots` adapters in GPU memory (27.3 MB
-- each, out of the key-value cache); a request whose adapter is not resident waits for
-- its copy over PCIe (0.53 ms here; ServerlessLLM, arXiv 2401.14351, measured 370 ms
-- with a standard loader that reads from storage and parses the file, 83.5 ms with
-- theirs: host memory's copy is the floor), into the least recently used slot no
-- running sequence uses; when every slot is in use it waits for one.  Each iteration
-- reads every distinct adapter of its batch once (Punica's SGMV, arXiv 2310.18547).
--
-- Beside it, on the same requests (streams = "chat"), the base model alone: what the
-- adapters cost.  The naive alternative, merged weights, needs a replica per adapter
-- that has traffic: one H100 each for an 8B model, 500 GPUs however little most of them
-- serve.  A third fleet, 8 GPUs with 8 slots each, is what too few slots cost in GPUs
-- (chat_wide).  The sweep tries 8, 32 and 128 slots; the verdict reads TTFT and TPOT
-- p99 and throughput at each, the hit rate, and the GPUs each design needs.
local fs = require "fleetsim"

local function chat(pool, lora)
  return fs.inference { model = "llama-3.1-8b", precision = "fp16", pool = pool,
                        streams = "chat",
                        arrivals = fs.poisson { rate = 24 },
                        prompt = fs.lognormal { median = 600, sigma = 0.8 },
                        output = fs.lognormal { median = 200, sigma = 0.7 },
                        routing = "least_outstanding", max_wait = "1m",
                        lora = lora }
end

return fs.scenario {
  name = "lora_adapters",
  description = "500 LoRA adapters of Llama-3.1-8B on 4 H100s, slots swept, vs the base alone",
  duration = "10m",
  warmup = "2m",
  bucket = "1m",
  pools = {
    base = fs.dedicated { gpu = "H100-SXM", count = 4 },
    lora = fs.dedicated { gpu = "H100-SXM", count = 4 },
    lora_wide = fs.dedicated { gpu = "H100-SXM", count = 8 },
  },
  workloads = {
    chat_base = chat("base", nil),
    chat_lora = chat("lora", { adapters = 500, popularity = 1.0, rank = 16, slots = 32 }),
    -- what 8 slots need instead: twice the GPUs, each batch then spanning fewer adapters
    chat_wide = chat("lora_wide", { adapters = 500, popularity = 1.0, rank = 16, slots = 8 }),
  },
  sweep = { ["workloads.chat_lora.lora.slots"] = { 8, 32, 128 } },
  claim = fs.claim {
    text = "one fleet serves 500 LoRA adapters near the base model's latency on 4 GPUs, "
      .. "where merged weights would need a GPU per adapter",
    verdict = function(r)
      local parts, base, at32 = {}, nil, nil
      for _, p in ipairs(r.points) do
        local a, b = p.workload.chat_base, p.workload.chat_lora
        base = a
        local slots = p.values["workloads.chat_lora.lora.slots"]
        if slots == 32 then at32 = b end
        parts[#parts + 1] = string.format("slots %d: TTFT/TPOT p99 %.0f/%.1f ms, %.0f tok/s, "
          .. "hits %.2f, %.1f adapters/iteration", slots, b.ttft_p99_s * 1e3,
          b.tpot_p99_s * 1e3, b.throughput_tokens_per_s, b.adapter_hit_rate,
          b.adapters_per_iteration_mean)
      end
      local wide = r.points[1].workload.chat_wide
      local figure = string.format("base: TTFT/TPOT p99 %.0f/%.1f ms, %.0f tok/s; %s; 8 slots "
        .. "need 8 GPUs (TTFT/TPOT p99 %.0f/%.1f ms); GPUs: 500 merged, 4 with LoRA",
        base.ttft_p99_s * 1e3, base.tpot_p99_s * 1e3, base.throughput_tokens_per_s,
        table.concat(parts, "; "), wide.ttft_p99_s * 1e3, wide.tpot_p99_s * 1e3)
      if at32 and at32.ttft_p99_s < 1.5 * base.ttft_p99_s
         and at32.tpot_p99_s < 1.5 * base.tpot_p99_s then
        return "holds", figure
      end
      return "refuted", figure
    end,
  },
}
