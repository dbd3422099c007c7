-- Where to serve a DeepSeek-class mixture: 8-GPU H200 boxes, a GB200 NVL72 rack, or
-- MI300X boxes, at one SLO?
--
-- DeepSeek-R1 (671B parameters, 37B active, latent attention) in fp8 serves a reasoning
-- chat: 30 requests/s, prompts near 2,000 tokens, answers near 600.  The SLO: p99 time
-- to first token under 3 s and p99 time per output token under 60 ms.  Four ways, each
-- drawing the same requests (streams = "chat": common random numbers):
--   h200      HGX H200 boxes, replicas of 8 GPUs (one box): attention data parallel and
--             the experts spread over the box (the all-to-alls stay on NVLink)
--   h200_x2   the same boxes, replicas of 16 GPUs (two boxes): the all-to-alls cross the
--             400 Gb/s network between them
--   nvl72     GB200 GPUs of an NVL72 rack, replicas of 16: all 72 share one NVLink domain,
--             so a 16-GPU replica's all-to-alls stay on NVLink
--   mi300x    MI300X boxes, replicas of 8 (Infinity Fabric within the box)
-- The sweep grows every way's GPUs together (16 to 64); the verdict reads, for each way,
-- the fewest GPUs that meet the SLO and the cost per million output tokens there (the
-- catalog's on-demand prices: H200 $4.50, GB200 $4.54, MI300X $1.85 an hour, dated in
-- lua/fleetsim/devices.lua).  The AMD device has no operator measurements here: it runs
-- at the H100 family's shares of its own datasheet (estimate says so).
local fs = require "fleetsim"

local function chat(pool, tp)
  return fs.inference { model = "deepseek-r1", precision = "fp8", pool = pool, tp = tp,
                        attention_dp = true, max_batch = 32 * tp, streams = "chat",
                        arrivals = fs.poisson { rate = 30 },
                        prompt = fs.lognormal { median = 2000, sigma = 0.6 },
                        output = fs.lognormal { median = 600, sigma = 0.7 },
                        routing = "least_outstanding", when_full = "preempt", max_wait = "2m",
                        slo = { ttft = "3s", tpot = "60ms" } }
end

local ways = { "h200", "h200_x2", "nvl72", "mi300x" }
local rented = fs.on_demand {} -- the catalog's dated on-demand price of each device

return fs.scenario {
  name = "moe_platforms",
  description = "DeepSeek-R1 on H200 boxes, a GB200 NVL72 rack or MI300X boxes at one SLO",
  duration = "20m",
  warmup = "2m",
  bucket = "1m",
  pools = {
    h200 = fs.dedicated { gpu = "H200-SXM", count = 16, cost = rented },
    h200_x2 = fs.dedicated { gpu = "H200-SXM", count = 16, cost = rented },
    nvl72 = fs.dedicated { gpu = "GB200", count = 16, cost = rented },
    mi300x = fs.dedicated { gpu = "MI300X", count = 16, cost = rented },
  },
  workloads = {
    on_h200 = chat("h200", 8),
    on_h200_x2 = chat("h200_x2", 16),
    on_nvl72 = chat("nvl72", 16),
    on_mi300x = chat("mi300x", 8),
  },
  sweep = { zip = {
    ["pools.h200.count"] = { 16, 32, 48, 64 },
    ["pools.h200_x2.count"] = { 16, 32, 48, 64 },
    ["pools.nvl72.count"] = { 16, 32, 48, 64 },
    ["pools.mi300x.count"] = { 16, 32, 48, 64 },
  } },
  claim = fs.claim {
    text = "for DeepSeek-R1 at one SLO, a GB200 NVL72 rack needs the fewest GPUs and gives "
           .. "the lowest cost per million output tokens",
    verdict = function(r)
      local parts, fewest, cheapest = {}, nil, nil
      local found = {}
      for _, way in ipairs(ways) do
        for _, p in ipairs(r.points) do
          local w = p.workload["on_" .. way]
          local gpus = p.values["pools." .. way .. ".count"]
          if w.ttft_p99_s and w.tpot_p99_s and w.ttft_p99_s <= 3 and w.tpot_p99_s <= 0.060 then
            found[way] = { gpus = gpus, cost = w.cost_per_mtok_usd, ttft = w.ttft_p99_s,
                           tpot = w.tpot_p99_s }
            break
          end
        end
        local f = found[way]
        if f then
          parts[#parts + 1] = string.format("%s %d GPUs, $%.2f per million output tokens "
            .. "(p99 TTFT %.2f s, TPOT %.0f ms)", way, f.gpus, f.cost, f.ttft, 1e3 * f.tpot)
          if not fewest or f.gpus < found[fewest].gpus
             or (f.gpus == found[fewest].gpus and f.cost < found[fewest].cost) then fewest = way end
          if not cheapest or f.cost < found[cheapest].cost then cheapest = way end
        else
          parts[#parts + 1] = way .. " misses the SLO at every size tried (16-64 GPUs)"
        end
      end
      local figure = table.concat(parts, "; ")
        .. string.format("; fewest GPUs: %s, cheapest: %s", fewest or "none", cheapest or "none")
      if fewest == "nvl72" and cheapest == "nvl72" then return "holds", figure end
      if fewest == "nvl72" or cheapest == "nvl72" then return "qualified", figure end
      return "refuted", figure
    end,
  },
}
