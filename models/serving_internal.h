/* What serving.c (requests: arrivals, records, statistics) and serving_fleet.c (the
 * replicas: slots on GPU pools, routing, autoscaling, overflow, losses) share.  Not a
 * public header: other modules use models/serving.h. */
#ifndef FLEETSIM_MODELS_SERVING_INTERNAL_H
#define FLEETSIM_MODELS_SERVING_INTERNAL_H

#include "models/serving.h"
#include "sim/rng.h"

typedef enum slot_state {
    SLOT_ORDERED,   /* GPUs asked for, not ready yet */
    SLOT_ACTIVE,    /* takes requests */
    SLOT_DRAINING,  /* finishes what it holds, takes nothing new (scale-in, spot notice) */
} slot_state;

struct serving_group;

/* A physical GPU whose units (MIG slices, time-slicing tenants) are shared, or whose
 * host is noisy: created when a replica first runs on it, freed with its last one. */
typedef struct gpu_host {
    unsigned gpu;          /* the pool's unit number / units_per_gpu */
    gpu_share *share;
    noisy_process *noise;  /* NULL without noisy neighbours */
    gsl_rng *rng;
    unsigned attached;     /* replicas on it now */
} gpu_host;

/* One replica and the GPUs it runs on. */
typedef struct serving_slot {
    serving *s;
    struct serving_group *group;
    slot_state state;
    replica *r;            /* NULL while ordered */
    int64_t request;       /* the pool's request number; -1 without a pool */
    double marks[3];       /* life busy, batch, kv integrals at the bucket's start */
    double tick_mark;      /* life busy integral at the last autoscaler evaluation */
    double tick_kv_mark;   /* life kv integral, the same */
    double tick_from_s;    /* ... and when it was taken (or the replica started) */
    uint64_t serial;       /* creation order: scale-in drains the newest first */
    gpu_host *host;        /* NULL when the GPU is neither shared nor noisy */
    unsigned member;       /* the replica's unit on its host */
    sim_event_id release_check; /* pending on_release_check, or 0 */
} serving_slot;

typedef struct serving_group {
    serving *s;
    unsigned index;
    serving_group_config config;
    serving_slot **slots;  /* every slot, in creation order */
    size_t nslots, cap;
    serving_slot **active; /* the slots taking requests, for routing */
    unsigned nactive;
    unsigned next_replica; /* round robin */
    uint64_t next_serial;
    unsigned target;       /* replicas wanted, ordered or active */
    bool retry_scheduled;
    double last_scale_out_s, low_since_s; /* low_since_s NaN: not below target */
    sim_timeavg ready, life_ready;        /* replicas active or draining */
    double ready_mark;                    /* life_ready's integral at the bucket's start */
    /* replicas that are gone: their areas since the warm-up, and since the bucket began */
    double gone_busy, gone_batch, gone_kv, gone_bucket[3];
    uint64_t gone_kv_preemptions, gone_events;
    double gone_batch_max, gone_kv_max;
    uint64_t served, losses;
    gpu_host **hosts;      /* by physical GPU number; NULL where none is in use */
    size_t nhosts;
    uint64_t host_opens;   /* hosts opened so far: names their noise streams */
    uint64_t spilled;      /* requests that found the workload's own pool saturated while
                              this (overflow) group had no replica, since its last
                              evaluation: they call for a first replica */
} serving_group;

/* Requests in flight come from a free list: memory follows the requests in the system,
 * not the number served. */
typedef struct request_block {
    struct request_block *next;
    llm_request items[256];
} request_block;

struct serving {
    sim_engine *engine;
    serving_config config;
    serving_group groups[2];
    unsigned ngroups;
    serving_group_config own; /* group 0's configuration, gathered from config */
    llm_request *pending_head, *pending_tail; /* no replica ready to take them */
    unsigned npending;
    gsl_rng *arrival_rng, *length_rng, *route_rng, *rtt_rng, *sample_rng;
    trace_reader *trace;
    traffic_state traffic;
    trace_record next_record;   /* the trace row whose arrival is scheduled */
    double trace_offset_s;      /* added to trace times: loops so far */
    double trace_last_s;        /* time of the last row read, offset included */
    uint64_t trace_pass_rows;   /* rows read in the current pass */
    char error[512];
    replica_load *loads;        /* for a custom routing policy */
    size_t nloads;
    llm_request *free_list;
    request_block *blocks;
    size_t nblocks;
    uint64_t generated, next_id, users_scheduled;
    serving_stats stats;
    serving_bucket bucket;
    serving_bucket view;      /* the last closed bucket, handed out */
    double bucket_start_s;
};

/* serving.c: a request ended (finished, or dropped) on a replica of group g. */
void serving_record(serving *s, llm_request *q, bool dropped, const serving_group *g);

/* Event priorities at equal times: releases, retries and evaluations after the model's
 * own events. */
enum { FLEET_PRIORITY = 5 };

/* serving_fleet.c: slots, hosts, keeping the target */
void fleet_reconcile(serving_group *g);     /* orders or gives back to the target */
/* serving_autoscale.c: the group's evaluation, rescheduling itself */
void fleet_on_autoscale(sim_engine *e, void *group);
/* serving_route.c */
void fleet_flush_pending(serving *s);       /* pending requests to the ready replicas */
/* serving_fleet.c */
void fleet_init(serving *s);                /* groups from the configuration */
void fleet_start(serving *s);               /* initial replicas, autoscalers */
void fleet_free(serving *s);
void fleet_route(serving *s, llm_request *q); /* to a replica, or pending */
void fleet_restart_stats(serving *s, double now);
/* Sums over group g's replicas (gone ones included) of the busy, batch and kv integrals
 * since the last call, and the replica-seconds (ready replicas) over the same span. */
void fleet_bucket_sums(serving *s, unsigned g, double now, double sums[3], double *replica_s);
double fleet_batch_max(const serving *s);
double fleet_kv_max(const serving *s);
uint64_t fleet_replica_events(const serving *s);

#endif
