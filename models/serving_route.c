/* Routing a request (see serving_internal.h): to a replica of the workload's own pool
 * by the routing policy, to the overflow pool when every own replica is saturated, or
 * to the pending queue while no replica is ready. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/serving_internal.h"
#include "sim/fatal.h"

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
void fleet_flush_pending(serving *s)
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
