/* A pool's arbiter between the serving fleets on it (see pool_tenants.h). */
#include "models/pool_tenants.h"

#include <math.h>
#include <stdlib.h>

#include "models/event_order.h"
#include "sim/array.h"
#include "sim/fatal.h"

typedef struct tenant {
    const pool_tenant_ops *ops;
    void *context;
    bool waiting;
    unsigned long long waiting_since; /* the order in which tenants began to wait */
} tenant;

struct pool_tenants {
    sim_engine *engine;
    gpu_pool *pool;
    sim_event_id idle_retry;  /* pending on_idle_retry, or 0 */
    tenant *tenants;
    size_t n, cap;
    size_t nwaiting;          /* tenants with waiting set */
    unsigned long long next_wait, evictions;
    gpu_hosts *hosts;         /* NULL until a tenant needs it */
};

/* An order of tenants: by key, ties to the earlier tenant. */
typedef struct ranked {
    double key;
    size_t index;
} ranked;

static int by_key(const void *a, const void *b)
{
    const ranked *x = a, *y = b;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    return x->index < y->index ? -1 : x->index > y->index;
}

/* A list of n ranked entries (freed by the caller); fatal out of memory, as every
 * allocation of a run.  Made per call: a retry may bring the pool's listener back in. */
static ranked *ranked_new(size_t n)
{
    ranked *r = malloc((n ? n : 1) * sizeof *r);
    if (!r)
        sim_out_of_memory("out of memory for a shared pool");
    return r;
}

static void set_waiting(pool_tenants *t, tenant *c, bool waiting)
{
    t->nwaiting += (size_t)waiting - (size_t)c->waiting;
    c->waiting = waiting;
}

/* gpu_pool listener: GPUs came back; the tenants that waited try again, first come
 * first served.  A tenant may get what it wanted and stop waiting, or fail again and
 * wait on (pool_tenants_short marks it again).  Only the tenant trying can change its
 * waiting, so the order is taken once (it was searched again for every tenant: 800
 * models on one pool made every event O(models^2)). */
static void on_pool_changed(void *context)
{
    pool_tenants *t = context;
    if (t->nwaiting == 0)
        return;
    ranked *order = ranked_new(t->n);
    size_t n = 0;
    for (size_t i = 0; i < t->n; i++)
        if (t->tenants[i].waiting)
            order[n++] = (ranked){ (double)t->tenants[i].waiting_since, i };
    qsort(order, n, sizeof *order, by_key);
    for (size_t k = 0; k < n; k++) {
        tenant *first = &t->tenants[order[k].index];
        if (!first->waiting)
            continue;
        unsigned long long since = first->waiting_since;
        set_waiting(t, first, false);
        first->ops->retry(first->context);
        if (first->waiting) { /* still short: the later ones would be too, or get the
                                 GPUs it needs; it keeps its place */
            first->waiting_since = since;
            break;
        }
    }
    free(order);
}

static void on_idle_retry(sim_engine *e, void *data)
{
    pool_tenants *t = data;
    t->idle_retry = 0;
    on_pool_changed(t);
}

void pool_tenants_idle(pool_tenants *t)
{
    if (t->nwaiting > 0 && !t->idle_retry)
        t->idle_retry = sim_event_schedule(t->engine, sim_engine_now(t->engine), EVENT_FLEET,
                                           on_idle_retry, t);
}

pool_tenants *pool_tenants_create(sim_engine *engine, gpu_pool *pool)
{
    pool_tenants *t = calloc(1, sizeof *t);
    if (!t)
        sim_out_of_memory("out of memory for a shared pool");
    t->engine = engine;
    t->pool = pool;
    gpu_pool_set_listener(pool, on_pool_changed, t);
    return t;
}

void pool_tenants_free(pool_tenants *t)
{
    if (!t)
        return;
    gpu_pool_set_listener(t->pool, NULL, NULL);
    gpu_hosts_free(t->hosts);
    free(t->tenants);
    free(t);
}

gpu_hosts *pool_tenants_hosts(pool_tenants *t, const gpu_hosts_config *config)
{
    if (!t->hosts)
        t->hosts = gpu_hosts_create(t->engine, config);
    return t->hosts;
}

void pool_tenants_add(pool_tenants *t, const pool_tenant_ops *ops, void *context)
{
    t->tenants = sim_array_grow(t->tenants, &t->cap, t->n + 1, sizeof *t->tenants,
                                "a shared pool's tenants");
    t->tenants[t->n++] = (tenant){ .ops = ops, .context = context };
}

bool pool_tenants_short(pool_tenants *t, void *context)
{
    tenant *self = NULL;
    for (size_t i = 0; i < t->n; i++)
        if (t->tenants[i].context == context)
            self = &t->tenants[i];
    if (self && !self->waiting) {
        set_waiting(t, self, true);
        self->waiting_since = t->next_wait++;
    }
    /* the other tenants from the least recently used on (ties to the earlier), until one
     * gives a replica; a busy tenant (INFINITY) never gives.  Each tenant's last use is
     * taken once and sorted: none changes while the others are asked, and taking them
     * again for each step made a request O(models^2) (many tenants are asked in turn: a
     * model loading or at its floor has nothing to give) */
    ranked *order = ranked_new(t->n);
    size_t n = 0;
    for (size_t i = 0; i < t->n; i++) {
        tenant *c = &t->tenants[i];
        double used = c == self ? INFINITY : c->ops->last_used_s(c->context);
        if (used < INFINITY)
            order[n++] = (ranked){ used, i };
    }
    qsort(order, n, sizeof *order, by_key);
    bool freed = false;
    for (size_t k = 0; k < n && !freed; k++) {
        tenant *victim = &t->tenants[order[k].index];
        if (victim->ops->give_idle(victim->context)) {
            t->evictions++;
            freed = true;
        }
    }
    free(order);
    return freed;
}

unsigned long long pool_tenants_evictions(const pool_tenants *t) { return t->evictions; }
