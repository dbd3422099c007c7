-- A 1 MW site: which GPU, capped or not, serves the most tokens?
--
-- The site's contract caps its draw at 1 MW (facility power: GPUs at their cap, their
-- servers' 125 W a GPU, times a PUE of 1.3).  Each point of the sweep fills the site with
-- one kind of GPU, at full power or capped at 80% or 60% of its TDP: the budget decides
-- how many GPUs it powers (fewer big ones, or more of them capped), and the serving
-- simulation how many tokens they give.  Llama-3.1-70B in fp8 answers chat requests of
-- 1,000 tokens in and 250 out (lognormal), offered more than any point serves, so
-- throughput_tokens_per_s is each fleet's capacity.  Read sweep.csv (or the report's
-- charts): throughput_tokens_per_s, energy_per_mtok_kwh and the pool's gpus_mean, by
-- gpu and cap.  A cap trades some speed a GPU for more GPUs under the same megawatt;
-- where decode dominates (memory-bound, little slowed by a cap), the trade pays.
local fs = require "fleetsim"

return fs.scenario {
  name = "site_1mw",
  duration = "10m",
  warmup = "2m",
  bucket = "1m",
  pools = {
    site = fs.dedicated { gpu = "H100-SXM", count = 2048,
                          power = fs.power { budget_kw = 1000, pue = 1.3, cap = 1 } },
  },
  workloads = {
    chat = fs.inference { model = "llama-3.1-70b", precision = "fp8", pool = "site", tp = 4,
                          engine = "sglang",
                          arrivals = fs.poisson { rate = 6000 }, max_wait = "30s",
                          prompt = fs.lognormal { median = 1000, sigma = 0.5 },
                          output = fs.lognormal { median = 250, sigma = 0.5 } },
  },
  sweep = { ["pools.site.gpu"] = { "H100-SXM", "H200-SXM", "B200" },
            ["pools.site.power.cap"] = { 1, 0.8, 0.6 } },
}
