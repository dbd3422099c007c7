/* A fleet: the replicas of one model that draw their GPUs from one pool, and the routing
 * of a request to one of them.  A serving workload (serving.c) owns one fleet for its
 * own pool and one for its overflow pool; it decides which fleet a request goes to and
 * how many replicas each should have, and hears back through fleet_events.  The fleet
 * keeps that many replicas ordered or running, reorders after a loss, drains replicas on
 * a scale-in or a spot notice, and runs replicas on shared or noisy GPUs.
 *
 * Prefill and decode replicas apart are two of these fleets, one a pool, which the
 * owner chains (serving.c: a request's first token on the one, its cache over a link,
 * the rest on the other, serving_fleet_route_prefilled): the fleet needed no other type,
 * only a way to hand over a request already prefilled.  Another kind of fleet (several
 * models on one pool) would be another type behind these same calls: the owner never
 * sees a replica.
 */
#ifndef FLEETSIM_MODELS_SERVING_FLEET_H
#define FLEETSIM_MODELS_SERVING_FLEET_H

#include <stdbool.h>
#include <stdint.h>

#include "models/autoscale.h"
#include "models/gpu_pool.h"
#include "models/gpu_share.h"
#include "models/noisy.h"
#include "models/prefix_cache.h"
#include "models/replica.h"
#include "sim/dist.h"

typedef enum routing_policy {
    ROUTE_ROUND_ROBIN,
    ROUTE_LEAST_OUTSTANDING,   /* fewest requests waiting or running */
    ROUTE_SHORTEST_TOKENS,     /* fewest remaining tokens (join the shortest queue by work) */
    ROUTE_POWER_OF_TWO,        /* the less loaded (by requests) of two chosen at random */
    ROUTE_PREFIX_AFFINITY,     /* the longest cached prefix among the replicas within a
                                  load bound, else the session's by consistent hashing */
    ROUTE_CUSTOM,              /* a function of the caller's (a scenario's Lua function) */
} routing_policy;

/* What a custom routing policy sees of each replica. */
typedef struct replica_load {
    unsigned outstanding;      /* requests waiting or running */
    double tokens;             /* their remaining prompt and output tokens */
} replica_load;

/* A custom policy: the index of the replica for a request of prompt + output tokens
 * arriving at now_s, or -1 with a message in err (the run then stops with it). */
typedef int (*route_fn)(void *context, const replica_load *loads, unsigned n, unsigned prompt,
                        unsigned output, double now_s, char *err, size_t err_size);

const char *routing_policy_name(routing_policy p);
int routing_policy_parse(const char *name, routing_policy *out);

/* Replicas drawing their GPUs from one pool: the workload's own, or the overflow pool it
 * spills into when its own replicas are all saturated. */
typedef struct serving_group_config {
    const char *pool_name;     /* for messages and stream names */
    replica_config replica;
    unsigned replicas;         /* at the start */
    unsigned min, max;         /* the autoscaler's bounds (max 0: replicas) */
    gpu_pool *pool;            /* NULL: the replicas exist from the start, never lost */
    const autoscaler_spec *autoscaler; /* NULL or disabled: the count stays (losses are
                                          replaced) */
    sim_dist rtt_s;            /* client round trip, added to what users see */
    double spike_probability;  /* a request's round trip also meets a spike ... */
    sim_dist spike_s;          /* ... of this extra delay (rare congestion, retransmits) */
    /* Sharing of the pool's GPUs (NULL: none): each physical GPU holds units_per_gpu of
     * the pool's units (MIG slices, time-slicing tenants), and a replica runs on the
     * unit numbered first among its GPUs; a noisy host slows every unit on it.  Random
     * streams "<pool>.noisy.<gpu>". */
    const sharing_spec *sharing;
    const noisy_spec *noisy;
    unsigned units_per_gpu;
    /* A replica ordered once the run has begun loads its weights for load_s after its
     * GPUs are granted (a cold start; they are held meanwhile); those at the start are
     * loaded already.  0: ready when granted. */
    double load_s;
    /* NULL, or the pool's arbiter when several models share it (models/pool_tenants.h):
     * short of GPUs, the fleet asks it to free another model's idle replica, and it
     * gives back one of its own idle replicas above `min` when asked. */
    struct pool_tenants *tenants;
} serving_group_config;

/* A fleet's replicas over the run (after the warm-up). */
typedef struct serving_group_stats {
    double utilization;        /* busy replica time / replica time */
    double batch_mean, kv_mean;
    double replicas_mean, replicas_max; /* ready (serving or draining) */
    uint64_t served;           /* requests that finished there */
    uint64_t kv_preemptions, replica_losses;
    kv_swap_stats kv_swap;     /* the host tier's copies (when_full = "swap") */
    double replica_s;          /* ready replica time */
    double iterations;         /* batching iterations run */
    double tokens_computed;    /* prompt and output tokens they computed */
    double cache_tokens_read;  /* tokens of cache their attention read */
    /* With a prefix cache: blocks evicted (gone replicas' too); and the balance: the
     * largest time-average batch (sequences held) of the replicas there now over their
     * mean (busy time says little: a replica with one sequence is busy) */
    uint64_t prefix_evictions;
    double load_max_over_mean;
    /* the prefix cache's tiers below GPU memory (replica_config.prefix_tiers' order) */
    prefix_tier_stats prefix_tiers[PREFIX_TIERS_MAX];
    /* speculative decoding: sequence-rounds, the tokens they made, draft seconds */
    double spec_rounds, spec_tokens, draft_s;
    /* Cold starts: replicas that began loading after the warm-up, and the mean GPUs the
     * fleet held (loading, serving or draining) */
    uint64_t cold_starts;
    double gpus_held_mean;
} serving_group_stats;
typedef struct serving_fleet serving_fleet;

/* What a fleet tells its owner, always from inside an engine event. */
typedef struct fleet_events {
    void *owner;
    /* A request ended on one of the fleet's replicas: finished, or dropped by it. */
    void (*done)(void *owner, llm_request *q, bool dropped, unsigned fleet);
    /* A replica became ready to take requests. */
    void (*ready)(void *owner);
    /* A request that was on a replica the pool took away (its cache is lost): it keeps
     * its arrival time, and the owner routes it again. */
    void (*reroute)(void *owner, llm_request *q);
    /* With a prefix cache: the request's prefix, owned by the owner, which the fleet
     * and its replicas read at routing, admission, prefill and the end. */
    struct fleet_prefix *(*prefix)(void *owner, llm_request *q);
} fleet_events;

/* What a fleet with a prefix cache knows of a request. */
typedef struct fleet_prefix {
    prefix_chain chain;
} fleet_prefix;

/* A fleet's prefix caching (block 0: none).  Each replica keeps a cache of whole
 * blocks (models/prefix_cache.h): a prompt's blocks join it, shared, as soon as its
 * prefill has computed them, and a request's answer when it is done; a request skips
 * the longest prefix the replica holds when it is admitted to a batch, but for its
 * last token, which gives the first output token (as engines recompute it)
 * (replica_config.prefix).  The running sequences' shared blocks count once; the
 * blocks no sequence uses live in the memory the sequences leave free, evicted least
 * recently used as they need it. */
typedef struct fleet_prefix_config {
    unsigned block;            /* tokens a block */
    double affinity_bound;     /* ROUTE_PREFIX_AFFINITY: a replica qualifies while its
                                  requests + 1 <= ceil((1 + bound) x (fewest + 1)) */
} fleet_prefix_config;

/* How a fleet picks a replica for a request. */
typedef struct fleet_routing {
    routing_policy policy;
    route_fn custom;           /* with ROUTE_CUSTOM */
    void *custom_context;
    gsl_rng *rng;              /* the power-of-two choices' stream; the owner's */
    const char *workload;      /* names the workload in messages */
} fleet_routing;

typedef struct serving_fleet_config {
    serving_group_config group; /* its pool, replicas, bounds, sharing, round trips */
    unsigned index;             /* its group: 0 the workload's own pool (serving.h) */
    fleet_routing routing;
    fleet_events events;
    fleet_prefix_config prefix;
    double warmup_s;            /* requests arriving before it are not counted served */
    uint64_t seed, replication; /* the noisy hosts' random streams */
} serving_fleet_config;

/* A fleet with no replica yet (serving_fleet_start orders them).  Never NULL: out of
 * memory is fatal, like every allocation of a run. */
serving_fleet *serving_fleet_create(sim_engine *engine, const serving_fleet_config *config);

/* Its first replicas: at once without a pool, else ordered from it. */
void serving_fleet_start(serving_fleet *f);

/* Frees the fleet and its replicas (NULL is fine).  Requests still on them live in the
 * owner's memory and are not touched. */
void serving_fleet_free(serving_fleet *f);

/* Replicas taking requests now. */
unsigned serving_fleet_active(const serving_fleet *f);

/* Requests the replica taking requests with the fewest holds; UINT_MAX with none. */
unsigned serving_fleet_least_load(const serving_fleet *f);

/* True when every replica taking requests holds at least `threshold` of them. */
bool serving_fleet_saturated(const serving_fleet *f, unsigned threshold);

/* For tests: with on, every routing and overflow test also looks at every replica, as
 * the fleet did before it ranked them, and a different answer is fatal (a bug: a load
 * that changed unreported).  Off by default; process-wide. */
void serving_fleet_check_rankings(bool on);

/* A hint for speed, which changes nothing: asks the memory system for what routing the
 * next request to f would read, where the routing's choice is known before the request
 * (the least loaded replica); nothing otherwise. */
void serving_fleet_fetch_route(const serving_fleet *f);

/* Gives the request to a replica chosen by the routing policy.  1 when enqueued; 0 with
 * no replica active (the request stays the caller's); -1 when a custom policy failed,
 * with the message in err (the caller stops the run). */
int serving_fleet_route(serving_fleet *f, llm_request *q, char *err, size_t err_size);

/* The same for a request prefilled elsewhere whose cache came with it (disaggregated
 * serving's decode stage: replica_enqueue_prefilled). */
int serving_fleet_route_prefilled(serving_fleet *f, llm_request *q, char *err, size_t err_size);

/* A prefilled request's replica, chosen before its cache travels, by its creation
 * serial (what it held of the prompt is the request's brought_held). */
typedef struct fleet_binding {
    uint64_t serial;
} fleet_binding;

/* Chooses q's replica by the routing policy, as serving_fleet_route_prefilled would, and
 * binds q to it: counted in its load until delivered, q->brought_held the tokens it
 * holds.  1 with *b set; 0 with no replica active (or the run stopped); -1 as above. */
int serving_fleet_bind(serving_fleet *f, llm_request *q, fleet_binding *b, char *err,
                       size_t err_size);
/* The cache arrived: q to its bound replica (replica_enqueue_prefilled); false, q still
 * the caller's, when that replica is gone (lost or given back meanwhile, its cache with
 * it: wherever q goes, admission pulls what its replica lacks of brought_held). */
bool serving_fleet_deliver(serving_fleet *f, const fleet_binding *b, llm_request *q);
/* The cache will not arrive (dropped on the way): the binding goes. */
void serving_fleet_unbind(serving_fleet *f, const fleet_binding *b, llm_request *q);

/* The replicas wanted, ordered or running, clamped by nothing: the caller applies the
 * bounds (autoscale_decide).  Orders or drains at once to meet it. */
void serving_fleet_set_target(serving_fleet *f, unsigned replicas);
unsigned serving_fleet_target(const serving_fleet *f);

/* The fleet as an autoscaler sees it at now: replicas by state, its bounds, and the
 * busy and cache shares of its active replicas since the previous call (which starts
 * the next interval).  pending and spilled are the owner's to fill; outstanding counts
 * the requests on the replicas. */
autoscale_view serving_fleet_observe(serving_fleet *f, double now);

/* ---- statistics ---- */

/* Starts the fleet's statistics afresh at the end of the warm-up. */
void serving_fleet_restart_stats(serving_fleet *f, double now);

/* Sums over the fleet's replicas (gone ones included) of the busy, batch and kv
 * integrals since the previous call, the replica-seconds (ready replicas) over the same
 * span, and the GPU work by phase the replicas finished in it (seconds of one of each
 * replica's devices): one time bucket. */
void serving_fleet_bucket_sums(serving_fleet *f, double now, double sums[3], double *replica_s,
                               perf_phases *work);

/* The fleet over the run, after the warm-up, to end_s. */
serving_group_stats serving_fleet_stats(const serving_fleet *f, double end_s);

/* Largest batch since the warm-up, largest cache share over the run, and the events
 * its replicas' iterations took, over every replica it had. */
double serving_fleet_batch_max(const serving_fleet *f);
double serving_fleet_kv_max(const serving_fleet *f);
uint64_t serving_fleet_replica_events(const serving_fleet *f);
/* Bytes its replicas' prefix caches and its prefix directory hold (0 without them). */
size_t serving_fleet_prefix_memory_bytes(const serving_fleet *f);

#endif
