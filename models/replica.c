/* Continuous batching on one replica (see replica.h). */
#include "models/replica_internal.h"

#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "models/event_order.h"
#include "models/replica_spec.h"
#include "sim/fatal.h"

static void on_iteration_end(sim_engine *e, void *data);
static void plan(replica *r, double now, unsigned decoding_first);
static void cut_run(replica *r, double now);
static double tier_prefill_s(const void *context, const void *request, unsigned from,
                             unsigned to);
static double tier_bytes(const void *context, unsigned from, unsigned to);

/* ---- decode costs by batch size ---------------------------------------------------- */

/* The model is evaluated once per batch size, not per event (replica_internal.h). */

static unsigned most_batch(const replica_config *c) { return c->max_batch ? c->max_batch : 1; }

/* Prefill token counts kept by count, at most: past it (a budget of tens of thousands of
 * tokens), each is evaluated afresh, and the table's address space stays under 20 MB. */
#define KEPT_TOKENS_MAX 65536

static perf_setup setup_of(const replica_config *c, const perf_profile *profile)
{
    return (perf_setup){ .model = c->model, .device = c->device, .profile = profile,
                         .weights = c->prec, .kv = c->kv_prec, .tp = c->tp,
                         .expert_parallel = c->expert_parallel, .expert_skew = c->expert_skew,
                         .attention_dp = c->attention_dp };
}

/* The costs at the old speed go; the prefills' kept costs with them, for good (a
 * replica's own table follows its speed, which changes too often to keep them). */
static void shapes_forget(replica_shapes *t)
{
    for (unsigned i = 0; i <= t->most; i++) {
        t->decode[i].fixed_s = NAN;
        if (t->draft)
            t->draft[i].fixed_s = NAN;
    }
    perf_token_memo_free(t->tokens);
    t->tokens = NULL;
}

replica_shapes *replica_shapes_create(const replica_config *c, bool keep_prefill_costs)
{
    replica_shapes *t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    t->most = most_batch(c);
    t->profile = &c->profile;
    t->decode = malloc((t->most + 1) * sizeof *t->decode);
    t->draft = c->spec_k ? malloc((t->most + 1) * sizeof *t->draft) : NULL;
    if (!t->decode || (c->spec_k && !t->draft)) {
        replica_shapes_free(t);
        return NULL;
    }
    shapes_forget(t);
    if (keep_prefill_costs) {
        perf_setup s = setup_of(c, t->profile);
        /* none kept (out of memory, or nothing to keep) costs only time */
        t->tokens = perf_token_memo_create(&s, c->max_tokens < KEPT_TOKENS_MAX
                                                   ? c->max_tokens : KEPT_TOKENS_MAX);
    }
    return t;
}

void replica_shapes_free(replica_shapes *t)
{
    if (!t)
        return;
    free(t->decode);
    free(t->draft);
    perf_token_memo_free(t->tokens);
    free(t);
}

replica *replica_create(sim_engine *engine, const replica_config *config,
                        replica_done_fn done, void *context)
{
    config_problems problems = { 0 }; /* serving_config_check found none: a caller's bug */
    replica_config_check(config, "", &problems);
    if (problems.n) {
        char why[1024];
        config_problems_join(&problems, why, sizeof why);
        sim_fatal("replica_create: %s", why);
    }
    replica *r = calloc(1, sizeof *r);
    if (!r)
        return NULL;
    if (config->shared_shapes && config->shared_shapes->most != most_batch(config))
        sim_fatal("replica_create: the shared decode costs are for another batch limit");
    r->config = *config; /* (its own table reads the profile here, not the caller's) */
    r->shapes = config->shared_shapes ? config->shared_shapes
                                      : (r->own_shapes = replica_shapes_create(&r->config, true));
    r->slots = config->lora_slots ? lora_slots_create(config->lora_slots, config->lora_adapters)
                                  : NULL;
    if (!r->shapes || (config->lora_slots && !r->slots)) {
        lora_slots_free(r->slots);
        replica_shapes_free(r->own_shapes);
        free(r);
        return NULL;
    }
    r->engine = engine;
    r->running = r->running_inline;
    r->finish = r->finish_inline;
    r->running_cap = REPLICA_INLINE_BATCH;
    sim_engine_hint_reads(engine, on_iteration_end, REPLICA_HOT_BYTES);
    r->base_profile = config->profile;
    r->compute_factor = r->memory_factor = 1;
    r->load_tokens = config->on_load_tokens; /* (load_told: 0, as it holds) */
    r->done = done;
    r->context = context;
    r->prefix_costs = (prefix_costs){ tier_prefill_s, tier_bytes, r };
    r->policy = replica_cache_policy_of(config);
    r->step = replica_step_of(config);
    r->step_tokens = r->step->tokens_a_step(config);
    r->naddons = replica_addons_of(config, r->addons);
    double now = sim_engine_now(engine);
    sim_timeavg_init(&r->stats.busy, now, 0);
    sim_timeavg_init(&r->stats.batch, now, 0);
    sim_timeavg_init(&r->stats.kv, now, 0);
    sim_timeavg_init(&r->stats.life_busy, now, 0);
    sim_timeavg_init(&r->stats.life_batch, now, 0);
    sim_timeavg_init(&r->stats.life_kv, now, 0);
    return r;
}

void replica_free(replica *r)
{
    if (!r)
        return;
    if (r->event) /* its iteration in progress must not run on freed memory */
        sim_event_cancel(r->engine, r->event);
    if (r->running != r->running_inline)
        free(r->running); /* and finish, in the same block */
    replica_shapes_free(r->own_shapes);
    lora_slots_free(r->slots);
    free(r);
}

perf_setup replica_setup(const replica *r) { return setup_of(&r->config, r->shapes->profile); }

/* The cost shape of a pure-decode iteration of n sequences (a speculative round's when
 * speculating), computed once per n. */
static const perf_decode_shape *decode_shape(replica *r, unsigned n)
{
    perf_decode_shape *shape = &r->shapes->decode[n];
    if (isnan(shape->fixed_s)) {
        perf_setup s = replica_setup(r), draft;
        perf_speculation sp = replica_speculation(r, &draft);
        *shape = r->config.spec_k ? perf_speculative_shape_of(&s, &sp, n)
                                  : perf_decode_shape_of(&s, n);
    }
    return shape;
}

static double remaining_tokens(const llm_request *q)
{
    return (double)(q->target - q->prefilled) + (double)(q->output - q->generated);
}


/* Cache a request commits on admission (the cache policy's), less its first `pin`
 * tokens, shared instead through the prefix cache (a->present of them held there
 * already, the rest inserted): they count once, in the cache, and the blocks the cache
 * did not hold are new.  A request that brings no cache takes its first a->taken tokens
 * as prefilled and cached (the GPU's hit and what the tiers below give it). */
static double admission_need(const replica *r, const llm_request *q, const replica_admission *a)
{
    unsigned prefilled = q->cached ? q->prefilled : a->taken;
    unsigned cached = q->cached ? q->cached : a->taken;
    double own = r->policy->own_at_admission(r, q, prefilled, cached);
    return own - replica_held(r, a->pin) + (double)(a->pin - a->present);
}

/* prefix_costs of the replica: a request's prefill alone from `from` tokens on, at the
 * speed in force (a chunked prefill costs about as much: the weights' reads beside it
 * are the batch's, not the request's). */
static double prefill_alone_s(const replica *r, const llm_request *q, unsigned from)
{
    unsigned take = q->target - from;
    if (take == 0)
        return 0;
    perf_batch b = { .prefill_tokens = take, .prefill_seqs = 1, .prefill_last = 1 };
    model_attention_pairs(r->config.model, from, take, &b.prefill_cached_pairs,
                          &b.prefill_new_pairs);
    perf_setup s = replica_setup(r);
    return perf_iteration(&s, &b, NULL).total_s;
}

static double tier_prefill_s(const void *context, const void *request, unsigned from,
                             unsigned to)
{
    return prefill_alone_s(context, request, from) - prefill_alone_s(context, request, to);
}

static double tier_bytes(const void *context, unsigned from, unsigned to)
{
    const replica *r = context;
    return replica_held_growth(r, from, to) * r->config.kv_bytes_per_token;
}

unsigned replica_outstanding(const replica *r) { return r->waiting_count + r->nrunning; }

double replica_outstanding_tokens(const replica *r)
{
    double t = r->waiting_tokens;
    for (unsigned i = 0; i < r->nrunning; i++)
        t += r->finish[i] != PROMPTING ? r->step->left(r, i) : remaining_tokens(r->running[i]);
    return t;
}

double replica_outstanding_tokens_now(const replica *r)
{
    double t = replica_outstanding_tokens(r);
    if (r->phase != DECODE || r->config.reference || !sim_event_pending(r->engine, r->event))
        return t;
    double elapsed = sim_engine_now(r->engine) - r->run_start_s, next;
    if (!(elapsed > 0))
        return t;
    /* the iterations one event per iteration would have ended by now (its last ends with
     * the run's event, still to come) */
    double done = fmin(decode_cost_cut(&r->run_cost, elapsed, r->run_iterations, r->run_total,
                                       &next),
                       r->run_iterations - 1);
    return done >= 1 ? t - replica_run_made(r, (unsigned)done) : t;
}

void replica_sync_running(replica *r)
{
    for (unsigned i = 0; i < r->nrunning; i++)
        if (r->finish[i] != PROMPTING)
            replica_sync(r, r->running[i]);
}

/* Doubles the batch's room: running[] and finish[] share one block, finish[] after
 * running[]'s room, so that a batch's two arrays are neighbours in memory. */
static void grow_batch(replica *r)
{
    size_t cap = 2 * r->running_cap;
    llm_request **running = malloc(cap * (sizeof *r->running + sizeof *r->finish));
    if (!running)
        sim_out_of_memory("out of memory growing a replica's batch");
    uint64_t *finish = (uint64_t *)(running + cap);
    if (r->nrunning) {
        memcpy(running, r->running, r->nrunning * sizeof *running);
        memcpy(finish, r->finish, r->nrunning * sizeof *finish);
    }
    if (r->running != r->running_inline)
        free(r->running);
    r->running = running;
    r->finish = finish;
    r->running_cap = cap;
}

/* running[i] has prefilled its prompt: it decodes on the clock from now. */
static void start_decoding(replica *r, unsigned i)
{
    llm_request *q = r->running[i];
    q->synced = r->clock;
    r->finish[i] = r->clock + (q->output > q->generated ? q->output - q->generated : 0);
    r->ndecoding++;
    r->cached_less_synced += (int64_t)q->cached - (int64_t)q->synced;
}

/* running[i], decoding and synced, leaves the batch. */
static void stop_decoding(replica *r, unsigned i)
{
    const llm_request *q = r->running[i];
    r->ndecoding--;
    r->cached_less_synced -= (int64_t)q->cached - (int64_t)q->synced;
}

const replica_stats *replica_get_stats(const replica *r) { return &r->stats; }

void replica_restart_stats(replica *r, double now)
{
    sim_timeavg_restart(&r->stats.busy, now);
    sim_timeavg_restart(&r->stats.batch, now);
    sim_timeavg_restart(&r->stats.kv, now);
    r->stats.preemptions = 0; /* counted after the warm-up, as the rest */
    r->stats.swap = (kv_swap_stats){ 0 };
    r->stats.iterations = r->stats.tokens_computed = r->stats.cache_tokens_read = 0;
    r->stats.spec_rounds = r->stats.spec_tokens = r->stats.draft_s = 0;
    for (unsigned i = 0; i < PREFIX_TIERS_MAX; i++)
        r->stats.prefix_tiers[i] = (prefix_tier_stats){ 0 };
}

static void set_phase(replica *r, double now, phase p)
{
    r->phase = p;
    double kv = (r->kv_committed + r->kv_shared) / r->config.kv_capacity_tokens;
    sim_timeavg_set(&r->stats.busy, now, p != IDLE);
    sim_timeavg_set(&r->stats.batch, now, r->nrunning);
    sim_timeavg_set(&r->stats.kv, now, kv);
    sim_timeavg_set(&r->stats.life_busy, now, p != IDLE);
    sim_timeavg_set(&r->stats.life_batch, now, r->nrunning);
    sim_timeavg_set(&r->stats.life_kv, now, kv);
    if (r->config.on_kv)
        r->config.on_kv(r->config.kv_context, kv);
}

/* Whether the head of the queue could join the batch now: the add-ons allow it (an
 * adapter slot) and say what it takes (a prefix's blocks), the cache policy whether the
 * memory it needs fits. */
static bool head_fits(replica *r)
{
    llm_request *q = r->waiting_head;
    if (!q || r->nrunning >= r->config.max_batch)
        return false;
    r->head_for = q;
    replica_admission *a = &r->head; /* for admit(), which pops it next */
    a->taken = a->pin = a->present = 0; /* its fetch is the prefix add-on's to set */
    a->unpinned = 0;
    for (unsigned i = 0; i < r->naddons; i++)
        if (r->addons[i]->admissible && !r->addons[i]->admissible(r, q, a))
            return false;
    double used = r->kv_committed + r->kv_shared + a->unpinned;
    return r->policy->fits(r, used, admission_need(r, q, a));
}

/* When a request began its wait here: its arrival, or for a prefilled request its
 * cache's arrival at the decode pool (a request's fields may hold an earlier request's
 * transfer, always before this one's arrival). */
static double waiting_since(const llm_request *q)
{
    return q->transferred_s > q->arrival_s ? q->transferred_s : q->arrival_s;
}

/* Whether admit() would drop the head of the queue now: it waited too long (a
 * preempted request never expires), or it can never fit. */
static bool head_droppable(const replica *r, double now)
{
    const llm_request *q = r->waiting_head;
    if (!q)
        return false;
    bool expired = r->config.max_wait_s > 0 && !q->preemptions
                   && now - waiting_since(q) > r->config.max_wait_s;
    return expired || r->policy->never_fits(r, q);
}

static llm_request *pop_waiting(replica *r)
{
    llm_request *q = r->waiting_head;
    r->waiting_head = q->next;
    if (!r->waiting_head)
        r->waiting_tail = NULL;
    q->next = NULL;
    r->waiting_count--;
    r->waiting_tokens -= remaining_tokens(q);
    return q;
}

/* Admits from the head of the queue while the batch and the cache have room; drops the
 * requests that waited too long or can never fit. */
static void admit(replica *r, double now)
{
    unsigned first = r->nrunning;
    r->head_for = NULL;
    while (r->waiting_head) {
        llm_request *q = r->waiting_head;
        if (head_droppable(r, now)) {
            r->done(r->context, pop_waiting(r), true);
            continue;
        }
        if (!head_fits(r))
            break;
        pop_waiting(r);
        r->head_for = NULL; /* admitted: it names only a head looked at and left waiting */
        if (!q->preemptions)
            q->admitted_s = now;
        for (unsigned i = 0; i < r->naddons; i++)
            if (r->addons[i]->claim)
                r->addons[i]->claim(r, q, &r->head);
        r->policy->commit(r, q);
        for (unsigned i = 0; i < r->naddons; i++)
            if (r->addons[i]->admitted)
                r->addons[i]->admitted(r, q);
        if (r->nrunning == r->running_cap) /* within max_batch, which head_fits holds */
            grow_batch(r);
        r->finish[r->nrunning] = PROMPTING;
        r->running[r->nrunning++] = q;
        if (replica_decoding(q)) /* its cache came prefilled */
            start_decoding(r, r->nrunning - 1);
    }
    for (unsigned i = 0; i < r->naddons; i++)
        if (r->addons[i]->admissions_done)
            r->addons[i]->admissions_done(r, first);
}

/* q leaves the batch: what the add-ons hold for it goes. */
static void release(replica *r, llm_request *q)
{
    for (unsigned i = 0; i < r->naddons; i++)
        if (r->addons[i]->released)
            r->addons[i]->released(r, q);
}

/* Removes finished sequences (finish time `now`) and returns their cache. */
static void retire(replica *r, double now)
{
    unsigned kept = 0;
    for (unsigned i = 0; i < r->nrunning; i++) {
        unsigned next = r->step->next_finished(r, i);
        for (; i < next; i++) { /* those before it stay */
            r->finish[kept] = r->finish[i];
            r->running[kept++] = r->running[i];
        }
        if (i == r->nrunning)
            break;
        llm_request *q = r->running[i];
        replica_sync(r, q);
        stop_decoding(r, i);
        q->finish_s = now;
        r->kv_committed -= r->policy->own(r, q);
        release(r, q);
        r->done(r->context, q, false);
    }
    r->nrunning = kept;
}

/* An iteration with prompt tokens: decoders advance by one token, chunks are planned
 * in admission order within the token budget.  first_prompt: the first running sequence
 * with prompt tokens left (all before it are decoding). */
static void start_prefill(replica *r, double now, unsigned first_prompt)
{
    const replica_config *c = &r->config;
    perf_batch b = { 0 };
    double prefill = 0, budget = c->max_tokens, cached_read = 0;
    replica_decoders d = { 0 };
    r->step->decoders(r, &b, &budget, &d);
    for (unsigned i = first_prompt; i < r->nrunning; i++) {
        if (r->finish[i] != PROMPTING)
            continue;
        llm_request *q = r->running[i];
        unsigned left = q->target - q->prefilled;
        unsigned take = left;
        if (budget < left) {
            if (c->chunked_prefill && budget >= 1)
                take = (unsigned)budget;
            else if (prefill > 0 || budget < 1)
                break; /* a whole prompt waits for the next iteration */
        }
        q->chunk = take;
        prefill += take;
        b.prefill_seqs++;
        b.prefill_last += take == left;
        double cached_pairs, new_pairs;
        model_attention_pairs(c->model, q->prefilled, take, &cached_pairs, &new_pairs);
        b.prefill_cached_pairs += cached_pairs;
        cached_read += replica_held(r, q->prefilled);
        b.prefill_new_pairs += new_pairs;
        budget -= take;
        if (budget <= 0)
            break;
    }
    b.prefill_tokens = prefill;
    r->run_context = b.decode_context + cached_read + d.verified_context;
    r->run_tokens = prefill + b.decode_seqs + d.verified * (c->spec_k + 1.0);
    perf_setup s = replica_setup(r);
    double draft_s = r->step->draft_prefill(r, &b, &d);
    r->run_draft = (decode_cost){ .fixed = draft_s };
    perf_time t = r->shapes->tokens ? perf_iteration_memo(r->shapes->tokens, &b)
                                    : perf_iteration(&s, &b, NULL);
    replica_extra x = { 0 };
    for (unsigned i = 0; i < r->naddons; i++)
        if (r->addons[i]->prefill_extra)
            r->addons[i]->prefill_extra(r, r->run_tokens, &x);
    t.total_s += x.busy_s;
    /* the add-ons' kernels and the draft's (small models) as memory-bound work */
    r->run_work = perf_time_phases(&t);
    r->run_work.memory_s += x.busy_s + draft_s;
    r->run_attention_s = 0;
    double stall = r->stall_s + x.stall_s;
    r->stall_s = 0;
    set_phase(r, now, PREFILL);
    r->event = sim_event_schedule(r->engine, now + stall + t.total_s + draft_s, EVENT_MODEL,
                                  on_iteration_end, r);
    r->stats.iterations_events++;
}

/* Whether the head of the queue, which did not fit at this boundary, may fit at a later
 * boundary of the decode run about to start although nothing leaves.  A run of many
 * iterations in one event assumes it cannot, as the sequences only grow; a prefix cache
 * breaks that in two ways.
 * - The sequence make_room just preempted is the head (admit() looked at the one before
 *   it): readmitted, it may share blocks it held as its own (a cache swapped back in is
 *   not shared) and need less than it freed.
 * - The run's start (set_phase) and each of its iterations' give back cached blocks,
 *   maybe of the head's hit, which it counts whole while found but needs, past a sliding
 *   window, only in part (g of a token, g the share of the layers that keep everything):
 *   an eviction of d tokens lowers its sum by up to (1 - g) d.
 * So the head is looked at again once the run's start gave back what it gives back
 * (where every token counts whole, only if it is not the one admit() looked at);
 * from then on the run grows the cache G a step at least (run_least_cache_growth:
 * speculative rounds make floor(E) tokens a sequence at least) and gives back at most
 * its growth and a block, so the head's sum grows by g G - (1 - g) block at least by the
 * next boundary, and more by the later ones. */
static bool head_may_fit_within(replica *r)
{
    const replica_config *c = &r->config;
    llm_request *q = r->waiting_head;
    if (!c->prefix || !q || r->nrunning >= c->max_batch)
        return false;
    /* what admit() found for it stands where every token counts whole */
    if (!c->model->window && r->head_for == q)
        return false;
    if (head_fits(r))
        return true;
    const replica_admission *a = &r->head;
    if (!c->model->window || q->cached || c->kv_policy == KV_RESERVE || !(a->unpinned > 0))
        return false; /* nothing more given back, or none of it the head's to gain by */
    double g = 1 - (double)model_local_layers(c->model) / c->model->layers;
    double slack = (1 - g) * prefix_cache_block(c->prefix) - g * r->run_least_cache_growth;
    return slack > 0
           && r->policy->fits(r, r->kv_committed + r->kv_shared + a->unpinned - slack,
                              admission_need(r, q, a));
}

static void start_decode(replica *r, double now)
{
    const replica_config *c = &r->config;
    replica_run_sums sums = { .fewest = INFINITY };
    r->step->run(r, &sums);
    double context = sums.context, growth = sums.growth, fewest = sums.fewest;
    r->run_growth = growth;
    r->run_cache_growth = sums.cache_growth;
    r->run_least_cache_growth = sums.least_cache_growth;
    fewest = r->policy->run_bound(r, fewest);
    const perf_decode_shape *shape = decode_shape(r, r->nrunning);
    r->run_cost = perf_decode_cost_of(shape, growth, context);
    r->run_context = context;
    r->run_tokens = r->nrunning * (c->spec_k + 1.0);
    replica_extra x = { 0 };
    for (unsigned i = 0; i < r->naddons; i++)
        if (r->addons[i]->decode_extra)
            r->addons[i]->decode_extra(r, &fewest, &x);
    r->run_cost.fixed += x.busy_s; /* the add-ons' kernels hold over the run */
    r->run_cost = decode_cost_settled(r->run_cost); /* (after the add-ons' lines) */
    r->run_work = shape->fixed_phases;
    r->run_work.memory_s += x.busy_s;
    r->run_attention_s = shape->attention_s_per_token;
    r->run_attention_compute = shape->attention_compute;
    r->step->run_draft(r, &sums);
    r->run_iterations = c->reference ? 1 : fewest;
    /* the run's first iteration starts once the copies planned with it are done */
    double begin = now + r->stall_s;
    r->stall_s = 0;
    /* a waiting request that will expire is dropped at the first boundary after its
     * deadline, as one event per iteration would: end the run there */
    const llm_request *head = r->waiting_head;
    if (!c->reference && head && c->max_wait_s > 0 && !head->preemptions) {
        double left = waiting_since(head) + c->max_wait_s - begin;
        double within = left >= 0 ? decode_cost_iterations_within(&r->run_cost, left,
                                                                   r->run_iterations) : 0;
        r->run_iterations = fmin(r->run_iterations, within + 1);
    }
    r->run_start_s = begin;
    r->run_total = decode_cost_sum(&r->run_cost, r->run_iterations);
    r->kv_told_until = -INFINITY; /* (set_phase tells the first iteration's) */
    set_phase(r, now, DECODE);
    if (!c->reference && r->run_iterations > 1 && head_may_fit_within(r)) {
        r->run_iterations = 1; /* one event per iteration looks at the next boundary */
        r->run_total = decode_cost_sum(&r->run_cost, 1);
    }
    r->event = sim_event_schedule(r->engine, begin + r->run_total, EVENT_MODEL,
                                  on_iteration_end, r);
    r->stats.iterations_events++;
}

/* Ends a fast decode run at the iteration in progress, so that what changed now (a
 * request that can join, a new speed) takes effect at the next boundary, as it would
 * with one event per iteration.  Nothing to do in reference mode, in a prefill (one
 * iteration), or from within the replica's own iteration end (the run is over). */
static void cut_run(replica *r, double now)
{
    if (r->phase != DECODE || r->config.reference || !sim_event_pending(r->engine, r->event))
        return;
    double total;
    double done = decode_cost_cut(&r->run_cost, now - r->run_start_s, r->run_iterations,
                                  r->run_total, &total);
    if (done + 1 < r->run_iterations) {
        r->run_iterations = done + 1;
        r->run_total = total;
        double end = r->run_start_s + total;
        sim_event_reschedule(r->engine, r->event, fmax(end, now)); /* rounding */
    }
}

void replica_preempt_latest(replica *r)
{
    unsigned last = r->nrunning - 1;
    llm_request *q = r->running[last];
    if (r->finish[last] != PROMPTING) {
        replica_sync(r, q);
        stop_decoding(r, last);
    }
    r->nrunning = last;
    double bytes = replica_held(r, q->cached) * r->config.kv_bytes_per_token;
    r->kv_committed -= r->policy->own(r, q);
    r->kv_pending -= replica_held_growth(r, q->prefilled, q->target);
    q->chunk = 0;
    release(r, q);
    r->policy->preempted(r, q, bytes);
    q->preemptions++;
    r->stats.preemptions++;
    q->next = r->waiting_head;
    r->waiting_head = q;
    if (!r->waiting_tail)
        r->waiting_tail = q;
    r->waiting_count++;
    r->waiting_tokens += remaining_tokens(q);
}

/* Tells on_load that the requests (or, as it asked, their tokens left) may have
 * changed; the count is in the lines an iteration's end reads, the configuration not. */
static void load_changed(replica *r)
{
    unsigned n = replica_outstanding(r);
    if (n == r->load_told && !r->load_tokens)
        return;
    r->load_told = n;
    if (r->config.on_load)
        r->config.on_load(r->config.load_context);
}

/* Tells on_busy of a change between idle and busy. */
static void notify_busy(replica *r, bool busy)
{
    if (r->busy == busy)
        return;
    r->busy = busy;
    if (r->config.on_busy)
        r->config.on_busy(r->config.busy_context, busy);
}

/* decoding_first: the running sequences known to be decoding, the first ones (a decode
 * run's, when it ends: admit() appends after them), so that only the rest are looked at */
static void plan(replica *r, double now, unsigned decoding_first)
{
    admit(r, now);
    r->policy->make_room(r);
    if (r->nrunning == 0) {
        set_phase(r, now, IDLE);
        notify_busy(r, false);
        return;
    }
    /* before planning, so that a speed the sharing group sets for it applies to the
     * first iteration */
    notify_busy(r, true);
    for (unsigned i = decoding_first < r->nrunning ? decoding_first : r->nrunning;
         i < r->nrunning; i++) {
        if (r->finish[i] == PROMPTING) {
            start_prefill(r, now, i);
            return;
        }
    }
    start_decode(r, now);
}

/* One event per iteration tells on_kv at each start the memory held then, the most at
 * the last one's (a run's memory only grows); a run of n in one event tells it that
 * figure at its end, before a sequence leaves or joins and frees or probes what a
 * prefix cache holds. */
static void last_iteration_kv(replica *r, unsigned n)
{
    double held = r->kv_committed + r->policy->run_growth(r, n - 1);
    r->config.on_kv(r->config.kv_context, (held + r->kv_shared) / r->config.kv_capacity_tokens);
}

/* A fast decode run in progress tells on_kv what its iteration in progress started with,
 * as one event per iteration told it at that start: for whoever reads a prefix cache
 * between two of the replica's events (routing by affinity, a cache bound for it).  Once
 * per iteration: until the next one starts (kv_told_until) there is nothing new to tell. */
void replica_kv_now(replica *r)
{
    if (r->phase != DECODE || r->config.reference || !r->config.on_kv
        || r->config.kv_policy == KV_RESERVE) /* (its memory stays over a run) */
        return;
    double now = sim_engine_now(r->engine);
    if (now < r->kv_told_until || !sim_event_pending(r->engine, r->event))
        return;
    double elapsed = now - r->run_start_s, next;
    if (!(elapsed > 0)) { /* waiting for copies: the first iteration's, told at the start */
        r->kv_told_until = r->run_start_s;
        return;
    }
    double done = decode_cost_cut(&r->run_cost, elapsed, r->run_iterations, r->run_total,
                                  &next);
    if (done >= r->run_iterations - 1) {
        done = r->run_iterations - 1;
        r->kv_told_until = INFINITY; /* the last: told again at the run's end */
    } else {
        r->kv_told_until = r->run_start_s + next;
    }
    if (done >= 1)
        last_iteration_kv(r, (unsigned)done + 1);
}

static void on_iteration_end(sim_engine *e, void *data)
{
    replica *r = data;
    double now = sim_engine_now(e);
    /* a run of n iterations reads its first one's context, growing a token per sequence
     * at each step */
    double n_run = r->phase == PREFILL ? 1 : r->run_iterations;
    bool finished = r->phase == PREFILL; /* a prefill may finish any: retire() looks */
    r->stats.iterations += n_run;
    for (unsigned i = 0; i < r->naddons; i++)
        if (r->addons[i]->ended)
            r->addons[i]->ended(r, n_run, now);
    r->step->ended(r, n_run);
    r->stats.tokens_computed += n_run * r->run_tokens;
    double read = n_run * r->run_context
                  + (r->phase == PREFILL ? 0 : r->run_growth * n_run * (n_run - 1) / 2);
    r->stats.cache_tokens_read += read;
    r->stats.work = perf_phases_add(r->stats.work, r->run_work, n_run);
    if (r->run_attention_compute)
        r->stats.work.compute_s += r->run_attention_s * read;
    else
        r->stats.work.memory_s += r->run_attention_s * read;
    if (r->phase == PREFILL) {
        r->step->prefill_ended(r);
        for (unsigned i = 0; i < r->nrunning; i++) {
            unsigned from = i; /* the decoders up to the next prompt: a step each */
            while (i < r->nrunning && r->finish[i] != PROMPTING)
                i++;
            if (i > from)
                r->step->decoded(r, from, i);
            if (i == r->nrunning)
                break;
            llm_request *q = r->running[i];
            if (q->chunk) {
                r->step->flushed(r); /* the decoders before it, in order */
                q->prefilled += q->chunk;
                q->cached += q->chunk;
                r->policy->prefilled(r, q, q->chunk);
                q->chunk = 0;
                for (unsigned k = 0; k < r->naddons; k++)
                    if (r->addons[k]->computed)
                        r->addons[k]->computed(r, q);
                if (replica_decoding(q)) { /* the prompt's last position gives the next token */
                    if (q->generated == 0)
                        q->first_token_s = now;
                    q->generated++;
                    start_decoding(r, i);
                }
            }
        }
        r->step->flushed(r);
    } else {
        unsigned n = (unsigned)r->run_iterations;
        if (n > 1 && r->config.on_kv)
            last_iteration_kv(r, n);
        r->policy->decode_run(r, n, now); /* the cache's growth over the run */
        finished |= r->step->advance_run(r, n);
    }
    /* a run that an arrival cut short finished no one: nothing to look for */
    if (finished)
        retire(r, now);
    /* after a decode run every sequence left is decoding */
    plan(r, now, r->phase == DECODE ? r->nrunning : 0);
    load_changed(r);
}

/* Drops, at an arrival, the waiting requests that are past their deadline: without it
 * they would stay until the next iteration boundary, which on a slow enough device is
 * so far away that the queue outgrows any memory (issue 17).  A preempted request
 * never expires; the others wait in arrival order behind them, so the walk stops at
 * the first that has time left. */
static void drop_expired(replica *r, double now)
{
    llm_request *prev = NULL, *q = r->waiting_head;
    while (q && q->preemptions) {
        prev = q;
        q = q->next;
    }
    while (q && now - waiting_since(q) > r->config.max_wait_s) {
        llm_request *next = q->next;
        if (prev)
            prev->next = next;
        else
            r->waiting_head = next;
        if (r->waiting_tail == q)
            r->waiting_tail = prev;
        q->next = NULL;
        r->waiting_count--;
        r->waiting_tokens -= remaining_tokens(q);
        r->done(r->context, q, true);
        q = next;
    }
}

static void enqueue(replica *r, llm_request *q, double now);

void replica_fetch_ahead(const replica *r)
{
    /* An arrival reads the queue, the run it may cut and the configuration's first
     * fields (max_batch, the cache's size, max_wait): the same first REPLICA_HOT_BYTES
     * that an iteration's end reads, laid out together for it; then the head's
     * admission, which head_fits writes. */
    enum { LINE = 64 }; /* bytes: the cache line of x86-64 and of most Arm servers */
    uintptr_t from = (uintptr_t)r & ~(uintptr_t)(LINE - 1), end = (uintptr_t)r + REPLICA_HOT_BYTES;
    for (uintptr_t at = from; at < end; at += LINE)
        __builtin_prefetch((const void *)at);
    __builtin_prefetch(&r->head);
}

void replica_enqueue(replica *r, llm_request *q)
{
    double now = sim_engine_now(r->engine);
    if (r->config.max_wait_s > 0)
        drop_expired(r, now);
    q->prefilled = q->generated = q->chunk = q->cached = q->preemptions = q->spec_rounds = 0;
    q->pinned = q->prefix_hit = q->brought_held = 0;
    memset(q->prefix_fetched, 0, sizeof q->prefix_fetched);
    q->swapped = false;
    q->target = q->prompt;
    enqueue(r, q, now);
    load_changed(r);
}

void replica_enqueue_prefilled(replica *r, llm_request *q)
{
    double now = sim_engine_now(r->engine);
    if (r->config.max_wait_s > 0)
        drop_expired(r, now);
    q->chunk = q->preemptions = q->pinned = 0;
    enqueue(r, q, now);
    load_changed(r);
}

static void enqueue(replica *r, llm_request *q, double now)
{
    q->next = NULL;
    if (r->waiting_tail)
        r->waiting_tail->next = q;
    else
        r->waiting_head = q;
    r->waiting_tail = q;
    r->waiting_count++;
    r->waiting_tokens += remaining_tokens(q);
    if (r->phase == IDLE) {
        plan(r, now, 0);
        return;
    }
    /* A fast decode run is cut at the iteration in progress, so the request can join at
     * the next boundary, as it would with one event per iteration. */
    if (r->waiting_head == q && (head_fits(r) || head_droppable(r, now)))
        cut_run(r, now);
}

void replica_set_speed(replica *r, double compute_factor, double memory_factor)
{
    if (!(compute_factor >= 1 && memory_factor >= 1 && isfinite(compute_factor)
          && isfinite(memory_factor)))
        sim_fatal("replica_set_speed: factors must be finite and >= 1, got %g and %g",
                  compute_factor, memory_factor);
    if (compute_factor == r->compute_factor && memory_factor == r->memory_factor)
        return; /* a calm noisy process changes nothing, bit for bit */
    r->compute_factor = compute_factor;
    r->memory_factor = memory_factor;
    r->config.profile.compute_efficiency = r->base_profile.compute_efficiency / compute_factor;
    r->config.profile.bandwidth_efficiency = r->base_profile.bandwidth_efficiency / memory_factor;
    if (compute_factor == 1 && memory_factor == 1 && r->config.shared_shapes) {
        r->shapes = r->config.shared_shapes; /* full speed again */
    } else {
        if (!r->own_shapes && !(r->own_shapes = replica_shapes_create(&r->config, false)))
            sim_out_of_memory("out of memory for a replica's decode costs");
        shapes_forget(r->own_shapes); /* the costs at the old speed */
        r->shapes = r->own_shapes;
    }
    cut_run(r, sim_engine_now(r->engine));
}

void replica_get_speed(const replica *r, double *compute_factor, double *memory_factor)
{
    *compute_factor = r->compute_factor;
    *memory_factor = r->memory_factor;
}

/* Puts a request back in the state replica_enqueue expects, its progress lost. */
static void reset_progress(llm_request *q)
{
    q->prefilled = q->generated = q->chunk = q->cached = q->preemptions = q->spec_rounds = 0;
    q->pinned = q->prefix_hit = q->brought_held = 0;
    memset(q->prefix_fetched, 0, sizeof q->prefix_fetched);
    q->swapped = false; /* the host tier's copy goes with the replica */
    q->target = q->prompt;
    q->admitted_s = q->first_token_s = q->finish_s = 0;
}

llm_request *replica_evict(replica *r)
{
    double now = sim_engine_now(r->engine);
    if (r->phase != IDLE && sim_event_pending(r->engine, r->event)) {
        if (r->phase == DECODE) {
            /* the cache's growth over the run so far (see on_iteration_end) */
            double done = decode_cost_iterations_within(&r->run_cost,
                                                        fmax(0, now - r->run_start_s),
                                                        r->run_iterations);
            r->policy->run_cut(r, done, now - r->run_start_s);
        }
        sim_event_cancel(r->engine, r->event);
    }
    replica_sync_running(r);
    r->ndecoding = 0;
    r->cached_less_synced = 0;
    llm_request *head = NULL, **tail = &head;
    for (unsigned i = 0; i < r->nrunning; i++) {
        release(r, r->running[i]); /* a prefix cache may outlive the eviction */
        *tail = r->running[i];
        tail = &r->running[i]->next;
    }
    *tail = r->waiting_head;
    for (llm_request *q = head; q; q = q->next)
        reset_progress(q);
    r->nrunning = 0;
    r->waiting_head = r->waiting_tail = NULL;
    r->waiting_count = 0;
    r->waiting_tokens = 0;
    r->kv_committed = r->kv_pending = 0;
    r->host_used_bytes = r->stall_s = 0;
    for (unsigned i = 0; i < r->naddons; i++)
        if (r->addons[i]->evicted)
            r->addons[i]->evicted(r);
    set_phase(r, now, IDLE);
    notify_busy(r, false);
    load_changed(r);
    return head;
}
