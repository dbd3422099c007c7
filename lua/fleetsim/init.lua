-- The scenario API: `local fs = require "fleetsim"`.
--
-- Constructors only record what the scenario says and where it says it (file and line);
-- fleetsim checks every value after the file has run and after --set overrides, and
-- reports mistakes as file:line: key: message.  See README.md, "Writing a scenario".

local _, C = ...
local units = require "fleetsim.units"

local fs = { units = units, version = C.version }

-- The catalogs, as plain tables a scenario may read, change or extend before it
-- returns: fs.devices["H100-SXM"].memory = "94GB", or fs.devices["my-gpu"] = { ... };
-- fs.engines.sglang.host.overlap = 0.5.
fs.devices = require "fleetsim.devices"
fs.models = require "fleetsim.models"
fs.engines = require "fleetsim.engines"
-- An entry a file adds (fs.models["m"] = { ... }) carries the line that added it, for the
-- checks made after the file has run.
C.catalog_section(fs.devices, "device")
C.catalog_section(fs.models, "model")
C.catalog_section(fs.engines, "engine")
fs.egress = require "fleetsim.egress"

-- Constructors take one table of named fields, as in fs.dedicated { count = 8 }.
local constructor = C.constructor

-- The whole scenario: name, duration, warmup, seed, replications, bucket, pools, workloads,
-- and sweep (a plain table: { ["pools.q.count"] = { 4, 8 } }) or search.
fs.scenario = constructor("scenario")
-- The smallest value of a key that meets a target: key, target, low, high, subject, scope.
fs.search = constructor("search")
-- What the scenario tests, judged after the run: text, and verdict = function(r) that
-- returns "holds", "qualified" or "refuted" and a figure (README.md, "Claims").
fs.claim = constructor("claim")

-- Pools of servers, and where they sit.
fs.dedicated = constructor("dedicated")
fs.cloud = constructor("cloud")
fs.spot = constructor("spot")
fs.site = constructor("site")
fs.autoscaler = constructor("autoscaler")
fs.noisy = constructor("noisy")
fs.time_slicing = constructor("time_slicing")
-- What a pool's devices draw and emit: a power cap or clock, host power, PUE, grid.
fs.power = constructor("power")

-- What a pool costs: cost = fs.on_demand { ... } (fs.spot { usd_per_hour } in a cost
-- is the spot price).
fs.on_demand = constructor("on_demand")
fs.reserved = constructor("reserved")
fs.monthly = constructor("monthly")
fs.owned = constructor("owned")

-- Workloads.
fs.service = constructor("service")
fs.inference = constructor("inference")
fs.gpu_tasks = constructor("gpu_tasks")
fs.training = constructor("training")
fs.job_stream = constructor("job_stream")

-- Arrival processes.
fs.poisson = constructor("poisson")
fs.constant_rate = constructor("constant_rate")
fs.trace = constructor("trace")
fs.profile = constructor("profile")
fs.diurnal = constructor("diurnal")
fs.mmpp = constructor("mmpp")
fs.closed_loop = constructor("closed_loop")

-- Distributions (of durations here; a plain number or duration string means a constant).
fs.constant = constructor("constant")
fs.exponential = constructor("exponential")
fs.uniform = constructor("uniform")
fs.normal = constructor("normal")
fs.lognormal = constructor("lognormal")
fs.gamma = constructor("gamma")
fs.weibull = constructor("weibull")
fs.pareto = constructor("pareto")
fs.empirical = constructor("empirical")

-- Unit helpers for computing with values in scenario code, e.g. fs.seconds("5m") / 2.
local function strict(parse)
  return function(v)
    local value, err = parse(v)
    if value == nil then error(err, 2) end
    return value
  end
end
fs.seconds = strict(units.duration)
fs.bytes = strict(units.size)
fs.per_second = strict(units.rate)

-- A name fs does not have is a mistake, not a nil to call: fs.dedicted { ... } says
-- "fs.dedicted is not a fleetsim constructor (did you mean fs.dedicated?)".
local names = {}
for name in pairs(fs) do names[#names + 1] = "fs." .. name end
table.sort(names)
setmetatable(fs, { __index = function(_, key)
  local wanted = "fs." .. tostring(key)
  local hint = C.closest(wanted, names)
  error(wanted .. " is not a fleetsim constructor"
        .. (hint and " (did you mean " .. hint .. "?)" or ""), 2)
end })

return fs
