/* What a fleet's replicas did, live and gone, and the fleet as its autoscaler sees it
 * (see serving_fleet.h). */
#include <math.h>
#include <string.h>

#include "models/serving_fleet_internal.h"

void serving_fleet_bucket_sums(serving_fleet *f, double now, double sums[3], double *replica_s,
                               perf_phases *work)
{
    for (int k = 0; k < 3; k++) {
        sums[k] = f->gone_bucket[k];
        f->gone_bucket[k] = 0;
    }
    *work = f->gone_work;
    f->gone_work = (perf_phases){ 0 };
    for (size_t i = 0; i < f->nslots; i++) {
        serving_slot *sl = f->slots[i];
        if (!sl->r)
            continue;
        const replica_stats *st = replica_get_stats(sl->r);
        const sim_timeavg *life[3] = { &st->life_busy, &st->life_batch, &st->life_kv };
        for (int k = 0; k < 3; k++) {
            double integral = sim_timeavg_integral(life[k], now);
            sums[k] += integral - sl->marks[k];
            sl->marks[k] = integral;
        }
        *work = perf_phases_add(*work, st->work, 1);
        *work = perf_phases_add(*work, sl->work_mark, -1);
        sl->work_mark = st->work;
    }
    double ready = sim_timeavg_integral(&f->life_ready, now);
    *replica_s = ready - f->ready_mark;
    f->ready_mark = ready;
}

/* The gone replicas' totals with the living added at `now`. */
static replica_totals all_totals(const serving_fleet *f, double now)
{
    replica_totals t = f->gone;
    for (size_t i = 0; i < f->nslots; i++)
        if (f->slots[i]->r)
            replica_totals_add(&t, f->slots[i]->r, now, f->slots[i]->cache);
    return t;
}

serving_group_stats serving_fleet_stats(const serving_fleet *f, double end_s)
{
    replica_totals t = all_totals(f, end_s);
    serving_group_stats out = { .served = f->served, .replica_losses = f->losses,
                                .kv_preemptions = t.preemptions, .kv_swap = t.swap,
                                .replicas_max = f->ready.max, .iterations = t.iterations,
                                .tokens_computed = t.tokens_computed,
                                .cache_tokens_read = t.cache_tokens_read,
                                .spec_rounds = t.spec_rounds, .spec_tokens = t.spec_tokens,
                                .draft_s = t.draft_s, .prefix_evictions = t.evictions };
    memcpy(out.prefix_tiers, t.prefix_tiers, sizeof out.prefix_tiers);
    double live_busy = 0, busiest = 0; /* of the living's batch: sequences held */
    unsigned live = 0;
    for (size_t i = 0; i < f->nslots; i++) {
        const replica *r = f->slots[i]->r;
        if (!r)
            continue;
        double held = sim_timeavg_integral(&replica_get_stats(r)->batch, end_s);
        live_busy += held;
        busiest = fmax(busiest, held);
        live++;
    }
    double replica_s = sim_timeavg_integral(&f->ready, end_s);
    out.replica_s = replica_s;
    out.replicas_mean = sim_timeavg_mean(&f->ready, end_s);
    out.utilization = replica_s > 0 ? t.busy_s / replica_s : NAN;
    out.batch_mean = replica_s > 0 ? t.batch_area / replica_s : NAN;
    out.kv_mean = replica_s > 0 ? t.kv_area / replica_s : NAN;
    out.load_max_over_mean = live_busy > 0 ? busiest / (live_busy / live) : NAN;
    out.cold_starts = f->cold_starts;
    out.gpus_held_mean = sim_timeavg_mean(&f->held, end_s);
    return out;
}

/* The maxima and counts below need no time: any moment's totals give them. */
double serving_fleet_batch_max(const serving_fleet *f) { return all_totals(f, 0).batch_max; }

double serving_fleet_kv_max(const serving_fleet *f) { return all_totals(f, 0).kv_max; }

uint64_t serving_fleet_replica_events(const serving_fleet *f)
{
    return all_totals(f, 0).events;
}

void serving_fleet_restart_stats(serving_fleet *f, double now)
{
    for (size_t k = 0; k < f->nslots; k++)
        if (f->slots[k]->r)
            replica_restart_stats(f->slots[k]->r, now);
    sim_timeavg_restart(&f->ready, now);
    sim_timeavg_restart(&f->held, now);
    replica_totals_restart(&f->gone); /* the kv maximum is over the whole run, as
                                         replicas' own */
    f->losses = 0;
    f->cold_starts = 0;
}

autoscale_view serving_fleet_observe(serving_fleet *f, double now)
{
    autoscale_view v = { .now_s = now, .min = f->group.min, .max = f->group.max };
    double busy = 0, kv = 0, span = 0;
    for (size_t i = 0; i < f->nslots; i++) {
        serving_slot *sl = f->slots[i];
        if (sl->state == SLOT_ORDERED || sl->state == SLOT_LOADING) {
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
        v.outstanding += slot_load(sl);
    }
    v.utilization = span > 0 ? busy / span : 0;
    v.kv_cache = span > 0 ? kv / span : 0;
    return v;
}

size_t serving_fleet_prefix_memory_bytes(const serving_fleet *f)
{
    size_t n = 0;
    for (size_t k = 0; k < f->nslots; k++)
        if (f->slots[k]->cache) {
            n += prefix_cache_memory_bytes(f->slots[k]->cache);
            const prefix_tiers *t = &f->slots[k]->tiers;
            for (unsigned i = 0; i < t->n; i++)
                if (t->tier[i].kind != PREFIX_TIER_SHARED)
                    n += prefix_cache_memory_bytes(t->tier[i].cache);
        }
    if (f->shared_tier)
        n += prefix_cache_memory_bytes(f->shared_tier);
    if (f->directory)
        n += prefix_directory_memory_bytes(f->directory) + f->ncached * sizeof *f->cached;
    return n;
}
