-- Multi-turn chat with prefix caching and cache-aware routing, at equal GPUs.
--
-- Eight H100s serve Llama-3.1-8B (fp16, a replica a GPU) to chat sessions: 2 a second,
-- 4 to 8 turns each, a user thinking 20 s on average between an answer and the next
-- turn, each turn 150 new tokens (lognormal) and an answer of 250.  Every session
-- begins with one system prompt, and turn k resends the whole conversation so far, so
-- prompts grow to several thousand tokens.  Three workloads on three pools of eight
-- draw the same sessions (streams):
--   plain     no prefix cache: every turn prefills its whole prompt;
--   cached    a prefix cache on each replica (blocks of 16 tokens, LRU within the cache
--             the running sequences leave free), routing least_outstanding;
--   affinity  the same cache, routing prefix_affinity: the replica holding the longest
--             prefix of the prompt unless it is 25% over the mean load.
-- The sweep grows the system prompt (250 to 4,000 tokens).  The verdict reads TTFT p99,
-- the share of prompt tokens found cached and the balance (the busiest replica's busy
-- time over the mean) of each, at the longest system prompt.
--
-- Why the cache helps: a turn's prompt is mostly the last turn's prompt and answer,
-- and the system prompt is everyone's; skipping their prefill cuts TTFT and frees
-- the GPUs' compute.  Why routing matters: least_outstanding sends a session's next
-- turn to any of the eight replicas, which holds its history only by chance (one time
-- in eight); affinity sends it back, at the price of a less even load.
local fs = require "fleetsim"

local system = 2000
local rate = 5
local function workload(pool, extra)
  local w = { model = "llama-3.1-8b", precision = "fp16", tp = 1, pool = pool, streams = "chat",
              arrivals = fs.poisson { rate = rate },
              sessions = { turns = fs.uniform { low = 4, high = 8 },
                           think = fs.exponential { mean = "20s" } },
              system_prompt = system, prompt = fs.lognormal { median = 150, sigma = 0.5 },
              output = fs.lognormal { median = 250, sigma = 0.5 }, max_wait = "60s", slo = { ttft = "500ms" } }
  for k, v in pairs(extra) do w[k] = v end
  return fs.inference(w)
end

local lengths = { 250, 1000, 2000, 4000 }

return fs.scenario {
  name = "prefix_chat",
  description = "multi-turn chat on 8 H100s: no prefix cache, a cache, a cache with affinity routing",
  duration = "10m",
  warmup = "2m",
  bucket = "1m",
  pools = {
    p_plain = fs.dedicated { gpu = "H100-SXM", count = 8 },
    p_cached = fs.dedicated { gpu = "H100-SXM", count = 8 },
    p_affinity = fs.dedicated { gpu = "H100-SXM", count = 8 },
  },
  workloads = {
    plain = workload("p_plain", {}),
    cached = workload("p_cached", { prefix_cache = { block = 16 } }),
    affinity = workload("p_affinity", { prefix_cache = { block = 16 }, routing = "prefix_affinity",
                                        affinity_bound = 0.25 }),
  },
  sweep = { zip = { ["workloads.plain.system_prompt"] = lengths,
                    ["workloads.cached.system_prompt"] = lengths,
                    ["workloads.affinity.system_prompt"] = lengths } },
  claim = fs.claim {
    text = "prefix caching with affinity routing cuts multi-turn chat's TTFT at equal GPUs",
    verdict = function(r)
      local last = r.points[#r.points]
      local function say(name)
        local w, p = last.workload[name], last.pool["p_" .. name]
        local hits = name == "plain" and "" or string.format(", hit rate %.1f%% of prompt tokens",
                                                             100 * w.prefix_hit_rate_tokens)
        return string.format("%s TTFT p99 %.0f ms%s, balance %.2f", name, 1000 * w.ttft_p99_s,
                             hits, p.replica_load_max_over_mean)
      end
      local plain, cached, aff = last.workload.plain, last.workload.cached, last.workload.affinity
      local figure = string.format("system prompt %d tokens: %s; %s; %s", lengths[#lengths],
        say("plain"), say("cached"), say("affinity"))
      local holds = aff.ttft_p99_s < plain.ttft_p99_s
                    and aff.prefix_hit_rate_tokens > cached.prefix_hit_rate_tokens
      return holds and "holds" or "refuted", figure
    end,
  },
}
