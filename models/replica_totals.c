/* Replicas' statistics summed (see replica_totals.h). */
#include "models/replica_totals.h"

#include <math.h>

void replica_totals_add(replica_totals *t, const replica *r, double now,
                        const prefix_cache *cache)
{
    const replica_stats *st = replica_get_stats(r);
    t->busy_s += sim_timeavg_integral(&st->busy, now);
    t->batch_area += sim_timeavg_integral(&st->batch, now);
    t->kv_area += sim_timeavg_integral(&st->kv, now);
    t->iterations += st->iterations;
    t->tokens_computed += st->tokens_computed;
    t->cache_tokens_read += st->cache_tokens_read;
    t->spec_rounds += st->spec_rounds;
    t->spec_tokens += st->spec_tokens;
    t->draft_s += st->draft_s;
    t->preemptions += st->preemptions;
    kv_swap_stats_add(&t->swap, &st->swap);
    for (unsigned i = 0; i < PREFIX_TIERS_MAX; i++)
        prefix_tier_stats_add(&t->prefix_tiers[i], &st->prefix_tiers[i]);
    t->batch_max = fmax(t->batch_max, st->batch.max);
    t->events += st->iterations_events;
    if (cache)
        t->evictions += prefix_cache_evictions(cache);
    t->kv_max = fmax(t->kv_max, st->life_kv.max);
}

void replica_totals_restart(replica_totals *t)
{
    replica_totals kept = { .events = t->events, .evictions = t->evictions,
                            .kv_max = t->kv_max };
    *t = kept;
}
