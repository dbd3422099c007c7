/* The replicas of a serving workload (see serving_internal.h): each runs on GPUs a pool
 * grants it; the group keeps `target` of them ordered or active, reorders after a loss
 * (their requests go back to be routed again) and drains some on a scale-in or a spot
 * notice.  Routing is in serving_route.c, autoscaling in serving_autoscale.c, the
 * statistics in serving_fleet_stats.c.
 *
 * A slot's life: ORDERED (asked the pool for tp GPUs) -> ACTIVE when granted ->
 * DRAINING (scale-in or a preemption notice: it finishes what it holds) -> gone when
 * empty (its GPUs released) or when the pool takes its GPUs (lost).  After a loss the
 * group orders again at once or, when the pool has nothing to give, after its retry
 * interval.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/serving_internal.h"
#include "sim/fatal.h"

static double retry_interval_s(const serving_group *g)
{
    return g->config.autoscaler && g->config.autoscaler->enabled
               ? g->config.autoscaler->interval_s : 60.0;
}

/* ---- slots ---------------------------------------------------------------------- */

static unsigned count_state(const serving_group *g, slot_state state)
{
    unsigned n = 0;
    for (size_t i = 0; i < g->nslots; i++)
        n += g->slots[i]->state == state;
    return n;
}

static void rebuild_active(serving_group *g)
{
    g->nactive = 0;
    for (size_t i = 0; i < g->nslots; i++)
        if (g->slots[i]->state == SLOT_ACTIVE)
            g->active[g->nactive++] = g->slots[i];
    if (g->next_replica >= g->nactive)
        g->next_replica = 0;
}

static void set_ready(serving_group *g, double now)
{
    double ready = 0;
    for (size_t i = 0; i < g->nslots; i++)
        ready += g->slots[i]->state != SLOT_ORDERED;
    sim_timeavg_set(&g->ready, now, ready);
    sim_timeavg_set(&g->life_ready, now, ready);
}

static serving_slot *slot_new(serving_group *g)
{
    if (g->nslots == g->cap) {
        size_t cap = g->cap ? 2 * g->cap : 8;
        serving_slot **slots = realloc(g->slots, cap * sizeof *slots);
        serving_slot **active = realloc(g->active, cap * sizeof *active);
        if (!slots || !active)
            sim_fatal("out of memory for replicas");
        g->slots = slots;
        g->active = active;
        g->cap = cap;
    }
    serving_slot *sl = calloc(1, sizeof *sl);
    if (!sl)
        sim_fatal("out of memory for replicas");
    sl->s = g->s;
    sl->group = g;
    sl->state = SLOT_ORDERED;
    sl->request = -1;
    sl->serial = g->next_serial++;
    g->slots[g->nslots++] = sl;
    return sl;
}

/* Folds a replica's statistics into the group's record of gone replicas. */
static void fold_gone(serving_group *g, const replica *r, const double marks[3], double now)
{
    const replica_stats *st = replica_get_stats(r);
    g->gone_busy += sim_timeavg_integral(&st->busy, now);
    g->gone_batch += sim_timeavg_integral(&st->batch, now);
    g->gone_kv += sim_timeavg_integral(&st->kv, now);
    const sim_timeavg *life[3] = { &st->life_busy, &st->life_batch, &st->life_kv };
    for (int k = 0; k < 3; k++)
        g->gone_bucket[k] += sim_timeavg_integral(life[k], now) - marks[k];
    g->gone_kv_preemptions += st->preemptions;
    g->gone_events += st->iterations_events;
    g->gone_batch_max = fmax(g->gone_batch_max, st->batch.max);
    g->gone_kv_max = fmax(g->gone_kv_max, st->life_kv.max);
}

static void host_leave(serving_slot *sl);

/* Removes a slot whose replica holds nothing (drained, evicted, or never started). */
static void slot_remove(serving_slot *sl)
{
    serving_group *g = sl->group;
    double now = sim_engine_now(g->s->engine);
    if (sl->release_check)
        sim_event_cancel(g->s->engine, sl->release_check);
    host_leave(sl);
    if (sl->r) {
        fold_gone(g, sl->r, sl->marks, now);
        replica_free(sl->r);
    }
    size_t i = 0;
    while (g->slots[i] != sl)
        i++;
    memmove(&g->slots[i], &g->slots[i + 1], (g->nslots - i - 1) * sizeof *g->slots);
    g->nslots--;
    bool was_ready = sl->state != SLOT_ORDERED;
    free(sl);
    rebuild_active(g);
    if (was_ready)
        set_ready(g, now);
}

static void on_done(void *context, llm_request *q, bool dropped);

/* ---- shared and noisy GPUs ------------------------------------------------------- */

static bool hosts_needed(const serving_group *g)
{
    return g->config.noisy || (g->config.sharing && g->config.sharing->mode != SHARE_NONE);
}

static void apply_speed(void *member_context, double compute_factor, double memory_factor)
{
    if (member_context) /* a member with no replica now */
        replica_set_speed(member_context, compute_factor, memory_factor);
}

static gpu_host *host_open(serving_group *g, unsigned gpu)
{
    if (gpu >= g->nhosts) {
        size_t n = g->nhosts ? g->nhosts : 8;
        while (n <= gpu)
            n *= 2;
        gpu_host **hosts = realloc(g->hosts, n * sizeof *hosts);
        if (!hosts)
            sim_fatal("out of memory for GPU hosts");
        memset(hosts + g->nhosts, 0, (n - g->nhosts) * sizeof *hosts);
        g->hosts = hosts;
        g->nhosts = n;
    }
    if (g->hosts[gpu])
        return g->hosts[gpu];
    gpu_host *h = calloc(1, sizeof *h);
    static const sharing_spec whole = { .mode = SHARE_NONE };
    const sharing_spec *spec = g->config.sharing ? g->config.sharing : &whole;
    unsigned members = g->config.units_per_gpu ? g->config.units_per_gpu : 1;
    if (!h || !(h->share = gpu_share_create(spec, members, apply_speed)))
        sim_fatal("out of memory for GPU hosts");
    h->gpu = gpu;
    if (g->config.noisy) {
        char stream[256];
        /* a host reopened (after a repair) draws new noise: the stream names the opening */
        snprintf(stream, sizeof stream, "%s.noisy.%u.%llu",
                 g->config.pool_name ? g->config.pool_name : "pool", gpu,
                 (unsigned long long)g->host_opens++);
        h->rng = sim_rng_stream(g->s->config.seed, g->s->config.replication, stream);
        h->noise = noisy_create(g->s->engine, g->config.noisy, h->rng,
                                gpu_share_noise_changed, h->share);
        if (!h->noise)
            sim_fatal("out of memory for GPU hosts");
        noisy_start(h->noise);
    }
    g->hosts[gpu] = h;
    return h;
}

static void host_close(serving_group *g, gpu_host *h)
{
    g->hosts[h->gpu] = NULL;
    noisy_free(h->noise);
    gsl_rng_free(h->rng);
    gpu_share_free(h->share);
    free(h);
}

/* Detaches a slot's replica from its host before the replica goes. */
static void host_leave(serving_slot *sl)
{
    gpu_host *h = sl->host;
    if (!h)
        return;
    gpu_share_set_busy(h->share, sl->member, false);
    gpu_share_attach(h->share, sl->member, NULL);
    sl->host = NULL;
    if (--h->attached == 0)
        host_close(sl->group, h);
}

static void slot_activate(serving_slot *sl, unsigned unit)
{
    serving_group *g = sl->group;
    double now = sim_engine_now(g->s->engine);
    replica_config config = g->config.replica;
    if (hosts_needed(g)) {
        unsigned per = g->config.units_per_gpu ? g->config.units_per_gpu : 1;
        sl->host = host_open(g, unit / per);
        sl->member = unit % per;
        sl->host->attached++;
        config.on_busy = gpu_share_busy_changed;
        config.busy_context = gpu_share_member_of(sl->host->share, sl->member);
    }
    if (!(sl->r = replica_create(g->s->engine, &config, on_done, sl)))
        sim_fatal("out of memory creating a replica");
    if (sl->host)
        gpu_share_attach(sl->host->share, sl->member, sl->r);
    sl->state = SLOT_ACTIVE;
    sl->tick_from_s = now;
    rebuild_active(g);
    set_ready(g, now);
    fleet_flush_pending(g->s);
}

/* ---- keeping the target ----------------------------------------------------------- */


static void on_retry(sim_engine *e, void *data)
{
    serving_group *g = data;
    g->retry_scheduled = false;
    fleet_reconcile(g);
}

static void granted(void *context, const unsigned *gpus, unsigned n)
{
    slot_activate(context, gpus[0]);
}

static void drain(serving_slot *sl);

static void warned(void *context, double lost_at_s)
{
    serving_slot *sl = context;
    if (sl->state == SLOT_ACTIVE) {
        drain(sl); /* no new requests; a replacement is ordered now */
        fleet_reconcile(sl->group);
    }
}

/* The pool took the slot's GPUs: its requests, lost with the key-value cache, are
 * routed again (they keep their arrival time). */
static void lost(void *context, gpu_loss why)
{
    serving_slot *sl = context;
    serving_group *g = sl->group;
    serving *s = g->s;
    g->losses++;
    llm_request *evicted = sl->r ? replica_evict(sl->r) : NULL;
    sl->request = -1;
    slot_remove(sl);
    fleet_reconcile(g);
    while (evicted) {
        llm_request *next = evicted->next;
        fleet_route(s, evicted);
        evicted = next;
    }
}

static const gpu_holder HOLDER = { granted, warned, lost };

static unsigned wanted_now(const serving_group *g)
{
    return count_state(g, SLOT_ORDERED) + count_state(g, SLOT_ACTIVE);
}

/* Orders or gives back slots until ordered + active equals the target. */
void fleet_reconcile(serving_group *g)
{
    if (!g->config.pool)
        return;
    while (wanted_now(g) < g->target) {
        serving_slot *sl = slot_new(g);
        int64_t request = gpu_pool_acquire(g->config.pool, g->config.replica.tp, &HOLDER, sl);
        if (request < 0) { /* nothing to give now: try again later */
            slot_remove(sl);
            if (!g->retry_scheduled) {
                g->retry_scheduled = true;
                sim_event_schedule(g->s->engine, sim_engine_now(g->s->engine)
                                   + retry_interval_s(g), FLEET_PRIORITY, on_retry, g);
            }
            return;
        }
        sl->request = request; /* granted may already have run */
    }
    while (wanted_now(g) > g->target) {
        serving_slot *victim = NULL; /* the newest order, else the newest replica */
        for (size_t i = g->nslots; i-- > 0 && !victim;)
            if (g->slots[i]->state == SLOT_ORDERED)
                victim = g->slots[i];
        for (size_t i = g->nslots; i-- > 0 && !victim;)
            if (g->slots[i]->state == SLOT_ACTIVE)
                victim = g->slots[i];
        if (victim->state == SLOT_ORDERED) {
            gpu_pool_cancel(g->config.pool, victim->request);
            slot_remove(victim);
        } else {
            drain(victim);
        }
    }
}

static void on_release_check(sim_engine *e, void *data);

static void schedule_release_check(serving_slot *sl)
{
    if (!sl->release_check)
        sl->release_check = sim_event_schedule(sl->s->engine, sim_engine_now(sl->s->engine),
                                               FLEET_PRIORITY, on_release_check, sl);
}

static void drain(serving_slot *sl)
{
    sl->state = SLOT_DRAINING;
    rebuild_active(sl->group);
    schedule_release_check(sl);
}

/* A draining replica that holds nothing more gives its GPUs back.  Checked in an event
 * of its own, never inside the replica's callback (the replica is still running). */
static void on_release_check(sim_engine *e, void *data)
{
    serving_slot *sl = data;
    sl->release_check = 0;
    if (sl->state != SLOT_DRAINING || replica_outstanding(sl->r) > 0)
        return;
    serving_group *g = sl->group;
    if (g->config.pool && sl->request >= 0)
        gpu_pool_release(g->config.pool, sl->request);
    slot_remove(sl);
    fleet_reconcile(g); /* a replacement for a warned replica may now get its GPUs */
}

static void on_done(void *context, llm_request *q, bool dropped)
{
    serving_slot *sl = context;
    serving *s = sl->s;
    if (!dropped)
        sl->group->served += q->arrival_s >= s->config.warmup_s;
    serving_record(s, q, dropped, sl->group);
    if (sl->state == SLOT_DRAINING)
        schedule_release_check(sl);
}

/* ---- life cycle and statistics ------------------------------------------------------- */

static void group_init(serving *s, unsigned index, const serving_group_config *config)
{
    serving_group *g = &s->groups[index];
    memset(g, 0, sizeof *g);
    g->s = s;
    g->index = index;
    g->config = *config;
    if (g->config.max < g->config.replicas)
        g->config.max = g->config.replicas;
    g->target = g->config.replicas;
    g->last_scale_out_s = NAN;
    g->low_since_s = NAN;
    double now = sim_engine_now(s->engine);
    sim_timeavg_init(&g->ready, now, 0);
    sim_timeavg_init(&g->life_ready, now, 0);
}

void fleet_init(serving *s)
{
    const serving_config *c = &s->config;
    s->own = (serving_group_config){
        .pool_name = c->pool_name, .replica = c->replica, .replicas = c->replicas,
        .min = c->min_replicas, .max = c->max_replicas ? c->max_replicas : c->replicas,
        .pool = c->pool, .autoscaler = c->autoscaler, .rtt_s = c->rtt_s,
        .spike_probability = c->spike_probability, .spike_s = c->spike_s,
        .sharing = c->sharing, .noisy = c->noisy, .units_per_gpu = c->units_per_gpu,
    };
    s->ngroups = c->overflow ? 2 : 1;
    group_init(s, 0, &s->own);
    if (c->overflow)
        group_init(s, 1, c->overflow);
}

void fleet_start(serving *s)
{
    for (unsigned i = 0; i < s->ngroups; i++) {
        serving_group *g = &s->groups[i];
        if (!g->config.pool) { /* fixed replicas, ready at once */
            for (unsigned k = 0; k < g->config.replicas; k++)
                slot_activate(slot_new(g), k * g->config.replica.tp);
            continue;
        }
        fleet_reconcile(g);
        const autoscaler_spec *a = g->config.autoscaler;
        if (a && a->enabled)
            sim_event_schedule(s->engine, sim_engine_now(s->engine) + a->interval_s,
                               FLEET_PRIORITY, fleet_on_autoscale, g);
    }
}

void fleet_free(serving *s)
{
    for (unsigned i = 0; i < s->ngroups; i++) {
        serving_group *g = &s->groups[i];
        for (size_t k = 0; k < g->nslots; k++) {
            replica_free(g->slots[k]->r);
            free(g->slots[k]);
        }
        for (size_t k = 0; k < g->nhosts; k++)
            if (g->hosts[k])
                host_close(g, g->hosts[k]);
        free(g->hosts);
        free(g->slots);
        free(g->active);
    }
}

void fleet_restart_stats(serving *s, double now)
{
    for (unsigned i = 0; i < s->ngroups; i++) {
        serving_group *g = &s->groups[i];
        for (size_t k = 0; k < g->nslots; k++)
            if (g->slots[k]->r)
                replica_restart_stats(g->slots[k]->r, now);
        sim_timeavg_restart(&g->ready, now);
        g->gone_busy = g->gone_batch = g->gone_kv = 0;
        g->gone_kv_preemptions = 0;
        g->gone_batch_max = 0; /* the kv maximum is over the whole run, as replicas' own */
        g->losses = 0;
    }
}

