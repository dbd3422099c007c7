/* The private state of a replica, shared by the files of the replica module only:
 * replica.c (admission, iterations, the decode runs), replica_cache_policy.c (what a full
 * cache does: queue, preempt, swap), replica_step.c (how a sequence decodes: a token, a
 * token over sliding windows, a speculative round), replica_addons.c (the prefix cache,
 * multi-LoRA and the offload tier) and replica_check.c (what a configuration must
 * satisfy).  Everyone else uses models/replica.h.
 *
 * A replica's iteration functions do not branch on the features it was configured with:
 * the cache policy is a table of operations chosen at creation, and the features that
 * hold something per sequence or add to an iteration's cost are add-ons, a list the
 * iteration walks, each with the hooks it needs (NULL where it has nothing to do). */
#ifndef FLEETSIM_MODELS_REPLICA_INTERNAL_H
#define FLEETSIM_MODELS_REPLICA_INTERNAL_H

#include <stddef.h>

#include "models/replica.h"

typedef enum phase { IDLE, PREFILL, DECODE } phase;

typedef struct replica_cache_policy replica_cache_policy;
typedef struct replica_addon replica_addon;
typedef struct replica_step replica_step;

/* Pure-decode iteration costs by batch size (fixed_s NaN: not computed yet), and the
 * draft's part of a speculative round likewise, for a profile: the one every replica
 * shares at full speed (the fleet's, read in cache by all), or the replica's own. */
struct replica_shapes {
    perf_decode_shape *decode, *draft;
    unsigned most; /* batch sizes 0..most */
    const perf_profile *profile; /* the configuration's that made it, which outlives it */
    /* a prefill iteration's costs that depend on its token count alone, kept by count
     * (NULL: none kept, or the profile has changed since: each evaluated afresh) */
    perf_token_memo *tokens;
};

/* A prefill iteration's speculating decoders: the rounds verified beside the chunks and
 * the context they read (0 without speculation). */
typedef struct replica_decoders {
    double verified, verified_context;
    double draft_context; /* ... as the draft reads it (its own window, or every token) */
} replica_decoders;

/* A decode run being planned: the context its first iteration reads, its growth a step
 * (reads, and the cache's own with sliding windows: in expectation for speculative
 * rounds, and the least any step grows it, a round making floor(E) tokens at least), the
 * same reads as a speculating draft makes them (its own window, or every token), and the
 * most iterations before a sequence finishes (or crosses a window). */
typedef struct replica_run_sums {
    double context, growth, cache_growth, least_cache_growth, fewest;
    double draft_context, draft_growth;
} replica_run_sums;

/* Sequences a replica's batch holds in the replica itself; more move to a block of
 * their own. */
#define REPLICA_INLINE_BATCH 16

/* The add-ons a replica may have: the prefix cache, multi-LoRA, the offload tier. */
#define REPLICA_ADDONS_MAX 3

/* What admitting the head of the queue would take from the prefix cache (all 0
 * without one): it takes its first `taken` tokens as prefilled and cached, shares its
 * first `pin` (`present` of them held already, the rest inserted), which moves
 * `unpinned` tokens of evictable cache into the pinned runs; fetching from the tiers
 * below takes `fetch`. */
typedef struct replica_admission {
    unsigned taken, pin, present;
    double unpinned;
    prefix_fetch fetch;
} replica_admission;

/* What add-ons add to an iteration: seconds of the batch's own work (on the memory side
 * of the roofline) and seconds it waits before it starts. */
typedef struct replica_extra {
    double busy_s, stall_s;
} replica_extra;

struct replica {
    /* What an event reads and writes comes first, in neighbouring cache lines (a large
     * fleet's replica is out of the cache when its event comes): the run state, the
     * batch while small, the statistics, then the configuration, whose first fields an
     * iteration reads (REPLICA_HOT_BYTES); what only a change of speed, a LoRA load or a
     * prefix fetch reads comes last. */
    sim_engine *engine;
    phase phase;
    unsigned nrunning;
    llm_request **running;
    /* The decode clock: the tokens each decoding sequence has made, which the plain step
     * counts here instead of in every request (a large fleet's requests are out of the
     * cache when their batch steps).  A running sequence that decodes holds generated and
     * cached as of `synced`; the clock's lead over it is still to add (replica_sync).
     * finish[i] is running[i]'s clock at its last token, or PROMPTING while it has
     * prompt tokens to prefill; the sums are the decoding sequences', for the plain
     * step's batch sums without reading its requests.  The other steps advance their
     * sequences one by one: the clock stays, only finish[i]'s PROMPTING is read, and the
     * sums drift (a sequence's cache grows between its entry and its exit), unread. */
    uint64_t *finish;
    size_t running_cap;
    /* the arrays while the batch is small, among the lines fetched ahead */
    uint64_t finish_inline[REPLICA_INLINE_BATCH];
    llm_request *running_inline[REPLICA_INLINE_BATCH];
    uint64_t clock;
    unsigned ndecoding;
    unsigned decoded_pending;    /* a prefill iteration's decoders not yet flushed */
    int64_t cached_less_synced;  /* the sum of cached - synced */
    const replica_cache_policy *policy;
    const replica_step *step;
    double step_tokens;  /* cache a sequence's decode step may write (the step's) */
    const replica_addon *addons[REPLICA_ADDONS_MAX];
    unsigned naddons;
    unsigned waiting_count;
    llm_request *waiting_head, *waiting_tail;
    double waiting_tokens;
    double kv_committed; /* reserved (KV_RESERVE) or used (KV_PREEMPT), in tokens */
    double kv_pending;   /* KV_PREEMPT: prompt tokens admitted but not yet prefilled */
    double kv_shared;    /* tokens of the prefix cache's runs the running sequences pin
                            (counted once; kept by the prefix add-on) */
    double host_used_bytes; /* KV_SWAP: the host tier's swapped caches */
    double stall_s;      /* copies to wait for before the next iteration starts */
    sim_event_id event;
    replica_done_fn done;
    void *context;
    /* pure-decode iteration costs by batch size for the speed in force: the shared table
     * at full speed, else its own (made at the first change of speed) */
    replica_shapes *shapes;
    /* the decode run in progress */
    double run_start_s;
    decode_cost run_cost;
    double run_iterations;
    double run_total;    /* their time: decode_cost_sum(run_cost, run_iterations) */
    double kv_told_until; /* replica_kv_now has told on_kv the memory of the run's
                             iteration in progress until then */
    double run_context;  /* tokens of cache the run's first iteration reads */
    double run_tokens;   /* tokens each of its iterations computes */
    double run_host_tokens, run_host_growth; /* offload: the first iteration's tokens read
                                                from host memory, and their growth a step */
    double run_growth;   /* tokens of cache it adds an iteration (a token a sequence but
                            past a sliding window: see held) */
    double run_cache_growth; /* sliding windows: tokens of cache held a step (reads and
                                cache grow at their own rates) */
    double run_least_cache_growth; /* ... the least a step adds (speculative rounds vary) */
    /* the run's GPU work by phase (for power): an iteration's, but for its attention
     * over the cache, which costs run_attention_s a token read, bound by compute or
     * memory as run_attention_compute says */
    perf_phases run_work;
    double run_attention_s;
    bool run_attention_compute;
    bool busy;             /* as last told to on_busy */
    bool load_tokens;      /* config.on_load_tokens */
    unsigned load_told;    /* replica_outstanding as last told to on_load */
    replica_stats stats;
    /* (the engine fetches ahead of an iteration's end what comes before here and the
     * configuration's first fields: REPLICA_HOT_BYTES) */
    replica_config config; /* config.profile: the base profile slowed by the factors */
    /* the head of the queue's admission as head_fits found it, which admit() takes when
     * it pops it */
    replica_admission head;
    const llm_request *head_for; /* the head admit() looked at and left waiting (NULL:
                                    none since its last admission) */
    decode_cost run_draft; /* speculating: the draft's part of the run's cost */
    perf_profile base_profile;
    double compute_factor, memory_factor;
    replica_shapes *own_shapes;
    lora_slots *slots;   /* multi-LoRA's, or NULL */
    double lora_loads_s; /* multi-LoRA: the adapter loads of the admissions in progress */
    prefix_costs prefix_costs; /* what the tiers' fetches are weighed against */
};

/* What an iteration's end reads of a replica: its run state, its statistics and its
 * configuration's first fields (models/replica.h), in this order, together (replica_create
 * hints them to the engine). */
#define REPLICA_HOT_BYTES (offsetof(struct replica, config) + offsetof(replica_config, draft))

/* What the cache does as it fills: commits memory at admission, grows, and frees it
 * when the cache is full (models/replica_cache_policy.c). */
struct replica_cache_policy {
    /* Cache q holds of its own once admitted (kv_committed's share). */
    double (*own)(const replica *r, const llm_request *q);
    /* The same on admission, for a request that takes `prefilled` and `cached`. */
    double (*own_at_admission)(const replica *r, const llm_request *q, unsigned prefilled,
                               unsigned cached);
    /* Whether a request needing `need` tokens fits beside `used`. */
    bool (*fits)(const replica *r, double used, double need);
    /* Whether q could not fit even alone in the cache (then it is dropped). */
    bool (*never_fits)(const replica *r, const llm_request *q);
    /* q joins the batch: its memory is committed. */
    void (*commit)(replica *r, llm_request *q);
    /* Before an iteration is planned: preempts until the next step fits. */
    void (*make_room)(replica *r);
    /* A decode run's most iterations before the cache is full (INFINITY: unbounded);
     * `fewest` the least so far, returned when nothing bounds it further. */
    double (*run_bound)(const replica *r, double fewest);
    /* q's prefill computed `chunk` tokens (cached already counts them). */
    void (*prefilled)(replica *r, const llm_request *q, unsigned chunk);
    /* q decoded in a prefill iteration: its cache grew from `before` tokens. */
    void (*decoded)(replica *r, const llm_request *q, unsigned before);
    /* n sequences over their whole context decoded a token each in a prefill iteration
     * (the decode clock's count of decoded() above). */
    void (*decoded_tokens)(replica *r, unsigned n);
    /* Before a decode run of n iterations advances the sequences, its growth. */
    void (*decode_run)(replica *r, unsigned n, double now);
    /* ... and the growth its first n would commit, committing nothing. */
    double (*run_growth)(replica *r, unsigned n);
    /* The decode run in progress is cut `elapsed` seconds in, after `done` iterations:
     * the cache's area over them. */
    void (*run_cut)(replica *r, double done, double elapsed);
    /* Preempted q, its own cache freed: what becomes of the cache (`bytes`). */
    void (*preempted)(replica *r, llm_request *q, double bytes);
};

/* What a feature adds to a replica: hooks called in this order where they apply,
 * NULL where it has nothing to do (models/replica_addons.c). */
struct replica_addon {
    /* Whether the head of the queue may join now, memory aside; it may fill *a. */
    bool (*admissible)(replica *r, llm_request *q, replica_admission *a);
    /* q was popped to join the batch, before its memory is committed ... */
    void (*claim)(replica *r, llm_request *q, const replica_admission *a);
    /* ... and after. */
    void (*admitted)(replica *r, llm_request *q);
    /* Every admission of one planning is done: running[first..] are new. */
    void (*admissions_done)(replica *r, unsigned first);
    /* q leaves the batch (finished, preempted, evicted), its memory given back. */
    void (*released)(replica *r, llm_request *q);
    /* q's prefill computed a chunk. */
    void (*computed)(replica *r, llm_request *q);
    /* What it adds to a prefill iteration of `tokens` tokens. */
    void (*prefill_extra)(replica *r, double tokens, replica_extra *x);
    /* What it adds to each iteration of a decode run being planned (r->run_*), and how
     * it bounds the run's length. */
    void (*decode_extra)(replica *r, double *fewest, replica_extra *x);
    /* n iterations ended now. */
    void (*ended)(replica *r, double n, double now);
    /* The replica lost its GPU. */
    void (*evicted)(replica *r);
};

/* How a sequence's decode step goes (models/replica_step.c): one token whose cache
 * grows by one, a token over sliding windows, or a speculative round. */
struct replica_step {
    /* A prefill iteration's decoding sequences, into the batch and its token budget (and
     * every running sequence's chunk set to 0). */
    void (*decoders)(replica *r, perf_batch *b, double *budget, replica_decoders *d);
    /* The draft's seconds in that iteration (adding the verification to b). */
    double (*draft_prefill)(replica *r, perf_batch *b, const replica_decoders *d);
    /* A decode run's sums over the batch. */
    void (*run)(replica *r, replica_run_sums *s);
    /* The draft's part of the run's cost (r->run_draft). */
    void (*run_draft)(replica *r, const replica_run_sums *s);
    /* q makes the tokens of n steps. */
    void (*advance)(replica *r, llm_request *q, unsigned n);
    /* A prefill iteration ended: its decoding sequences made a step each.  The running
     * sequences are walked in order, decoded() called for each stretch of decoding ones
     * (running[from..to-1]) and flushed() before each whose chunk was computed and at
     * the end, so that the cache policy counts the steps in the batch's order.  (A
     * stretch at a time: the plain step only counts them.) */
    void (*prefill_ended)(replica *r);
    void (*decoded)(replica *r, unsigned from, unsigned to);
    void (*flushed)(replica *r);
    /* The first decoding sequence from running[from] on that made its output (nrunning
     * when none did). */
    unsigned (*next_finished)(const replica *r, unsigned from);
    /* The tokens decoding running[i] has left to make. */
    double (*left)(const replica *r, unsigned i);
    /* Every running sequence makes n steps' tokens: whether any finished. */
    bool (*advance_run)(replica *r, unsigned n);
    /* n iterations ended: the draft's seconds in them. */
    void (*ended)(replica *r, double n);
    /* The cache the running sequences' next n steps write joins kv_committed (what
     * each keeps of it, past a sliding window). */
    void (*commit_run)(replica *r, unsigned n);
    /* Cache a sequence's step may write: a token, or a round's k + 1 positions. */
    double (*tokens_a_step)(const replica_config *c);
};

/* The policies, the step and the add-ons a configuration has. */
const replica_cache_policy *replica_cache_policy_of(const replica_config *c);
const replica_step *replica_step_of(const replica_config *c);
unsigned replica_addons_of(const replica_config *c, const replica_addon **out);

/* The replica's setup for the cost model, at the speed in force (replica.c), and its
 * draft's (into *draft; models/replica_step.c). */
perf_setup replica_setup(const replica *r);
perf_speculation replica_speculation(const replica *r, perf_setup *draft);

/* The tokens of a sequence's cache as its costs read them: its cached tokens, and for a
 * speculating one the fraction of a token its rounds have made in expectation beyond them
 * (replica_spec.h), so that they grow by exactly E a round (models/replica_step.c). */
double replica_cached_expected(const replica *r, const llm_request *q);

/* The tokens the running sequences make in the first n iterations of a decode run (n
 * rounds of a speculating replica's; models/replica_step.c). */
double replica_run_made(const replica *r, unsigned n);

/* Frees the cache of the most recently admitted sequence and puts it back at the head of
 * the queue (replica.c; the cache policy says what becomes of its cache). */
void replica_preempt_latest(replica *r);

/* What a sequence of `tokens` holds in the cache, in tokens of every layer: fewer than
 * its tokens when local layers keep only a sliding window (models/llm.h).  Attention
 * reads the same amount, so both the cache and its reads are counted in these units. */
static inline double replica_held(const replica *r, double tokens)
{
    const model_spec *m = r->config.model;
    return m->window ? model_attended_tokens(m, tokens) : tokens;
}

/* The cache a sequence adds when it grows from `from` to `to` tokens. */
static inline double replica_held_growth(const replica *r, double from, double to)
{
    return r->config.model->window ? replica_held(r, to) - replica_held(r, from) : to - from;
}

static inline bool replica_decoding(const llm_request *q) { return q->prefilled == q->target; }

/* finish[i] of a running sequence with prompt tokens to prefill */
#define PROMPTING UINT64_MAX

/* Brings decoding q's generated and cached up to the decode clock (its sums unchanged:
 * both grow as synced does). */
static inline void replica_sync(const replica *r, llm_request *q)
{
    unsigned lead = (unsigned)(r->clock - q->synced);
    q->generated += lead;
    q->cached += lead;
    q->synced = r->clock;
}

/* Every decoding sequence's counters up to the clock, for a reader of them all. */
void replica_sync_running(replica *r);

/* Tokens of a request's cache a prefix cache may give it or take from it: short of the
 * last token to prefill, whose computation gives the next token. */
static inline unsigned replica_cacheable(const llm_request *q)
{
    return q->target > 1 ? q->target - 1 : 0;
}

#endif
