/* The files of an experiment (README.md, "Experiments"): search.csv here; sweep.csv,
 * sweep_diff.csv and a folder per point as the points complete (output/sweep_stream.h). */
#ifndef FLEETSIM_OUTPUT_SWEEP_H
#define FLEETSIM_OUTPUT_SWEEP_H

#include <stdbool.h>
#include <stddef.h>

#include "sim/metrics.h"

/* One point as the writers see it. */
typedef struct sweep_point_view {
    const char *const *values;   /* the value of each key, as text */
    const sim_metrics *metrics;  /* merged over replications */
    /* samples[i * replications + r]: metric i's value in replication r (NaN: none);
     * rows past samples_metrics have no samples */
    const double *samples;
    size_t samples_metrics;
    unsigned replications;
} sweep_point_view;

/* One probe of a search (a point of a grid search), against the target's conditions. */
typedef struct search_probe_view {
    const char *const *values;  /* each key's value */
    const sim_metric *const *metrics; /* each condition's metric here (NULL: not measured) */
    const bool *meets;          /* whether it meets each condition */
    const sim_metric *objective; /* a grid search's objective here (NULL: none) */
} search_probe_view;

/* search.csv: probe, a column per key, then scope,subject,metric,value,unit,ci95_lo,
 * ci95_hi,n,target,meets, and with an objective (its text, "minimise cost_usd", or NULL)
 * objective,objective_subject,objective_value,objective_ci95_lo,objective_ci95_hi; a
 * row per probe and condition of the target (`conditions`, their texts: target is the
 * condition's, "ttft_p99_s <= 1", and meets whether that condition is met; a probe meets
 * the target where it meets them all) in the order run (probe 1, 2, ...), then rows
 * "answer" with probe `answer`'s values (the smallest or largest that meets the target,
 * or the grid's best), its key columns empty when answer is SIZE_MAX (none did). */
int output_search_csv(const char *dir, const char *const *keys, size_t nkeys,
                      const char *const *conditions, size_t nconditions, const char *objective,
                      const search_probe_view *probes, size_t nprobes, size_t answer,
                      char *err, size_t err_size);

#endif
