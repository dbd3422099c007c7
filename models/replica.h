/* A model replica with continuous (iteration-level) batching, on the event engine.
 *
 * Each iteration processes one token of every decoding sequence plus, within a token
 * budget, prompt tokens of newly admitted requests (whole prompts, or chunks when
 * chunked_prefill is set).  A request is admitted at an iteration boundary when the
 * batch has room and the key-value cache can take it; otherwise it waits, FIFO, and is
 * dropped if it waited longer than max_wait_s before admission.  Two cache policies:
 * KV_RESERVE admits a request only if its prompt and its whole output fit (the cache
 * never overflows); KV_PREEMPT admits it if its prompt fits and grows the cache a token
 * at a time, and when the cache is full preempts the most recently admitted sequence:
 * its cache is freed and it goes back to the head of the queue, to recompute its prompt
 * and the tokens it had generated when readmitted (vLLM's recompute preemption).
 * KV_SWAP preempts alike but copies the sequence's cache to the host tier and back when
 * it is readmitted, the replica stalling for each copy (models/kv_swap.h; vLLM's swap
 * preemption); with the host tier full it recomputes, as KV_PREEMPT.  An offload tier
 * (kv_device_tokens) instead extends the cache into host memory: what the running
 * sequences cache beyond the device's share is read over PCIe at every iteration.
 *
 * Fast by design: between batch changes (an admission, a finish, a prefill) the batch
 * decodes with a cost linear in the iteration index, so a run of n iterations is one
 * event whose length is a closed-form sum (models/perf.h: decode_cost_sum); an arrival
 * in the middle of a run cuts it at the iteration in progress.  With `reference` every
 * iteration is an event, for checking the fast path.
 *
 * Sharing.  A replica on a shared GPU (MIG slices, time-slicing, noisy neighbours) runs
 * slower by a factor on each side of the roofline (replica_set_speed), learns nothing of
 * why, and tells whoever shares its GPU when it starts and stops working (on_busy).  A
 * replica that loses its GPU gives its requests back (replica_evict).
 */
#ifndef FLEETSIM_MODELS_REPLICA_H
#define FLEETSIM_MODELS_REPLICA_H

#include <stdbool.h>
#include <stdint.h>

#include "models/config_problems.h"
#include "models/kv_swap.h"
#include "models/lora.h"
#include "models/perf.h"
#include "models/prefix_cache.h"
#include "models/prefix_tiers.h"
#include "sim/engine.h"
#include "sim/timeavg.h"

typedef struct llm_request {
    /* While it decodes in a replica's batch, generated and cached may lag the replica's
     * decode clock (models/replica_internal.h): they are current when the replica hands
     * the request back (done, preemption, eviction), and replica_outstanding_tokens
     * counts them current.  What a batch's iterations read and write of a running
     * sequence comes first, within the request's first cache line (the fleet's requests
     * start on one). */
    unsigned prompt, output;      /* tokens */
    unsigned prefilled, generated;
    unsigned target;              /* tokens to prefill: the prompt, plus after a
                                     preemption the tokens generated before it */
    unsigned cached;              /* tokens in the key-value cache */
    unsigned chunk;               /* prompt tokens in the iteration in progress */
    float spec_tokens;            /* the tokens its rounds yield in expectation (0: the
                                     replica's spec_tokens); a float keeps the request in
                                     its size */
    unsigned spec_rounds;         /* speculative decoding: the rounds it made
                                     (models/replica_spec.h) */
    unsigned preemptions;
    struct llm_request *next;     /* queue link */
    uint64_t synced;              /* while it decodes in a batch: the replica's decode clock
                                     when generated and cached were last brought up to date
                                     (models/replica_internal.h) */
    double arrival_s;
    double admitted_s, first_token_s, finish_s;
    bool swapped;                 /* its cache (cached tokens) is in the host tier */
    unsigned pinned;              /* with a prefix cache: its first tokens the cache
                                     holds, shared (a multiple of the block) */
    unsigned prefix_hit;          /* with a prefix cache: tokens found cached at its last
                                     admission */
    unsigned prefix_fetched[PREFIX_TIERS_MAX]; /* ... of them, those fetched from each of
                                                  its tiers below GPU memory */
    unsigned adapter;             /* multi-LoRA: its adapter (lora_slots 0: unused) */
    unsigned brought_held;        /* a cache brought from a prefill pool: the tokens of its
                                     prompt the replica it was bound to held then, which did
                                     not travel; admission pulls what of them is gone since
                                     (and clears it) */
    unsigned pulled;              /* ... the tokens that admission pulled */
    uint64_t id;
    /* The fleet's and disaggregated serving's (models/serving.c); a replica never
     * touches them. */
    unsigned unit;                /* first pool unit of the replica it was routed to */
    unsigned full_output;         /* its output, while a prefill replica makes token 1 */
    double prefill_admitted_s;    /* admitted by its prefill replica */
    double transferred_s;         /* its cache arrived at the decode pool */
} llm_request;

typedef enum kv_policy { KV_RESERVE, KV_PREEMPT, KV_SWAP } kv_policy;

typedef struct replica_config {
    /* What an iteration reads of its configuration comes first, up to the speculative
     * draft: the replica keeps it right after its run state, where the engine fetches
     * it ahead of an iteration's end (models/replica_internal.h).  The profile, which
     * only a cost computed anew reads, comes last. */
    unsigned max_batch;            /* sequences in a batch */
    unsigned max_tokens;           /* tokens per iteration (prefill budget) */
    bool chunked_prefill;
    double kv_capacity_tokens;
    double max_wait_s;             /* 0 = wait forever */
    kv_policy kv_policy;
    bool reference;                /* one event per iteration */
    /* Optional (NULL: none): called with true when the replica goes from idle to busy,
     * before its first iteration is planned, and with false when it goes idle (or is
     * evicted); not on every iteration.  It may call replica_set_speed on this replica
     * (the speed then applies to that first iteration) or on others, but must not
     * enqueue to or evict this replica. */
    void (*on_busy)(void *busy_context, bool busy);
    void *busy_context;
    /* Optional (NULL: none): called whenever an iteration starts and when the replica
     * goes idle, with the share of the key-value memory its running sequences hold then
     * (as replica_get_stats()->life_kv.value records it): the moments that memory
     * changes.  A decode run of several iterations in one event calls it at its end
     * too, before anything leaves or joins, with the share its last iteration started
     * with, which one event per iteration would have given, and within the run when
     * replica_kv_now asks, with its iteration in progress's.  A prefix cache gives back
     * there what the sequences took, as an engine's block pool evicts a cached block
     * when a running sequence allocates it.  It must not enqueue to or evict this
     * replica. */
    void (*on_kv)(void *kv_context, double kv_share);
    void *kv_context;
    /* Optional (NULL: none): called at the end of every call and event that changed
     * replica_outstanding (an arrival, an iteration's end, an eviction), after the
     * change, so that a fleet keeps its replicas ranked by load as they change instead
     * of asking each one at every routing; with on_load_tokens, at the end of every one
     * that may have changed replica_outstanding_tokens too (every iteration's end).
     * Nothing else changes them between two calls.  (Most iterations end with as many
     * requests as they began: a large fleet's routing state, out of the cache, is not
     * asked about those.) */
    void (*on_load)(void *load_context);
    void *load_context;
    bool on_load_tokens;
    const model_spec *model;
    const device_spec *device;
    precision prec;                /* the weights' */
    precision kv_prec;             /* the key-value cache's */
    unsigned tp;
    bool expert_parallel;          /* a mixture's experts held whole over the tp devices */
    double expert_skew;            /* busiest device's routed tokens over the mean (1: none) */
    bool attention_dp;             /* attention data parallel over the tp devices */
    /* KV_SWAP's host tier (kv_swap.h), resolved: its size, its copies' bandwidth and
     * latency, and the bytes a token of a sequence's cache takes on the whole replica */
    double host_kv_bytes, host_kv_bytes_per_s, host_kv_latency_s;
    double kv_bytes_per_token;
    /* The offload tier (host_kv's offload): 0, or the device's share of
     * kv_capacity_tokens, the rest being host memory: the cached tokens beyond it are
     * read over PCIe (host_kv_bytes_per_s) by every iteration's attention, which waits
     * for them. */
    double kv_device_tokens;
    /* Disaggregated decode with prefix caching: the link a brought cache's missing blocks
     * are pulled over at admission (replica_prefix_held), kv_bytes_per_token a token; the
     * next iteration waits for them (0 bandwidth: a pull costs nothing). */
    double pull_bytes_per_s, pull_latency_s;
    /* Speculative decoding (spec_k 0: none; models/replica_spec.h): each decode step of a
     * sequence is a round of the draft's spec_k steps and the target's verification of
     * spec_k + 1 positions (models/perf.h), also beside prompt chunks in a mixed
     * iteration.  The draft runs on the same devices in the same precisions (its memory
     * is the caller's to count in kv_capacity_tokens); without one, a lookup costing
     * spec_step_s a step.  Over sliding windows (the target's, the draft's) each
     * model reads and keeps its own window, and the draft's cache is counted per token
     * the target keeps.  Under KV_PREEMPT and KV_SWAP a round's k + 1 positions are
     * what a sequence's next step needs of the cache, and the cache grows by the tokens
     * the rounds make. */
    unsigned spec_k;
    const model_spec *draft;       /* borrowed; NULL: a lookup (n-gram, self-speculation) */
    double spec_step_s;
    double spec_tokens;            /* a round's tokens for a request that brings none */
    /* Multi-LoRA (lora_slots 0: none; models/lora.h): each request names one of
     * lora_adapters adapters; the replica holds lora_slots of them (their memory is the
     * caller's to take out of kv_capacity_tokens).  A request is admitted only when its
     * adapter is resident or a slot can take it (FIFO: the head waits, and those behind
     * it); a load (LRU among the slots no running sequence uses) delays the next
     * iteration by lora_load_s.  Every iteration adds the mixed-adapter kernels'
     * roofline: max(tokens x lora_flops_per_token at the compute peak, distinct adapters
     * x lora_bytes at the bandwidth), per device (the tp shard), with the profile's
     * efficiencies: constant over a decode run, so the fast path stays closed-form.
     * lora_stats, shared by a workload's replicas and borrowed, gathers what they see
     * (NULL: nothing).  With speculative decoding the kernels run on the target's
     * tokens (a round verifies spec_k + 1 a sequence), not the draft's: the draft is the
     * base model's, whatever adapter a request names (its acceptance is the caller's to
     * state).  A request enqueued prefilled (a decode pool's) needs its adapter here
     * too, loaded and counted as at any admission. */
    unsigned lora_slots, lora_adapters;
    double lora_load_s, lora_bytes, lora_flops_per_token;
    lora_stats *lora_stats;
    /* Optional (NULL: none; models/prefix_cache.h): the replica's prefix cache, borrowed
     * (it outlives the replica), and prefix_chain, a request's chain of blocks.  A
     * request admitted with nothing prefilled (new, or preempted to recompute) skips the
     * longest prefix of its first target - 1 tokens the cache holds at that moment (the
     * last token's computation gives the next token) and pins it; the whole blocks its
     * prefill computes join the cache, pinned, at the end of the iteration that computed
     * them, where the next admission finds them; it unpins them when it leaves.  A
     * request that brings its cache (replica_enqueue_prefilled, from a prefill pool)
     * shares its prompt's whole blocks the same way at admission, those the cache held
     * already and the rest inserted.  Pinned blocks count once in the replica's memory,
     * beside its sequences' own; the rest of the cache lives in what they leave free
     * (see on_kv).  The blocks of its answer are the caller's to insert when it is
     * done. */
    prefix_cache *prefix;
    const prefix_chain *(*prefix_chain)(void *prefix_context, llm_request *q);
    void *prefix_context;
    /* With a prefix cache, its tiers below GPU memory (n 0: none; models/prefix_tiers.h;
     * the caches borrowed): a request admitted to look up its prefix may fetch the
     * blocks beyond the GPU's hit from them, when quicker than its prefill (the next
     * iteration waits for the fetch); the blocks its prefill computes are stored in
     * them as they join the cache.  Its answer's blocks, as the GPU's, are the caller's
     * to store. */
    prefix_tiers prefix_tiers;
    /* Optional (NULL: each replica its own): the costs of a decode iteration by batch
     * size at full speed, shared by replicas of this configuration (replica_shapes_create
     * from the same model, device, profile, precisions, parallelism, batch limit and
     * speculation), so that a fleet evaluates the model once per batch size rather than
     * once per replica and batch size.  Borrowed: it outlives the replicas. */
    struct replica_shapes *shared_shapes;
    perf_profile profile;
} replica_config;

/* Decode-iteration costs by batch size, filled as batch sizes first occur (replica.c). */
typedef struct replica_shapes replica_shapes;
/* For replicas of configuration c, which outlives the table (its profile is the one the
 * costs are for, and replicas at full speed cost their prefills with it); NULL when out of
 * memory.  keep_prefill_costs: also keep a prefill's costs that depend on its token count
 * alone, by count (perf_token_memo: up to about 2 MB for a budget of 8,192 tokens), which
 * pays where the replicas that share the table leave it room in the caches. */
replica_shapes *replica_shapes_create(const replica_config *c, bool keep_prefill_costs);
/* NULL is fine. */
void replica_shapes_free(replica_shapes *t);

/* Called when a request completes (finish_s set) or is dropped (dropped true). */
typedef void (*replica_done_fn)(void *context, llm_request *request, bool dropped);

typedef struct replica replica;

/* Adds the problems of replicas configured as c (models/config_problems.h), their group
 * named `group` in the messages ("" for none): what replica_create refuses. */
void replica_config_check(const replica_config *c, const char *group, config_problems *p);

/* NULL if out of memory.  config is copied; model and device are borrowed.  A
 * configuration replica_config_check finds problems in is a caller's bug (fatal). */
replica *replica_create(sim_engine *engine, const replica_config *config,
                        replica_done_fn done, void *context);
/* Cancels its iteration in progress (so call it while the engine exists) and frees it;
 * the requests it holds are the caller's (replica_evict first to get them).  NULL-safe. */
void replica_free(replica *r);

/* A hint for speed, which changes nothing: asks the memory system for what an arrival
 * at r reads (replica_enqueue), so that in a large fleet, whose replicas are out of the
 * cache, it overlaps the request's drawing. */
void replica_fetch_ahead(const replica *r);

/* Hands a request to the replica at the current time. */
void replica_enqueue(replica *r, llm_request *request);

/* Hands over a request whose prompt was prefilled elsewhere and whose cache came with
 * it (disaggregated serving): it keeps prefilled == target, cached and generated (its
 * first token made), is admitted when the batch has room and the cache can take what
 * it brings and will grow to, and only decodes.  A preemption here makes it recompute
 * its prompt and tokens on this replica, as any preempted request. */
void replica_enqueue_prefilled(replica *r, llm_request *request);

/* With a prefix cache: the tokens of a prefilled request's prompt this replica's cache
 * holds now, whole blocks (0 without a prefix cache), for disaggregated serving that
 * picks the decode replica before the cache travels: they need not travel.  Nothing is
 * pinned (a request not yet admitted holds no memory, as in engines that allocate at
 * admission): set request->brought_held to them, and admission pulls over the pull link
 * (pull_bytes_per_s) whatever of them the cache has evicted meanwhile. */
unsigned replica_prefix_held(replica *r, llm_request *request);

/* Brings what on_kv was told up to the iteration in progress of a fast decode run (one
 * event per iteration tells it at every iteration's start): call it before reading a
 * prefix cache the replica's memory bounds, between two of its events. */
void replica_kv_now(replica *r);

/* Slows the replica down: compute_factor and memory_factor (finite, >= 1; 1 = the
 * device's own speed) multiply the compute-bound and memory-bound sides of the roofline
 * (the profile's compute and bandwidth efficiencies are divided by them; launches and
 * communication keep their time).  Each call replaces the factors of the last (they do
 * not compound).  Iterations that start after the call run at the new speed; the one
 * in progress keeps its own, so a fast decode run is cut at the iteration in progress
 * and the rest planned anew, as one event per iteration would see it.  Setting the
 * factors the replica already has changes nothing (no event is touched). */
void replica_set_speed(replica *r, double compute_factor, double memory_factor);

/* The factors last set (1, 1 at creation). */
void replica_get_speed(const replica *r, double *compute_factor, double *memory_factor);

/* The replica loses its GPU: cancels the iteration in progress and returns every
 * request it held, running ones first (in admission order) then waiting ones (in queue
 * order), as a list linked through ->next (NULL if none).  Their progress is lost (a
 * preempted GPU loses its key-value cache): prefill, tokens generated, cache, admitted_s
 * and first_token_s are reset, arrival_s kept, so each may be handed to
 * replica_enqueue again, here or elsewhere.  The replica is left idle and empty, its
 * time averages ending their busy spell now; `done` is not called for them.  The caller
 * owns the returned requests. */
llm_request *replica_evict(replica *r);

/* Load, for routing: requests waiting or running, and their remaining tokens (as of the
 * replica's last event: what on_load reports). */
unsigned replica_outstanding(const replica *r);
double replica_outstanding_tokens(const replica *r);

/* ... the remaining tokens now: a fast decode run's iterations ended by now counted, as
 * one event per iteration has counted them (equal to the above in the reference mode,
 * and between runs).  O(its batch). */
double replica_outstanding_tokens_now(const replica *r);

/* Time averages since creation (or the last restart): busy fraction, sequences in the
 * batch, key-value cache committed (reserved, or used under preemption) / capacity. */
typedef struct replica_stats {
    /* what every iteration updates first, then what only some features count */
    sim_timeavg busy, batch, kv;
    sim_timeavg life_busy, life_batch, life_kv; /* never restarted: for time series */
    /* after the warm-up, for the shares of the device's peaks: iterations run (each
     * reads the weights once), tokens they computed (prompt and output) and tokens of
     * cache their attention read */
    double iterations, tokens_computed, cache_tokens_read;
    /* GPU work by phase since creation (never restarted), seconds of each of the
     * replica's devices, for power (models/power.h) */
    perf_phases work;
    uint64_t iterations_events; /* engine events the replica used */
    uint64_t preemptions;       /* swapped or recomputed */
    kv_swap_stats swap;         /* the host tier's: swaps, and the offload tier's reads */
    /* speculative decoding, after the warm-up: sequence-rounds, the tokens they made, and
     * the seconds of the replica's iterations spent in the draft */
    double spec_rounds, spec_tokens, draft_s;
    /* the prefix cache's tiers, after the warm-up, in config.prefix_tiers' order */
    prefix_tier_stats prefix_tiers[PREFIX_TIERS_MAX];
} replica_stats;
const replica_stats *replica_get_stats(const replica *r);
void replica_restart_stats(replica *r, double now);

#endif
