/* What the parts of a scenario run share (run.c: stations, serving, task replays, the
 * replication loop; run_pools.c: GPU pools with their jobs and costs).  Not a public
 * header: others use models/run.h. */
#ifndef FLEETSIM_MODELS_RUN_INTERNAL_H
#define FLEETSIM_MODELS_RUN_INTERNAL_H

#include "models/cost.h"
#include "models/gpu_pool.h"
#include "models/job_scheduler.h"
#include "models/run.h"

/* The time-series columns, in run_timeseries_columns' order. */
enum {
    COL_UTILIZATION, COL_QUEUE_LENGTH, COL_BATCH, COL_KV, COL_ARRIVALS, COL_COMPLETED,
    COL_DROPPED, COL_THROUGHPUT, COL_TOKENS_PER_S, COL_WAIT_MEAN, COL_WAIT_P50, COL_WAIT_P99,
    COL_RESPONSE_MEAN, COL_RESPONSE_P99, COL_TTFT_MEAN, COL_TTFT_P99, COL_TPOT_MEAN,
    COL_E2E_MEAN, COL_E2E_P99, COL_GPUS_HELD, COL_GPUS_BUSY, COL_GPUS_IDLE, COL_REPLICAS,
    COL_GPU_ALLOCATION, COL_FRAGMENTATION, COL_TASKS_PENDING, COL_COST, NCOLUMNS
};

/* A pool's GPUs in one replication: the pool, its job scheduler, its cost meter, and its
 * time-series marks. */
typedef struct pool_gpus {
    const scenario *sc;
    size_t pool;
    sim_timeseries *ts;
    size_t subject;
    gpu_pool *gp;
    job_scheduler *jobs;
    cost_meter *meter;
    bool serves_inference;      /* work is measured by its replicas, not by allocation */
    double held_mark, busy_mark, bucket_start_s;
    cost_breakdown at_warmup;   /* the meter at the end of the warm-up */
    cost_breakdown measured;    /* after the warm-up, set by pool_gpus_finish */
} pool_gpus;

/* Whether pool p gets GPU accounting: it has a gpu and no queueing services. */
bool pool_gpus_needed(const scenario *sc, size_t p);

/* Creates the pool (and its jobs and meter) on engine e for replication r.  0, or -1
 * with a message. */
int pool_gpus_start(pool_gpus *pg, sim_engine *e, unsigned r, const run_options *options,
                    char *err, size_t err_size);

/* Work its replicas did (unit-seconds busy, for power) and bytes they sent (egress). */
void pool_gpus_add_work(pool_gpus *pg, double busy_unit_s, double egress_bytes, double now);

/* Closes the last bucket and adds the pool's, its jobs' and its cost metrics; keeps
 * the cost after the warm-up in pg->measured. */
void pool_gpus_finish(pool_gpus *pg, double end_s, sim_metrics *m);

/* Frees what pool_gpus_start made (before the engine). */
void pool_gpus_stop(pool_gpus *pg);

/* Run-wide costs over the pools of one replication: total cost_usd and its parts,
 * energy, and the break-even months between bought pools and the others. */
void run_cost_metrics(const scenario *sc, const pool_gpus *pools, double end_s,
                      sim_metrics *m);

#endif
