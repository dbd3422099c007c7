-- Speculative decoding across load: where does a draft model stop paying?
--
-- Llama-3.1-70B in fp8 serves chat on one 8-GPU H100 server (one replica of tp 8), twice
-- on the same requests (streams = "chat": common random numbers): plainly, and with
-- Llama-3.2-1B drafting 4 tokens a round on the same GPUs, each request's tokens accepted
-- with a probability drawn uniformly in [0.5, 0.9] (0.7 on average: 2.7 tokens a round).
-- A round costs the draft's four steps and one verification of five positions a
-- sequence; at a small batch a step is bound by reading the weights, so verifying five
-- positions costs little more than decoding one, and a round makes 2.7 tokens for about
-- the price of 1.4 steps.  As the load grows the batch grows, the step turns towards
-- compute, and five positions a sequence cost nearer five times one.  The draft's
-- weights and cache take their share of the memory (fewer tokens of cache for the rest).
--
-- Both run on SGLang (engine = "sglang"), whose draft steps run inside the round's one
-- iteration and whose scheduler works while the GPU does; vLLM V0's proposer worker
-- paid each draft step's host work in series (fs.engines["vllm-2024"].draft_steps), and
-- with it, on tp 8, the draft's four iterations cost more than they save.
--
-- The sweep raises the arrival rate on both together; the verdict reads time per output
-- token (p50 and p99) with and without at each rate, says where the gain peaks, how far
-- it falls and at which rate speculation stops paying on the median and on the p99, and
-- the output throughput at the highest rate.
local fs = require "fleetsim"

local function chat(pool, speculative)
  return fs.inference { model = "llama-3.1-70b", precision = "fp8", pool = pool, tp = 8,
                        streams = "chat", engine = "sglang",
                        arrivals = fs.poisson { rate = 1 },
                        prompt = fs.lognormal { median = 1000, sigma = 0.8 },
                        output = fs.lognormal { median = 300, sigma = 0.7 },
                        routing = "least_outstanding", max_wait = "1m",
                        speculative = speculative }
end

local rates = { 1, 2, 4, 6, 8, 10, 12 }

return fs.scenario {
  name = "speculative_load",
  description = "Llama-3.1-70B on 8 H100s with and without a 1B draft, as the load grows",
  duration = "10m",
  warmup = "2m",
  bucket = "1m",
  pools = {
    plain = fs.dedicated { gpu = "H100-SXM", count = 8 },
    spec = fs.dedicated { gpu = "H100-SXM", count = 8 },
  },
  workloads = {
    chat_plain = chat("plain", nil),
    chat_spec = chat("spec", { k = 4, acceptance = fs.uniform { low = 0.5, high = 0.9 },
                               draft = "llama-3.2-1b" }),
  },
  sweep = { zip = {
    ["workloads.chat_plain.arrivals.rate"] = rates,
    ["workloads.chat_spec.arrivals.rate"] = rates,
  } },
  claim = fs.claim {
    text = "speculative decoding cuts time per output token at low load, and the gain "
      .. "shrinks as the load grows",
    verdict = function(r)
      local best, last, p50_stop, p99_stop, over = nil, nil, nil, nil, {}
      for _, p in ipairs(r.points) do
        local a, b = p.workload.chat_plain, p.workload.chat_spec
        local rate = p.values["workloads.chat_plain.arrivals.rate"]
        local gain = a.tpot_p50_s / b.tpot_p50_s
        if not best or gain > best.gain then best = { gain = gain, rate = rate } end
        last = { gain = gain, rate = rate, plain = a.throughput_tokens_per_s,
                 spec = b.throughput_tokens_per_s }
        if gain <= 1 and not p50_stop then p50_stop = rate end
        if b.tpot_p99_s >= a.tpot_p99_s and not p99_stop then p99_stop = rate end
        if a.overloaded > 0 and not over.plain then over.plain = rate end
        if b.overloaded > 0 and not over.spec then over.spec = rate end
      end
      local function stop(q, rate)
        return rate and string.format("on the %s it stops paying at %g requests/s", q, rate)
               or string.format("on the %s it pays at every rate tried", q)
      end
      local figure = string.format("TPOT p50's gain peaks at x%.2f at %g requests/s and falls "
        .. "to x%.2f at %g; %s; %s; overloaded from %s requests/s without, %s with; at %g "
        .. "requests/s %.0f output tokens/s without, %.0f with", best.gain, best.rate, last.gain,
        last.rate, stop("median", p50_stop), stop("p99", p99_stop),
        over.plain and string.format("%g", over.plain) or "none of the",
        over.spec and string.format("%g", over.spec) or "none", last.rate, last.plain, last.spec)
      if best.gain > 1.2 and last.gain < best.gain then return "holds", figure end
      return "refuted", figure
    end,
  },
}
