/* A fleet of replicas (see serving_fleet.h): each runs on GPUs a pool grants it; the
 * fleet keeps `target` of them ordered or active, reorders after a loss (their requests
 * go back to the owner to be routed again) and drains some on a scale-in or a spot
 * notice.  Choosing a replica is in serving_fleet_route.c, the statistics and the
 * autoscaler's view in serving_fleet_stats.c.
 *
 * A slot's life: ORDERED (asked the pool for tp GPUs) -> ACTIVE when granted ->
 * DRAINING (scale-in or a preemption notice: it finishes what it holds) -> gone when
 * empty (its GPUs released) or when the pool takes its GPUs (lost).  After a loss the
 * fleet orders again at once or, when the pool has nothing to give, after its retry
 * interval.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/event_order.h"
#include "models/pool_tenants.h"
#include "models/serving_fleet_internal.h"
#include "sim/array.h"
#include "sim/fatal.h"

/* A fleet of at most this many replicas keeps its prefills' costs by token count (the
 * shared table's perf_token_memo): their state an iteration's end reads, about 1.4 KB
 * each, then fits a 32 MB last-level cache with the table's 2 MB.  Measured against the
 * same code without the table (best of alternating runs of the ladder's fleet,
 * 2026-12-06): 3% less time a request at 64 replicas, 8% at 800, 3% at 8,000, and 4%
 * more at 80,000, where the table's lines are evicted between uses and evaluating the
 * operators is cheaper than fetching them. */
#define PREFILL_COSTS_KEPT_MAX_REPLICAS 16384

static double retry_interval_s(const serving_fleet *f)
{
    return f->group.autoscaler && f->group.autoscaler->enabled
               ? f->group.autoscaler->interval_s : 60.0;
}

/* ---- slots ---------------------------------------------------------------------- */

/* A slot's state changes here only, with the counts (set-up made O(replicas^2) when
 * every change counted the slots again). */
static void set_state(serving_slot *sl, slot_state state)
{
    sl->fleet->in_state[sl->state]--;
    sl->fleet->in_state[state]++;
    sl->state = state;
}

/* The position of sl in active, or where it goes: active keeps creation order (serials
 * grow with it), as routing's ties and round robin read it. */
static unsigned active_position(const serving_fleet *f, const serving_slot *sl)
{
    unsigned lo = 0, hi = f->nactive;
    while (lo < hi) {
        unsigned mid = lo + (hi - lo) / 2;
        if (f->active[mid]->serial < sl->serial)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* The round-robin position past the end starts over, as when active was rebuilt. */
static void active_changed(serving_fleet *f)
{
    if (f->next_replica >= f->nactive)
        f->next_replica = 0;
}

static void active_add(serving_fleet *f, serving_slot *sl)
{
    unsigned at = active_position(f, sl); /* the end, unless replicas loaded out of order */
    memmove(&f->active[at + 1], &f->active[at], (f->nactive - at) * sizeof *f->active);
    f->active[at] = sl;
    f->nactive++;
    active_changed(f);
    serving_fleet_rank(f, sl);
}

static void active_remove(serving_fleet *f, serving_slot *sl)
{
    unsigned at = active_position(f, sl);
    if (at < f->nactive && f->active[at] == sl) {
        memmove(&f->active[at], &f->active[at + 1], (f->nactive - at - 1) * sizeof *f->active);
        f->nactive--;
    }
    active_changed(f);
    serving_fleet_unrank(f, sl);
}

static void set_ready(serving_fleet *f, double now)
{
    double ready = f->in_state[SLOT_ACTIVE] + f->in_state[SLOT_DRAINING];
    double held = (double)f->nslots - f->in_state[SLOT_ORDERED];
    sim_timeavg_set(&f->ready, now, ready);
    sim_timeavg_set(&f->life_ready, now, ready);
    sim_timeavg_set(&f->held, now, held * f->group.replica.tp);
}

static serving_slot *slot_new(serving_fleet *f)
{
    if (f->nslots == f->cap) { /* both from the same capacity to the same one */
        size_t cap = f->cap;
        f->active = sim_array_grow(f->active, &cap, f->nslots + 1, sizeof *f->active,
                                   "replicas");
        f->slots = sim_array_grow(f->slots, &f->cap, f->nslots + 1, sizeof *f->slots,
                                  "replicas");
    }
    /* on a cache line of its own, so that its first fields share one */
    size_t line = 64, bytes = (sizeof(serving_slot) + line - 1) / line * line;
    serving_slot *sl = aligned_alloc(line, bytes);
    if (!sl)
        sim_out_of_memory("out of memory for replicas");
    memset(sl, 0, sizeof *sl);
    sl->fleet = f;
    sl->state = SLOT_ORDERED;
    f->in_state[SLOT_ORDERED]++;
    sl->request = -1;
    sl->serial = f->next_serial++;
    sl->rank_id = SIM_RANKING_NONE;
    f->slots[f->nslots++] = sl;
    return sl;
}

/* The slot's prefix-cache tiers below GPU memory: caches of its own for the host and
 * the disk (they go with the replica's machine), the fleet's for a shared store. */
static void tiers_open(serving_slot *sl)
{
    serving_fleet *f = sl->fleet;
    sl->tiers = f->group.replica.prefix_tiers;
    for (unsigned i = 0; i < sl->tiers.n; i++) {
        prefix_tier *t = &sl->tiers.tier[i];
        t->cache = t->kind == PREFIX_TIER_SHARED ? f->shared_tier
                                                 : prefix_cache_create(f->prefix.block);
    }
}

static void tiers_close(serving_slot *sl)
{
    for (unsigned i = 0; i < sl->tiers.n; i++)
        if (sl->tiers.tier[i].kind != PREFIX_TIER_SHARED)
            prefix_cache_free(sl->tiers.tier[i].cache);
    sl->tiers.n = 0;
}

/* Folds a replica's statistics into the fleet's record of gone replicas. */
static void fold_gone(serving_fleet *f, const replica *r, const double marks[3],
                      const perf_phases *work_mark, double now, const prefix_cache *sl_cache)
{
    replica_totals_add(&f->gone, r, now, sl_cache);
    const replica_stats *st = replica_get_stats(r);
    const sim_timeavg *life[3] = { &st->life_busy, &st->life_batch, &st->life_kv };
    for (int k = 0; k < 3; k++)
        f->gone_bucket[k] += sim_timeavg_integral(life[k], now) - marks[k];
    f->gone_work = perf_phases_add(f->gone_work, st->work, 1);
    f->gone_work = perf_phases_add(f->gone_work, *work_mark, -1);
}

static void host_leave(serving_slot *sl);

/* Removes a slot whose replica holds nothing (drained, evicted, or never started). */
static void slot_remove(serving_slot *sl)
{
    serving_fleet *f = sl->fleet;
    double now = sim_engine_now(f->engine);
    if (sl->release_check)
        sim_event_cancel(f->engine, sl->release_check);
    if (sl->loaded)
        sim_event_cancel(f->engine, sl->loaded);
    host_leave(sl);
    f->requests_held -= sl->outstanding; /* 0 but for a replica freed with requests */
    if (sl->r) {
        fold_gone(f, sl->r, sl->marks, &sl->work_mark, now, sl->cache);
        replica_free(sl->r);
    }
    prefix_cache_free(sl->cache); /* a replica's cache goes with its GPUs */
    tiers_close(sl);
    if (sl->cache && f->directory) { /* which told the directory its runs went */
        prefix_directory_leave(f->directory, sl->listing.id);
        f->listed[sl->listing.id] = NULL;
    }
    size_t i = f->nslots; /* most often the newest */
    while (f->slots[--i] != sl)
        ;
    memmove(&f->slots[i], &f->slots[i + 1], (f->nslots - i - 1) * sizeof *f->slots);
    f->nslots--;
    bool was_held = sl->state != SLOT_ORDERED;
    if (sl->state == SLOT_ACTIVE)
        active_remove(f, sl);
    f->in_state[sl->state]--;
    free(sl);
    if (was_held)
        set_ready(f, now);
}

static void on_done(void *context, llm_request *q, bool dropped);

/* ---- shared and noisy GPUs ------------------------------------------------------- */

/* Detaches a slot's replica from its host before the replica goes. */
static void host_leave(serving_slot *sl)
{
    if (!sl->host)
        return;
    gpu_hosts_leave(sl->fleet->hosts, sl->host, sl->member);
    sl->host = NULL;
}

/* replica_config.prefix_chain: the chain the fleet's owner keeps for the request */
static const prefix_chain *chain_of(void *fleet, llm_request *q)
{
    serving_fleet *f = fleet;
    return &f->events.prefix(f->events.owner, q)->chain;
}

static void slot_activate(serving_slot *sl, unsigned unit)
{
    serving_fleet *f = sl->fleet;
    double now = sim_engine_now(f->engine);
    replica_config config = f->group.replica;
    sl->unit = unit;
    if (f->hosts) {
        unsigned per = f->group.units_per_gpu ? f->group.units_per_gpu : 1;
        sl->host = gpu_hosts_join(f->hosts, unit / per);
        sl->member = unit % per;
        config.on_busy = gpu_share_busy_changed;
        config.busy_context = gpu_share_member_of(sl->host->share, sl->member);
    }
    if (f->prefix.block) {
        sl->cache = prefix_cache_create(f->prefix.block);
        config.prefix = sl->cache;
        config.prefix_chain = chain_of;
        config.prefix_context = f;
        tiers_open(sl);
        config.prefix_tiers = sl->tiers;
        config.on_kv = serving_fleet_kv_changed;
        config.kv_context = sl;
    }
    config.on_load = serving_fleet_load_changed;
    config.on_load_tokens = f->rank_tokens;
    config.load_context = sl;
    config.shared_shapes = f->shapes;
    if (!(sl->r = replica_create(f->engine, &config, on_done, sl)))
        sim_out_of_memory("out of memory creating a replica");
    if (sl->host)
        gpu_share_attach(sl->host->share, sl->member, sl->r);
    if (sl->cache && f->directory) {
        sl->listing = (prefix_directory_member){ f->directory,
                                                 prefix_directory_join(f->directory) };
        prefix_cache_observe(sl->cache, prefix_directory_observe, &sl->listing);
        f->listed = sim_array_grow_zeroed(f->listed, &f->nlisted, sl->listing.id + 1,
                                          sizeof *f->listed, "the prefix directory's replicas");
        f->listed[sl->listing.id] = sl;
    }
    set_state(sl, SLOT_ACTIVE);
    sl->tick_from_s = now;
    active_add(f, sl);
    set_ready(f, now);
    f->events.ready(f->events.owner);
}

/* ---- keeping the target ----------------------------------------------------------- */

static void reconcile(serving_fleet *f);

static void on_retry(sim_engine *e, void *data)
{
    serving_fleet *f = data;
    f->retry_scheduled = false;
    reconcile(f);
}

/* A cold start's end: the weights are in, the replica takes requests. */
static void on_loaded(sim_engine *e, void *data)
{
    serving_slot *sl = data;
    sl->loaded = 0;
    slot_activate(sl, sl->unit);
}

/* The GPUs are the slot's: ready at once (the replicas of the start are loaded
 * already), or once its weights are loaded. */
static void granted(void *context, const unsigned *gpus, unsigned n)
{
    serving_slot *sl = context;
    serving_fleet *f = sl->fleet;
    if (!f->started || !(f->group.load_s > 0)) {
        slot_activate(sl, gpus[0]);
        return;
    }
    double now = sim_engine_now(f->engine);
    sl->unit = gpus[0];
    set_state(sl, SLOT_LOADING);
    f->cold_starts += now >= f->warmup_s;
    sl->loaded = sim_event_schedule(f->engine, now + f->group.load_s, EVENT_FLEET, on_loaded, sl);
    set_ready(f, now);
}

static void drain(serving_slot *sl);

static void warned(void *context, double lost_at_s)
{
    serving_slot *sl = context;
    if (sl->state == SLOT_ACTIVE) {
        drain(sl); /* no new requests; a replacement is ordered now */
        reconcile(sl->fleet);
    }
}

/* The pool took the slot's GPUs: its requests, lost with the key-value cache, go back
 * to the owner (they keep their arrival time). */
static void lost(void *context, gpu_loss why)
{
    serving_slot *sl = context;
    serving_fleet *f = sl->fleet;
    f->losses++;
    llm_request *evicted = sl->r ? replica_evict(sl->r) : NULL;
    sl->request = -1;
    slot_remove(sl);
    reconcile(f);
    while (evicted) {
        llm_request *next = evicted->next;
        f->events.reroute(f->events.owner, evicted);
        evicted = next;
    }
}

static const gpu_holder HOLDER = { granted, warned, lost };

static unsigned wanted_now(const serving_fleet *f)
{
    return f->in_state[SLOT_ORDERED] + f->in_state[SLOT_LOADING] + f->in_state[SLOT_ACTIVE];
}

/* Nothing to give now: the pool's arbiter may free another model's idle replica (the
 * pool then tells it, and it tells this fleet to try again); else try again later. */
static void short_of_gpus(serving_fleet *f)
{
    if (f->group.tenants) {
        pool_tenants_short(f->group.tenants, f);
        return;
    }
    if (!f->retry_scheduled) {
        f->retry_scheduled = true;
        sim_event_schedule(f->engine, sim_engine_now(f->engine) + retry_interval_s(f),
                           EVENT_FLEET, on_retry, f);
    }
}

/* Orders or gives back slots until ordered + active equals the target. */
static void reconcile(serving_fleet *f)
{
    if (!f->group.pool)
        return;
    while (wanted_now(f) < f->target) {
        serving_slot *sl = slot_new(f);
        int64_t request = gpu_pool_acquire(f->group.pool, f->group.replica.tp, &HOLDER, sl);
        if (request < 0) {
            slot_remove(sl);
            short_of_gpus(f);
            return;
        }
        sl->request = request; /* granted may already have run */
    }
    while (wanted_now(f) > f->target) {
        /* the newest order, else the newest load, else the newest replica */
        static const slot_state order[] = { SLOT_ORDERED, SLOT_LOADING, SLOT_ACTIVE };
        serving_slot *victim = NULL;
        for (size_t k = 0; k < 3 && !victim; k++)
            for (size_t i = f->nslots; i-- > 0 && !victim;)
                if (f->slots[i]->state == order[k])
                    victim = f->slots[i];
        if (victim->state == SLOT_ORDERED) {
            gpu_pool_cancel(f->group.pool, victim->request);
            slot_remove(victim);
        } else if (victim->state == SLOT_LOADING) { /* granted: its GPUs go back */
            gpu_pool_release(f->group.pool, victim->request);
            slot_remove(victim);
        } else {
            drain(victim);
        }
    }
}

static void on_release_check(sim_engine *e, void *data);

void serving_fleet_release_check(serving_slot *sl)
{
    if (!sl->release_check)
        sl->release_check = sim_event_schedule(sl->fleet->engine, sim_engine_now(sl->fleet->engine),
                                               EVENT_FLEET, on_release_check, sl);
}

static void drain(serving_slot *sl)
{
    bool was_active = sl->state == SLOT_ACTIVE;
    set_state(sl, SLOT_DRAINING);
    if (was_active)
        active_remove(sl->fleet, sl);
    serving_fleet_release_check(sl);
}

/* A draining replica that holds nothing more gives its GPUs back.  Checked in an event
 * of its own, never inside the replica's callback (the replica is still running). */
static void on_release_check(sim_engine *e, void *data)
{
    serving_slot *sl = data;
    sl->release_check = 0;
    if (sl->state != SLOT_DRAINING || slot_load(sl) > 0)
        return;
    serving_fleet *f = sl->fleet;
    if (f->group.pool && sl->request >= 0)
        gpu_pool_release(f->group.pool, sl->request);
    slot_remove(sl);
    reconcile(f); /* a replacement for a warned replica may now get its GPUs */
}

static void on_done(void *context, llm_request *q, bool dropped)
{
    serving_slot *sl = context;
    serving_fleet *f = sl->fleet;
    f->last_used_s = sim_engine_now(f->engine);
    if (!dropped)
        f->served += q->arrival_s >= f->warmup_s;
    if (!dropped && sl->cache) { /* its blocks stay cached (the last token has none) */
        double all = f->group.replica.kv_capacity_tokens / f->prefix.block;
        const prefix_chain *chain = &f->events.prefix(f->events.owner, q)->chain;
        prefix_cache_insert(sl->cache, chain, q->cached, (size_t)all);
        prefix_tiers_store(&sl->tiers, chain, q->cached);
    }
    f->events.done(f->events.owner, q, dropped, f->index);
    if (sl->state == SLOT_DRAINING)
        serving_fleet_release_check(sl);
    if (f->group.tenants) /* another model waiting may take a replica once this one is
                             idle: it looks in an event of its own, when the replica has
                             let the request go */
        pool_tenants_idle(f->group.tenants);
}

/* ---- a tenant of a shared pool ------------------------------------------------------ */

static double tenant_last_used(void *tenant)
{
    const serving_fleet *f = tenant;
    return f->requests_held > 0 ? INFINITY : f->last_used_s;
}

/* The newest active replica holding nothing goes, if the target is above the floor. */
static bool tenant_give_idle(void *tenant)
{
    serving_fleet *f = tenant;
    if (f->target <= f->group.min)
        return false;
    for (size_t i = f->nslots; i-- > 0;) {
        serving_slot *sl = f->slots[i];
        if (sl->state == SLOT_ACTIVE && slot_load(sl) == 0) {
            f->target--;
            drain(sl);
            return true;
        }
    }
    return false;
}

static void tenant_retry(void *tenant) { reconcile(tenant); }

static const pool_tenant_ops TENANT_OPS = { tenant_last_used, tenant_give_idle, tenant_retry };

/* ---- life cycle ---------------------------------------------------------------------- */

serving_fleet *serving_fleet_create(sim_engine *engine, const serving_fleet_config *config)
{
    serving_fleet *f = calloc(1, sizeof *f);
    if (!f)
        sim_out_of_memory("out of memory creating a serving fleet");
    f->engine = engine;
    f->group = config->group;
    f->index = config->index;
    f->routing = config->routing;
    f->events = config->events;
    f->prefix = config->prefix;
    f->warmup_s = config->warmup_s;
    f->seed = config->seed;
    f->replication = config->replication;
    if (f->group.max < f->group.replicas)
        f->group.max = f->group.replicas;
    f->target = f->group.replicas;
    f->rank_tokens = f->routing.policy == ROUTE_SHORTEST_TOKENS;
    if (!(f->shapes = replica_shapes_create(&f->group.replica,
                                            f->group.max <= PREFILL_COSTS_KEPT_MAX_REPLICAS)))
        sim_out_of_memory("out of memory creating a serving fleet");
    if (f->prefix.block && f->routing.policy == ROUTE_PREFIX_AFFINITY)
        f->directory = prefix_directory_create(f->prefix.block);
    const prefix_tiers *tiers = &f->group.replica.prefix_tiers;
    for (unsigned i = 0; f->prefix.block && i < tiers->n; i++)
        if (tiers->tier[i].kind == PREFIX_TIER_SHARED)
            f->shared_tier = prefix_cache_create(f->prefix.block);
    double now = sim_engine_now(engine);
    sim_timeavg_init(&f->ready, now, 0);
    sim_timeavg_init(&f->life_ready, now, 0);
    sim_timeavg_init(&f->held, now, 0);
    f->last_used_s = now;
    gpu_hosts_config hosts = { f->group.sharing, f->group.units_per_gpu, f->group.noisy,
                               f->group.pool_name, f->seed, f->replication };
    if (gpu_hosts_needed(&hosts)) { /* several models on a pool: the pool's registry */
        f->owns_hosts = !f->group.tenants;
        f->hosts = f->owns_hosts ? gpu_hosts_create(engine, &hosts)
                                 : pool_tenants_hosts(f->group.tenants, &hosts);
    }
    if (f->group.tenants)
        pool_tenants_add(f->group.tenants, &TENANT_OPS, f);
    return f;
}

void serving_fleet_start(serving_fleet *f)
{
    if (!f->group.pool) { /* fixed replicas, ready at once */
        for (unsigned k = 0; k < f->group.replicas; k++)
            slot_activate(slot_new(f), k * f->group.replica.tp);
    } else {
        reconcile(f);
    }
    f->started = true;
}

void serving_fleet_free(serving_fleet *f)
{
    if (!f)
        return;
    for (size_t k = 0; k < f->nslots; k++) {
        if (!f->owns_hosts) /* the other models' replicas on its GPUs go on */
            host_leave(f->slots[k]);
        replica_free(f->slots[k]->r);
        prefix_cache_free(f->slots[k]->cache);
        tiers_close(f->slots[k]);
        free(f->slots[k]);
    }
    if (f->owns_hosts)
        gpu_hosts_free(f->hosts);
    replica_shapes_free(f->shapes); /* after its replicas */
    free(f->slots);
    free(f->active);
    free(f->loads);
    free(f->outstanding);
    sim_ranking_release(&f->by_requests);
    sim_ranking_release(&f->by_tokens);
    free(f->ranked);
    sim_ids_release(&f->rank_ids);
    prefix_directory_free(f->directory); /* after the caches, which tell it as they go */
    prefix_cache_free(f->shared_tier);
    free(f->cached);
    free(f->listed);
    free(f->rank_listing);
    free(f);
}

void serving_fleet_set_target(serving_fleet *f, unsigned replicas)
{
    f->target = replicas;
    reconcile(f);
}

unsigned serving_fleet_target(const serving_fleet *f) { return f->target; }
