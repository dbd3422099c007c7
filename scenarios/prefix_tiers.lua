-- Prefixes that outgrow GPU memory: a tier below it, by where it is and how fast.
--
-- Eight H100s serve Llama-3.1-8B (fp16, a replica a GPU) to 30 requests a second, each
-- one of 256 groups' 6,000-token shared prefix (a document many questions are asked
-- about) and 200 tokens of its own (lognormal), answered in 200, routed round robin:
-- the case prefix_groups.lua shows a GPU cache losing, since every replica sees every
-- group and holds about a quarter of them.  Four workloads on four pools of eight draw
-- the same requests (streams) and differ only in what lies below the GPU's cache
-- (written through: every block a prefill computes is stored there too):
--   gpu_only  nothing;
--   host      256 GB of each replica's host memory, over its PCIe (about 51 GB/s);
--   shared    a 2 TB store the eight replicas share, over each one's NIC (400 Gb/s);
--   disk      2 TB of each replica's local disk at 3 GB/s and 100 us (a stated drive).
-- A request takes the GPU's hit, then fetches what a tier holds beyond it when that is
-- quicker than prefilling it: a 6,000-token prefix is 786 MB of cache, about 15 ms
-- over PCIe or the NIC against some 150 ms of prefill, but 262 ms from the disk, which
-- is then passed over.
--
-- What to expect: the host tier holds every group a replica has seen, so past the
-- first request of each group on each replica it hits; the shared store holds every
-- group any replica has seen and hits almost always; the disk declines.  The typical
-- TTFT falls with the hit rate; each fetch adds its 15 ms to its batch's iteration.
-- The verdict reads the hit rates, the fetches and TTFT.
local fs = require "fleetsim"

local function workload(pool, tiers)
  local cache = { block = 16 }
  for kind, tier in pairs(tiers) do cache[kind] = tier end
  return fs.inference {
    model = "llama-3.1-8b", precision = "fp16", tp = 1, pool = pool, streams = "groups",
    arrivals = fs.poisson { rate = 30 },
    system_prompt = { tokens = 6000, groups = 256 },
    prompt = fs.lognormal { median = 200, sigma = 0.5 },
    output = fs.lognormal { median = 200, sigma = 0.5 },
    prefix_cache = cache, routing = "round_robin",
    max_wait = "60s", slo = { ttft = "1s" },
  }
end

return fs.scenario {
  name = "prefix_tiers",
  description = "a prefix cache's tiers below GPU memory: host, a shared store, a slow disk",
  duration = "5m",
  warmup = "1m",
  bucket = "1m",
  pools = {
    p_gpu = fs.dedicated { gpu = "H100-SXM", count = 8 },
    p_host = fs.dedicated { gpu = "H100-SXM", count = 8 },
    p_shared = fs.dedicated { gpu = "H100-SXM", count = 8 },
    p_disk = fs.dedicated { gpu = "H100-SXM", count = 8 },
  },
  workloads = {
    gpu_only = workload("p_gpu", {}),
    host = workload("p_host", { host = { size = "256GB" } }),
    shared = workload("p_shared", { shared = { size = "2TB" } }),
    disk = workload("p_disk", { disk = { size = "2TB", bandwidth = "3GB/s", latency = "100us" } }),
  },
  claim = fs.claim {
    text = "a tier below GPU memory recovers the prefixes a GPU cache loses, when it is quicker than the prefill",
    verdict = function(r)
      local w = r.workload
      local function say(name)
        return string.format("%s hit rate %.1f%%, TTFT mean %.0f ms, p99 %.0f ms", name,
                             100 * w[name].prefix_hit_rate_tokens, 1000 * w[name].ttft_mean_s,
                             1000 * w[name].ttft_p99_s)
      end
      local figure = string.format("%s; %s; %s; %s (disk fetches %d, declined %d)",
        say("gpu_only"), say("host"), say("shared"), say("disk"),
        r.pool.p_disk.prefix_disk_fetches, r.pool.p_disk.prefix_disk_declined)
      local holds = w.host.prefix_hit_rate_tokens > 2 * w.gpu_only.prefix_hit_rate_tokens
                    and w.shared.prefix_hit_rate_tokens > w.host.prefix_hit_rate_tokens
                    and w.shared.ttft_mean_s < 0.5 * w.gpu_only.ttft_mean_s
                    and r.pool.p_disk.prefix_disk_fetches == 0
      return holds and "holds" or "refuted", figure
    end,
  },
}
