/* What replicas did, summed: a fleet's record of the replicas it gave back, and the same
 * record with the living added at a moment (models/serving_fleet_stats.c).  One type and
 * one add, so that a statistic a replica gains is counted for the living and the gone
 * alike. */
#ifndef FLEETSIM_MODELS_REPLICA_TOTALS_H
#define FLEETSIM_MODELS_REPLICA_TOTALS_H

#include <stdint.h>

#include "models/kv_swap.h"
#include "models/prefix_cache.h"
#include "models/replica.h"

typedef struct replica_totals {
    /* since the warm-up (replica_restart_stats): the integrals of the busy, batch and
     * cache time averages, the iterations, tokens computed and cache read, speculative
     * rounds, their tokens and the draft's seconds, preemptions and the host tier's
     * figures, the prefix cache's tiers' fetches, and the largest batch */
    double busy_s, batch_area, kv_area;
    double iterations, tokens_computed, cache_tokens_read;
    double spec_rounds, spec_tokens, draft_s;
    uint64_t preemptions;
    kv_swap_stats swap;
    prefix_tier_stats prefix_tiers[PREFIX_TIERS_MAX];
    double batch_max;
    /* over the whole run: engine events, prefix-cache evictions, the fullest cache */
    uint64_t events, evictions;
    double kv_max;
} replica_totals;

/* Adds replica r at `now`, and the evictions of its prefix cache (NULL: none). */
void replica_totals_add(replica_totals *t, const replica *r, double now,
                        const prefix_cache *cache);

/* Forgets what the warm-up counted (the run-long figures stay). */
void replica_totals_restart(replica_totals *t);

#endif
