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
    unsigned long long next_wait, evictions;
    gpu_hosts *hosts;         /* NULL until a tenant needs it */
};

/* gpu_pool listener: GPUs came back; the tenants that waited try again, first come
 * first served.  A tenant may get what it wanted and stop waiting, or fail again and
 * wait on (pool_tenants_short marks it again). */
static void on_pool_changed(void *context)
{
    pool_tenants *t = context;
    for (;;) {
        tenant *first = NULL;
        for (size_t i = 0; i < t->n; i++)
            if (t->tenants[i].waiting
                && (!first || t->tenants[i].waiting_since < first->waiting_since))
                first = &t->tenants[i];
        if (!first)
            return;
        unsigned long long since = first->waiting_since;
        first->waiting = false;
        first->ops->retry(first->context);
        if (first->waiting) { /* still short: the later ones would be too, or get the
                                 GPUs it needs; it keeps its place */
            first->waiting_since = since;
            return;
        }
    }
}

static void on_idle_retry(sim_engine *e, void *data)
{
    pool_tenants *t = data;
    t->idle_retry = 0;
    on_pool_changed(t);
}

void pool_tenants_idle(pool_tenants *t)
{
    bool waiting = false;
    for (size_t i = 0; i < t->n; i++)
        waiting |= t->tenants[i].waiting;
    if (waiting && !t->idle_retry)
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
        self->waiting = true;
        self->waiting_since = t->next_wait++;
    }
    /* the other tenants from the least recently used on, until one gives a replica:
     * each step takes the next after (used, index) in that order */
    double after_used = -INFINITY;
    size_t after_index = 0;
    bool first = true;
    for (;;) {
        tenant *victim = NULL;
        double used_min = INFINITY;
        size_t index = 0;
        for (size_t i = 0; i < t->n; i++) {
            tenant *c = &t->tenants[i];
            double used = c->ops->last_used_s(c->context);
            bool later = first || used > after_used || (used == after_used && i > after_index);
            if (c != self && later && used < used_min) {
                used_min = used;
                victim = c;
                index = i;
            }
        }
        if (!victim) /* none left (a busy tenant's INFINITY is never below used_min) */
            return false;
        if (victim->ops->give_idle(victim->context)) {
            t->evictions++;
            return true;
        }
        after_used = used_min;
        after_index = index;
        first = false;
    }
}

unsigned long long pool_tenants_evictions(const pool_tenants *t) { return t->evictions; }
