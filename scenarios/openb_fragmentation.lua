-- Fractional GPU tasks from a production cluster: does placement matter?
--
-- The Alibaba OpenB trace (cluster-trace-gpu-v2023, behind "Beware of Fragmentation",
-- USENIX ATC 2023) lists 8,152 tasks, many asking for a fraction of a GPU (gpu_milli),
-- and the 1,213 GPU nodes they ran on.  On the whole fleet everything fits at once, so
-- this scenario keeps an evenly spread 5% of the nodes (287 GPUs) and plays arrivals 20
-- times faster, and replays the same tasks four ways:
--   first_fit            the first node and GPU with room
--   best_fit             the node (and GPU) left with the least free capacity
--   fragmentation_aware  the placement that least raises the expected fragmentation
--                        (GPU capacity left in pieces too small for typical tasks)
--   whole_gpus           every fractional request rounded up to a dedicated GPU
-- Compare allocation_rate_mean, fragmentation_mean, pending_mean_s, pending_p99_s and
-- tasks_pending_at_end between the workloads.  The trace is nearly idle for its first
-- 110 days, so the run starts measuring there (warmup) and ends after the last arrival.
-- Data: Alibaba clusterdata, cluster-trace-gpu-v2023 (see traces/README.md).
local fs = require "fleetsim"

local function replay(placement)
  return fs.gpu_tasks {
    nodes = "traces/openb_node_list_gpu_node.csv",
    tasks = "traces/openb_pod_list_default.csv",
    placement = placement,
    nodes_fraction = 0.05,
    speedup = 20,
  }
end

return fs.scenario {
  name = "openb_fragmentation",
  duration = fs.seconds("150d") / 20,
  warmup = fs.seconds("110d") / 20,
  bucket = "1h",
  workloads = {
    first_fit = replay("first_fit"),
    best_fit = replay("best_fit"),
    fragmentation_aware = replay("fragmentation_aware"),
    whole_gpus = replay("whole_gpus"),
  },
}
