-- FP4 or FP8 weights on B200: how much more chat traffic does NVFP4 carry at one SLO?
--
-- Llama-3.3-70B serves chat on one 8-GPU B200 server, twice: weights in fp8, and in
-- NVFP4 (4-bit values with an fp8 scale per 16: 4.5 bits a weight).  Both keep the
-- key-value cache in fp8, so only the weights differ: fp4 halves what a decode step reads
-- of them and, where the device has fp4 tensor cores, doubles the products' peak.  Both
-- draw the same requests (streams = "chat": common random numbers), and the sweep raises
-- the arrival rate on both together.  The SLO: p99 time to first token under 1 s and p99
-- time per output token under 50 ms; the verdict reads the highest rate at which each
-- meets it (99% of requests within both) and the cost per million output tokens there.
--
-- Stated assumption: no measurement here gives fp4's achieved share of its peak, so it is
-- taken as fp8's (models/perf_constants.c says so); the fp4 gain below is the model's
-- arithmetic on that assumption, to be checked against a measured profile (fleetsim
-- calibrate on a B200).
local fs = require "fleetsim"

local function chat(pool, precision)
  return fs.inference { model = "llama-3.3-70b", precision = precision, kv_precision = "fp8",
                        pool = pool, streams = "chat",
                        arrivals = fs.poisson { rate = 20 },
                        prompt = fs.lognormal { median = 1000, sigma = 0.8 },
                        output = fs.lognormal { median = 300, sigma = 0.7 },
                        routing = "least_outstanding", when_full = "preempt", max_wait = "1m",
                        slo = { ttft = "1s", tpot = "50ms" } }
end

local rates = { 10, 20, 30, 40, 50, 60, 70, 80 }

return fs.scenario {
  name = "fp4_vs_fp8",
  description = "Llama-3.3-70B on 8 B200s with fp8 or NVFP4 weights, as the load grows",
  duration = "15m",
  warmup = "2m",
  bucket = "1m",
  pools = {
    fp8 = fs.dedicated { gpu = "B200", count = 8, cost = fs.on_demand {} },
    fp4 = fs.dedicated { gpu = "B200", count = 8, cost = fs.on_demand {} },
  },
  workloads = {
    chat_fp8 = chat("fp8", "fp8"),
    chat_fp4 = chat("fp4", "fp4"),
  },
  sweep = { zip = {
    ["workloads.chat_fp8.arrivals.rate"] = rates,
    ["workloads.chat_fp4.arrivals.rate"] = rates,
  } },
  claim = fs.claim {
    text = "NVFP4 weights carry more chat traffic than fp8 on the same B200 server at one SLO",
    verdict = function(r)
      local best = {}
      for _, p in ipairs(r.points) do
        for _, w in ipairs({ "fp8", "fp4" }) do
          local m = p.workload["chat_" .. w]
          local rate = p.values["workloads.chat_" .. w .. ".arrivals.rate"]
          if m.slo_attainment and m.slo_attainment >= 0.99
             and (not best[w] or rate > best[w].rate) then
            best[w] = { rate = rate, cost = m.cost_per_mtok_usd, tpot = m.tpot_p99_s }
          end
        end
      end
      local function say(w)
        local b = best[w]
        if not b then return w .. " meets the SLO at no rate tried" end
        return string.format("%s up to %g requests/s ($%.2f per million output tokens there, "
          .. "p99 TPOT %.0f ms)", w, b.rate, b.cost, 1e3 * b.tpot)
      end
      local figure = say("fp8") .. "; " .. say("fp4") .. " (rates tried 10-80/s; fp4's share "
        .. "of its peak is assumed equal to fp8's)"
      if not best.fp4 then return "refuted", figure end
      if not best.fp8 or best.fp4.rate > best.fp8.rate then return "holds", figure end
      if best.fp4.rate == best.fp8.rate then return "qualified", figure end
      return "refuted", figure
    end,
  },
}
