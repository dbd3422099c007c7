/* What a fleet's replicas did, live and gone, and the fleet as its autoscaler sees it
 * (see serving_fleet.h). */
#include <math.h>

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

serving_group_stats serving_fleet_stats(const serving_fleet *f, double end_s)
{
    serving_group_stats out = { .served = f->served, .replica_losses = f->losses,
                                .kv_preemptions = f->gone_kv_preemptions,
                                .kv_swap = f->gone_kv_swap,
                                .replicas_max = f->ready.max,
                                .iterations = f->gone_iterations,
                                .tokens_computed = f->gone_tokens,
                                .cache_tokens_read = f->gone_cache_read,
                                .spec_rounds = f->gone_spec_rounds,
                                .spec_tokens = f->gone_spec_tokens,
                                .draft_s = f->gone_draft_s };
    double busy = f->gone_busy, batch = f->gone_batch, kv = f->gone_kv;
    double live_busy = 0, busiest = 0; /* of the batch: sequences held */
    unsigned live = 0;
    out.prefix_evictions = f->gone_evictions;
    for (size_t i = 0; i < f->nslots; i++) {
        const replica *r = f->slots[i]->r;
        if (!r)
            continue;
        const replica_stats *st = replica_get_stats(r);
        busy += sim_timeavg_integral(&st->busy, end_s);
        double held = sim_timeavg_integral(&st->batch, end_s);
        live_busy += held;
        busiest = fmax(busiest, held);
        live++;
        if (f->slots[i]->cache)
            out.prefix_evictions += prefix_cache_evictions(f->slots[i]->cache);
        batch += sim_timeavg_integral(&st->batch, end_s);
        kv += sim_timeavg_integral(&st->kv, end_s);
        out.kv_preemptions += st->preemptions;
        kv_swap_stats_add(&out.kv_swap, &st->swap);
        out.iterations += st->iterations;
        out.tokens_computed += st->tokens_computed;
        out.cache_tokens_read += st->cache_tokens_read;
        out.spec_rounds += st->spec_rounds;
        out.spec_tokens += st->spec_tokens;
        out.draft_s += st->draft_s;
    }
    double replica_s = sim_timeavg_integral(&f->ready, end_s);
    out.replica_s = replica_s;
    out.replicas_mean = sim_timeavg_mean(&f->ready, end_s);
    out.utilization = replica_s > 0 ? busy / replica_s : NAN;
    out.batch_mean = replica_s > 0 ? batch / replica_s : NAN;
    out.kv_mean = replica_s > 0 ? kv / replica_s : NAN;
    out.load_max_over_mean = live_busy > 0 ? busiest / (live_busy / live) : NAN;
    out.cold_starts = f->cold_starts;
    out.gpus_held_mean = sim_timeavg_mean(&f->held, end_s);
    return out;
}

double serving_fleet_batch_max(const serving_fleet *f)
{
    double m = f->gone_batch_max;
    for (size_t k = 0; k < f->nslots; k++)
        if (f->slots[k]->r)
            m = fmax(m, replica_get_stats(f->slots[k]->r)->batch.max);
    return m;
}

double serving_fleet_kv_max(const serving_fleet *f)
{
    double m = f->gone_kv_max;
    for (size_t k = 0; k < f->nslots; k++)
        if (f->slots[k]->r)
            m = fmax(m, replica_get_stats(f->slots[k]->r)->life_kv.max);
    return m;
}

uint64_t serving_fleet_replica_events(const serving_fleet *f)
{
    uint64_t n = f->gone_events;
    for (size_t k = 0; k < f->nslots; k++)
        if (f->slots[k]->r)
            n += replica_get_stats(f->slots[k]->r)->iterations_events;
    return n;
}

void serving_fleet_restart_stats(serving_fleet *f, double now)
{
    for (size_t k = 0; k < f->nslots; k++)
        if (f->slots[k]->r)
            replica_restart_stats(f->slots[k]->r, now);
    sim_timeavg_restart(&f->ready, now);
    sim_timeavg_restart(&f->held, now);
    f->gone_busy = f->gone_batch = f->gone_kv = 0;
    f->gone_iterations = f->gone_tokens = f->gone_cache_read = 0;
    f->gone_spec_rounds = f->gone_spec_tokens = f->gone_draft_s = 0;
    f->gone_kv_preemptions = 0;
    f->gone_kv_swap = (kv_swap_stats){ 0 };
    f->gone_batch_max = 0; /* the kv maximum is over the whole run, as replicas' own */
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
        v.outstanding += replica_outstanding(sl->r);
    }
    v.utilization = span > 0 ? busy / span : 0;
    v.kv_cache = span > 0 ? kv / span : 0;
    return v;
}

size_t serving_fleet_prefix_memory_bytes(const serving_fleet *f)
{
    size_t n = 0;
    for (size_t k = 0; k < f->nslots; k++)
        if (f->slots[k]->cache)
            n += prefix_cache_memory_bytes(f->slots[k]->cache);
    if (f->directory)
        n += prefix_directory_memory_bytes(f->directory) + f->ncached * sizeof *f->cached;
    return n;
}
