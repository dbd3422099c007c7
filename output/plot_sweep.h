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

/* Writes DIR/plots/sweep_<scope>_<subject>_<metric>.gp for every ranked metric whose
 * value moves from point to point and adds each NAME to written.  No sweep.csv: nothing, 0.  -1 with a message. */
int plot_sweep_scripts(const char *dir, plot_list *written, char *err, size_t err_size);

#endif
