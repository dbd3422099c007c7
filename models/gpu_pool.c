/* GPU pools (see gpu_pool.h).
 *
 * Every GPU the pool knows lives in a slot (individually allocated, so that an event
 * can carry a pointer to it while the slot table grows).  The GPUs held sit in a dense
 * set, so that a preemption or failure picks one at random in O(1); the free ones in a
 * second set.  Failures and rate preemptions are each one Poisson process over the held
 * set, rescheduled from a fresh exponential draw when its size changes. */
#include "models/gpu_pool.h"

#include <gsl/gsl_randist.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/event_order.h"
#include "sim/array.h"
#include "sim/fatal.h"
#include "sim/rng.h"

#define NONE ((size_t)-1)

typedef enum gpu_state {
    GPU_UNUSED,       /* slot on the recycling stack */
    GPU_FREE,         /* held, not granted */
    GPU_ORDERED,      /* for a request; refused by the provider, waiting to retry */
    GPU_PROVISIONING, /* for a request; accepted, not ready yet */
    GPU_READY,        /* held for a request whose gang is not complete */
    GPU_BUSY,         /* granted */
    GPU_REPAIR,       /* dedicated: failed, out of service */
} gpu_state;

typedef struct gpu {
    gpu_pool *pool;
    size_t slot;
    unsigned id;
    gpu_state state;
    int64_t request;     /* ORDERED .. BUSY: whose; else -1 */
    sim_event_id event;  /* retry, ready or repair end */
    size_t held_pos, free_pos;
    bool doomed;         /* preempted, goes with its gang's loss */
} gpu;

typedef struct request {
    gpu_pool *pool;
    int64_t id;
    const gpu_holder *holder;
    void *context;
    unsigned n, ready;
    bool granted;
    double asked_s;
    perf_phases share;   /* of its time its GPUs spend in each phase of work (power) */
    sim_event_id loss;   /* pending end of a preemption notice */
    size_t slots[];      /* n */
} request;

typedef struct slot_set {
    size_t *items;
    size_t n, cap;
} slot_set;

struct gpu_pool {
    sim_engine *engine;
    pool_capacity cap;
    gsl_rng *provision_rng, *preemption_rng, *failure_rng;
    gpu **gpus;
    size_t ngpus, gpus_cap;
    size_t *unused;
    size_t nunused, unused_cap;
    unsigned next_id;
    slot_set held, free;
    unsigned ordered;    /* ORDERED + PROVISIONING */
    unsigned renting;    /* held + PROVISIONING: what counts toward the provider's ceiling */
    unsigned busy;
    /* GPUs granted to holders that stated their work, times each phase's share, and
     * its integral (device-seconds by phase) up to work_s */
    perf_phases working, work_area;
    double work_s;
    request **requests;  /* by id; NULL once closed */
    size_t nrequests, requests_cap;
    sim_event_id failure_event, preemption_event, trace_event;
    size_t next_trace;
    void (*listener)(void *context);
    void *listener_context;
    sim_event_id notify_event;
    gpu_pool_stats stats;
    cost_meter *meter;   /* told of every GPU joining or leaving the held set */
};

/* ---- sets of slots ------------------------------------------------------------------ */

static size_t *set_pos(gpu *g, bool held)
{
    return held ? &g->held_pos : &g->free_pos;
}

static void set_add(gpu_pool *p, slot_set *s, bool held, gpu *g)
{
    s->items = sim_array_grow(s->items, &s->cap, s->n + 1, sizeof *s->items, "a GPU pool");
    *set_pos(g, held) = s->n;
    s->items[s->n++] = g->slot;
    if (held && p->meter)
        cost_meter_rent(p->meter, g->id, sim_engine_now(p->engine));
}

static void set_remove(gpu_pool *p, slot_set *s, bool held, gpu *g)
{
    size_t *pos = set_pos(g, held);
    if (*pos == NONE)
        return;
    if (held && p->meter)
        cost_meter_return(p->meter, g->id, sim_engine_now(p->engine));
    size_t last = s->items[--s->n];
    s->items[*pos] = last;
    *set_pos(p->gpus[last], held) = *pos;
    *pos = NONE;
}

/* ---- hazards: failures and rate preemptions ---------------------------------------- */

static void on_failure(sim_engine *e, void *data);
static void on_preemption(sim_engine *e, void *data);

static void hazard_refresh(gpu_pool *p, sim_event_id *ev, double rate_per_gpu, gsl_rng *rng,
                           sim_event_fn fn)
{
    if (rate_per_gpu <= 0)
        return;
    if (*ev)
        sim_event_cancel(p->engine, *ev);
    *ev = 0;
    if (p->held.n > 0) {
        double at = sim_engine_now(p->engine)
                    + gsl_ran_exponential(rng, 1 / (rate_per_gpu * (double)p->held.n));
        *ev = sim_event_schedule(p->engine, at, EVENT_MODEL, fn, p);
    }
}

static void failures_refresh(gpu_pool *p)
{
    if (p->cap.mtbf_s > 0)
        hazard_refresh(p, &p->failure_event, 1 / p->cap.mtbf_s, p->failure_rng, on_failure);
}

static void preemptions_refresh(gpu_pool *p)
{
    if (p->cap.kind == POOL_SPOT)
        hazard_refresh(p, &p->preemption_event, p->cap.preemption_rate_per_s,
                       p->preemption_rng, on_preemption);
}

static void hazards_refresh(gpu_pool *p)
{
    failures_refresh(p);
    preemptions_refresh(p);
}

static void held_count_changed(gpu_pool *p)
{
    double now = sim_engine_now(p->engine), n = (double)p->held.n;
    sim_timeavg_set(&p->stats.held, now, n);
    sim_timeavg_set(&p->stats.life_held, now, n);
    hazards_refresh(p);
}

static void work_advance(gpu_pool *p, double now)
{
    p->work_area = perf_phases_add(p->work_area, p->working, now - p->work_s);
    p->work_s = now;
}

static void busy_add(gpu_pool *p, const request *r, int sign)
{
    int delta = sign * (int)r->n;
    p->busy = (unsigned)((int)p->busy + delta);
    double now = sim_engine_now(p->engine);
    work_advance(p, now);
    p->working = perf_phases_add(p->working, r->share, delta);
    sim_timeavg_set(&p->stats.busy, now, p->busy);
    sim_timeavg_set(&p->stats.life_busy, now, p->busy);
}

static void on_notify(sim_engine *e, void *data)
{
    gpu_pool *p = data;
    p->notify_event = 0;
    if (p->listener)
        p->listener(p->listener_context);
}

static void notify(gpu_pool *p)
{
    if (p->listener && !p->notify_event)
        p->notify_event = sim_event_schedule_in(p->engine, 0, EVENT_POOL_NOTIFY,
                                                on_notify, p);
}

/* ---- slots ------------------------------------------------------------------------- */

static gpu *gpu_new(gpu_pool *p, gpu_state state, int64_t owner)
{
    gpu *g;
    if (p->nunused) {
        g = p->gpus[p->unused[--p->nunused]];
    } else {
        p->gpus = sim_array_grow(p->gpus, &p->gpus_cap, p->ngpus + 1,
                                 sizeof *p->gpus, "a GPU pool");
        if (!(g = malloc(sizeof *g)))
            sim_out_of_memory("out of memory adding a GPU");
        g->pool = p;
        g->slot = p->ngpus;
        p->gpus[p->ngpus++] = g;
    }
    g->id = p->next_id++;
    g->state = state;
    g->request = owner;
    g->event = 0;
    g->held_pos = g->free_pos = NONE;
    g->doomed = false;
    return g;
}

/* Holds g (held set, and free set when free) without touching the hazards. */
static void hold(gpu_pool *p, gpu *g)
{
    set_add(p, &p->held, true, g);
    if (g->state == GPU_FREE)
        set_add(p, &p->free, false, g);
}

/* The GPU leaves the pool (back to the provider).  Cloud and spot only. */
static void gpu_drop(gpu_pool *p, gpu *g)
{
    if (g->event)
        sim_event_cancel(p->engine, g->event);
    g->event = 0;
    if (g->held_pos != NONE || g->state == GPU_PROVISIONING)
        p->renting--;
    if (g->state == GPU_ORDERED || g->state == GPU_PROVISIONING)
        p->ordered--;
    set_remove(p, &p->held, true, g);
    set_remove(p, &p->free, false, g);
    g->state = GPU_UNUSED;
    g->request = -1;
    p->unused = sim_array_grow(p->unused, &p->unused_cap, p->nunused + 1,
                               sizeof *p->unused, "a GPU pool");
    p->unused[p->nunused++] = g->slot;
}

static void on_repaired(sim_engine *e, void *data)
{
    gpu *g = data;
    gpu_pool *p = g->pool;
    g->event = 0;
    g->state = GPU_FREE;
    hold(p, g);
    held_count_changed(p);
    notify(p);
}

static void gpu_to_repair(gpu_pool *p, gpu *g)
{
    set_remove(p, &p->held, true, g);
    set_remove(p, &p->free, false, g);
    g->state = GPU_REPAIR;
    g->request = -1;
    g->doomed = false;
    double repair = fmax(0, sim_dist_sample(&p->cap.repair_s, p->failure_rng));
    g->event = sim_event_schedule_in(p->engine, repair, EVENT_MODEL, on_repaired, g);
}

/* A GPU its holder gave back: free again (dedicated) or returned (cloud, spot). */
static void gpu_give_back(gpu_pool *p, gpu *g)
{
    if (g->doomed || p->cap.kind != POOL_DEDICATED) {
        gpu_drop(p, g);
        return;
    }
    g->state = GPU_FREE;
    g->request = -1;
    set_add(p, &p->free, false, g);
}

/* ---- provisioning ------------------------------------------------------------------ */

static void on_ready(sim_engine *e, void *data);
static void on_retry(sim_engine *e, void *data);
static void grant(gpu_pool *p, request *r);

static void attempt(gpu_pool *p, gpu *g)
{
    const pool_capacity *c = &p->cap;
    bool refused = (c->ceiling && p->renting >= c->ceiling)
                   || (c->unavailable_probability > 0
                       && gsl_rng_uniform(p->provision_rng) < c->unavailable_probability);
    if (refused) {
        p->stats.provision_failures++;
        g->state = GPU_ORDERED;
        g->event = sim_event_schedule_in(p->engine, c->retry_s, EVENT_MODEL, on_retry, g);
        return;
    }
    g->state = GPU_PROVISIONING;
    p->renting++;
    double delay = fmax(0, sim_dist_sample(&c->provision_s, p->provision_rng));
    g->event = sim_event_schedule_in(p->engine, delay, EVENT_MODEL, on_ready, g);
}

static void on_retry(sim_engine *e, void *data)
{
    gpu *g = data;
    g->event = 0;
    attempt(g->pool, g);
}

static void on_ready(sim_engine *e, void *data)
{
    gpu *g = data;
    gpu_pool *p = g->pool;
    g->event = 0;
    g->state = GPU_READY;
    p->ordered--; /* still renting: now as held */
    hold(p, g);
    held_count_changed(p);
    request *r = p->requests[g->request];
    if (++r->ready == r->n)
        grant(p, r);
}

/* Orders a new GPU for request r in place of slot index k. */
static void order_for(gpu_pool *p, request *r, unsigned k)
{
    gpu *g = gpu_new(p, GPU_ORDERED, r->id);
    r->slots[k] = g->slot;
    p->ordered++;
    attempt(p, g);
}

/* ---- requests ---------------------------------------------------------------------- */

static request *request_new(gpu_pool *p, unsigned n, const gpu_holder *holder, void *context)
{
    request *r = malloc(sizeof *r + n * sizeof r->slots[0]);
    if (!r)
        sim_out_of_memory("out of memory for a GPU request");
    p->requests = sim_array_grow(p->requests, &p->requests_cap, p->nrequests + 1,
                                 sizeof *p->requests, "a GPU pool");
    *r = (request){ .pool = p, .id = (int64_t)p->nrequests, .holder = holder,
                    .context = context, .n = n, .asked_s = sim_engine_now(p->engine) };
    p->requests[p->nrequests++] = r;
    return r;
}

static void request_close(gpu_pool *p, request *r)
{
    if (r->loss)
        sim_event_cancel(p->engine, r->loss);
    p->requests[r->id] = NULL;
    free(r);
}

static void grant(gpu_pool *p, request *r)
{
    unsigned *ids = malloc(r->n * sizeof *ids);
    if (!ids)
        sim_out_of_memory("out of memory granting GPUs");
    for (unsigned i = 0; i < r->n; i++) {
        gpu *g = p->gpus[r->slots[i]];
        set_remove(p, &p->free, false, g);
        g->state = GPU_BUSY;
        g->request = r->id;
        ids[i] = g->id;
    }
    r->granted = true;
    busy_add(p, r, 1);
    sim_stat_add(&p->stats.provision_wait_s, sim_engine_now(p->engine) - r->asked_s);
    r->holder->granted(r->context, ids, r->n);
    free(ids);
}

/* The gang of r is taken: `failed` (or NULL) goes to repair or is dropped, preempted
 * GPUs are dropped, the others given back; then the holder hears of it. */
static void request_lose(gpu_pool *p, request *r, gpu_loss why, gpu *failed)
{
    unsigned held_before = (unsigned)p->held.n;
    for (unsigned i = 0; i < r->n; i++) {
        gpu *g = p->gpus[r->slots[i]];
        if (g == failed && p->cap.kind == POOL_DEDICATED)
            gpu_to_repair(p, g);
        else if (g == failed)
            gpu_drop(p, g);
        else
            gpu_give_back(p, g);
    }
    busy_add(p, r, -1);
    const gpu_holder *holder = r->holder;
    void *context = r->context;
    request_close(p, r);
    if (p->held.n != held_before)
        held_count_changed(p);
    holder->lost(context, why);
    notify(p);
}

static void on_loss(sim_engine *e, void *data)
{
    request *r = data;
    r->loss = 0;
    request_lose(r->pool, r, GPU_PREEMPTED, NULL);
}

/* ---- hits -------------------------------------------------------------------------- */

static gpu *pick_held(gpu_pool *p, gsl_rng *rng)
{
    if (p->held.n == 0)
        return NULL;
    return p->gpus[p->held.items[gsl_rng_uniform_int(rng, p->held.n)]];
}

static void preempt(gpu_pool *p, gpu *g)
{
    p->stats.preemptions++;
    if (g->state == GPU_FREE) {
        gpu_drop(p, g);
        held_count_changed(p);
    } else if (g->state == GPU_READY) {
        request *r = p->requests[g->request];
        unsigned k = 0;
        while (r->slots[k] != g->slot)
            k++;
        gpu_drop(p, g);
        r->ready--;
        held_count_changed(p);
        order_for(p, r, k);
    } else if (g->state == GPU_BUSY) {
        request *r = p->requests[g->request];
        g->doomed = true;
        if (r->loss)
            return; /* goes with the loss already announced */
        double at = sim_engine_now(p->engine) + p->cap.notice_s;
        r->loss = sim_event_schedule(p->engine, at, EVENT_MODEL, on_loss, r);
        if (r->holder->warned)
            r->holder->warned(r->context, at);
    }
}

static void fail(gpu_pool *p, gpu *g)
{
    p->stats.failures++;
    bool dedicated = p->cap.kind == POOL_DEDICATED;
    if (g->state == GPU_BUSY) {
        request_lose(p, p->requests[g->request], GPU_FAILED, g);
    } else if (dedicated) {
        gpu_to_repair(p, g);
        held_count_changed(p);
    } else { /* a free or ready cloud GPU: the provider swaps it at once */
        gpu *fresh = gpu_new(p, g->state, g->request);
        if (g->state == GPU_READY) {
            request *r = p->requests[g->request];
            unsigned k = 0;
            while (r->slots[k] != g->slot)
                k++;
            r->slots[k] = fresh->slot;
        }
        fresh->doomed = g->doomed;
        gpu_drop(p, g);
        p->renting++;
        hold(p, fresh);
        held_count_changed(p);
    }
}

static void on_failure(sim_engine *e, void *data)
{
    gpu_pool *p = data;
    p->failure_event = 0;
    gpu *g = pick_held(p, p->failure_rng);
    if (g)
        fail(p, g);
    if (!p->failure_event)
        failures_refresh(p); /* the held count did not change: draw the next one */
}

static void on_preemption(sim_engine *e, void *data)
{
    gpu_pool *p = data;
    p->preemption_event = 0;
    gpu *g = pick_held(p, p->preemption_rng);
    if (g)
        preempt(p, g);
    if (!p->preemption_event)
        preemptions_refresh(p);
}

static void on_trace_preemption(sim_engine *e, void *data)
{
    gpu_pool *p = data;
    p->trace_event = 0;
    p->next_trace++;
    if (p->next_trace < p->cap.npreemption_times)
        p->trace_event = sim_event_schedule(p->engine, p->cap.preemption_times_s[p->next_trace],
                                            EVENT_MODEL, on_trace_preemption, p);
    gpu *g = pick_held(p, p->preemption_rng);
    if (g)
        preempt(p, g);
}

/* ---- public ------------------------------------------------------------------------ */

static int check_capacity(const pool_capacity *c, char *err, size_t err_size)
{
    bool dedicated = c->kind == POOL_DEDICATED, spot = c->kind == POOL_SPOT;
    if (dedicated && c->count == 0) {
        snprintf(err, err_size, "a dedicated pool needs at least one GPU, got count 0");
        return -1;
    }
    if (!dedicated && (c->max == 0 || c->max < c->count)) {
        snprintf(err, err_size, "max must be at least 1 and at least count (%u), got %u",
                 c->count, c->max);
        return -1;
    }
    if (!(c->unavailable_probability >= 0 && c->unavailable_probability < 1)) {
        snprintf(err, err_size, "unavailable probability must be in [0, 1), got %g",
                 c->unavailable_probability);
        return -1;
    }
    if (!dedicated && (c->unavailable_probability > 0 || c->ceiling) && !(c->retry_s > 0)) {
        snprintf(err, err_size, "retry must be > 0 when provisioning can fail, got %g",
                 c->retry_s);
        return -1;
    }
    if (!spot && (c->preemption_rate_per_s > 0 || c->npreemption_times > 0)) {
        snprintf(err, err_size, "only a spot pool has preemptions");
        return -1;
    }
    if (!(c->preemption_rate_per_s >= 0) || !(c->notice_s >= 0) || !(c->mtbf_s >= 0)) {
        snprintf(err, err_size, "preemption rate, notice and mtbf must be >= 0, got %g, %g, %g",
                 c->preemption_rate_per_s, c->notice_s, c->mtbf_s);
        return -1;
    }
    for (size_t i = 0; i < c->npreemption_times; i++)
        if (!(c->preemption_times_s[i] >= (i ? c->preemption_times_s[i - 1] : 0))) {
            snprintf(err, err_size, "preemption time %zu (%g s) is negative or out of order",
                     i + 1, c->preemption_times_s[i]);
            return -1;
        }
    char why[200];
    if (!dedicated && sim_dist_check(&c->provision_s, why, sizeof why) != 0) {
        snprintf(err, err_size, "provision: %s", why);
        return -1;
    }
    if (dedicated && c->mtbf_s > 0 && sim_dist_check(&c->repair_s, why, sizeof why) != 0) {
        snprintf(err, err_size, "repair: %s", why);
        return -1;
    }
    return 0;
}

gpu_pool *gpu_pool_create(sim_engine *engine, const pool_capacity *capacity, const char *name,
                          uint64_t seed, uint64_t replication, char *err, size_t err_size)
{
    if (check_capacity(capacity, err, err_size) != 0)
        return NULL;
    gpu_pool *p = calloc(1, sizeof *p);
    if (!p)
        sim_out_of_memory("out of memory creating a GPU pool");
    p->engine = engine;
    p->cap = *capacity;
    char stream[256];
    snprintf(stream, sizeof stream, "%s.provision", name);
    p->provision_rng = sim_rng_stream(seed, replication, stream);
    snprintf(stream, sizeof stream, "%s.preemption", name);
    p->preemption_rng = sim_rng_stream(seed, replication, stream);
    snprintf(stream, sizeof stream, "%s.failure", name);
    p->failure_rng = sim_rng_stream(seed, replication, stream);
    double now = sim_engine_now(engine);
    for (unsigned i = 0; i < capacity->count; i++) {
        gpu *g = gpu_new(p, GPU_FREE, -1);
        hold(p, g);
        p->renting++;
    }
    sim_timeavg_init(&p->stats.held, now, (double)p->held.n);
    sim_timeavg_init(&p->stats.life_held, now, (double)p->held.n);
    sim_timeavg_init(&p->stats.busy, now, 0);
    p->work_s = now;
    sim_timeavg_init(&p->stats.life_busy, now, 0);
    sim_stat_reset(&p->stats.provision_wait_s);
    hazards_refresh(p);
    if (capacity->kind == POOL_SPOT && capacity->npreemption_times > 0)
        p->trace_event = sim_event_schedule(engine, fmax(now, capacity->preemption_times_s[0]),
                                            EVENT_MODEL, on_trace_preemption, p);
    return p;
}

void gpu_pool_free(gpu_pool *p)
{
    if (!p)
        return;
    for (size_t i = 0; i < p->nrequests; i++)
        free(p->requests[i]);
    for (size_t i = 0; i < p->ngpus; i++)
        free(p->gpus[i]);
    free(p->requests);
    free(p->gpus);
    free(p->unused);
    free(p->held.items);
    free(p->free.items);
    gsl_rng_free(p->provision_rng);
    gsl_rng_free(p->preemption_rng);
    gsl_rng_free(p->failure_rng);
    free(p);
}

int64_t gpu_pool_acquire(gpu_pool *p, unsigned n, const gpu_holder *holder, void *context)
{
    return gpu_pool_acquire_working(p, n, holder, context, NULL);
}

int64_t gpu_pool_acquire_working(gpu_pool *p, unsigned n, const gpu_holder *holder, void *context,
                                 const perf_phases *share)
{
    if (n == 0 || n > gpu_pool_available(p))
        return -1;
    request *r = request_new(p, n, holder, context);
    if (share)
        r->share = *share;
    unsigned from_free = n < p->free.n ? n : (unsigned)p->free.n;
    for (unsigned i = 0; i < from_free; i++) {
        gpu *g = p->gpus[p->free.items[p->free.n - 1]]; /* the last freed first */
        set_remove(p, &p->free, false, g);
        g->state = GPU_READY;
        g->request = r->id;
        r->slots[i] = g->slot;
    }
    r->ready = from_free;
    int64_t id = r->id;
    if (from_free == n) {
        grant(p, r);
        return id;
    }
    for (unsigned i = from_free; i < n; i++)
        order_for(p, r, i);
    return id;
}

static request *open_request(gpu_pool *p, int64_t id)
{
    if (id < 0)
        return NULL; /* a refused request */
    if ((size_t)id >= p->nrequests)
        sim_fatal("GPU pool: request %lld was never made", (long long)id);
    return p->requests[id]; /* NULL once lost, released or cancelled */
}

void gpu_pool_release(gpu_pool *p, int64_t id)
{
    request *r = open_request(p, id);
    if (!r)
        return;
    if (!r->granted) {
        gpu_pool_cancel(p, id);
        return;
    }
    unsigned held_before = (unsigned)p->held.n;
    for (unsigned i = 0; i < r->n; i++)
        gpu_give_back(p, p->gpus[r->slots[i]]);
    busy_add(p, r, -1);
    request_close(p, r);
    if (p->held.n != held_before)
        held_count_changed(p);
    notify(p);
}

void gpu_pool_cancel(gpu_pool *p, int64_t id)
{
    request *r = open_request(p, id);
    if (!r)
        return;
    if (r->granted) {
        gpu_pool_release(p, id);
        return;
    }
    unsigned held_before = (unsigned)p->held.n;
    for (unsigned i = 0; i < r->n; i++) {
        gpu *g = p->gpus[r->slots[i]];
        if (g->state == GPU_READY)
            gpu_give_back(p, g);
        else
            gpu_drop(p, g);
    }
    request_close(p, r);
    if (p->held.n != held_before)
        held_count_changed(p);
    notify(p);
}

unsigned gpu_pool_available(const gpu_pool *p)
{
    if (p->cap.kind == POOL_DEDICATED)
        return (unsigned)p->free.n;
    return p->cap.max - (unsigned)p->held.n - p->ordered + (unsigned)p->free.n;
}

unsigned gpu_pool_held(const gpu_pool *p)
{
    return (unsigned)p->held.n;
}

perf_phases gpu_pool_work(const gpu_pool *p, double now)
{
    return perf_phases_add(p->work_area, p->working, now - p->work_s);
}

unsigned gpu_pool_busy(const gpu_pool *p)
{
    return p->busy;
}

unsigned gpu_pool_capacity_gpus(const gpu_pool *p)
{
    return p->cap.kind == POOL_DEDICATED ? p->cap.count : p->cap.max;
}

void gpu_pool_set_listener(gpu_pool *p, void (*changed)(void *context), void *context)
{
    p->listener = changed;
    p->listener_context = context;
}

const gpu_pool_stats *gpu_pool_get_stats(const gpu_pool *p)
{
    /* the pool is never defined const: refreshing the integral here is well defined */
    gpu_pool *mutable = (gpu_pool *)p;
    mutable->stats.gpu_seconds = sim_timeavg_integral(&p->stats.held, sim_engine_now(p->engine));
    return &p->stats;
}

void gpu_pool_restart_stats(gpu_pool *p, double now)
{
    sim_timeavg_restart(&p->stats.held, now);
    sim_timeavg_restart(&p->stats.busy, now);
    sim_stat_reset(&p->stats.provision_wait_s);
    p->stats.preemptions = p->stats.failures = p->stats.provision_failures = 0;
    p->stats.gpu_seconds = 0;
}

void gpu_pool_record_metrics(const gpu_pool *p, const char *name, double end_s,
                             unsigned units_per_gpu, bool utilization, sim_metrics *m)
{
    const gpu_pool_stats *s = &p->stats;
    double per = units_per_gpu ? units_per_gpu : 1;
    double held = sim_timeavg_mean(&s->held, end_s), busy = sim_timeavg_mean(&s->busy, end_s);
    const sim_stat *w = &s->provision_wait_s;
    sim_metrics_add(m, "pool", name, "gpu_hours", "h",
                    sim_timeavg_integral(&s->held, end_s) / 3600 / per);
    sim_metrics_add(m, "pool", name, "gpus_mean", "gpus", held / per);
    sim_metrics_add(m, "pool", name, "gpus_max", "gpus", s->held.max / per);
    sim_metrics_add(m, "pool", name, "gpus_allocated_mean", "gpus", busy / per);
    if (utilization)
        sim_metrics_add(m, "pool", name, "utilization_mean", "1", held > 0 ? busy / held : NAN);
    sim_metrics_add(m, "pool", name, "provisioning_wait_mean_s", "s", w->n ? w->mean : NAN);
    sim_metrics_add(m, "pool", name, "provisioning_wait_max_s", "s", w->n ? w->max : NAN);
    sim_metrics_add(m, "pool", name, "preemptions", "preemptions", (double)s->preemptions);
    sim_metrics_add(m, "pool", name, "failures", "failures", (double)s->failures);
    sim_metrics_add(m, "pool", name, "provisioning_failures", "attempts",
                    (double)s->provision_failures);
}

void gpu_pool_set_meter(gpu_pool *p, cost_meter *meter)
{
    p->meter = meter;
    if (!meter)
        return;
    double now = sim_engine_now(p->engine);
    for (size_t i = 0; i < p->held.n; i++) /* the GPUs held already */
        cost_meter_rent(meter, p->gpus[p->held.items[i]]->id, now);
}
