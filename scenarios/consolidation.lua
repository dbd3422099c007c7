-- Five models: one pool or five?
--
-- A team serves five 4B-12B models on H100s (fp16/bf16, a replica a GPU).  Two carry
-- steady chat traffic (2 requests a second each); three are used now and then (one
-- request every 5 minutes on average, as internal tools and evaluations are).  Three
-- ways to host them, drawing the same requests (streams):
--   five pools  each model on a GPU of its own, always loaded: 5 GPUs;
--   one pool    3 GPUs for all five: the steady models keep a replica each, and the
--               three occasional ones share the third GPU, loaded when a request comes
--               (a cold start: weights over 1.67 GB/s, ServerlessLLM's measured PyTorch
--               load from local SSD) and given back after `idle` without a request.
--               Short of GPUs, the pool frees the least recently used idle model.
--   packed      3 GPUs too: the steady models on two, the three occasional ones always
--               loaded together on the third, time-sliced three ways (each a third of
--               its memory and its turns; they slow each other only when busy at once).
--               A third of an H100 (26.4 GiB) cannot hold Gemma-3-12B's 23.5 GB of
--               16-bit weights beside the engine's runtime and activation reserve, so
--               packed, the occasional models run in fp8.
-- The sweep varies the idle time (30 s to 10 min).  The verdict reads the GPUs and the
-- cost of each way and what the occasional models' users pay: cold starts and their
-- TTFT p99.
local fs = require "fleetsim"

local models = {
  chat_a = { model = "llama-3.1-8b", rate = 2 },
  chat_b = { model = "qwen3-8b", rate = 2 },
  tool_a = { model = "mistral-7b", rate = 1 / 300 },
  tool_b = { model = "gemma-3-12b", rate = 1 / 300 },
  tool_c = { model = "gemma-3-4b", rate = 1 / 300 },
}
local cost = fs.on_demand { usd_per_hour = 6.88 } -- an H100 an hour, as default.lua bills it

local pools = { shared = fs.dedicated { gpu = "H100-SXM", count = 3, cost = cost } }
local workloads = {}
for name, m in pairs(models) do
  local function workload(pool, extra)
    local w = { model = m.model, pool = pool, tp = 1, replicas = 1, streams = name,
                arrivals = fs.poisson { rate = m.rate },
                prompt = fs.lognormal { median = 600, sigma = 0.6 },
                output = fs.lognormal { median = 200, sigma = 0.5 },
                max_wait = "5m", slo = { ttft = "2s" } }
    for k, v in pairs(extra) do w[k] = v end
    return fs.inference(w)
  end
  pools["own_" .. name] = fs.dedicated { gpu = "H100-SXM", count = 1, cost = cost }
  workloads["own_" .. name] = workload("own_" .. name, {})
  local occasional = m.rate < 1
  workloads["one_" .. name] = workload("shared", occasional and { scale_to_zero = "2m" } or {})
  workloads["pk_" .. name] = workload(occasional and "packed" or "pair",
                                      occasional and { precision = "fp8" } or {})
end
pools.pair = fs.dedicated { gpu = "H100-SXM", count = 2, cost = cost }
pools.packed = fs.dedicated { gpu = "H100-SXM", count = 1, cost = cost,
                              time_slicing = fs.time_slicing { tenants = 3 } }

local idle = { "30s", "2m", "10m" }

return fs.scenario {
  name = "consolidation",
  description = "five models on five H100s, or on three: occasional ones loaded on demand, or "
                .. "packed on one GPU",
  duration = "4h",
  warmup = "10m",
  bucket = "10m",
  pools = pools,
  workloads = workloads,
  sweep = { zip = { ["workloads.one_tool_a.scale_to_zero"] = idle,
                    ["workloads.one_tool_b.scale_to_zero"] = idle,
                    ["workloads.one_tool_c.scale_to_zero"] = idle } },
  claim = fs.claim {
    text = "three of five models loaded on demand on one pool serve them on 3 GPUs instead of 5, "
           .. "their users paying cold starts",
    verdict = function(r)
      local tools = { "tool_a", "tool_b", "tool_c" }
      local parts = {}
      local holds = true
      for k, point in ipairs(r.points) do
        local w = point.workload
        local cold, waits, served, ttft, own = 0, 0, 0, 0, 0
        for _, t in ipairs(tools) do
          local one = w["one_" .. t]
          cold = cold + one.cold_starts
          waits = waits + one.cold_start_waits
          served = served + one.requests_completed
          ttft = ttft + one.ttft_mean_s * one.requests_completed
          own = math.max(own, w["own_" .. t].ttft_mean_s)
        end
        local chat = math.max(w.one_chat_a.ttft_p99_s, w.one_chat_b.ttft_p99_s)
        parts[#parts + 1] = string.format("idle %s: %d cold starts, %.0f%% of occasional requests "
          .. "waited for a load, their TTFT mean %.1f s (%.2f s on GPUs of their own), chat TTFT "
          .. "p99 %.0f ms", idle[k], cold, 100 * waits / served, ttft / served, own, 1000 * chat)
        holds = holds and ttft / served > own and chat < 2
      end
      local gpu_cost = function(pool) return r.points[1].pool[pool].cost_usd end
      local five = 0
      for name in pairs(models) do five = five + gpu_cost("own_" .. name) end
      local w = r.points[1].workload
      local pk_ttft, pk_served, pk_worst = 0, 0, 1
      for _, t in ipairs(tools) do
        local pk = w["pk_" .. t]
        pk_ttft = pk_ttft + pk.ttft_mean_s * pk.requests_completed
        pk_served = pk_served + pk.requests_completed
        pk_worst = math.min(pk_worst, pk.slo_attainment)
      end
      local packed = string.format("packed on one GPU: cost %.0f USD, no cold start, occasional "
        .. "TTFT mean %.2f s, the worst model within its SLO for %.0f%% of requests",
        gpu_cost("pair") + gpu_cost("packed"), pk_ttft / pk_served, 100 * pk_worst)
      local figure = string.format("GPUs 3 vs 5, cost %.0f vs %.0f USD over the run; ", gpu_cost("shared"),
                                   five) .. table.concat(parts, "; ") .. "; " .. packed
      return holds and "holds" or "refuted", figure
    end,
  },
}
