/* Fractional-GPU tasks of a real cluster, replayed on its node list: an event-driven
 * model of a Kubernetes-like scheduler placing tasks that ask for whole GPUs or
 * thousandths of one (models/cluster_trace.h for the files, models/placement.h for the
 * policies and the fragmentation measure).
 *
 * Replay.  Each task arrives at its creation time (relative to the first task of the
 * trace, divided by speedup) and, once placed, holds its CPU, memory and GPU share for
 * its duration (unchanged by speedup: a speedup of 2 doubles the offered load).  A task
 * that fits no node now waits in a FIFO queue; a task that could not fit even an empty
 * node (too big, or a GPU model the fleet lacks) is rejected at arrival and counted.
 * When a task leaves a node, the waiting tasks are retried in arrival order on that node
 * alone, and each one that fits is placed (backfilling: a later small task may start
 * while an earlier large one still waits).  This is exact and cheap: after every event
 * no waiting task fits anywhere, and a departure frees resources on one node only, so
 * that node is the only place a waiting task may now fit.  Departures at a time run
 * before arrivals at the same time.
 *
 * What is replayed.  CPU-only tasks (num_gpu = 0, 1,088 of OpenB's 8,152) are kept by
 * default: they take CPU and memory on the GPU nodes, which is one way GPUs end up
 * stranded.  Tasks the real cluster never scheduled (pod_phase Pending, 897 in OpenB)
 * are kept by default too, holding their resources from arrival for the time they asked
 * for them (deletion - creation): they are demand the cluster did not serve.  Failed
 * tasks ran until deleted and are replayed like the others.  Options drop either kind.
 *
 * Shrinking the fleet.  OpenB's 1,213 nodes (6,212 GPUs) never hold more than about 66
 * GPUs of concurrent demand: with the real node list every task is placed at once.
 * nodes_fraction keeps an evenly spread, deterministic subset (node i is kept when
 * floor((i + 1) f) > floor(i f)), which keeps the mix of node types; speedup raises the
 * load instead.
 *
 * Measures (all over [0, end]):
 * - allocation rate: GPU thousandths allocated over the fleet's total (under WHOLE_GPUS
 *   a share holds its whole GPU); requested: the thousandths the running tasks asked
 *   for, over the total (below the allocation under WHOLE_GPUS);
 * - pending time of a task: from arrival to placement, for the tasks placed;
 * - fragmentation: the fraction of the fleet's GPU capacity that is free but unusable.
 *   While a GPU task waits, against the first waiting GPU task: since it fits nowhere,
 *   that is all the free capacity (idle while a GPU task waits).  While no GPU task
 *   waits, against the typical task: the expected fragmentation of placement.h (free
 *   capacity in pieces too small, or on nodes short of CPU or memory, averaged over the
 *   sizes of the tasks replayed).
 */
#ifndef FLEETSIM_MODELS_GPU_TASKS_H
#define FLEETSIM_MODELS_GPU_TASKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "models/cluster_trace.h"
#include "models/placement.h"
#include "sim/engine.h"
#include "sim/histogram.h"
#include "sim/metrics.h"
#include "sim/stat.h"
#include "sim/timeavg.h"

typedef struct gpu_tasks_options {
    gpu_placement placement;
    double speedup;          /* > 0: arrivals come this many times faster */
    double nodes_fraction;   /* (0, 1]: the share of the node list kept */
    bool cpu_tasks;          /* replay num_gpu = 0 tasks */
    bool unscheduled;        /* replay tasks the real cluster never scheduled */
} gpu_tasks_options;

/* first_fit, speedup 1, every node, every task. */
gpu_tasks_options gpu_tasks_options_default(void);

/* A workload as a scenario describes it: the two files (read when loaded, so that a bad
 * row is reported before the run) and the options. */
typedef struct gpu_tasks_spec {
    char *nodes_path, *tasks_path;   /* owned */
    gpu_tasks_options options;
    cluster_trace trace;             /* owned */
} gpu_tasks_spec;

/* Reads spec->trace from the two paths: 0, or -1 with "file:row N: ..." in err. */
int gpu_tasks_spec_load(gpu_tasks_spec *spec, char *err, size_t err_size);
/* Frees the paths and the trace; NULL-safe; the spec is then empty. */
void gpu_tasks_spec_release(gpu_tasks_spec *spec);

typedef struct gpu_tasks_stats {
    uint64_t arrived, placed, rejected, completed;
    sim_stat pending_s;            /* of the tasks placed */
    sim_histogram pending_hist_s;
    sim_timeavg allocation;        /* fraction of GPU capacity */
    sim_timeavg requested;         /* fraction of GPU capacity */
    sim_timeavg fragmentation;     /* fraction of GPU capacity */
    sim_timeavg waiting;           /* tasks */
} gpu_tasks_stats;

/* One bucket's means (time averages) and counts, from the previous call to now. */
typedef struct gpu_tasks_bucket_stats {
    double allocation_rate, fragmentation, tasks_pending;
    uint64_t arrived, placed;
} gpu_tasks_bucket_stats;

typedef struct gpu_tasks gpu_tasks;

/* A replay of trace (borrowed: it must outlive the replay) on engine, from time now.
 * NULL with a message in err when the options are invalid or no node is kept. */
gpu_tasks *gpu_tasks_create(sim_engine *engine, const cluster_trace *trace,
                            const gpu_tasks_options *options, char *err, size_t err_size);
/* Schedules the first arrival (once). */
void gpu_tasks_start(gpu_tasks *t);
/* NULL-safe.  The replay's pending events point into it: free the engine first, or
 * never run it again. */
void gpu_tasks_free(gpu_tasks *t);

const gpu_tasks_stats *gpu_tasks_get_stats(const gpu_tasks *t);
/* Tasks waiting now. */
size_t gpu_tasks_waiting(const gpu_tasks *t);
/* Fragmentation now, as defined above. */
double gpu_tasks_fragmentation(const gpu_tasks *t);
/* Nodes kept and their GPUs. */
size_t gpu_tasks_nodes(const gpu_tasks *t);
uint64_t gpu_tasks_gpus(const gpu_tasks *t);
/* When the last replayed task would leave if every task started at its arrival, in
 * seconds of the replay: a natural end for a run of the whole trace. */
double gpu_tasks_trace_end_s(const gpu_tasks *t);
/* The arrival of the last replayed task, in seconds of the replay. */
double gpu_tasks_last_arrival_s(const gpu_tasks *t);
/* The fleet, for inspection. */
const gpu_fleet *gpu_tasks_fleet(const gpu_tasks *t);

/* Where task i of the trace ran (or runs): its node's index in the trace's node list
 * and the mask of its GPUs; -1 if it was never placed or not replayed. */
int gpu_tasks_node_of(const gpu_tasks *t, size_t i, uint64_t *gpus);
/* Its pending time in seconds; NaN if never placed. */
double gpu_tasks_pending_s(const gpu_tasks *t, size_t i);

/* Forgets the statistics so far (end of a warm-up): counts and pending times start
 * again from zero, time averages from now; tasks waiting or running stay. */
void gpu_tasks_reset_stats(gpu_tasks *t);

/* Closes the bucket that started at the previous call (or at creation) at now_s. */
gpu_tasks_bucket_stats gpu_tasks_bucket(gpu_tasks *t, double now_s);

/* Adds one replication's metrics, scope "workload", subject `workload`, averages over
 * [0, end_s] (end_s >= the last event):
 *   nodes, gpus, tasks_arrived, tasks_placed, tasks_rejected, tasks_completed,
 *   tasks_pending_at_end, allocation_rate_mean, gpu_allocation_max, gpu_requested_mean,
 *   pending_mean_s, pending_p99_s, pending_max_s, fragmentation_mean,
 *   tasks_pending_mean. */
void gpu_tasks_record_metrics(sim_metrics *m, const char *workload, const gpu_tasks *t,
                              double end_s);

#endif
