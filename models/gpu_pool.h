/* A pool of GPUs as its users see it: how GPUs are obtained (at once from a fixed set,
 * or provisioned from a cloud after a delay), how they are lost (spot preemptions with
 * a notice, failures with repair), and what that cost in GPU-hours.
 *
 * Three kinds:
 *   - POOL_DEDICATED: `count` GPUs owned from the start.  A request for GPUs is granted
 *     at once when enough are free, else refused (the caller's scheduler queues it).
 *     A failed GPU is repaired (repair_s) and comes back.
 *   - POOL_CLOUD: GPUs rented on demand, at most `max` held or on order.  Each GPU of a
 *     request is provisioned after a delay drawn from provision_s; a provisioning
 *     attempt fails with unavailable_probability, or when the provider's `ceiling`
 *     (GPUs it will rent to us at once) is reached, and is retried after retry_s.  A
 *     request is granted when all its GPUs are ready (gang), and a released GPU goes
 *     back to the provider (billing stops).  The `count` GPUs held from the start are
 *     free until granted; a request takes free ones first and orders the rest.  A
 *     failed GPU is replaced by a new one at once (a busy one's gang is lost first).
 *   - POOL_SPOT: a cloud pool whose GPUs are also preempted: at preemption_rate_per_s
 *     per GPU held, or at the instants of a preemption trace (each hitting one GPU held,
 *     chosen at random), the holder is told notice_s ahead, then loses the GPU.  The
 *     rate is one Poisson process over the GPUs held (resampled when their number
 *     changes, exact since it is memoryless), not one event per GPU.  A preempted free
 *     GPU is simply gone; one waiting in an incomplete gang is ordered again.
 *
 * A holder (a training job, a serving replica) receives its GPUs by `granted` and learns
 * of losses by `warned` (a preemption is coming) and `lost` (the GPUs are gone: the
 * whole gang is taken from the holder, which must give its work back and ask again).
 * Failures strike every GPU of the pool at 1 / mtbf_s each, busy or not (one Poisson
 * process over the GPUs held): a failure of a free GPU only takes it out of service for
 * its repair (dedicated) or has it replaced (cloud, spot).  A busy GPU's whole gang is
 * lost at once; a preemption's gang is lost at the end of the notice, with every GPU of
 * the gang preempted meanwhile.  lost() is called after the pool has taken the GPUs
 * back, so the holder may ask again from inside it.
 *
 * Random streams: "<name>.provision", "<name>.preemption", "<name>.failure".
 */
#ifndef FLEETSIM_MODELS_GPU_POOL_H
#define FLEETSIM_MODELS_GPU_POOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "models/cost.h"
#include "models/perf.h"
#include "sim/dist.h"
#include "sim/engine.h"
#include "sim/metrics.h"
#include "sim/stat.h"
#include "sim/timeavg.h"

typedef enum pool_kind { POOL_DEDICATED, POOL_CLOUD, POOL_SPOT } pool_kind;

typedef struct pool_capacity {
    pool_kind kind;
    unsigned count;                  /* dedicated: GPUs owned; cloud/spot: held from the start */
    unsigned max;                    /* cloud/spot: held or on order at most (>= count) */
    sim_dist provision_s;            /* cloud/spot: request to ready (borrowed) */
    double unavailable_probability;  /* cloud/spot: a provisioning attempt fails */
    unsigned ceiling;                /* cloud/spot: the provider's limit; 0 = none */
    double retry_s;                  /* cloud/spot: after a failed attempt */
    double preemption_rate_per_s;    /* spot: per GPU held; 0 = none (or a trace) */
    const double *preemption_times_s;/* spot: sorted instants (borrowed), or NULL */
    size_t npreemption_times;
    double notice_s;                 /* spot: warning before a preemption */
    double mtbf_s;                   /* per GPU; 0 = no failures */
    sim_dist repair_s;               /* dedicated: a failed GPU's time out (borrowed) */
} pool_capacity;

/* Why a holder lost its GPUs. */
typedef enum gpu_loss { GPU_PREEMPTED, GPU_FAILED } gpu_loss;

/* What a holder is told.  gpus[] lists the pool's GPU numbers (0 .. capacity - 1 for a
 * dedicated pool; ever-growing ids for cloud GPUs); valid during the call only. */
typedef struct gpu_holder {
    void (*granted)(void *context, const unsigned *gpus, unsigned n);
    void (*warned)(void *context, double lost_at_s);       /* may be NULL */
    void (*lost)(void *context, gpu_loss why);
} gpu_holder;

typedef struct gpu_pool_stats {
    sim_timeavg held;          /* GPUs held (dedicated: count less those in repair) */
    sim_timeavg busy;          /* GPUs granted to holders */
    sim_timeavg life_held;     /* the same, never restarted: for time-series buckets */
    sim_timeavg life_busy;
    sim_stat provision_wait_s; /* per grant: request to all GPUs ready (0 when at once) */
    uint64_t preemptions, failures, provision_failures;
    double gpu_seconds;        /* held, integrated: what a cloud bills (up to the time of
                                  the last gpu_pool_get_stats call) */
} gpu_pool_stats;

typedef struct gpu_pool gpu_pool;

/* NULL with a message in err for an invalid capacity (max below count, a rate without
 * a kind that uses it...).  name names the random streams. */
gpu_pool *gpu_pool_create(sim_engine *engine, const pool_capacity *capacity, const char *name,
                          uint64_t seed, uint64_t replication, char *err, size_t err_size);
/* NULL is fine. */
void gpu_pool_free(gpu_pool *p);

/* Asks for n GPUs as one gang for a holder (context passed back in its calls).  Returns
 * a request number (>= 0) when granted at once or on order, -1 when it cannot be: a
 * dedicated pool without n free GPUs, a cloud pool whose max would be passed.  Granted
 * at once means `granted` is called before gpu_pool_acquire returns. */
int64_t gpu_pool_acquire(gpu_pool *p, unsigned n, const gpu_holder *holder, void *context);
/* The same for a holder whose GPUs, while granted, spend `share` of their time in each
 * phase of work (a training job's step; NULL or zeros: none is counted here, as for
 * replicas, which count their own), for power. */
int64_t gpu_pool_acquire_working(gpu_pool *p, unsigned n, const gpu_holder *holder, void *context,
                                 const perf_phases *share);
/* Device-seconds by phase that granted holders' stated work came to, from creation to
 * now. */
perf_phases gpu_pool_work(const gpu_pool *p, double now);

/* Cancels a request on order (its GPUs, ready or not, go back). */
void gpu_pool_cancel(gpu_pool *p, int64_t request);

/* Gives back the GPUs of a granted request (holder done, or scaled in). */
void gpu_pool_release(gpu_pool *p, int64_t request);

/* GPUs free to grant at once (dedicated), or that may still be ordered (cloud, spot:
 * max less those held or on order, plus those held but free): a request for n GPUs is
 * refused exactly when n exceeds it. */
unsigned gpu_pool_available(const gpu_pool *p);
unsigned gpu_pool_held(const gpu_pool *p);
unsigned gpu_pool_busy(const gpu_pool *p);

/* The most GPUs one request can ever get: count (dedicated) or max (cloud, spot). */
unsigned gpu_pool_capacity_gpus(const gpu_pool *p);

/* Calls changed(context) when GPUs may have become available (a release, a loss, a
 * repair, a cancelled order), from an event at the same instant after the change
 * (EVENT_POOL_NOTIFY of models/event_order.h, at most one pending), never from inside
 * a gpu_pool_* call: a scheduler retries its queue there.  NULL clears it. */
void gpu_pool_set_listener(gpu_pool *p, void (*changed)(void *context), void *context);

/* Statistics since creation or the last restart (warm-up); gpu_seconds is brought up to
 * the engine's current time by this call. */
const gpu_pool_stats *gpu_pool_get_stats(const gpu_pool *p);
void gpu_pool_restart_stats(gpu_pool *p, double now);

/* Adds the pool's metrics (scope "pool", subject name) for one replication ending at
 * end_s, in GPUs (units_per_gpu of the pool's units make one: MIG slices, time-slicing
 * tenants): gpu_hours, gpus_mean, gpus_max, gpus_allocated_mean (granted to holders),
 * utilization_mean (allocated / held; only when `utilization`: a serving pool reports
 * its replicas' busy time instead), provisioning_wait_mean_s, provisioning_wait_max_s,
 * preemptions, failures, provisioning_failures. */
void gpu_pool_record_metrics(const gpu_pool *p, const char *name, double end_s,
                             unsigned units_per_gpu, bool utilization, sim_metrics *m);

/* Tells meter of every GPU that joins or leaves the held set from now on (and of those
 * held now): what a cost meter bills.  NULL stops it.  The meter is borrowed. */
void gpu_pool_set_meter(gpu_pool *p, cost_meter *meter);

#endif
