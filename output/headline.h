/* What a person reads first after a run (issue 18, 2 and 4): warnings about a setup
 * that cannot give a meaningful answer, and a few lines per workload and pool with the
 * figures that answer the scenario, before (or instead of) the full table. */
#ifndef FLEETSIM_OUTPUT_HEADLINE_H
#define FLEETSIM_OUTPUT_HEADLINE_H

#include <stdio.h>

#include "models/scenario.h"
#include "sim/metrics.h"

/* One line on `out` per overloaded workload (its metric `overloaded` above 0): the
 * offered and served rates and what to do; then one per workload whose prompts past the
 * model's context, refused on any pool, are a thousandth of its requests or more; each
 * prefixed with `prefix` (e.g. "point 3 (pools.gpus.count=2): ", or "").  Returns how
 * many. */
int output_overload_warnings(FILE *out, const sim_metrics *metrics, const char *prefix);

/* The headline: per workload its latency percentiles against its SLO (sc may be NULL:
 * then no SLO is named), attainment, rates served and offered, tokens/s; per pool the
 * GPUs held, how busy and full, cost; per job its end, GPU-hours and cost.  Only the
 * figures the metrics hold. */
void output_headline(FILE *out, const sim_metrics *metrics, const scenario *sc);

#endif
