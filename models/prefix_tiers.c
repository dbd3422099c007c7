/* Tiers of a prefix cache below GPU memory (see prefix_tiers.h). */
#include "models/prefix_tiers.h"

const char *prefix_tier_kind_name(prefix_tier_kind kind)
{
    static const char *const names[] = { "host", "disk", "shared" };
    return (unsigned)kind < PREFIX_TIERS_MAX ? names[kind] : "?";
}

void prefix_tier_stats_add(prefix_tier_stats *sum, const prefix_tier_stats *s)
{
    sum->fetches += s->fetches;
    sum->declined += s->declined;
    sum->tokens += s->tokens;
    sum->bytes += s->bytes;
    sum->stall_s += s->stall_s;
}

prefix_fetch prefix_tiers_plan(const prefix_tiers *t, const prefix_chain *chain,
                               unsigned from, unsigned want, const prefix_costs *costs,
                               const void *q)
{
    prefix_fetch plan = { .to = from };
    for (unsigned i = 0; i < t->n; i++) {
        const prefix_tier *tier = &t->tier[i];
        unsigned held = prefix_cache_longest(tier->cache, chain, want);
        if (held <= plan.to)
            continue;
        double bytes = costs->bytes(costs->context, plan.to, held);
        double fetch_s = tier->latency_s + bytes / tier->bandwidth_bytes_per_s;
        if (!(fetch_s < costs->prefill_s(costs->context, q, plan.to, held))) {
            plan.declined[i] = true; /* the next tier may offer the same blocks quicker */
            continue;
        }
        plan.tokens[i] = held - plan.to;
        plan.bytes[i] = bytes;
        plan.seconds_of[i] = fetch_s;
        plan.seconds += fetch_s;
        plan.to = held;
    }
    return plan;
}

void prefix_tiers_fetched(const prefix_tiers *t, const prefix_chain *chain,
                          const prefix_fetch *plan, prefix_tier_stats *stats)
{
    bool any = false;
    for (unsigned i = 0; i < t->n; i++) {
        any |= plan->tokens[i] > 0;
        if (!stats)
            continue;
        stats[i].fetches += plan->tokens[i] > 0;
        stats[i].declined += plan->declined[i];
        stats[i].tokens += plan->tokens[i];
        stats[i].bytes += plan->bytes[i];
        stats[i].stall_s += plan->seconds_of[i];
    }
    /* the blocks read are now the GPU's too: written through, and the most recently
     * used in every tier (a read refreshes them where they were found) */
    if (any)
        prefix_tiers_store(t, chain, plan->to);
}

void prefix_tiers_store(const prefix_tiers *t, const prefix_chain *chain, unsigned tokens)
{
    for (unsigned i = 0; i < t->n; i++)
        prefix_cache_insert(t->tier[i].cache, chain, tokens, t->tier[i].capacity_blocks);
}
