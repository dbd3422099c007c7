/* The private state of a fleet, shared by the files of the fleet module only:
 * serving_fleet.c (replicas and the target), serving_fleet_route.c (choosing a
 * replica) and serving_fleet_stats.c (what the replicas did).  Everyone else uses
 * models/serving_fleet.h. */
#ifndef FLEETSIM_MODELS_SERVING_FLEET_INTERNAL_H
#define FLEETSIM_MODELS_SERVING_FLEET_INTERNAL_H

#include "models/gpu_hosts.h"
#include "models/prefix_directory.h"
#include "models/replica_totals.h"
#include "models/serving_fleet.h"
#include "sim/ranking.h"
#include "sim/rng.h"

typedef enum slot_state {
    SLOT_ORDERED,   /* GPUs asked for, not ready yet */
    SLOT_LOADING,   /* GPUs granted, the model's weights loading (a cold start) */
    SLOT_ACTIVE,    /* takes requests */
    SLOT_DRAINING,  /* finishes what it holds, takes nothing new (scale-in, spot notice) */
    SLOT_STATES
} slot_state;

/* One replica and the GPUs it runs on. */
typedef struct serving_slot {
    /* What routing and a change of load read come first, in one cache line (a large
     * fleet's slot is out of the cache when its replica's load changes) */
    serving_fleet *fleet;
    replica *r;            /* NULL while ordered */
    unsigned outstanding;  /* its replica's requests, as on_load last told, and those
                            * bound for it whose caches are on their way */
    unsigned inbound;      /* ... the bound ones (serving_fleet_bind) */
    uint32_t rank_id;      /* its id in the fleet's rankings while ACTIVE, else
                            * SIM_RANKING_NONE */
    unsigned unit;         /* the pool unit of its first GPU */
    double inbound_tokens; /* ... and their tokens left to make */
    slot_state state;
    int64_t request;       /* the pool's request number; -1 without a pool */
    double marks[3];       /* life busy, batch, kv integrals at the bucket's start */
    perf_phases work_mark; /* the replica's GPU work by phase at the bucket's start */
    double tick_mark;      /* life busy integral at the last autoscaler evaluation */
    double tick_kv_mark;   /* life kv integral, the same */
    double tick_from_s;    /* ... and when it was taken (or the replica started) */
    uint64_t serial;       /* creation order: scale-in drains the newest first */
    gpu_host *host;        /* NULL when the GPU is neither shared nor noisy */
    unsigned member;       /* the replica's unit on its host */
    sim_event_id release_check; /* pending on_release_check, or 0 */
    sim_event_id loaded;   /* LOADING: the end of the load, pending */
    prefix_cache *cache;   /* NULL without prefix caching */
    prefix_tiers tiers;    /* the cache's tiers below GPU memory, its own (host, disk)
                            * and the fleet's (shared) */
    prefix_directory_member listing; /* the cache's place in the fleet's directory */
} serving_slot;

struct serving_fleet {
    sim_engine *engine;
    serving_group_config group; /* the configuration (serving_fleet_config's fields) */
    unsigned index;
    fleet_routing routing;
    fleet_events events;
    fleet_prefix_config prefix;
    double warmup_s;
    uint64_t seed, replication;
    serving_slot **slots;  /* every slot, in creation order */
    size_t nslots, cap;
    serving_slot **active; /* the slots taking requests, for routing, in creation order */
    unsigned nactive;
    unsigned in_state[SLOT_STATES]; /* slots in each state, kept as states change, so
                                     * that set-up is linear in the replicas */
    unsigned next_replica; /* round robin */
    uint64_t next_serial;
    unsigned target;       /* replicas wanted, ordered or active */
    bool retry_scheduled;
    sim_timeavg ready, life_ready;        /* replicas active or draining */
    double ready_mark;                    /* life_ready's integral at the bucket's start */
    /* replicas that are gone: their areas since the warm-up, and since the bucket began */
    replica_totals gone;
    double gone_bucket[3];
    perf_phases gone_work; /* GPU work of replicas gone in the bucket, since its start */
    uint64_t served, losses;
    gpu_hosts *hosts;      /* the pool's shared or noisy GPUs (NULL: whole, quiet) */
    bool owns_hosts;       /* false: the pool's, shared with the other models on it */
    replica_load *loads;   /* for a custom routing policy */
    size_t nloads;
    unsigned *outstanding; /* for prefix affinity: each active replica's requests */
    size_t noutstanding;
    bool started;          /* serving_fleet_start has ordered the first replicas */
    prefix_cache *shared_tier; /* the prefix caches' tier its replicas share, or NULL */
    double last_used_s;    /* a request routed or finished last (pool_tenants) */
    uint64_t cold_starts;  /* loads begun after the warm-up */
    sim_timeavg held;      /* GPUs held: slots loading, active or draining */
    prefix_directory *directory; /* with prefix affinity: who caches what */
    unsigned *cached;      /* for prefix affinity: tokens cached, by directory id */
    size_t ncached;
    serving_slot **listed; /* for prefix affinity: the slot of each directory id, or NULL */
    size_t nlisted;
    /* The active replicas by requests outstanding (always: routing, the overflow test)
     * and by tokens outstanding (shortest_tokens only), ties by creation order as the
     * active list has them; kept as loads change (serving_fleet_load_changed), so that
     * choosing the least loaded is O(log replicas), not a look at each. */
    sim_ranking by_requests, by_tokens;
    bool rank_tokens;
    /* by rank id: the slot, and its replica beside it so that the next arrival's replica
     * is known from one line (serving_fleet_fetch_route) */
    struct ranked_entry {
        serving_slot *slot;
        replica *r;
    } *ranked;
    size_t ranked_cap;
    /* by rank id, with prefix affinity: the replica's id in the prefix directory, so that
     * a look at every replica reads the ranking's array and this one alone */
    unsigned *rank_listing;
    size_t rank_listing_cap;
    sim_ids rank_ids;
    replica_shapes *shapes; /* decode costs by batch size at full speed, for all its
                             * replicas */
    uint64_t requests_held; /* requests on all its replicas, draining ones too */
};

/* A replica's on_kv (slot: its serving_slot): its prefix cache, if any, keeps only what
 * the running sequences leave free of kv_share (serving_fleet_route.c). */
void serving_fleet_kv_changed(void *slot, double kv_share);

/* A replica's on_load (slot: its serving_slot): its places in the rankings and the
 * fleet's count follow its load (serving_fleet_route.c). */
void serving_fleet_load_changed(void *slot);

/* The active slot enters the rankings; leaves them (serving_fleet_route.c). */
void serving_fleet_rank(serving_fleet *f, serving_slot *sl);
void serving_fleet_unrank(serving_fleet *f, serving_slot *sl);

/* A draining replica gives its GPUs back once it holds nothing (checked in an event of
 * its own, now). */
void serving_fleet_release_check(serving_slot *sl);

/* A replica's load as routing counts it: what it holds, and the requests bound for it
 * whose caches are on their way (serving_fleet_bind). */
static inline unsigned slot_load(const serving_slot *sl)
{
    return replica_outstanding(sl->r) + sl->inbound;
}

static inline double slot_load_tokens(const serving_slot *sl)
{
    return replica_outstanding_tokens(sl->r) + sl->inbound_tokens;
}

/* ... with the tokens a fast decode run has made by now (replica_outstanding_tokens_now) */
static inline double slot_load_tokens_now(const serving_slot *sl)
{
    return replica_outstanding_tokens_now(sl->r) + sl->inbound_tokens;
}

#endif
