/* What a replica's key-value cache does as it fills (replica.h's kv_policy): reserve a
 * request's whole cache at admission and queue the rest (KV_RESERVE), or commit its
 * prompt, grow a token at a time and preempt the latest sequence when full, to
 * recompute it (KV_PREEMPT) or to swap its cache to the host tier and back (KV_SWAP). */
#include <math.h>

#include "models/replica_internal.h"

/* ---- reserve: a request's whole cache at admission -------------------------------------- */

static double reserve_own(const replica *r, const llm_request *q)
{
    return replica_held(r, (double)q->prompt + q->output) - replica_held(r, q->pinned);
}

static double reserve_own_at_admission(const replica *r, const llm_request *q,
                                       unsigned prefilled, unsigned cached)
{
    (void)prefilled, (void)cached;
    return replica_held(r, (double)q->prompt + q->output);
}

static bool reserve_fits(const replica *r, double used, double need)
{
    return used + need <= r->config.kv_capacity_tokens;
}

static void reserve_commit(replica *r, llm_request *q) { r->kv_committed += reserve_own(r, q); }

/* its whole cache, more than the replica holds */
static bool reserve_never_fits(const replica *r, const llm_request *q)
{
    return replica_held(r, (double)q->prompt + q->output) > r->config.kv_capacity_tokens;
}

static void nothing(replica *r) { (void)r; }

static double reserve_run_bound(const replica *r, double fewest)
{
    (void)r;
    return fewest;
}

static void reserve_prefilled(replica *r, const llm_request *q, unsigned chunk)
{
    (void)r, (void)q, (void)chunk;
}

static void reserve_decoded(replica *r, const llm_request *q, unsigned before)
{
    (void)r, (void)q, (void)before;
}

static void reserve_decoded_tokens(replica *r, unsigned n) { (void)r, (void)n; }

static void reserve_decode_run(replica *r, unsigned n, double now) { (void)r, (void)n, (void)now; }

/* reserved at admission: a run adds nothing */
static double reserve_run_growth(replica *r, unsigned n)
{
    (void)r, (void)n;
    return 0;
}

static void reserve_run_cut(replica *r, double done, double elapsed)
{
    (void)r, (void)done, (void)elapsed;
}

/* ---- preempt: grow a token at a time, free the latest when full --------------------------- */

static double grow_own(const replica *r, const llm_request *q)
{
    return replica_held(r, q->cached) - replica_held(r, q->pinned);
}

/* its prompt (what is left to prefill) and the cache it brings (prefilled elsewhere, or
 * swapped out to the host tier; 0 for every other waiting request) */
static double grow_own_at_admission(const replica *r, const llm_request *q, unsigned prefilled,
                                    unsigned cached)
{
    return replica_held_growth(r, prefilled, q->target) + replica_held(r, cached);
}

/* its prompt (or swapped cache), the prompts admitted before it, and the next step's
 * cache of every sequence (a token each, a round's k + 1 positions) must all fit */
static bool grow_fits(const replica *r, double used, double need)
{
    double step = r->step_tokens;
    return used + r->kv_pending + need + r->nrunning * step + step
           <= r->config.kv_capacity_tokens;
}

/* ... or, alone, what it commits and its next step (a round's k + 1 positions may not
 * fit where its last token would) */
static bool grow_never_fits(const replica *r, const llm_request *q)
{
    return reserve_never_fits(r, q)
           || grow_own_at_admission(r, q, q->prefilled, q->cached) + r->step_tokens
                  > r->config.kv_capacity_tokens;
}

static void grow_commit(replica *r, llm_request *q)
{
    r->kv_pending += replica_held_growth(r, q->prefilled, q->target);
    /* a cache that came prefilled (from a prefill pool) or back from the host tier */
    r->kv_committed += grow_own(r, q);
}

/* the next step needs the pending prompts and each sequence's step */
static void grow_make_room(replica *r)
{
    while (r->nrunning > 1
           && r->kv_committed + r->kv_shared + r->kv_pending + r->nrunning * r->step_tokens
                  > r->config.kv_capacity_tokens)
        replica_preempt_latest(r);
}

static double grow_run_growth(replica *r, unsigned n);

static double grow_run_bound(const replica *r, double fewest)
{
    const replica_config *c = &r->config;
    double step = r->step_tokens;
    /* the room left beside what make_room counts: the sequences' own caches, the blocks
     * they share from the prefix cache and the prompts admitted but not yet prefilled */
    double room = c->kv_capacity_tokens - r->kv_committed - r->kv_shared - r->kv_pending;
    if (!c->model->window && step == 1) /* the run ends when the cache is full */
        return fmin(fewest, fmax(1, floor(room / r->nrunning)));
    /* ... as plan() sees it: room for each sequence's step, the cache growing by its
     * held tokens (sliding windows) or a round's expected tokens a step */
    double growth = c->model->window ? r->run_cache_growth : r->run_growth;
    double left = room - r->nrunning * step;
    double n = fmin(fewest, fmax(1, floor(left / growth) + 1));
    /* speculative rounds make E tokens only in expectation (floor(j E) after j): the run
     * ends before the first round whose start would not hold what the rounds before it
     * made, where make_room preempts with one event per round */
    if (c->spec_k)
        while (n > 1 && grow_run_growth((replica *)r, (unsigned)n - 1) > left)
            n--;
    return n;
}

static void grow_prefilled(replica *r, const llm_request *q, unsigned chunk)
{
    double grown = replica_held_growth(r, q->cached - chunk, q->cached);
    r->kv_committed += grown;
    r->kv_pending -= grown;
}

static void grow_decoded(replica *r, const llm_request *q, unsigned before)
{
    r->kv_committed += replica_held_growth(r, before, q->cached);
}

static void grow_decoded_tokens(replica *r, unsigned n) { r->kv_committed += n; }

/* the cache grew by a token per sequence at each of the run's boundaries: over the run
 * it held on average steps / 2 more than at its start (exact when the steps take equal
 * time) */
static void grow_run_cut(replica *r, double steps, double elapsed)
{
    double extra = r->run_growth * steps / 2 / r->config.kv_capacity_tokens * elapsed;
    r->stats.kv.area += extra;
    r->stats.life_kv.area += extra;
}

static void grow_decode_run(replica *r, unsigned n, double now)
{
    r->step->commit_run(r, n); /* a token each a step, or what the rounds make */
    if (n > 1)
        grow_run_cut(r, n - 1, now - r->run_start_s);
}

/* what the step commits over n iterations, taken back (each step's commit_run counts
 * from the run's start) */
static double grow_run_growth(replica *r, unsigned n)
{
    double before = r->kv_committed;
    r->step->commit_run(r, n);
    double grown = r->kv_committed - before;
    r->kv_committed = before;
    return grown;
}

/* its prompt and the tokens it had generated are recomputed when readmitted */
static void recompute(replica *r, llm_request *q)
{
    q->cached = 0;
    q->prefilled = 0;
    q->target = q->prompt + q->generated;
    r->stats.swap.recomputes++;
}

static void preempt_preempted(replica *r, llm_request *q, double bytes)
{
    (void)bytes;
    recompute(r, q);
}

/* ---- swap: preempt, the cache to the host tier and back ---------------------------------- */

/* Copies a sequence's cache of `bytes` between the device and the host tier: the next
 * iteration waits for it. */
static void copy_cache(replica *r, double bytes)
{
    const replica_config *c = &r->config;
    double s = kv_swap_copy_s(bytes, c->host_kv_bytes_per_s, c->host_kv_latency_s);
    r->stall_s += s;
    r->stats.swap.bytes += bytes;
    r->stats.swap.stall_s += s;
}

static double cache_bytes(const replica *r, const llm_request *q)
{
    return replica_held(r, q->cached) * r->config.kv_bytes_per_token;
}

static void swap_commit(replica *r, llm_request *q)
{
    grow_commit(r, q);
    if (!q->swapped)
        return;
    double bytes = cache_bytes(r, q); /* its cache comes back from the host tier */
    copy_cache(r, bytes);
    r->host_used_bytes -= bytes;
    r->stats.swap.swaps_in++;
    q->swapped = false;
}

/* to the host tier when there is room, else recomputed */
static void swap_preempted(replica *r, llm_request *q, double bytes)
{
    if (q->cached > 0 && r->host_used_bytes + bytes <= r->config.host_kv_bytes) {
        copy_cache(r, bytes);
        r->host_used_bytes += bytes;
        q->swapped = true;
        r->stats.swap.swaps_out++;
    } else {
        recompute(r, q);
    }
}

static const replica_cache_policy RESERVE = {
    reserve_own, reserve_own_at_admission, reserve_fits, reserve_never_fits, reserve_commit,
    nothing,
    reserve_run_bound, reserve_prefilled, reserve_decoded, reserve_decoded_tokens,
    reserve_decode_run, reserve_run_growth,
    reserve_run_cut, preempt_preempted,
};
static const replica_cache_policy PREEMPT = {
    grow_own, grow_own_at_admission, grow_fits, grow_never_fits, grow_commit, grow_make_room,
    grow_run_bound, grow_prefilled, grow_decoded, grow_decoded_tokens, grow_decode_run,
    grow_run_growth, grow_run_cut, preempt_preempted,
};
static const replica_cache_policy SWAP = {
    grow_own, grow_own_at_admission, grow_fits, grow_never_fits, swap_commit, grow_make_room,
    grow_run_bound, grow_prefilled, grow_decoded, grow_decoded_tokens, grow_decode_run,
    grow_run_growth, grow_run_cut, swap_preempted,
};

const replica_cache_policy *replica_cache_policy_of(const replica_config *c)
{
    return c->kv_policy == KV_SWAP ? &SWAP : c->kv_policy == KV_PREEMPT ? &PREEMPT : &RESERVE;
}
