/* The features a replica may add to continuous batching, as add-ons its iterations walk
 * (replica_internal.h): the prefix cache and its tiers below GPU memory, multi-LoRA's
 * adapter slots and kernels, and the offload tier's reads of the cache from host memory.
 * Each keeps its own state and statistics; replica.c calls only their hooks. */
#include <math.h>

#include "models/replica_internal.h"

/* ---- the prefix cache ------------------------------------------------------------------ */

static const prefix_chain *chain_of(const replica *r, llm_request *q)
{
    return r->config.prefix_chain(r->config.prefix_context, q);
}

/* The running sequences' pinned runs, counted once (what replica.c reads as kv_shared),
 * after every change of the pins. */
static void pins_changed(replica *r)
{
    prefix_cache *pc = r->config.prefix;
    r->kv_shared = (double)prefix_cache_pinned(pc) * prefix_cache_block(pc);
}

/* Tokens of the request's cache a prefix cache may share when it is admitted: what it
 * may find, or of the cache it brings from a prefill pool, its prompt's (a cache back
 * from the host tier stays its own). */
static unsigned shareable(const llm_request *q)
{
    if (q->swapped)
        return 0;
    unsigned most = replica_cacheable(q);
    return q->cached == 0 ? most : q->cached < most ? q->cached : most;
}

/* A request that brings no cache (new, or preempted to recompute) looks its prefix up:
 * the GPU's longest hit, then what the tiers below give beyond it; one that brings its
 * cache shares every whole block of its prompt, found or not. */
static bool prefix_admissible(replica *r, llm_request *q, replica_admission *a)
{
    a->fetch = (prefix_fetch){ 0 };
    unsigned want = shareable(q);
    if (!want)
        return true;
    const prefix_chain *chain = chain_of(r, q);
    size_t blocks;
    a->present = a->taken = prefix_cache_probe(r->config.prefix, chain, want, &blocks);
    a->unpinned = (double)blocks * prefix_cache_block(r->config.prefix);
    if (r->config.prefix_tiers.n && !q->cached) {
        a->fetch = prefix_tiers_plan(&r->config.prefix_tiers, chain, a->present, want,
                                     &r->prefix_costs, q);
        a->taken = a->fetch.to;
    }
    a->pin = q->cached ? prefix_cache_pinnable(r->config.prefix, chain, want) : a->taken;
    return true;
}

/* A brought cache sent without the blocks the replica held when it was bound here:
 * what of them is gone since is pulled now, over the pull link, and the next iteration
 * waits for it (once: a readmission brings what it had). */
static void pull_missing(replica *r, llm_request *q, unsigned present)
{
    unsigned missing = q->brought_held > present ? q->brought_held - present : 0;
    q->brought_held = 0;
    q->pulled += missing;
    const replica_config *c = &r->config;
    if (missing && c->pull_bytes_per_s > 0)
        r->stall_s += c->pull_latency_s
                      + replica_held_growth(r, present, present + missing)
                            * c->kv_bytes_per_token / c->pull_bytes_per_s;
}

/* Its cached prefix counts as prefilled, shared and pinned (the blocks fetched from the
 * tiers below joining the cache, the next iteration waiting for them); a brought cache's
 * blocks join the cache, shared. */
static void prefix_claim(replica *r, llm_request *q, const replica_admission *a)
{
    const prefix_chain *chain = chain_of(r, q);
    if (q->cached == 0) {
        if (a->taken)
            prefix_cache_pin(r->config.prefix, chain, 0, a->taken);
        if (r->config.prefix_tiers.n) {
            r->stall_s += a->fetch.seconds;
            prefix_tiers_fetched(&r->config.prefix_tiers, chain, &a->fetch,
                                 r->stats.prefix_tiers);
        }
        q->prefilled = q->cached = q->pinned = q->prefix_hit = a->taken;
        for (unsigned i = 0; i < PREFIX_TIERS_MAX; i++)
            q->prefix_fetched[i] = a->fetch.tokens[i];
    } else {
        pull_missing(r, q, a->present);
        if (a->pin)
            q->pinned = prefix_cache_pin(r->config.prefix, chain, 0, a->pin);
    }
    pins_changed(r);
}

/* Its pins go; its blocks stay cached, evictable (a recompute may find them). */
static void prefix_released(replica *r, llm_request *q)
{
    if (q->pinned) {
        prefix_cache_unpin(r->config.prefix, chain_of(r, q), q->pinned);
        pins_changed(r);
    }
    q->pinned = 0;
}

/* The whole blocks of the prompt q's prefill has computed join the prefix cache, pinned
 * by q: shared from now on, no longer its own; and the tiers below, written through. */
static void prefix_computed(replica *r, llm_request *q)
{
    unsigned upto = q->prefilled < replica_cacheable(q) ? q->prefilled : replica_cacheable(q);
    if (upto <= q->pinned)
        return;
    const prefix_chain *chain = chain_of(r, q);
    unsigned now = prefix_cache_pin(r->config.prefix, chain, q->pinned, upto);
    r->kv_committed -= replica_held_growth(r, q->pinned, now);
    q->pinned = now;
    pins_changed(r);
    prefix_tiers_store(&r->config.prefix_tiers, chain, now);
}

unsigned replica_prefix_held(replica *r, llm_request *q)
{
    prefix_cache *pc = r->config.prefix;
    unsigned want = pc ? shareable(q) : 0;
    return want ? prefix_cache_longest(pc, chain_of(r, q), want) : 0;
}

static const replica_addon PREFIX = {
    .admissible = prefix_admissible, .claim = prefix_claim, .released = prefix_released,
    .computed = prefix_computed,
};

/* ---- multi-LoRA ------------------------------------------------------------------------ */

/* every slot's adapter in use: it waits for one to free */
static bool lora_admissible(replica *r, llm_request *q, replica_admission *a)
{
    (void)a;
    return lora_slots_can_acquire(r->slots, q->adapter);
}

/* q starts using its adapter, loading it if it is not resident (the next iteration waits
 * for the load) */
static void lora_admitted(replica *r, llm_request *q)
{
    lora_acquire_result got = lora_slots_acquire(r->slots, q->adapter, NULL);
    lora_stats *st = r->config.lora_stats;
    bool counted = st && !q->preemptions && q->arrival_s >= st->warmup_s;
    if (counted) {
        st->admitted++;
        st->hits += got == LORA_HIT;
    }
    if (got != LORA_LOADED)
        return;
    if (st && q->arrival_s >= st->warmup_s)
        st->loads++;
    r->stall_s += r->config.lora_load_s;
    r->lora_loads_s += r->config.lora_load_s;
}

/* The adapter loads the requests admitted from running[first] on wait for. */
static void lora_admissions_done(replica *r, unsigned first)
{
    lora_stats *st = r->config.lora_stats;
    double loads_s = r->lora_loads_s;
    r->lora_loads_s = 0;
    if (!st)
        return;
    for (unsigned i = first; i < r->nrunning; i++) {
        const llm_request *q = r->running[i];
        if (q->preemptions || q->arrival_s < st->warmup_s)
            continue;
        sim_stat_add(&st->wait_s, loads_s);
        sim_histogram_add(&st->wait_hist_s, loads_s);
    }
}

static void lora_released(replica *r, llm_request *q) { lora_slots_release(r->slots, q->adapter); }

/* What the mixed-adapter kernels add to an iteration computing `tokens` tokens, at the
 * speed in force.  From counters the batch keeps, so it costs the same whether an event
 * covers one iteration or a run. */
static double lora_s(const replica *r, double tokens)
{
    const replica_config *c = &r->config;
    double compute = tokens * c->lora_flops_per_token
                     / (device_peak_flops(c->device, c->prec, NULL) * c->profile.compute_efficiency);
    double memory = lora_slots_in_use(r->slots) * c->lora_bytes
                    / (c->device->bandwidth_bytes_per_s * c->profile.bandwidth_efficiency);
    return fmax(compute, memory);
}

static void lora_prefill_extra(replica *r, double tokens, replica_extra *x)
{
    x->busy_s += lora_s(r, tokens);
}

/* the batch's adapters hold over the run */
static void lora_decode_extra(replica *r, double *fewest, replica_extra *x)
{
    (void)fewest;
    x->busy_s += lora_s(r, r->run_tokens);
}

static void lora_ended(replica *r, double n, double now)
{
    lora_stats *st = r->config.lora_stats;
    if (!st || now < st->warmup_s)
        return;
    st->iterations += n;
    st->distinct_sum += n * lora_slots_in_use(r->slots);
}

/* the adapters go with the GPU */
static void lora_evicted(replica *r) { lora_slots_clear(r->slots); }

static const replica_addon LORA = {
    .admissible = lora_admissible, .admitted = lora_admitted,
    .admissions_done = lora_admissions_done, .released = lora_released,
    .prefill_extra = lora_prefill_extra, .decode_extra = lora_decode_extra,
    .ended = lora_ended, .evicted = lora_evicted,
};

/* ---- the offload tier -------------------------------------------------------------------- */

/* Seconds an iteration spends reading `tokens` of cache from host memory. */
static double offload_s(const replica *r, double tokens)
{
    const replica_config *c = &r->config;
    return tokens > 0 ? tokens * c->kv_bytes_per_token / c->host_kv_bytes_per_s : 0;
}

static double running_held(replica *r)
{
    replica_sync_running(r);
    double cached = 0;
    for (unsigned i = 0; i < r->nrunning; i++)
        cached += replica_held(r, replica_cached_expected(r, r->running[i]));
    return cached;
}

/* the cache beyond the device's share, over PCIe, before the iteration */
static void offload_prefill_extra(replica *r, double tokens, replica_extra *x)
{
    (void)tokens;
    r->run_host_tokens = fmax(0, running_held(r) - r->config.kv_device_tokens);
    r->run_host_growth = 0;
    x->stall_s += offload_s(r, r->run_host_tokens);
}

/* Iteration k reads the cached tokens beyond the device's share, S + g k - D (g: the
 * cache's growth a step: n tokens, or n rounds' expected tokens, without sliding
 * windows), over PCIe; the attention waits for them, so the time adds to both sides of
 * the roofline and the run stays linear in k.  A run that starts under the share ends
 * where it would cross it. */
static void offload_decode_extra(replica *r, double *fewest, replica_extra *x)
{
    (void)x;
    double step = r->config.model->window ? r->run_cache_growth : r->run_growth;
    double over = running_held(r) - r->config.kv_device_tokens;
    if (over < 0) {
        *fewest = fmin(*fewest, step > 0 ? ceil(-over / step) : INFINITY);
        r->run_host_tokens = r->run_host_growth = 0;
        return;
    }
    r->run_host_tokens = over;
    r->run_host_growth = step;
    double h0 = offload_s(r, over), h1 = offload_s(r, step);
    r->run_cost.compute0 += h0;
    r->run_cost.memory0 += h0;
    r->run_cost.compute1 += h1;
    r->run_cost.memory1 += h1;
}

static void offload_ended(replica *r, double n, double now)
{
    (void)now;
    double host = n * r->run_host_tokens + r->run_host_growth * n * (n - 1) / 2;
    r->stats.swap.offload_bytes += host * r->config.kv_bytes_per_token;
    r->stats.swap.offload_s += offload_s(r, host);
}

static const replica_addon OFFLOAD = {
    .prefill_extra = offload_prefill_extra, .decode_extra = offload_decode_extra,
    .ended = offload_ended,
};

unsigned replica_addons_of(const replica_config *c, const replica_addon **out)
{
    unsigned n = 0; /* a slot first: a request that waits for one looks nothing up */
    if (c->lora_slots)
        out[n++] = &LORA;
    if (c->prefix)
        out[n++] = &PREFIX;
    if (c->kv_device_tokens > 0)
        out[n++] = &OFFLOAD;
    return n;
}
