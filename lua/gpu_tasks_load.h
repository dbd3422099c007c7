/* The GPU-task replay workload of a scenario file:
 *
 *   fs.gpu_tasks { nodes = "traces/openb_node_list_gpu_node.csv",
 *                  tasks = "traces/openb_pod_list_default.csv",
 *                  placement = "first_fit" | "best_fit" | "fragmentation_aware" | "whole_gpus",
 *                  nodes_fraction = 1, speedup = 1, cpu_tasks = true, unscheduled = true }
 *
 * into models/gpu_tasks.h's gpu_tasks_spec (see there for what each option means).  The
 * two files are relative to the scenario and read here, so that a bad row is reported
 * ("file:row N: column: message") before the run starts.
 */
#ifndef FLEETSIM_LUA_GPU_TASKS_LOAD_H
#define FLEETSIM_LUA_GPU_TASKS_LOAD_H

#include "lua/fields.h"
#include "models/gpu_tasks.h"

/* The keys fs.gpu_tasks accepts (NULL-ended). */
extern const char *const GPU_TASKS_KEYS[];

/* Converts the workload object w into out (zeroed first).  0, or -1 with the message in
 * the context; either way the caller releases out with gpu_tasks_spec_release. */
int gpu_tasks_load_convert(load_context *c, const fields_object *w, gpu_tasks_spec *out);

#endif
