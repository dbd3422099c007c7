/* Choosing a fleet's replica for a request (see serving_fleet.h): round robin, fewest
 * outstanding requests or tokens, the better of two at random, or a scenario's
 * function. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/serving_fleet_internal.h"
#include "sim/array.h"

static const char *const ROUTING_NAMES[] = {
    "round_robin", "least_outstanding", "shortest_tokens", "power_of_two", "custom",
};

const char *routing_policy_name(routing_policy p) { return ROUTING_NAMES[p]; }

int routing_policy_parse(const char *name, routing_policy *out)
{
    for (int i = 0; i < 4; i++) /* "custom" is not a name a scenario gives */
        if (!strcmp(name, ROUTING_NAMES[i])) {
            *out = (routing_policy)i;
            return 0;
        }
    return -1;
}

/* The index of the active replica for a request; -1 with the message in err when a
 * custom policy failed. */
static int choose(serving_fleet *f, unsigned prompt, unsigned output, char *err,
                  size_t err_size)
{
    unsigned n = f->nactive;
    serving_slot **a = f->active;
    switch (f->routing.policy) {
    case ROUTE_CUSTOM: {
        f->loads = sim_array_grow(f->loads, &f->nloads, n, sizeof *f->loads,
                                  "the loads to route by");
        for (unsigned i = 0; i < n; i++)
            f->loads[i] = (replica_load){ replica_outstanding(a[i]->r),
                                          replica_outstanding_tokens(a[i]->r) };
        int i = f->routing.custom(f->routing.custom_context, f->loads, n, prompt, output,
                                  sim_engine_now(f->engine), err, err_size);
        if (i >= 0 && (unsigned)i >= n) {
            snprintf(err, err_size, "workload %s: the routing function chose replica %d of %u",
                     f->routing.workload, i + 1, n);
            return -1;
        }
        return i < 0 ? -1 : i;
    }
    case ROUTE_ROUND_ROBIN: {
        unsigned i = f->next_replica;
        f->next_replica = (i + 1) % n;
        return (int)i;
    }
    case ROUTE_LEAST_OUTSTANDING: {
        unsigned best = 0;
        for (unsigned i = 1; i < n; i++)
            if (replica_outstanding(a[i]->r) < replica_outstanding(a[best]->r))
                best = i;
        return (int)best;
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
        return (int)best;
    }
    case ROUTE_POWER_OF_TWO: {
        unsigned x = (unsigned)gsl_rng_uniform_int(f->routing.rng, n);
        unsigned y = (unsigned)gsl_rng_uniform_int(f->routing.rng, n);
        return (int)(replica_outstanding(a[y]->r) < replica_outstanding(a[x]->r) ? y : x);
    }
    }
    return 0;
}

unsigned serving_fleet_active(const serving_fleet *f) { return f->nactive; }

bool serving_fleet_saturated(const serving_fleet *f, unsigned threshold)
{
    for (unsigned i = 0; i < f->nactive; i++)
        if (replica_outstanding(f->active[i]->r) < threshold)
            return false;
    return true;
}

static int route(serving_fleet *f, llm_request *q, bool prefilled, char *err, size_t err_size)
{
    if (f->nactive == 0)
        return 0;
    int i = choose(f, q->prompt, q->output, err, err_size);
    if (i < 0)
        return -1;
    if (sim_engine_stopped(f->engine)) /* another part failed at this instant */
        return 1;
    q->unit = f->active[i]->unit;
    if (prefilled)
        replica_enqueue_prefilled(f->active[i]->r, q);
    else
        replica_enqueue(f->active[i]->r, q);
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
