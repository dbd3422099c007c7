-- Claim 12: "For a steady mix of training and inference over three years, buying GPUs
-- beats renting them by the month, reserving them and renting on demand."
--
-- The mix: a chatbot that follows the clock (Llama-3-8B, 4 to 40 requests/s over the
-- day, on 8 H100s) and a research team's training jobs (about one an hour, 1 to 8
-- GPUs, a median of 2 hours, checkpointed; about 60% of 16 H100s).  The same mix runs
-- four ways, each with a serving pool and a training pool:
--   buy        8 + 16 H100s bought: $280,000 per 8-GPU server over 3 years to a 10%
--              residual, $2,500 a server-month of colocation, power at PUE 1.4, $0.08/kWh
--   monthly    the same GPUs rented bare-metal at $2,500 per GPU-month, paying power
--   reserved   8 + 16 cloud H100s reserved for 3 years at $3.00 per GPU-hour (an
--              assumed 3-year commitment price, about 55% off on-demand), extra GPUs at
--              the on-demand price
--   on_demand  cloud H100s at $6.88 per GPU-hour (AWS p5 after the 2025 cut,
--              AWS's price page, 2026-11): the chatbot's pool autoscales between 2
--              and 8, the training pool holds GPUs only while jobs run (up to 16)
-- One simulated day stands for the three years: the chatbot's day repeats and the job
-- stream is steady, so every cost is cost_usd x 1,095 days (change duration here, not
-- by --set, to keep the scaling true).
--
-- The four ways draw the same requests and the same jobs (streams = "chat", "jobs":
-- common random numbers), so they differ only by how they are bought and by what that
-- changes (a rented pool's provisioning, an autoscaler), not by chance.
--
-- The verdict compares each way's three-year total (serving + training pools) and the
-- chatbot's p99 TTFT; the claim holds if buying is cheapest, is qualified if it is
-- within 10% of the cheapest, refuted otherwise.
local fs = require "fleetsim"

local duration = "1d"
local scale = 3 * 365 * 86400 / fs.seconds(duration)

local day = { 4, 3, 2, 2, 2, 3, 6, 12, 20, 28, 32, 34, 36, 38, 40, 40, 38, 34, 28, 22, 16, 12, 8, 6 }

local function chat(pool)
  return fs.inference { model = "llama-3.1-8b", pool = pool, streams = "chat",
                        arrivals = fs.diurnal { rates = day },
                        prompt = fs.lognormal { median = 1000, sigma = 1.0 },
                        output = fs.lognormal { median = 250, sigma = 0.8 },
                        max_wait = "60s", when_full = "preempt", slo = { ttft = "500ms" } }
end

local function research(pool)
  return fs.job_stream { pool = pool, streams = "jobs", arrivals = fs.poisson { rate = "1/h" },
                         gpus = fs.empirical { values = { 1, 2, 4, 8 } },
                         duration = fs.lognormal { median = "2h", sigma = 0.8 },
                         checkpoint = { every = "30m", write = "1m" } }
end

local owned = fs.owned { purchase_usd = 280000, gpus_per_server = 8, years = 3, residual = 0.1,
                         hosting_usd_per_month = 2500, pue = 1.4, usd_per_kwh = 0.08 }
local monthly = fs.monthly { usd_per_gpu = 2500, pue = 1.4, usd_per_kwh = 0.08 }
local autoscaler = fs.autoscaler { metric = "queue", target = 16, scale_in_delay = "15m" }
local provision = fs.lognormal { median = "3m", p99 = "8m" }

local function reserved(gpus)
  return fs.reserved { gpus = gpus, usd_per_hour = 3.00, term = "3y", on_demand_usd_per_hour = 6.88 }
end

return fs.scenario {
  name = "12_procurement",
  description = "buy, rent monthly, reserve or rent on demand for a mix of training and inference",
  duration = duration,
  bucket = "1h",
  replications = 2,                -- a day of job arrivals is noisy; --replications 5 for more
  pools = {
    buy_serve = fs.dedicated { gpu = "H100-SXM", count = 8, cost = owned },
    buy_train = fs.dedicated { gpu = "H100-SXM", count = 16, cost = owned },
    monthly_serve = fs.dedicated { gpu = "H100-SXM", count = 8, cost = monthly },
    monthly_train = fs.dedicated { gpu = "H100-SXM", count = 16, cost = monthly },
    reserved_serve = fs.cloud { gpu = "H100-SXM", count = 8, min = 8, max = 8, cost = reserved(8) },
    reserved_train = fs.cloud { gpu = "H100-SXM", count = 16, min = 16, max = 16, cost = reserved(16) },
    on_demand_serve = fs.cloud { gpu = "H100-SXM", count = 2, min = 2, max = 8, provision = provision,
                                 autoscaler = autoscaler, cost = fs.on_demand { usd_per_hour = 6.88 } },
    on_demand_train = fs.cloud { gpu = "H100-SXM", max = 16, provision = provision,
                                 cost = fs.on_demand { usd_per_hour = 6.88 } },
  },
  workloads = {
    buy_chat = chat("buy_serve"), buy_jobs = research("buy_train"),
    monthly_chat = chat("monthly_serve"), monthly_jobs = research("monthly_train"),
    reserved_chat = chat("reserved_serve"), reserved_jobs = research("reserved_train"),
    on_demand_chat = chat("on_demand_serve"), on_demand_jobs = research("on_demand_train"),
  },
  claim = fs.claim {
    text = "for a steady mix of training and inference over three years, buying GPUs beats "
           .. "renting monthly, reserving and renting on demand",
    verdict = function(r)
      local ways, totals, parts = { "buy", "monthly", "reserved", "on_demand" }, {}, {}
      local cheapest
      for _, way in ipairs(ways) do
        totals[way] = (r.pool[way .. "_serve"].cost_usd + r.pool[way .. "_train"].cost_usd) * scale
        if not cheapest or totals[way] < totals[cheapest] then cheapest = way end
        parts[#parts + 1] = string.format("%s $%.1fM (p99 TTFT %.0f ms, job wait %.0f min)", way,
          totals[way] / 1e6, 1e3 * r.workload[way .. "_chat"].ttft_p99_s,
          r.workload[way .. "_jobs"].wait_mean_s / 60)
      end
      local figure = "3 years: " .. table.concat(parts, "; ") .. "; cheapest: " .. cheapest
        .. " (the prices are inputs: the run measures the GPU-hours each way holds and the "
        .. "latency and waits it gives, on the same requests and jobs)"
      if cheapest == "buy" then return "holds", figure end
      if totals.buy <= 1.1 * totals[cheapest] then return "qualified", figure end
      return "refuted", figure
    end,
  },
}
