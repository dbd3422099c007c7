/* What a serving workload's replicas did, live and gone (see serving_internal.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/serving_internal.h"
#include "sim/fatal.h"

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
