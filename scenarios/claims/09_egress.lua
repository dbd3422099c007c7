-- Claim 9: "Egress fees of $0.08 to $0.12 per GB add 20 to 40% to a data-heavy bill."
--
-- Eight on-demand H100s ($6.88 per GPU-hour, AWS p5 after the 2025 cut) serve
-- Llama-3-8B at 30 requests/s for 6 hours; what leaves the cloud is priced by AWS's
-- tiers ($0.09/GB after the first 100 GB a month, AWS's price page, 2026).  What
-- "data-heavy" means is the question, so the bytes sent per output token are swept:
-- 4 (plain text), 1,000 (token log-probabilities), 3,000 and 6,000 (audio, structured
-- data) and 10,000 (images, embeddings).  The bill is per the pool: cost_egress_usd against
-- cost_compute_usd, the share egress adds.
--
-- The verdict: the claim holds if egress adds 20 to 40% at some swept size and the
-- figure says which; it is qualified when that size is far from a text chatbot's
-- (where egress adds under 1%), refuted if no size gives 20 to 40%.
local fs = require "fleetsim"

return fs.scenario {
  name = "09_egress",
  description = "how much egress adds to an on-demand inference bill, by bytes per token",
  duration = "6h",
  warmup = "15m",
  bucket = "30m",
  pools = {
    cloud = fs.cloud { gpu = "H100-SXM", count = 8, min = 8, max = 8,
                       cost = fs.on_demand { usd_per_hour = 6.88, egress = "AWS" } },
  },
  workloads = {
    api = fs.inference { model = "llama-3.1-8b", pool = "cloud", arrivals = fs.poisson { rate = 30 },
                         prompt = fs.lognormal { median = 1000, sigma = 1.0 },
                         output = fs.lognormal { median = 250, sigma = 0.8 },
                         max_wait = "60s", when_full = "preempt", response_bytes_per_token = 4 },
  },
  sweep = { ["workloads.api.response_bytes_per_token"] = { 4, 1000, 3000, 6000, 10000 } },
  claim = fs.claim {
    text = "egress fees of $0.08 to $0.12 per GB add 20 to 40% to a data-heavy bill",
    verdict = function(r)
      local key = "workloads.api.response_bytes_per_token"
      local text_share, hit, parts = nil, nil, {}
      for _, p in ipairs(r.points) do
        local c = p.pool.cloud
        local share = c.cost_egress_usd / c.cost_compute_usd
        local bytes = p.values[key]
        if bytes == 4 then text_share = share end
        if not hit and share >= 0.2 and share <= 0.4 then hit = bytes end
        parts[#parts + 1] = string.format("%g B/token +%.1f%%", bytes, 100 * share)
      end
      local figure = "egress adds to compute: " .. table.concat(parts, ", ")
      if not hit then return "refuted", figure end
      if text_share and text_share < 0.01 then
        return "qualified", figure .. string.format(" (20-40%% needs about %g bytes a token)", hit)
      end
      return "holds", figure
    end,
  },
}
