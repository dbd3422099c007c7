/* A kind of part of a scenario run (queue stations, GPU pools, task replays, inference
 * workloads): the same few operations for each, so that models/run.c drives every
 * replication from one table and a new kind is one new file and one row there.
 *
 * A replication: every kind's start, in table order (a pool's GPUs before the
 * workloads that use them); the events; every kind's failure check; then the records,
 * stage by stage and, within a stage, in table order; then every kind's stop, in the
 * reverse order (users before what they use), before the engine goes.
 *
 * The files of the run module share this header: run.c (the replications), and one
 * file per kind.  Everyone else uses models/run.h.
 */
#ifndef FLEETSIM_MODELS_RUN_PART_H
#define FLEETSIM_MODELS_RUN_PART_H

#include <stdbool.h>
#include <stddef.h>

#include "models/cost.h"
#include "models/gpu_pool.h"
#include "models/job_scheduler.h"
#include "models/scenario.h"
#include "sim/metrics.h"
#include "sim/timeseries.h"

struct run_options; /* models/run.h: the kinds read it, run.c hands it over */

/* The time-series columns, in run_timeseries_columns' order. */
enum {
    COL_UTILIZATION, COL_QUEUE_LENGTH, COL_BATCH, COL_KV, COL_ARRIVALS, COL_COMPLETED,
    COL_DROPPED, COL_THROUGHPUT, COL_TOKENS_PER_S, COL_WAIT_MEAN, COL_WAIT_P50, COL_WAIT_P99,
    COL_RESPONSE_MEAN, COL_RESPONSE_P99, COL_TTFT_MEAN, COL_TTFT_P99, COL_TPOT_MEAN,
    COL_E2E_MEAN, COL_E2E_P99, COL_GPUS_HELD, COL_GPUS_BUSY, COL_GPUS_IDLE, COL_REPLICAS,
    COL_GPU_ALLOCATION, COL_FRAGMENTATION, COL_TASKS_PENDING, COL_COST, COL_POWER, NCOLUMNS
};

/* The site's draw, all pools together, bucket by bucket (every pool closes a bucket
 * before any closes the next, and all split theirs at the warm-up alike): the start of
 * the bucket being summed, its sum, and the peak of the buckets closed after the
 * warm-up, in facility watts.  One replication's. */
typedef struct site_power {
    double start_s;  /* NaN: none yet */
    double sum_w, peak_w;
    bool counted;    /* the bucket being summed ends after the warm-up */
} site_power;

/* A pool's carbon after the warm-up, and its peak draw (facility watts). */
typedef struct pool_carbon {
    double operational_kg, embodied_kg, peak_w;
} pool_carbon;

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
    perf_phases work_mark;      /* the pool's jobs' work at the bucket's start */
    double energy_mark_kwh;     /* facility energy at the bucket's start */
    site_power *site;           /* the run's (borrowed) */
    /* carbon, from the start: the facility energy's by the grid's hours, the hardware's
     * by the GPU-hours held; and the peak power of the buckets after the warm-up */
    double operational_kg, embodied_kg, peak_w;
    double warmup_operational_kg, warmup_embodied_kg;
    cost_breakdown at_warmup;   /* the meter at the end of the warm-up */
    cost_breakdown measured;    /* after the warm-up, set by pool_gpus_finish */
    pool_carbon carbon;         /* likewise */
} pool_gpus;

/* Its carbon since the warm-up so far. */
pool_carbon pool_gpus_carbon(const pool_gpus *pg);

/* Whether pool p gets GPU accounting: it has a gpu and no queueing services. */
bool pool_gpus_needed(const scenario *sc, size_t p);

/* Creates the pool (and its jobs and meter) on engine e for replication r.  0, or -1
 * with a message. */
int pool_gpus_start(pool_gpus *pg, sim_engine *e, unsigned r, const struct run_options *options,
                    char *err, size_t err_size);

/* Work its replicas did (unit-seconds by phase, for power) and bytes they sent (egress). */
void pool_gpus_add_work(pool_gpus *pg, const perf_phases *work_unit_s, double egress_bytes,
                        double now);

/* Closes the last bucket and adds the pool's, its jobs' and its cost metrics; keeps
 * the cost after the warm-up in pg->measured. */
void pool_gpus_finish(pool_gpus *pg, double end_s, sim_metrics *m);

/* Frees what pool_gpus_start made (before the engine). */
void pool_gpus_stop(pool_gpus *pg);

/* Run-wide costs over the pools of one replication: total cost_usd and its parts,
 * energy, carbon and the site's peak power (closing its last bucket), and the
 * break-even months between bought pools and the others. */
void run_cost_metrics(const scenario *sc, const pool_gpus *pools, site_power *site,
                      double end_s, sim_metrics *m);


/* What the parts of a run share.  The run owns it; the pool GPUs and subjects are by
 * pool number. */
typedef struct run_shared {
    const scenario *sc;
    const struct run_options *options; /* NULL: none */
    sim_timeseries *ts;
    size_t *pool_subjects;        /* each pool's time-series subject */
    pool_gpus *gpus;              /* each pool's GPU accounting; gp NULL when it has none */
    site_power site;              /* the pools' power together */
    /* the replication running */
    sim_engine *engine;
    unsigned replication;
} run_shared;

/* When a part records, after the events: what users saw (closing its last bucket also
 * bills its pool's GPUs), then the pools (their use and bills, once every workload
 * billed them), then what needs the bills (cost per token); the run then adds its
 * totals (cost, energy); last, the parts that run outside the pools (task replays on
 * nodes of their own). */
typedef enum run_stage {
    RUN_STAGE_WORKLOADS, RUN_STAGE_POOLS, RUN_STAGE_COSTS, RUN_STAGE_OUTSIDE, RUN_NSTAGES
} run_stage;

typedef void (*run_record_fn)(void *parts, run_shared *rs, double end_s, sim_metrics *m);

typedef struct run_part_kind {
    const char *what;
    /* Once per run: the kind's parts in sc, their time-series subjects added here in
     * scenario order.  Never NULL (out of memory is fatal). */
    void *(*plan)(run_shared *rs);
    /* Each replication, on rs->engine: create and schedule the first events.  0, or -1
     * with a message (a configuration a model refuses). */
    int (*start)(void *parts, run_shared *rs, char *err, size_t err_size);
    /* After the events: what failed inside a part (a trace row, a scenario function),
     * or NULL.  Optional. */
    const char *(*failure)(void *parts);
    /* The replication's records, by stage (NULL: nothing at that stage). */
    run_record_fn record[RUN_NSTAGES];
    /* Frees the replication's objects (also after a failed start; the engine has not
     * run since). */
    void (*stop)(void *parts, run_shared *rs);
    /* Frees what plan made. */
    void (*release)(void *parts);
} run_part_kind;

/* The kinds, each in a file of its own. */
extern const run_part_kind run_stations;   /* run_stations.c: plain queueing services */
extern const run_part_kind run_pool_gpus;  /* run_pools.c: GPU pools, their jobs and costs */
extern const run_part_kind run_gpu_tasks;  /* run_gpu_tasks.c: fractional GPU task replays */
extern const run_part_kind run_inference;  /* run_inference.c: LLM serving workloads */

/* The index of a time bucket that starts at start_s. */
size_t run_bucket_index(const scenario *sc, double start_s);

#endif
