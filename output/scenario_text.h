/* The resolved scenario as text (fleetsim check): every value after defaults, units and
 * --set, in base units, in the order the run uses. */
#ifndef FLEETSIM_OUTPUT_SCENARIO_TEXT_H
#define FLEETSIM_OUTPUT_SCENARIO_TEXT_H

#include <stdio.h>

#include "models/scenario.h"

void output_scenario_text(FILE *out, const scenario *sc);

/* A replica's cache: "    cache capacity N tokens per replica: K requests of M tokens ..." */
void output_cache_capacity_text(FILE *out, const inference_spec *w);

/* For a run's header: each inference workload's replicas, tp (and whether it was chosen)
 * and cache capacity, one line each. */
void output_replicas_text(FILE *out, const scenario *sc);

/* A disaggregated workload's decode pool and cache link, two indented lines. */
void output_disaggregated_text(FILE *out, const scenario *sc, const inference_spec *w);

/* One distribution as text, e.g. "exponential { mean = 0.25 }". */
void output_dist_text(FILE *out, const sim_dist *d);

#endif
