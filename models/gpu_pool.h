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
 *     back to the provider (billing stops).  A failed GPU is replaced by a new one.
 *   - POOL_SPOT: a cloud pool whose GPUs are also preempted: at preemption_rate_per_s
 *     per GPU held, or at the instants of a preemption trace (each hitting one GPU held,
 *     chosen at random), the holder is told notice_s ahead, then loses the GPU.
 *
 * A holder (a training job, a serving replica) receives its GPUs by `granted` and learns
 * of losses by `warned` (a preemption is coming) and `lost` (the GPUs are gone: the
 * whole gang is taken from the holder, which must give its work back and ask again).
 * Failures strike every GPU of the pool at 1 / mtbf_s each, busy or not: a failure of a
 * free GPU only takes it out of service for its repair.
 *
 * Random streams: "<name>.provision", "<name>.preemption", "<name>.failure".
 */
#ifndef FLEETSIM_MODELS_GPU_POOL_H
#define FLEETSIM_MODELS_GPU_POOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sim/dist.h"
#include "sim/engine.h"
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
    sim_stat provision_wait_s; /* per grant: request to all GPUs ready (0 when at once) */
    uint64_t preemptions, failures, provision_failures;
    double gpu_seconds;        /* held, integrated: what a cloud bills */
} gpu_pool_stats;

typedef struct gpu_pool gpu_pool;

/* NULL with a message in err for an invalid capacity (max below count, a rate without
 * a kind that uses it...).  name names the random streams. */
gpu_pool *gpu_pool_create(sim_engine *engine, const pool_capacity *capacity, const char *name,
                          uint64_t seed, uint64_t replication, char *err, size_t err_size);
void gpu_pool_free(gpu_pool *p);

/* Asks for n GPUs as one gang for a holder (context passed back in its calls).  Returns
 * a request number (>= 0) when granted at once or on order, -1 when it cannot be: a
 * dedicated pool without n free GPUs, a cloud pool whose max would be passed.  Granted
 * at once means `granted` is called before gpu_pool_acquire returns. */
int64_t gpu_pool_acquire(gpu_pool *p, unsigned n, const gpu_holder *holder, void *context);

/* Cancels a request on order (its GPUs, ready or not, go back). */
void gpu_pool_cancel(gpu_pool *p, int64_t request);

/* Gives back the GPUs of a granted request (holder done, or scaled in). */
void gpu_pool_release(gpu_pool *p, int64_t request);

/* GPUs free to grant at once (dedicated), or that may still be ordered (cloud, spot:
 * max less those held or on order). */
unsigned gpu_pool_available(const gpu_pool *p);
unsigned gpu_pool_held(const gpu_pool *p);

/* Statistics since creation or the last restart (warm-up). */
const gpu_pool_stats *gpu_pool_get_stats(const gpu_pool *p);
void gpu_pool_restart_stats(gpu_pool *p, double now);

#endif
