-- Cache-aware routing when the shared prefixes outgrow one replica's cache.
--
-- Eight H100s serve Llama-3.1-8B (fp16, a replica a GPU) to 30 requests a second, each
-- one of G groups' 6,000-token shared prefix (a product's long system prompt, a
-- document many questions are asked about: SGLang's generated-shared-prefix benchmark
-- and llm-d's prefix-aware scheduling make such groups) followed by 200 tokens of its
-- own (lognormal), answered in 200.  Three workloads on three pools of eight draw the
-- same requests (streams):
--   round_robin        each request to the next replica, wherever its prefix is;
--   least_outstanding  to the replica with the fewest requests;
--   prefix_affinity    to the replica holding the longest prefix of it, within 25% of
--                      the least loaded.
-- Each replica keeps a prefix cache (blocks of 16 tokens) in the key-value memory its
-- running sequences leave free: 436,556 tokens (`fleetsim check`), some 72 groups'
-- prefixes.  The sweep grows G from 16 (96,000 tokens: every prefix fits in every
-- replica) to 256 (1.5 million tokens: 28% of them fit in one replica, all of them in
-- eight).
--
-- What to expect: with few groups every policy finds nearly every prefix cached.  Past
-- one replica's cache a policy that ignores prefixes sends each replica every group,
-- and a replica's LRU cache then holds a group about as often as its share of them
-- (Che's approximation: a cache of uniformly requested items hits in proportion to its
-- size, less the room the requests' own blocks take), so its hit rate falls as G grows
-- and its replicas compute the prefixes again; affinity sends each group to the replica
-- that holds it, the eight caches together hold every group, and it keeps hitting.
-- What changes for the user is the typical TTFT (mean and median), and the load a pool
-- can take; the 99th percentile is a miss's 6,200-token prefill whichever way.  The
-- verdict reads hit rates and TTFT at the fewest and the most groups.
local fs = require "fleetsim"

local groups = { 16, 64, 256 }
local function workload(pool, routing)
  return fs.inference {
    model = "llama-3.1-8b", precision = "fp16", tp = 1, pool = pool, streams = "groups",
    arrivals = fs.poisson { rate = 30 },
    system_prompt = { tokens = 6000, groups = 16 },
    prompt = fs.lognormal { median = 200, sigma = 0.5 },
    output = fs.lognormal { median = 200, sigma = 0.5 },
    prefix_cache = true, routing = routing, affinity_bound = 0.25,
    max_wait = "60s", slo = { ttft = "1s" },
  }
end

return fs.scenario {
  name = "prefix_groups",
  description = "shared prefixes beyond one replica's cache: round robin, least outstanding, prefix affinity",
  duration = "5m",
  warmup = "1m",
  bucket = "1m",
  pools = {
    p_rr = fs.dedicated { gpu = "H100-SXM", count = 8 },
    p_lo = fs.dedicated { gpu = "H100-SXM", count = 8 },
    p_affinity = fs.dedicated { gpu = "H100-SXM", count = 8 },
  },
  workloads = {
    round_robin = workload("p_rr", "round_robin"),
    least_outstanding = workload("p_lo", "least_outstanding"),
    affinity = workload("p_affinity", "prefix_affinity"),
  },
  sweep = { zip = { ["workloads.round_robin.system_prompt.groups"] = groups,
                    ["workloads.least_outstanding.system_prompt.groups"] = groups,
                    ["workloads.affinity.system_prompt.groups"] = groups } },
  claim = fs.claim {
    text = "past one replica's cache, prefix-aware routing keeps finding the shared prefixes that round robin loses",
    verdict = function(r)
      local first, last = r.points[1], r.points[#r.points]
      local function say(p, name)
        local w = p.workload[name]
        return string.format("%s hit rate %.1f%%, TTFT mean %.0f ms, p99 %.0f ms", name,
                             100 * w.prefix_hit_rate_tokens, 1000 * w.ttft_mean_s,
                             1000 * w.ttft_p99_s)
      end
      local figure = string.format("%d groups: %s; %s. %d groups: %s; %s; %s",
        groups[1], say(first, "round_robin"), say(first, "affinity"), groups[#groups],
        say(last, "round_robin"), say(last, "least_outstanding"), say(last, "affinity"))
      local rr, aff = last.workload.round_robin, last.workload.affinity
      local holds = aff.prefix_hit_rate_tokens > 2 * rr.prefix_hit_rate_tokens
                    and aff.ttft_mean_s < 0.5 * rr.ttft_mean_s
                    and first.workload.round_robin.prefix_hit_rate_tokens > 0.8
      return holds and "holds" or "refuted", figure
    end,
  },
}
