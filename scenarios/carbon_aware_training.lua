-- When to train: the same fine-tuning job, started at once or left to pick its hours.
--
-- A 6-hour job on 8 H100s arrives at 17:00 on a summer day in Germany and must end by
-- 17:00 the next day.  Germany's grid is dirtiest in the evening (367 g/kWh at 20:00) and
-- cleanest at midday, when solar peaks (251 g/kWh at 11:00; the June-August means of
-- 2020, scenarios/traces/README.md).  The same job runs twice, on two rented pools that
-- hold GPUs only while it runs: `asap` starts at once; `flexible` (start = "low_carbon")
-- starts at the hour whose six hours have the least mean intensity before its deadline.
-- Compare carbon_operational_kg of the two pools and the jobs' start_s: same energy, less
-- carbon.  Try `--set workloads.flexible.deadline=24h` (midnight: under an hour of room,
-- so it starts before 18:00 and emits about what `asap` does).
local fs = require "fleetsim"

local grid = { file = "traces/grid_de_2020.csv", column = "mean_jun_aug" }

local function pool()
  return fs.cloud { gpu = "H100-SXM", max = 8, provision = "3m",
                    power = fs.power { pue = 1.2, grid = grid } }
end

local function job(p, extra)
  local j = { model = "llama-3.1-8b", precision = "bf16", gpus = 8, pool = p, at = "17h",
              tokens = 1.9e9, seq_len = 4096, global_batch = 256 }
  for k, v in pairs(extra or {}) do j[k] = v end
  return fs.training(j)
end

return fs.scenario {
  name = "carbon_aware_training",
  duration = "48h",
  bucket = "1h",
  pools = { asap = pool(), flexible = pool() },
  workloads = {
    asap = job("asap"),
    flexible = job("flexible", { start = "low_carbon", deadline = "41h" }),
  },
}
