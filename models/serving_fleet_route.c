/* Choosing a fleet's replica for a request (see serving_fleet.h): round robin, fewest
 * outstanding requests or tokens, the better of two at random, the longest cached
 * prefix within a load bound, or a scenario's function.  (With prefix caching the
 * replica finds the request's cached prefix when it admits it.) */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/serving_fleet_internal.h"
#include "sim/array.h"
#include "sim/fatal.h"

static const char *const ROUTING_NAMES[] = {
    "round_robin", "least_outstanding", "shortest_tokens", "power_of_two", "prefix_affinity",
    "custom",
};

const char *routing_policy_name(routing_policy p) { return ROUTING_NAMES[p]; }

int routing_policy_parse(const char *name, routing_policy *out)
{
    for (int i = 0; i < ROUTE_CUSTOM; i++) /* "custom" is not a name a scenario gives */
        if (!strcmp(name, ROUTING_NAMES[i])) {
            *out = (routing_policy)i;
            return 0;
        }
    return -1;
}

/* Blocks of a replica's cache its running sequences leave free, holding kv_share of it. */
static size_t free_blocks(const serving_fleet *f, double kv_share)
{
    double capacity = f->group.replica.kv_capacity_tokens;
    double used = kv_share * capacity;
    double left = floor((capacity - used) / f->prefix.block);
    return left > 0 ? (size_t)left : 0;
}

/* Tokens of the prompt a cache may hold: short of the last token, whose computation
 * gives the first output token. */
static unsigned cacheable(const llm_request *q) { return q->prompt > 1 ? q->prompt - 1 : 0; }

void serving_fleet_kv_changed(void *slot, double kv_share)
{
    serving_slot *sl = slot;
    if (sl->cache)
        prefix_cache_trim(sl->cache, free_blocks(sl->fleet, kv_share));
}

/* Highest random weight (rendezvous) hashing of the session on the replica: the same
 * replica while the fleet keeps it, a new one moving only its own share. */
static uint64_t rendezvous(uint64_t own, uint64_t serial)
{
    uint64_t x = own * 0x9e3779b97f4a7c15ULL ^ (serial + 0x632be59bd9b4e019ULL);
    x ^= x >> 31;
    x *= 0xd6e8feb86659fd93ULL;
    return x ^ (x >> 32);
}

/* ---- the rankings ------------------------------------------------------------------ */

void serving_fleet_rank(serving_fleet *f, serving_slot *sl)
{
    uint32_t id = sim_ids_take(&f->rank_ids);
    f->ranked = sim_array_grow(f->ranked, &f->ranked_cap, (size_t)id + 1, sizeof *f->ranked,
                               "replicas");
    f->ranked[id] = (struct ranked_entry){ sl, sl->r };
    if (f->directory) {
        f->rank_listing = sim_array_grow(f->rank_listing, &f->rank_listing_cap, (size_t)id + 1,
                                         sizeof *f->rank_listing, "replicas");
        f->rank_listing[id] = sl->listing.id;
    }
    sl->rank_id = id;
    sim_ranking_insert(&f->by_requests, id, slot_load(sl), sl->serial);
    if (f->rank_tokens)
        sim_ranking_insert(&f->by_tokens, id, slot_load_tokens(sl), sl->serial);
}

void serving_fleet_unrank(serving_fleet *f, serving_slot *sl)
{
    uint32_t id = sl->rank_id;
    if (id == SIM_RANKING_NONE)
        return;
    sim_ranking_remove(&f->by_requests, id);
    if (f->rank_tokens)
        sim_ranking_remove(&f->by_tokens, id);
    sim_ids_give(&f->rank_ids, id);
    sl->rank_id = SIM_RANKING_NONE;
}

void serving_fleet_load_changed(void *slot)
{
    serving_slot *sl = slot;
    serving_fleet *f = sl->fleet;
    unsigned n = slot_load(sl);
    f->requests_held = f->requests_held - sl->outstanding + n;
    sl->outstanding = n;
    if (sl->rank_id == SIM_RANKING_NONE)
        return;
    sim_ranking_update(&f->by_requests, sl->rank_id, n);
    if (f->rank_tokens)
        sim_ranking_update(&f->by_tokens, sl->rank_id, slot_load_tokens(sl));
}

static serving_slot *ranked_slot(const serving_fleet *f, uint32_t id)
{
    return id == SIM_RANKING_NONE ? NULL : f->ranked[id].slot;
}

/* The active replica with the fewest requests outstanding, the first created among equals
 * (the rankings' order); NULL when none is active. */
static serving_slot *least_outstanding(const serving_fleet *f)
{
    return ranked_slot(f, sim_ranking_least(&f->by_requests));
}

static serving_slot *shortest_tokens(const serving_fleet *f)
{
    return ranked_slot(f, sim_ranking_least(&f->by_tokens));
}

/* ---- checking the rankings against a look at every replica ------------------------------- */

static bool checking;

void serving_fleet_check_rankings(bool on) { checking = on; }

/* What the rankings answer, against the scan they replace: the first active replica
 * (creation order) with the least load.  A mismatch is a bug: a change of load the
 * replica did not report. */
static void check_rankings(const serving_fleet *f)
{
    unsigned n = f->nactive, fewest = 0, best = 0, best_tokens = 0;
    double least = 0;
    for (unsigned i = 0; i < n; i++) {
        unsigned load = slot_load(f->active[i]);
        double t = slot_load_tokens(f->active[i]);
        if (i == 0 || load < fewest)
            best = i, fewest = load;
        if (i == 0 || t < least)
            best_tokens = i, least = t;
    }
    uint64_t held = 0;
    for (size_t k = 0; k < f->nslots; k++)
        held += f->slots[k]->r ? slot_load(f->slots[k]) : 0;
    if (held != f->requests_held)
        sim_fatal("fleet rankings: %llu requests held, %llu counted",
                  (unsigned long long)f->requests_held, (unsigned long long)held);
    if (n == 0)
        return;
    if (least_outstanding(f) != f->active[best])
        sim_fatal("fleet rankings: the least outstanding replica is #%llu, the ranking says #%llu",
                  (unsigned long long)f->active[best]->serial,
                  (unsigned long long)least_outstanding(f)->serial);
    if (f->rank_tokens && shortest_tokens(f) != f->active[best_tokens])
        sim_fatal("fleet rankings: the shortest-tokens replica is #%llu, the ranking says #%llu",
                  (unsigned long long)f->active[best_tokens]->serial,
                  (unsigned long long)shortest_tokens(f)->serial);
    /* the replica kept beside each ranked slot, which serving_fleet_fetch_route fetches
     * (a stale one would only fetch the wrong lines: nothing else would show it) */
    for (unsigned i = 0; i < n; i++) {
        const serving_slot *sl = f->active[i];
        if (sl->rank_id == SIM_RANKING_NONE || f->ranked[sl->rank_id].slot != sl
            || f->ranked[sl->rank_id].r != sl->r)
            sim_fatal("fleet rankings: replica #%llu's ranked entry is not its own",
                      (unsigned long long)sl->serial);
        /* prefix affinity reads loads, creation order and directory ids from them */
        if (sim_ranking_value(&f->by_requests, sl->rank_id) != slot_load(sl)
            || (f->directory && f->rank_listing[sl->rank_id] != sl->listing.id))
            sim_fatal("fleet rankings: replica #%llu's ranked load or listing is stale",
                      (unsigned long long)sl->serial);
    }
}

/* What choose_affinity answers (the rule is there), from a look at each active replica
 * in creation order: the reference it is checked against. */
static serving_slot *affinity_look_at_each(serving_fleet *f, const fleet_prefix *p,
                                           const llm_request *q)
{
    unsigned n = f->nactive;
    serving_slot **a = f->active;
    f->outstanding = sim_array_grow(f->outstanding, &f->noutstanding, n,
                                    sizeof *f->outstanding, "the loads to route by");
    unsigned fewest = UINT32_MAX;
    for (unsigned i = 0; i < n; i++) {
        f->outstanding[i] = slot_load(a[i]);
        if (f->outstanding[i] < fewest)
            fewest = f->outstanding[i];
    }
    double bound = ceil((1 + f->prefix.affinity_bound) * (fewest + 1.0));
    f->cached = sim_array_grow(f->cached, &f->ncached, prefix_directory_ids(f->directory),
                               sizeof *f->cached, "the cached prefixes to route by");
    prefix_directory_longest(f->directory, &p->chain, cacheable(q), f->cached);
    int best = -1;
    unsigned best_hit = 0, best_load = 0;
    uint64_t best_hash = 0;
    for (unsigned i = 0; i < n; i++) {
        unsigned load = f->outstanding[i];
        if (load + 1 > bound)
            continue;
        unsigned hit = f->cached[a[i]->listing.id];
        uint64_t hash = rendezvous(p->chain.own, a[i]->serial);
        bool better = best < 0 || hit > best_hit
                      || (hit == best_hit && (load < best_load
                                              || (load == best_load && hash > best_hash)));
        if (hit == 0 && best_hit == 0 && best >= 0) /* nothing cached: the session's own */
            better = hash > best_hash;
        if (better) {
            best = (int)i;
            best_hit = hit;
            best_load = load;
            best_hash = hash;
        }
    }
    return best >= 0 ? a[best] : NULL;
}

/* ---- choosing ----------------------------------------------------------------------- */

/* The best candidate so far for prefix affinity (by rank id; NONE: none yet). */
typedef struct affinity_pick {
    uint32_t id;
    unsigned hit, load;
    uint64_t hash, serial;
} affinity_pick;

/* Weighs a candidate (its requests within the bound) as prefix affinity orders them: the
 * longer cached prefix; between two holding the same prefix, the fewer requests, then
 * the higher hash; between two holding nothing, the higher hash (the session's own
 * replica, whatever their loads); last, the first created.  A total order, so the pick
 * is the same whatever the order the candidates come in. */
static void weigh(affinity_pick *p, uint32_t id, uint64_t serial, unsigned hit, unsigned load,
                  uint64_t hash)
{
    bool better;
    if (p->id == SIM_RANKING_NONE)
        better = true;
    else if (hit != p->hit)
        better = hit > p->hit;
    else if (hit > 0 && load != p->load)
        better = load < p->load;
    else if (hash != p->hash)
        better = hash > p->hash;
    else
        better = serial < p->serial;
    if (better)
        *p = (affinity_pick){ id, hit, load, hash, serial };
}

/* The conversation's own run's holders: the one or two replicas that served it. */
typedef struct own_holders {
    serving_fleet *f;
    const prefix_chain *chain;
    unsigned tokens;
    double bound;
    affinity_pick pick;
} own_holders;

static void weigh_own_holder(void *context, unsigned listing, uint32_t blocks)
{
    (void)blocks;
    own_holders *o = context;
    serving_slot *sl = listing < o->f->nlisted ? o->f->listed[listing] : NULL;
    if (!sl || sl->rank_id == SIM_RANKING_NONE) /* not active: not routed to */
        return;
    unsigned load = (unsigned)sim_ranking_value(&o->f->by_requests, sl->rank_id);
    if (load + 1 > o->bound)
        return;
    weigh(&o->pick, sl->rank_id, sl->serial,
          prefix_cache_longest(sl->cache, o->chain, o->tokens), load,
          rendezvous(o->chain->own, sl->serial));
}

/* Prefix affinity with bounded load: among the replicas whose requests, with this one,
 * stay within ceil((1 + bound) x (fewest + 1)), fewest being the least loaded
 * replica's, the one with the longest cached prefix of the request; ties go to the
 * fewer requests, then to the session's rendezvous hash (which alone decides when
 * nothing is cached).  The least loaded replica always qualifies.  The bound is on the
 * least loaded rather than the mean (as consistent hashing with bounded loads has it):
 * against the mean, a replica that holds nothing, new or unlucky, never earns a hit,
 * and starves while the others stay under it.
 *
 * A chain of a shared prompt and the conversation's own run (not a trace's block ids)
 * whose request reaches past the shared prompt looks first at the own run's holders
 * within the bound, from the directory: one of them holding the whole shared prompt and
 * more (its hit over `whole`, checked) holds more than any replica that lacks the own
 * run can, so the best of them is the answer without a look at the others.  Otherwise
 * every replica is weighed from the ranking's array (its requests and its creation
 * order) and what it holds (the same for all where all hold the shared prompt as far as
 * the request goes, else the directory's answer by id), reading no replica's memory. */
static serving_slot *choose_affinity(serving_fleet *f, const fleet_prefix *p,
                                     const llm_request *q)
{
    const prefix_chain *chain = &p->chain;
    const sim_ranking *by = &f->by_requests;
    unsigned b = f->prefix.block, tokens = cacheable(q), n = tokens / b;
    unsigned s0 = chain->shared_tokens / b, whole = (s0 < n ? s0 : n) * b;
    unsigned fewest = (unsigned)sim_ranking_value(by, sim_ranking_least(by));
    double bound = ceil((1 + f->prefix.affinity_bound) * (fewest + 1.0));
    if (!chain->ids && n > s0) {
        own_holders o = { f, chain, tokens, bound, { .id = SIM_RANKING_NONE } };
        prefix_directory_holders(f->directory, prefix_chain_own_key(chain), weigh_own_holder,
                                 &o);
        if (o.pick.id != SIM_RANKING_NONE && o.pick.hit > whole)
            return f->ranked[o.pick.id].slot;
    }
    /* No own holder within the bound.  Where every replica holds the shared prompt as
     * far as the request goes (or there is none), every candidate holds the same: no
     * need to ask the directory for each. */
    bool same = !chain->ids
                && (whole == 0
                    || prefix_directory_all_hold(f->directory, prefix_chain_shared_key(chain),
                                                 whole / b));
    if (!same) {
        f->cached = sim_array_grow(f->cached, &f->ncached, prefix_directory_ids(f->directory),
                                   sizeof *f->cached, "the cached prefixes to route by");
        prefix_directory_longest(f->directory, chain, tokens, f->cached);
    }
    affinity_pick pick = { .id = SIM_RANKING_NONE };
    for (size_t i = 0, ranked = sim_ranking_count(by); i < ranked; i++) {
        sim_ranking_entry e = sim_ranking_entry_at(by, i);
        unsigned load = (unsigned)e.value;
        if (load + 1 > bound)
            continue;
        uint32_t id = sim_ranking_entry_id(e);
        uint64_t serial = sim_ranking_entry_tie(e);
        weigh(&pick, id, serial, same ? whole : f->cached[f->rank_listing[id]], load,
              rendezvous(chain->own, serial));
    }
    return pick.id == SIM_RANKING_NONE ? NULL : f->ranked[pick.id].slot;
}

/* Whether the routing consults the replicas' prefix caches (choose_affinity), rather
 * than choose(). */
static bool by_affinity(const serving_fleet *f)
{
    return f->prefix.block && f->routing.policy == ROUTE_PREFIX_AFFINITY;
}

/* The ranking choose() takes its replica from where the policy needs no request (least
 * outstanding, prefix affinity without a prefix cache, shortest tokens); NULL for the
 * others.  serving_fleet_fetch_route fetches its least ahead. */
static const sim_ranking *plain_ranking(const serving_fleet *f)
{
    switch (f->routing.policy) {
    case ROUTE_LEAST_OUTSTANDING:
    case ROUTE_PREFIX_AFFINITY:
        return &f->by_requests;
    case ROUTE_SHORTEST_TOKENS:
        return &f->by_tokens;
    case ROUTE_CUSTOM:
    case ROUTE_ROUND_ROBIN:
    case ROUTE_POWER_OF_TWO:
        break;
    }
    return NULL;
}

/* The active replica with the fewest tokens left now, the first created among equals.  A
 * replica in a fast decode run has made tokens since its last event, which the ranking
 * (updated at events) does not hold and one event per iteration would: so a look at each,
 * O(replicas x batch) an arrival, the price of this policy's exactness. */
static serving_slot *shortest_tokens_now(const serving_fleet *f)
{
    serving_slot *best = NULL;
    double least = 0;
    for (unsigned i = 0; i < f->nactive; i++) {
        double t = slot_load_tokens_now(f->active[i]);
        if (!best || t < least)
            best = f->active[i], least = t;
    }
    return best;
}

/* The active replica for a request; NULL with the message in err when a custom policy
 * failed. */
static serving_slot *choose(serving_fleet *f, unsigned prompt, unsigned output, char *err,
                            size_t err_size)
{
    unsigned n = f->nactive;
    serving_slot **a = f->active;
    switch (f->routing.policy) {
    case ROUTE_CUSTOM: {
        f->loads = sim_array_grow(f->loads, &f->nloads, n, sizeof *f->loads,
                                  "the loads to route by");
        for (unsigned i = 0; i < n; i++)
            f->loads[i] = (replica_load){ slot_load(a[i]), slot_load_tokens_now(a[i]) };
        int i = f->routing.custom(f->routing.custom_context, f->loads, n, prompt, output,
                                  sim_engine_now(f->engine), err, err_size);
        if (i >= 0 && (unsigned)i >= n) {
            snprintf(err, err_size, "workload %s: the routing function chose replica %d of %u",
                     f->routing.workload, i + 1, n);
            return NULL;
        }
        return i < 0 ? NULL : a[i];
    }
    case ROUTE_ROUND_ROBIN: {
        unsigned i = f->next_replica;
        f->next_replica = (i + 1) % n;
        return a[i];
    }
    case ROUTE_SHORTEST_TOKENS: /* one event per iteration keeps the ranking as of now */
        return f->group.replica.reference ? ranked_slot(f, sim_ranking_least(&f->by_tokens))
                                          : shortest_tokens_now(f);
    case ROUTE_LEAST_OUTSTANDING:
    case ROUTE_PREFIX_AFFINITY: /* without a prefix cache: the least outstanding */
        return ranked_slot(f, sim_ranking_least(plain_ranking(f)));
    case ROUTE_POWER_OF_TWO: {
        unsigned x = (unsigned)gsl_rng_uniform_int(f->routing.rng, n);
        unsigned y = (unsigned)gsl_rng_uniform_int(f->routing.rng, n);
        return slot_load(a[y]) < slot_load(a[x]) ? a[y] : a[x];
    }
    }
    return a[0];
}

unsigned serving_fleet_active(const serving_fleet *f) { return f->nactive; }

unsigned serving_fleet_least_load(const serving_fleet *f)
{
    if (checking)
        check_rankings(f);
    const serving_slot *least = least_outstanding(f);
    return least ? least->outstanding : UINT_MAX;
}

bool serving_fleet_saturated(const serving_fleet *f, unsigned threshold)
{
    if (checking)
        check_rankings(f);
    const serving_slot *least = least_outstanding(f);
    return !least || least->outstanding >= threshold;
}

/* The active replica the routing picks for q: 1 with *out set; 0 with none active or the
 * run stopped at this instant; -1 when a custom policy failed (the message in err). */
static int pick(serving_fleet *f, llm_request *q, serving_slot **out, char *err,
                size_t err_size)
{
    if (f->nactive == 0)
        return 0;
    bool affinity = by_affinity(f);
    if (checking)
        check_rankings(f);
    serving_slot *sl;
    if (affinity) {
        /* what each holds now (a reserving replica's memory stays over a run: nothing
         * to ask, and no replica read) */
        if (f->group.replica.kv_policy != KV_RESERVE)
            for (unsigned i = 0; i < f->nactive; i++)
                replica_kv_now(f->active[i]->r);
        const fleet_prefix *p = f->events.prefix(f->events.owner, q);
        sl = choose_affinity(f, p, q);
        if (checking && sl != affinity_look_at_each(f, p, q))
            sim_fatal("fleet affinity: replica #%llu chosen, a look at each says #%llu",
                      (unsigned long long)sl->serial,
                      (unsigned long long)affinity_look_at_each(f, p, q)->serial);
    } else {
        sl = choose(f, q->prompt, q->output, err, err_size);
    }
    if (!sl)
        return -1;
    if (sim_engine_stopped(f->engine)) /* another part failed at this instant */
        return 0;
    *out = sl;
    q->unit = sl->unit;
    f->last_used_s = sim_engine_now(f->engine);
    return 1;
}

void serving_fleet_fetch_route(const serving_fleet *f)
{
    const sim_ranking *by = by_affinity(f) ? NULL : plain_ranking(f);
    uint32_t id = by ? sim_ranking_least(by) : SIM_RANKING_NONE;
    if (id == SIM_RANKING_NONE)
        return;
    __builtin_prefetch(f->ranked[id].slot);
    replica_fetch_ahead(f->ranked[id].r);
}

static int route(serving_fleet *f, llm_request *q, bool prefilled, char *err, size_t err_size)
{
    serving_slot *sl = NULL;
    int got = pick(f, q, &sl, err, err_size);
    if (got <= 0)
        return got < 0 ? -1 : f->nactive == 0 ? 0 : 1;
    if (prefilled)
        replica_enqueue_prefilled(sl->r, q);
    else
        replica_enqueue(sl->r, q);
    return 1;
}

int serving_fleet_route(serving_fleet *f, llm_request *q, char *err, size_t err_size)
{
    return route(f, q, false, err, err_size);
}

int serving_fleet_route_prefilled(serving_fleet *f, llm_request *q, char *err, size_t err_size)
{
    return route(f, q, true, err, err_size);
}

/* ---- binding a cache to its replica before it travels -------------------------------- */

/* Counts q in or out of sl's load (bound, its cache on its way). */
static void count_inbound(serving_slot *sl, const llm_request *q, int sign)
{
    sl->inbound += sign;
    sl->inbound_tokens += sign * (double)(q->output - q->generated);
    serving_fleet_load_changed(sl);
    if (sl->state == SLOT_DRAINING) /* it may hold nothing now */
        serving_fleet_release_check(sl);
}

int serving_fleet_bind(serving_fleet *f, llm_request *q, fleet_binding *b, char *err,
                       size_t err_size)
{
    serving_slot *sl = NULL;
    int got = pick(f, q, &sl, err, err_size);
    if (got <= 0)
        return got;
    b->serial = sl->serial;
    replica_kv_now(sl->r);
    q->brought_held = replica_prefix_held(sl->r, q);
    count_inbound(sl, q, +1);
    return 1;
}

/* The slot of the replica created serial-th, or NULL once it is gone: slots stay in
 * creation order (slot_new appends, slot_remove keeps the order). */
static serving_slot *slot_of(const serving_fleet *f, uint64_t serial)
{
    size_t lo = 0, hi = f->nslots;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (f->slots[mid]->serial < serial)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < f->nslots && f->slots[lo]->serial == serial ? f->slots[lo] : NULL;
}

/* The bound replica, while it can still take q: running, or draining what it holds. */
static serving_slot *bound_slot(const serving_fleet *f, const fleet_binding *b)
{
    serving_slot *sl = slot_of(f, b->serial);
    return sl && sl->r && (sl->state == SLOT_ACTIVE || sl->state == SLOT_DRAINING) ? sl : NULL;
}

bool serving_fleet_deliver(serving_fleet *f, const fleet_binding *b, llm_request *q)
{
    serving_slot *sl = bound_slot(f, b);
    if (!sl)
        return false;
    count_inbound(sl, q, -1);
    q->unit = sl->unit;
    replica_enqueue_prefilled(sl->r, q);
    return true;
}

void serving_fleet_unbind(serving_fleet *f, const fleet_binding *b, llm_request *q)
{
    serving_slot *sl = bound_slot(f, b);
    q->brought_held = 0; /* it will not travel */
    if (sl)
        count_inbound(sl, q, -1);
}
