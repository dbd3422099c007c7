/* LLM inference serving: a workload of requests arriving at a fleet of replicas of one
 * model, routed by a policy, batched continuously (models/replica.h), with a network
 * round trip to the users, and the latencies users see.
 */
#ifndef FLEETSIM_MODELS_SERVING_H
#define FLEETSIM_MODELS_SERVING_H

#include <stdint.h>

#include "models/kv_link.h"
#include "models/lora.h"
#include "models/serving_fleet.h"
#include "models/sessions.h"
#include "models/trace.h"
#include "models/traffic.h"
#include "sim/dist.h"
#include "sim/histogram.h"
#include "sim/stat.h"

/* One finished or dropped request, as users saw it (times in seconds; NaN where they do
 * not apply: a dropped request has no first token). */
typedef struct request_record {
    const char *workload;
    uint64_t replication, id;
    double arrival_s, admitted_s, first_token_s, finish_s;
    unsigned prompt, output;
    double ttft_s, tpot_s, e2e_s, rtt_s;
    bool dropped;
} request_record;

typedef void (*request_record_fn)(void *context, const request_record *record);

/* A workload's groups of replicas: its own pool (group 0) and up to
 * SERVING_GROUPS_MAX - 1 more (serving_config.groups). */
enum { SERVING_GROUPS_MAX = 8 };

/* What a group of replicas does for its workload (models/serving.c: route):
 * - serve: takes new requests beside the own pool (prefills them when the workload has
 *   a decode group).  A new request goes to the front pool (the own pool or a serve
 *   group) whose least loaded ready replica holds the fewest requests, the earlier
 *   pool on a tie, and within it by the pool's routing: a gateway over heterogeneous
 *   pools that joins the shortest queue;
 * - decode: disaggregated serving's decode side; a prefilled request's cache goes to
 *   the decode group chosen the same way;
 * - overflow: a cascade in the order given: a new request goes to the first overflow
 *   group when every front pool is saturated, to the second when the first is
 *   saturated too, and so on; the last takes what reaches it (with decode groups it is
 *   prefilled and decoded there, whole). */
typedef enum serving_role { ROLE_SERVE, ROLE_DECODE, ROLE_OVERFLOW } serving_role;

/* "serve", "decode", "overflow" */
const char *serving_role_name(serving_role role);

/* A group's name in messages: "the decode pool", or "the overflow pool 2" for the nth
 * (from 1) of `of` groups of its role. */
void serving_role_label(serving_role role, unsigned nth, unsigned of, char *out, size_t size);

typedef struct serving_group {
    serving_role role;
    serving_group_config fleet;  /* its pool, replicas, bounds, sharing, round trips */
    routing_policy routing;      /* among its replicas */
    route_fn custom_route;       /* with ROUTE_CUSTOM */
    void *route_context;
    /* saturated when every ready replica holds this many requests or more, or none is
     * ready (0: its replicas' max_batch): the group after it in the overflow cascade
     * then takes new requests */
    unsigned threshold;
    /* a serve group beside decode groups: the links its prefilled caches cross (the own
     * pool's: serving_config.link) */
    kv_link_spec link;
} serving_group;

typedef struct serving_config {
    const char *name;          /* names the random streams "<name>.arrivals", ... */
    const char *streams;       /* or this, when not NULL (common random numbers) */
    /* The replicas of the workload's own pool (its group 0; see serving_group_config). */
    unsigned replicas;
    replica_config replica;
    gpu_pool *pool;
    unsigned min_replicas, max_replicas;
    const autoscaler_spec *autoscaler;
    const char *pool_name;
    const sharing_spec *sharing;
    const noisy_spec *noisy;
    unsigned units_per_gpu;
    /* The own pool spills past this: saturated when every replica there holds this many
     * requests or more, or none is ready (0: max_batch; see serving_group.threshold). */
    unsigned overflow_threshold;
    /* The workload's other groups of replicas, in order (NULL with ngroups 0): more
     * pools serving it, disaggregated serving's decode pools, overflow pools
     * (serving_group).  With a decode group, the own pool and the serve groups prefill
     * and make the first token, and the prompt's cache (kv_bytes_per_token each) crosses
     * a link of the prefilling pool's to a decode replica, which admits it when its
     * cache has room and makes the other tokens. */
    const serving_group *groups;
    unsigned ngroups;
    kv_link_spec link;
    double kv_bytes_per_token;
    routing_policy routing;
    route_fn custom_route;     /* with ROUTE_CUSTOM */
    void *route_context;
    sim_dist interarrival;     /* seconds; unused with a trace */
    sim_dist prompt_tokens;    /* drawn, rounded, at least 1 */
    sim_dist output_tokens;
    /* Trace replay instead of interarrival: arrivals (and lengths, unless
     * lengths_from_trace is false) come from the trace, looped if asked, each row kept
     * with probability sample (0 or 1: every row).  NULL: no trace. */
    const trace_options *trace;
    /* A profile, MMPP or closed-loop process instead of interarrival (NULL: none). */
    const traffic_spec *traffic;
    bool lengths_from_trace;
    bool loop;
    double sample;
    sim_dist rtt_s;            /* client round trip, added to what users see */
    /* Speculative decoding (replica.spec_k > 0): each request's acceptance, drawn as it
     * arrives from its own stream ("<name>.acceptance", so the other streams draw alike
     * with and without it) and held in [0, 1]; its rounds yield perf_speculative_tokens
     * of it. */
    sim_dist spec_acceptance;
    double spike_probability;  /* a request's round trip also meets a spike ... */
    sim_dist spike_s;          /* ... of this extra delay (rare congestion, retransmits) */
    double warmup_s;
    double slo_ttft_s, slo_tpot_s, slo_e2e_s; /* 0 = no such objective */
    uint64_t max_arrivals;     /* 0 = no limit */
    /* Prefix caching, off when prefix_block is 0 (models/serving_fleet.h:
     * fleet_prefix_config): each replica of every pool keeps the blocks of the
     * prompts it computed and the answers it served and a prompt that begins with them
     * skips their prefill (a decode replica shares the caches it is sent, and is
     * chosen when a prefill ends, so that the link carries only what it lacks);
     * ROUTE_PREFIX_AFFINITY looks for the longest within affinity_bound.  With a
     * trace's block ids (trace->blocks_column) the
     * cache is keyed by them: prefix_block must be the trace's block_tokens, and no
     * system prompt is prepended (the ids name the whole prompt). */
    unsigned prefix_block;     /* tokens a block */
    double affinity_bound;
    /* NULL, or the system prompts every request begins with (one drawn by weight from
     * the stream "<name>.system", or once a session), before its drawn prompt */
    const system_prompt *system_prompts;
    unsigned nsystem_prompts;
    /* NULL, or each arrival is a session of turns (models/sessions.h), its turns'
     * answers drawn from output_tokens; not with a trace or closed-loop users. */
    const session_spec *sessions;
    /* Cold starts and scale to zero (models/serving_fleet.h: load_s, tenants): a replica
     * ordered during the run loads for load_s; with scale_to_zero_s > 0 the own fleet
     * starts with none, loads `replicas` when a request comes to find none, and gives
     * them all back once no request has been in the workload for scale_to_zero_s.
     * tenants: the own pool's arbiter when other models share it (else NULL). */
    double load_s;
    double scale_to_zero_s;
    struct pool_tenants *tenants;
    /* NULL, or multi-LoRA (replica.lora_slots > 0, likewise the overflow pool's): each
     * request's adapter drawn from this popularity as it arrives, from its own stream
     * ("<name>.adapter"); borrowed.  Not with disaggregated serving. */
    const lora_popularity *lora;
    request_record_fn on_request; /* NULL, or called for every request that ends */
    void *request_context;
    uint64_t seed, replication;
} serving_config;

typedef struct serving_stats {
    uint64_t arrived, completed, dropped, slo_met;
    uint64_t over_context;     /* dropped on arrival: a prompt that leaves no room in the
                                  model's context for a token (counted in dropped too) */
    uint64_t truncated;        /* whose output was cut where the context ends, as engines
                                  end a generation at their maximum length */
    double output_tokens, prompt_tokens;
    sim_stat ttft_s, tpot_s, e2e_s, queue_wait_s;
    sim_histogram ttft_hist_s, tpot_hist_s, e2e_hist_s;
    /* Disaggregated serving, of completed requests: TTFT's parts (queue: arrival to
     * prefill admission; prefill: admission to the first token; TTFT adds the round
     * trip), the cache's transfer (first token to its arrival at the decode pool) and
     * its wait there for a decode replica's admission. */
    sim_stat ttft_queue_s, ttft_prefill_s, transfer_s, decode_queue_s;
    sim_histogram transfer_hist_s;
    double transfer_bytes;
    uint64_t transfers;
    /* With prefix caching, of completed requests: those that found some of their prompt
     * cached, and the prompt tokens found (whose prefill was skipped) */
    uint64_t prefix_hits;
    double prefix_cached_tokens;
    /* ... of those, fetched from the tiers below GPU memory (by the replicas' tier
     * index: the tiers given, in the order host, disk, shared) */
    double prefix_fetched_tokens[PREFIX_TIERS_MAX];
    sim_stat acceptance;       /* speculating: the acceptance drawn for each arrival */
    /* Requests that arrived after the warm-up to find no replica ready (a cold start,
     * or every replica lost), and how long they waited for one */
    sim_stat cold_wait_s;
    lora_stats lora;           /* multi-LoRA: what the replicas saw (models/lora.h) */
} serving_stats;

/* One group's part of a time bucket (serving_group_get_stats' order: the own pool, then
 * serving_config.groups). */
typedef struct serving_group_bucket {
    double busy, batch, kv; /* means over its replicas ready in the bucket; NaN if none */
    double replicas;        /* its ready replicas, mean over the bucket */
    perf_phases work;       /* its GPU work by phase, seconds of one device a replica */
    double output_tokens;   /* output tokens of the requests it served */
    double responses;       /* the requests it served (ended there) */
} serving_group_bucket;

/* One time bucket's measurements: every request that arrived, completed or was dropped
 * in it (warm-up included), and each group's replica means over it. */
typedef struct serving_bucket {
    uint64_t arrived, completed, dropped;
    double output_tokens;
    sim_stat ttft_s, tpot_s, e2e_s, queue_wait_s;
    sim_histogram ttft_hist_s, e2e_hist_s;
    serving_group_bucket groups[SERVING_GROUPS_MAX];
} serving_bucket;

typedef struct serving serving;

/* Adds every problem of c to p (models/config_problems.h), its groups' replicas
 * included (replica_config_check): the distributions, routing and scaling, and what
 * the features need of each other (models/serving_check.c).  A configuration with none
 * is one serving_create accepts. */
void serving_config_check(const serving_config *c, config_problems *p);

/* NULL with a message in err for an invalid configuration: every problem
 * serving_config_check finds, in one line. */
serving *serving_create(sim_engine *engine, const serving_config *config, char *err,
                        size_t err_size);
void serving_start(serving *s);
/* NULL is fine. */
void serving_free(serving *s);

/* A trace that failed during the run ("file:row N: ..."), or NULL. */
const char *serving_error(const serving *s);

/* Statistics of requests arriving after the warm-up; replica time averages since it. */
const serving_stats *serving_get_stats(const serving *s);
/* Means over replicas of busy fraction, batch size and cache reservation, to end_s. */
double serving_utilization(const serving *s, double end_s);
double serving_batch_mean(const serving *s, double end_s);
double serving_kv_utilization(const serving *s, double end_s);
/* Closes the bucket that started at the previous call (or at creation) at now, and
 * starts the next.  The result stays valid until the next call. */
const serving_bucket *serving_bucket_close(serving *s, double now);

/* A group's replicas over the run (after the warm-up): group 0 is the workload's own
 * pool, then serving_config.groups in their order (serving_group_stats:
 * models/serving_fleet.h). */
unsigned serving_groups(const serving *s);
serving_group_stats serving_group_get_stats(const serving *s, unsigned group, double end_s);

/* Sessions begun and ended after the warm-up, their turns, those in progress (all 0
 * without sessions). */
sessions_stats serving_sessions_stats(const serving *s);

/* Largest share of the cache any replica committed. */
double serving_kv_max(const serving *s);

/* Preemptions over all replicas since the start. */
uint64_t serving_preemptions(const serving *s);

/* Largest batch any replica held since the warm-up. */
double serving_batch_max(const serving *s);
uint64_t serving_replica_events(const serving *s);
size_t serving_memory_bytes(const serving *s);

#endif
