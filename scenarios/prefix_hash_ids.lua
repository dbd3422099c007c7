-- A session trace with Mooncake-style hashed prompt blocks, replayed with prefix
-- caching: least_outstanding against prefix_affinity routing, at equal GPUs.
--
-- traces/session_hash_ids.csv (written by tools/session_trace.py --hash-ids with a
-- fixed seed; see traces/README.md) holds 360 turns of 60 chat sessions over 430 s,
-- each session beginning with one of three system prompts of 2,000 tokens, its
-- hash_ids naming every prompt's blocks of 512 tokens as Mooncake's public traces do:
-- equal ids at one position, an equal prefix.  A replica's prefix cache is then keyed
-- by block id, and a turn skips the prefill of the leading ids the replica holds.
-- Eight H100s serve Llama-3.1-8B three ways on the same rows:
--   plain     no prefix cache;
--   cached    a prefix cache of the trace's blocks, routing least_outstanding, which
--             finds a system prompt on most replicas but a session's history only on
--             the replica it happens to send a turn to;
--   affinity  the same cache, routing prefix_affinity: the replica holding the most
--             leading ids of the prompt, within 25% of the least loaded's requests.
-- The sweep replays the trace 1, 4 and 16 times faster; the verdict reads TTFT p99 and
-- the share of prompt tokens found cached at the fastest.
local fs = require "fleetsim"

local speedups = { 1, 4, 16 }
local function workload(pool, extra)
  local w = { model = "llama-3.1-8b", precision = "fp16", tp = 1, pool = pool,
              arrivals = fs.trace { file = "traces/session_hash_ids.csv", session = "session_id",
                                    blocks = "hash_ids", block_tokens = 512 },
              max_wait = "60s", slo = { ttft = "500ms" } }
  for k, v in pairs(extra) do w[k] = v end
  return fs.inference(w)
end

return fs.scenario {
  name = "prefix_hash_ids",
  description = "a Mooncake-style trace of hashed prompt blocks on 4 H100s: no cache, a cache, a cache with affinity routing",
  duration = "8m",
  bucket = "1m",
  pools = {
    p_plain = fs.dedicated { gpu = "H100-SXM", count = 8 },
    p_cached = fs.dedicated { gpu = "H100-SXM", count = 8 },
    p_affinity = fs.dedicated { gpu = "H100-SXM", count = 8 },
  },
  workloads = {
    plain = workload("p_plain", {}),
    cached = workload("p_cached", { prefix_cache = true }),
    affinity = workload("p_affinity", { prefix_cache = true, routing = "prefix_affinity",
                                        affinity_bound = 0.25 }),
  },
  sweep = { zip = { ["workloads.plain.arrivals.speedup"] = speedups,
                    ["workloads.cached.arrivals.speedup"] = speedups,
                    ["workloads.affinity.arrivals.speedup"] = speedups } },
  claim = fs.claim {
    text = "with hashed prompt blocks, affinity routing finds more of each prompt cached than least outstanding",
    verdict = function(r)
      local last = r.points[#r.points]
      local function say(name)
        local w = last.workload[name]
        local hits = name == "plain" and "" or string.format(", hit rate %.1f%% of prompt tokens",
                                                             100 * w.prefix_hit_rate_tokens)
        return string.format("%s TTFT p99 %.0f ms%s", name, 1000 * w.ttft_p99_s, hits)
      end
      local plain, cached, aff = last.workload.plain, last.workload.cached, last.workload.affinity
      local figure = string.format("replayed %dx: %s; %s; %s", speedups[#speedups],
        say("plain"), say("cached"), say("affinity"))
      local holds = aff.prefix_hit_rate_tokens > cached.prefix_hit_rate_tokens
                    and aff.ttft_p99_s <= plain.ttft_p99_s
      return holds and "holds" or "refuted", figure
    end,
  },
}
