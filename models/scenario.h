/* A scenario as the models see it: pools of servers and the workloads that use them,
 * with every value already checked and in base units (seconds, per second).  The Lua
 * loader (lua/) builds one from a scenario file; C programs and tests may fill one in
 * directly.
 */
#ifndef FLEETSIM_MODELS_SCENARIO_H
#define FLEETSIM_MODELS_SCENARIO_H

#include <stddef.h>
#include <stdint.h>

#include "models/carbon.h"
#include "models/catalog.h"
#include "models/cost.h"
#include "models/gpu_pool.h"
#include "models/gpu_share.h"
#include "models/gpu_tasks.h"
#include "models/training.h"
#include "models/noisy.h"
#include "models/perf.h"
#include "models/power.h"
#include "models/serving.h"
#include "models/traffic.h"
#include "sim/dist.h"

/* Limits that keep a run within one machine; the loader refuses values past them. */
#define SCENARIO_MAX_SERVERS 1000000u       /* servers in one pool */
#define SCENARIO_MAX_REPLICATIONS 100000u
#define SCENARIO_MAX_DURATION_S (100 * 365 * 86400.0) /* 100 years of 365 days ("100y") */
#define SCENARIO_MAX_BUCKETS 1000000u        /* duration / bucket */
#define SCENARIO_MAX_RATE_PER_S 1e9
#define SCENARIO_MAX_QUEUE_LIMIT 1000000000u

/* Where a pool sits, seen from its users: fs.site { rtt, spike_probability, spike }. */
typedef struct site_spec {
    sim_dist rtt_s;           /* owned; constant 0 when the pool names no site */
    double spike_probability;
    sim_dist spike_s;         /* owned */
} site_spec;

typedef struct pool_spec {
    char *name;
    char *gpu;        /* device name, or NULL for plain servers */
    site_spec site;
    /* Capacity: for a dedicated pool count is what it owns; a cloud or spot pool holds
     * count at the start and orders up to capacity.max.  capacity's distributions are
     * the ones below, borrowed. */
    unsigned count;   /* servers (or GPUs) */
    pool_capacity capacity;
    unsigned min;     /* cloud/spot: the autoscaler keeps at least this many */
    sim_dist provision_s, repair_s; /* owned */
    double *preemption_times_s;     /* owned */
    autoscaler_spec autoscaler;
    /* Sharing: with MIG or time-slicing each GPU is units_per_gpu units (slices, or
     * tenants' shares), and count, min and capacity count units; unit_device names the
     * catalog device one unit is (a MIG slice, a tenant's share of the memory), NULL
     * when a unit is a whole gpu. */
    sharing_spec sharing;           /* owned */
    unsigned units_per_gpu;         /* 1 without sharing */
    char *unit_device;
    bool has_noisy;
    noisy_spec noisy;               /* owned */
    scheduler_spec scheduler;       /* for training jobs */
    bool has_cost;
    cost_spec cost;                 /* owned */
    /* profile = "file.lua": a calibration; the pool's GPUs are then the catalog device
     * named by unit_device (measured peaks), modelled with this perf profile */
    char *profile_path;             /* owned; NULL without a profile */
    bool has_profile;
    perf_profile profile;
    power_spec power;               /* fs.power: cap, clock, host, PUE */
    carbon_spec carbon;             /* its grid and embodied carbon; owned */
} pool_spec;

typedef enum arrival_kind {
    ARRIVALS_POISSON,       /* exponential inter-arrival times */
    ARRIVALS_CONSTANT_RATE, /* evenly spaced arrivals */
} arrival_kind;

typedef struct arrival_spec {
    arrival_kind kind;
    double rate_per_s;
} arrival_spec;

/* fs.service: requests served one at a time per server, FIFO. */
typedef struct service_spec {
    char *name;
    arrival_spec arrivals;
    sim_dist service;     /* seconds; owned (released with the scenario) */
    size_t pool;          /* index into scenario.pools */
    size_t queue_limit;   /* 0 = no limit */
} service_spec;

/* A trial of one tensor parallelism against a workload's SLO (models/slo_tp.h). */
#define TP_TRIALS_MAX 8
typedef struct tp_trial {
    unsigned tp;
    double ttft_p99_s, tpot_p99_s, e2e_p99_s; /* NaN: none measured */
    double attainment;        /* the share of requests within every SLO */
    bool overloaded;          /* models/overload.h */
    bool meets;               /* every p99 within its limit, and not overloaded */
    double span_s;            /* simulated after the warm-up, in each replication */
    unsigned replications;
    bool whole_run;           /* the run's span and replications: its figures the run's */
} tp_trial;

/* A group of replicas serving a workload beside its own pool (inference_spec.groups). */
typedef struct workload_group {
    serving_role role;
    size_t pool, device;      /* indices into scenario.pools and scenario.catalog.devices */
    unsigned tp;
    bool tp_chosen;           /* tp was not given: the loader chose it */
    unsigned threshold;       /* saturated at (0: max_batch; serving_group.threshold) */
    routing_policy routing;   /* among its replicas: the workload's by default */
    route_fn custom_route;    /* routing = function: its context lives in scenario.runtime */
    void *route_context;
    double kv_capacity_tokens; /* of a replica, at tp */
    kv_link_spec kv_link;     /* a serve group beside a decode group: its caches' links
                                 (inference_spec.kv_link as its replicas send) */
} workload_group;

/* fs.inference: an LLM served by replicas of tp devices of a pool. */
typedef struct inference_spec {
    char *name;
    size_t pool;              /* index into scenario.pools (a pool with a gpu) */
    size_t model;             /* index into scenario.catalog.models */
    size_t device;            /* index into scenario.catalog.devices */
    bool has_engine;          /* engine = "...": the serving engine (index into
                               * scenario.catalog.engines; the loader sets the default);
                               * false: none applied (models/engine.h) */
    size_t engine;
    bool engine_default;      /* the scenario named none */
    memory_reserve reserve;   /* the engine's, for this model (engine_memory_reserve) */
    precision prec;           /* the weights' */
    precision kv_prec;        /* the key-value cache's (kv_precision) */
    bool expert_parallel;     /* a mixture's experts whole over the tp devices */
    double expert_skew;       /* the busiest device's routed tokens over the mean */
    bool attention_dp;        /* attention data parallel, experts whole over the tp devices */
    unsigned tp, replicas;
    bool tp_chosen;           /* tp was not given: the loader chose it (replica_tp.h) */
    /* with an SLO, the candidates the loader tried, in the throughput ranking's order
     * (models/slo_tp.h); 0: chosen for tokens/s per GPU alone */
    tp_trial tp_trials[TP_TRIALS_MAX];
    unsigned ntp_trials;
    double tp_untried_requests; /* > 0: none tried, a replication is this many requests */
    char *streams;            /* owned; names its random streams instead of name: workloads
                                 with the same draw the same traffic (common random
                                 numbers across compared pools); NULL: name */
    double kv_capacity_tokens; /* of a replica, at tp */
    arrival_spec arrivals;
    sim_dist prompt_tokens, output_tokens; /* owned */
    unsigned max_batch, max_tokens;
    bool chunked_prefill;
    routing_policy routing;
    route_fn custom_route;    /* with ROUTE_CUSTOM; its context lives in scenario.runtime */
    void *route_context;
    double max_wait_s;        /* 0 = none */
    bool has_rtt;             /* the workload names its own rtt; else its pool's site */
    sim_dist rtt_s;           /* owned */
    double slo_ttft_s, slo_tpot_s, slo_e2e_s; /* 0 = none */
    /* egress to users: bytes a token and a response (HTTP and JSON framing), or a
     * volume stated a day (egress_per_day > 0: then the others are 0) */
    double response_bytes_per_token, response_bytes, egress_bytes_per_day;
    bool reference;
    kv_policy kv_policy;      /* when the cache is full: queue (reserve), preempt or swap */
    host_kv_spec host_kv;     /* swap's host tier (models/kv_swap.h) */
    /* trace replay (arrivals = fs.trace { ... }) */
    bool has_trace;
    trace_options trace;      /* strings owned */
    bool loop;
    double sample;            /* fraction of rows kept */
    bool lengths_from_trace;  /* no prompt/output given: the trace's */
    trace_summary trace_summary;
    /* overflow_threshold: the own pool is saturated when every replica holds this many
     * requests (0: max_batch), and new requests go down the overflow groups */
    unsigned overflow_threshold;
    /* groups = { { role, pool, tp, routing, threshold }, ... }, or the shorthands
     * decode = { pool, tp, routing } and overflow = "pool" (overflow_tp): the workload's
     * other groups of replicas, in order (models/serving.h: serving_group; the helpers
     * in models/workload_groups.h); with a decode group, each request's prompt cache
     * crosses kv_link from the pool that prefilled it */
    workload_group groups[SERVING_GROUPS_MAX - 1];
    unsigned ngroups;
    kv_link_spec kv_link;
    /* arrivals = fs.profile, fs.diurnal, fs.mmpp or fs.closed_loop */
    bool has_traffic;
    traffic_spec traffic;     /* owned */
    /* prefix_cache = { block } (0: none), affinity_bound (routing "prefix_affinity"),
     * system_prompt = tokens or { { tokens, weight, groups }, ... }, sessions = { turns, think,
     * new_tokens } (arrivals then are sessions'; new_tokens by default the prompt's) */
    unsigned prefix_block;
    /* prefix_cache = { host, disk, shared }: its tiers below GPU memory, in that order
     * (size 0: absent; models/prefix_tiers.h), resolved per pool at run time */
    prefix_tier_spec prefix_tiers[PREFIX_TIERS_MAX];
    double affinity_bound;
    system_prompt system_prompts[SYSTEM_PROMPTS_MAX];
    unsigned nsystem_prompts;
    bool has_sessions, has_new_tokens;
    session_spec sessions;    /* owned */
    /* speculative = { k, acceptance, draft | draft_cost } (spec_k 0: none; replica.h):
     * the draft a catalog model (spec_draft, with has_spec_draft; its memory counted in
     * kv_capacity_tokens) or a lookup costing spec_step_s a step */
    unsigned spec_k;
    sim_dist spec_acceptance; /* owned; drawn per request, values in [0, 1] */
    bool has_spec_draft;
    size_t spec_draft;
    double spec_step_s;
    /* replicas = N (replicas_given; else the pool's GPUs / tp), scale_to_zero = idle
     * time (0: never), cold_start = a duration or { bandwidth, fixed } (has_cold_start;
     * else cold_start_s is derived from the weights, and applies only where the pool
     * is shared or the workload scales to zero: lua/cold_start_load.h) */
    bool replicas_given, has_cold_start;
    double scale_to_zero_s, cold_start_s;
    /* lora = { adapters, popularity, rank, slots, projections, load } (lora_slots 0:
     * none; models/lora.h): the replicas' slots taken out of kv_capacity_tokens (and
     * decode_... not: not with decode) by the loader */
    unsigned lora_slots, lora_rank, lora_projections;
    lora_popularity lora_popularity; /* owned */
    double lora_load_s;              /* 0: the adapter's bytes over the host link */
} inference_spec;

/* fs.gpu_tasks: a cluster trace of (fractional) GPU tasks replayed on its node list. */
typedef struct gpu_tasks_workload {
    char *name;
    gpu_tasks_spec spec;      /* owned */
} gpu_tasks_workload;

typedef struct scenario {
    char *name;
    char *description;    /* may be NULL */
    double duration_s;
    double warmup_s;      /* statistics ignore everything before it */
    double bucket_s;      /* time-series bucket */
    double horizon_s;     /* costs projected to this span (issue 18, 11); 0 = none */
    double discount_rate; /* a year, for the horizon's net present value; 0 = none */
    uint64_t seed;
    unsigned replications;
    pool_spec *pools;
    size_t npools;
    service_spec *services;
    size_t nservices;
    inference_spec *inferences;
    size_t ninferences;
    gpu_tasks_workload *gpu_tasks;
    size_t ngpu_tasks;
    size_t list_values;        /* values its lists hold (fs.empirical), for the budget */
    training_spec *trainings;         /* fs.training: one job each */
    size_t ntrainings;
    job_stream_spec *job_streams;     /* fs.job_stream */
    size_t njob_streams;
    catalog catalog;      /* devices and models as the scenario left them */
    /* What a scenario's functions need during the run (the Lua state, for a routing
     * function), released with the scenario by runtime_free; NULL when none. */
    void *runtime;
    void (*runtime_free)(void *runtime);
    /* Called as each replication starts (NULL: nothing to do), so that the functions
     * start every replication from the same state, whichever process runs it and
     * whatever ran before (the Lua sandbox makes its state again from the file). */
    void (*runtime_rewind)(void *runtime);
} scenario;

/* An empty scenario; release with scenario_release (NULL-safe, frees every string and
 * distribution the scenario holds). */
void scenario_init(scenario *sc);
void scenario_release(scenario *sc);
/* What one inference workload owns (its strings, distributions and trace). */
void inference_spec_release(inference_spec *w);

/* A workload's serving engine, or NULL when it has none. */
const engine_spec *inference_engine(const scenario *sc, const inference_spec *w);

/* Options compared: workloads that draw the same requests (or jobs), the same `streams`,
 * on different pools.  The first streams two inference workloads share so, or NULL. */
const char *scenario_compared_streams(const scenario *sc);
/* Whether any two inference workloads, or any two job streams, do: then the pools are
 * options compared, not parts of one fleet, and their costs do not add up. */
bool scenario_compares_pools(const scenario *sc);

/* What its engine keeps of each device's memory (NULL without an engine). */
const memory_reserve *inference_reserve(const inference_spec *w);

/* The perf profile of pool p's devices (d: the pool's unit device): its calibration or
 * the device's default, slowed as its power cap or clock says. */
perf_profile pool_profile(const pool_spec *p, const device_spec *d);

/* The perf profile its replicas on pool p run with: pool_profile with the engine's host
 * work (engine_apply_profile). */
perf_profile inference_profile(const scenario *sc, const inference_spec *w, size_t pool,
                               const device_spec *d);

/* The inter-arrival time distribution of an arrival process. */
sim_dist arrival_interarrival(const arrival_spec *arrivals);

/* Offered load of a pool in Erlangs: the sum over its workloads of arrival rate times
 * mean service time (INFINITY if a mean is infinite).  Under it the pool's queue stays
 * finite only if the load is below the number of servers. */
double scenario_offered_load(const scenario *sc, size_t pool);

/* "dedicated", "cloud" or "spot". */
const char *pool_kind_name(pool_kind kind);

/* "poisson" or "constant_rate". */
const char *arrival_kind_name(arrival_kind kind);

#endif
