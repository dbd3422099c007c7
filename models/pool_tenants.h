/* Several serving fleets (one per model) drawing replicas from one pool: the pool's
 * arbiter.  When a fleet cannot get GPUs for a replica it wants, the arbiter frees a
 * replica that another tenant holds but is not using (no request waiting or running
 * there), the least recently used tenant first, as model-serving systems evict the
 * coldest model; the fleet waiting gets the GPUs when the pool says they are back.  A
 * tenant gives up a replica only above its floor: a model that scales to zero has a
 * floor of 0, one with fixed replicas keeps them.
 *
 * The arbiter is the pool's listener (gpu_pool_set_listener): when GPUs come back it
 * asks each waiting fleet, in the order they began to wait, to try again.  Which
 * replica goes is deterministic (least recently used, ties to the earlier tenant).
 */
#ifndef FLEETSIM_MODELS_POOL_TENANTS_H
#define FLEETSIM_MODELS_POOL_TENANTS_H

#include <stdbool.h>

#include "models/gpu_hosts.h"
#include "models/gpu_pool.h"
#include "sim/engine.h"

typedef struct pool_tenants pool_tenants;

/* What the arbiter asks of a tenant (a serving fleet). */
typedef struct pool_tenant_ops {
    /* When the tenant last had work (a request routed or finished); INFINITY while it
     * has requests, so that a busy tenant is never the least recently used. */
    double (*last_used_s)(void *tenant);
    /* Gives back one replica that holds no request, when above its floor: true when one
     * is draining now (its GPUs return to the pool at once). */
    bool (*give_idle)(void *tenant);
    /* The pool has GPUs again: try to order what it wants. */
    void (*retry)(void *tenant);
} pool_tenant_ops;

/* An arbiter for the pool (which it listens to from now on).  Never NULL: out of memory
 * is fatal, like every allocation of a run. */
pool_tenants *pool_tenants_create(sim_engine *engine, gpu_pool *pool);
/* NULL is fine. */
void pool_tenants_free(pool_tenants *t);

/* Adds a tenant; the context is passed back in its ops. */
void pool_tenants_add(pool_tenants *t, const pool_tenant_ops *ops, void *tenant);

/* The tenant could not get GPUs: frees an idle replica of the least recently used other
 * tenant, if any can give one, and remembers that this one waits.  True when one was
 * freed. */
bool pool_tenants_short(pool_tenants *t, void *tenant);

/* A tenant has no request left: a replica of its may now be freed for one that waits.
 * The waiting tenants try again in an event at this instant (never inside the caller's
 * call: a replica's callback). */
void pool_tenants_idle(pool_tenants *t);

/* The registry of the pool's shared or noisy GPUs (models/gpu_hosts.h), made by the
 * first tenant that asks (with its configuration: every tenant's is the pool's) and
 * freed with the arbiter, so that models packed on a GPU share its host. */
gpu_hosts *pool_tenants_hosts(pool_tenants *t, const gpu_hosts_config *config);

/* Replicas taken from tenants so far. */
unsigned long long pool_tenants_evictions(const pool_tenants *t);

#endif
