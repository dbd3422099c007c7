/* Chart scripts for a sweep's sweep.csv (one row per sweep point and metric: a column
 * per swept key, then scope,subject,metric,value,unit,ci95_lo,ci95_hi,n): one chart per
 * (scope, subject, metric), the mean against the first key with its 95% interval as a
 * band; with two or more keys, one line and band per value of the second. */
#ifndef FLEETSIM_OUTPUT_PLOT_SWEEP_H
#define FLEETSIM_OUTPUT_PLOT_SWEEP_H

#include <stddef.h>

#include "output/plot_script.h"

/* Writes DIR/plots/sweep_<scope>_<subject>_<metric>.gp for every metric with a value
 * and adds each NAME to written.  No sweep.csv: nothing, 0.  -1 with a message. */
int plot_sweep_scripts(const char *dir, plot_list *written, char *err, size_t err_size);

#endif
