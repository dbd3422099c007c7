/* Chart scripts for a sweep's sweep.csv (one row per sweep point and metric: a column
 * per swept key, then scope,subject,metric,value,unit,ci95_lo,ci95_hi,n): one chart per
 * (scope, subject, metric), the mean against the first key with its 95% interval as a
 * band; with two or more keys, one line and band per value of the second. */
#ifndef FLEETSIM_OUTPUT_PLOT_SWEEP_H
#define FLEETSIM_OUTPUT_PLOT_SWEEP_H

#include <stddef.h>

#include "output/plot_script.h"

/* The metrics a reader of a sweep looks at, most important first, each with its name
 * in words: charted in this order and tabled in report.html (issue 18, 6).  The rank of
 * metric, or -1 for one not charted (it stays in sweep.csv). */
int plot_sweep_rank(const char *metric);
const char *plot_sweep_words(const char *metric);

/* A level drawn across a sweep's chart of one metric as a dashed line: an SLO (the ttft
 * limit on ttft_p99_s's chart).  A search's target is read from search.csv instead. */
typedef struct plot_limit {
    const char *scope, *subject, *metric;
    double value;           /* in the metric's unit */
    const char *label;      /* "SLO": the line's label and the caption's word */
} plot_limit;

/* Writes DIR/plots/sweep_<scope>_<subject>_<metric>.gp for every ranked metric whose
 * value moves from point to point and adds each NAME to written, with the search's
 * target, else the first of limits (nlimits of them; NULL when none) naming the chart's
 * metric, as a line.  No sweep.csv: nothing, 0.  -1 with a message. */
int plot_sweep_scripts(const char *dir, const plot_limit *limits, size_t nlimits,
                       plot_list *written, char *err, size_t err_size);

#endif
