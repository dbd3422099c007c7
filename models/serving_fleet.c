/* The replicas of a serving workload (see serving_internal.h): each runs on GPUs a pool
 * grants it; the set grows and shrinks with an autoscaler, loses members to spot
 * preemptions and failures (their requests go back to be routed again), and spills
 * requests into an overflow pool when every replica of its own is saturated.
 *
 * A slot's life: ORDERED (asked the pool for tp GPUs) -> ACTIVE when granted ->
 * DRAINING (scale-in or a preemption notice: it finishes what it holds) -> gone when
 * empty (its GPUs released) or when the pool takes its GPUs (lost).  The group keeps
 * `target` slots ordered or active and reorders after a loss, at once or, when the pool
 * has nothing to give, after its retry interval.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/serving_internal.h"
#include "sim/fatal.h"

/* Event priorities at equal times: releases and retries after the model's own events. */
enum { PRIORITY_FLEET = 5 };

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
static void flush_pending(serving *s);

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
    flush_pending(g->s);
}

/* ---- keeping the target ----------------------------------------------------------- */

static void reconcile(serving_group *g);

static void on_retry(sim_engine *e, void *data)
{
    serving_group *g = data;
    g->retry_scheduled = false;
    reconcile(g);
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
        reconcile(sl->group);
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
    reconcile(g);
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
static void reconcile(serving_group *g)
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
                                   + retry_interval_s(g), PRIORITY_FLEET, on_retry, g);
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
                                               PRIORITY_FLEET, on_release_check, sl);
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
    reconcile(g); /* a replacement for a warned replica may now get its GPUs */
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

/* ---- autoscaling -------------------------------------------------------------------- */

static autoscale_view observe(serving_group *g, double now)
{
    serving *s = g->s;
    autoscale_view v = { .now_s = now, .min = g->config.min, .max = g->config.max,
                         .pending = s->npending };
    double busy = 0, kv = 0, span = 0;
    for (size_t i = 0; i < g->nslots; i++) {
        serving_slot *sl = g->slots[i];
        if (sl->state == SLOT_ORDERED) {
            v.provisioning++;
            continue;
        }
        const replica_stats *st = replica_get_stats(sl->r);
        double integral = sim_timeavg_integral(&st->life_busy, now);
        double kv_integral = sim_timeavg_integral(&st->life_kv, now);
        if (sl->state == SLOT_ACTIVE) { /* the metric is of the replicas that stay */
            v.active++;
            busy += integral - sl->tick_mark;
            kv += kv_integral - sl->tick_kv_mark;
            span += now - sl->tick_from_s;
        } else {
            v.draining++;
        }
        sl->tick_mark = integral;
        sl->tick_kv_mark = kv_integral;
        sl->tick_from_s = now;
        v.outstanding += replica_outstanding(sl->r);
    }
    v.outstanding += s->npending;
    v.utilization = span > 0 ? busy / span : 0;
    v.kv_cache = span > 0 ? kv / span : 0;
    return v;
}

static unsigned clamp_replicas(const serving_group *g, double n)
{
    if (!(n >= g->config.min))
        return g->config.min;
    return n > g->config.max ? g->config.max : (unsigned)n;
}

/* Target tracking: the replicas that would bring the metric to its target. */
static double desired_replicas(const serving_group *g, const autoscale_view *v)
{
    const autoscaler_spec *a = g->config.autoscaler;
    if (v->active == 0)
        return v->pending > 0 || v->provisioning > 0 || g->spilled > 0 ? fmax(1, v->provisioning)
                                                                         : 0;
    if (a->metric == AUTOSCALE_QUEUE)
        return ceil(v->outstanding / a->target - 1e-9);
    if (a->metric == AUTOSCALE_KV_CACHE)
        return ceil(v->active * v->kv_cache / a->target - 1e-9);
    return ceil(v->active * v->utilization / a->target - 1e-9);
}

static void on_autoscale(sim_engine *e, void *data)
{
    serving_group *g = data;
    serving *s = g->s;
    const autoscaler_spec *a = g->config.autoscaler;
    double now = sim_engine_now(e);
    autoscale_view v = observe(g, now);
    unsigned current = v.active + v.provisioning;
    if (a->custom) {
        int wanted = a->custom(a->custom_context, &v, s->error, sizeof s->error);
        if (wanted < 0) {
            sim_engine_stop(e);
            return;
        }
        g->target = clamp_replicas(g, wanted);
    } else {
        unsigned desired = clamp_replicas(g, desired_replicas(g, &v));
        if (desired > current) {
            if (isnan(g->last_scale_out_s) || now - g->last_scale_out_s >= a->cooldown_s) {
                g->target = desired;
                g->last_scale_out_s = now;
            }
            g->low_since_s = NAN;
        } else if (desired < current) {
            if (isnan(g->low_since_s))
                g->low_since_s = now;
            if (now - g->low_since_s >= a->scale_in_delay_s) {
                g->target = desired;
                g->low_since_s = NAN;
            }
        } else {
            g->low_since_s = NAN;
        }
    }
    g->spilled = 0;
    reconcile(g);
    sim_event_schedule(e, now + a->interval_s, PRIORITY_FLEET, on_autoscale, g);
}

/* ---- routing ------------------------------------------------------------------------ */

static unsigned route_in(serving *s, serving_group *g, unsigned prompt, unsigned output)
{
    unsigned n = g->nactive;
    serving_slot **a = g->active;
    switch (s->config.routing) {
    case ROUTE_CUSTOM: {
        if (s->nloads < n) {
            replica_load *loads = realloc(s->loads, n * sizeof *loads);
            if (!loads)
                sim_fatal("out of memory routing a request");
            s->loads = loads;
            s->nloads = n;
        }
        for (unsigned i = 0; i < n; i++)
            s->loads[i] = (replica_load){ replica_outstanding(a[i]->r),
                                          replica_outstanding_tokens(a[i]->r) };
        int i = s->config.custom_route(s->config.route_context, s->loads, n, prompt, output,
                                       sim_engine_now(s->engine), s->error, sizeof s->error);
        if (i < 0 || (unsigned)i >= n) {
            if (i >= 0)
                snprintf(s->error, sizeof s->error, "workload %s: the routing function chose "
                         "replica %d of %u", s->config.name, i + 1, n);
            sim_engine_stop(s->engine);
            return 0;
        }
        return (unsigned)i;
    }
    case ROUTE_ROUND_ROBIN: {
        unsigned i = g->next_replica;
        g->next_replica = (i + 1) % n;
        return i;
    }
    case ROUTE_LEAST_OUTSTANDING: {
        unsigned best = 0;
        for (unsigned i = 1; i < n; i++)
            if (replica_outstanding(a[i]->r) < replica_outstanding(a[best]->r))
                best = i;
        return best;
    }
    case ROUTE_SHORTEST_TOKENS: {
        unsigned best = 0;
        double least = replica_outstanding_tokens(a[0]->r);
        for (unsigned i = 1; i < n; i++) {
            double t = replica_outstanding_tokens(a[i]->r);
            if (t < least) {
                least = t;
                best = i;
            }
        }
        return best;
    }
    case ROUTE_POWER_OF_TWO: {
        unsigned x = (unsigned)gsl_rng_uniform_int(s->route_rng, n);
        unsigned y = (unsigned)gsl_rng_uniform_int(s->route_rng, n);
        return replica_outstanding(a[y]->r) < replica_outstanding(a[x]->r) ? y : x;
    }
    }
    return 0;
}

static bool saturated(const serving *s, const serving_group *g)
{
    for (unsigned i = 0; i < g->nactive; i++)
        if (replica_outstanding(g->active[i]->r) < s->config.overflow_threshold)
            return false;
    return true;
}

void fleet_route(serving *s, llm_request *q)
{
    serving_group *own = &s->groups[0], *chosen = NULL;
    bool spill = s->ngroups > 1 && saturated(s, own);
    if (spill && s->groups[1].nactive > 0)
        chosen = &s->groups[1];
    else if (own->nactive > 0)
        chosen = own;
    if (spill && s->groups[1].nactive == 0)
        s->groups[1].spilled++; /* demand for an overflow pool that has no replica yet */
    if (!chosen) { /* no replica ready: wait for one */
        q->next = NULL;
        if (s->pending_tail)
            s->pending_tail->next = q;
        else
            s->pending_head = q;
        s->pending_tail = q;
        s->npending++;
        return;
    }
    unsigned i = route_in(s, chosen, q->prompt, q->output);
    if (!sim_engine_stopped(s->engine))
        replica_enqueue(chosen->active[i]->r, q);
}

/* Hands the requests that waited for a replica to the replicas now ready. */
static void flush_pending(serving *s)
{
    while (s->pending_head && (s->groups[0].nactive || (s->ngroups > 1 && s->groups[1].nactive))) {
        llm_request *q = s->pending_head;
        s->pending_head = q->next;
        if (!s->pending_head)
            s->pending_tail = NULL;
        s->npending--;
        fleet_route(s, q);
    }
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
        reconcile(g);
        const autoscaler_spec *a = g->config.autoscaler;
        if (a && a->enabled)
            sim_event_schedule(s->engine, sim_engine_now(s->engine) + a->interval_s,
                               PRIORITY_FLEET, on_autoscale, g);
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

void fleet_bucket_sums(serving *s, unsigned gi, double now, double sums[3], double *replica_s)
{
    serving_group *g = &s->groups[gi];
    for (int k = 0; k < 3; k++) {
        sums[k] = g->gone_bucket[k];
        g->gone_bucket[k] = 0;
    }
    for (size_t i = 0; i < g->nslots; i++) {
        serving_slot *sl = g->slots[i];
        if (!sl->r)
            continue;
        const replica_stats *st = replica_get_stats(sl->r);
        const sim_timeavg *life[3] = { &st->life_busy, &st->life_batch, &st->life_kv };
        for (int k = 0; k < 3; k++) {
            double integral = sim_timeavg_integral(life[k], now);
            sums[k] += integral - sl->marks[k];
            sl->marks[k] = integral;
        }
    }
    double ready = sim_timeavg_integral(&g->life_ready, now);
    *replica_s = ready - g->ready_mark;
    g->ready_mark = ready;
}

unsigned serving_groups(const serving *s) { return s->ngroups; }

serving_group_stats serving_group_get_stats(const serving *s, unsigned gi, double end_s)
{
    const serving_group *g = &s->groups[gi];
    serving_group_stats out = { .served = g->served, .replica_losses = g->losses,
                                .kv_preemptions = g->gone_kv_preemptions,
                                .replicas_max = g->ready.max };
    double busy = g->gone_busy, batch = g->gone_batch, kv = g->gone_kv;
    for (size_t i = 0; i < g->nslots; i++) {
        const replica *r = g->slots[i]->r;
        if (!r)
            continue;
        const replica_stats *st = replica_get_stats(r);
        busy += sim_timeavg_integral(&st->busy, end_s);
        batch += sim_timeavg_integral(&st->batch, end_s);
        kv += sim_timeavg_integral(&st->kv, end_s);
        out.kv_preemptions += st->preemptions;
    }
    double replica_s = sim_timeavg_integral(&g->ready, end_s);
    out.replicas_mean = sim_timeavg_mean(&g->ready, end_s);
    out.utilization = replica_s > 0 ? busy / replica_s : NAN;
    out.batch_mean = replica_s > 0 ? batch / replica_s : NAN;
    out.kv_mean = replica_s > 0 ? kv / replica_s : NAN;
    return out;
}

/* Helpers for serving.c's whole-fleet queries. */
double fleet_batch_max(const serving *s)
{
    double m = 0;
    for (unsigned i = 0; i < s->ngroups; i++) {
        const serving_group *g = &s->groups[i];
        m = fmax(m, g->gone_batch_max);
        for (size_t k = 0; k < g->nslots; k++)
            if (g->slots[k]->r)
                m = fmax(m, replica_get_stats(g->slots[k]->r)->batch.max);
    }
    return m;
}

double fleet_kv_max(const serving *s)
{
    double m = 0;
    for (unsigned i = 0; i < s->ngroups; i++) {
        const serving_group *g = &s->groups[i];
        m = fmax(m, g->gone_kv_max);
        for (size_t k = 0; k < g->nslots; k++)
            if (g->slots[k]->r)
                m = fmax(m, replica_get_stats(g->slots[k]->r)->life_kv.max);
    }
    return m;
}

uint64_t fleet_replica_events(const serving *s)
{
    uint64_t n = 0;
    for (unsigned i = 0; i < s->ngroups; i++) {
        const serving_group *g = &s->groups[i];
        n += g->gone_events;
        for (size_t k = 0; k < g->nslots; k++)
            if (g->slots[k]->r)
                n += replica_get_stats(g->slots[k]->r)->iterations_events;
    }
    return n;
}
