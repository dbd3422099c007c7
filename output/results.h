/* The files and the table a run leaves: summary.csv, timeseries.csv, and the aligned
 * summary printed at the end.  The file formats are documented in README.md. */
#ifndef FLEETSIM_OUTPUT_RESULTS_H
#define FLEETSIM_OUTPUT_RESULTS_H

#include <stddef.h>
#include <stdio.h>

#include "sim/metrics.h"
#include "sim/timeseries.h"

/* summary.csv: scope,subject,metric,value,unit,ci95_lo,ci95_hi,n.  value is the mean
 * over replications; the interval is Student-t at 95% (empty with fewer than two). */
int output_summary_csv(const char *dir, const sim_metrics *metrics, char *err, size_t err_size);

/* timeseries.csv: bucket_start_s,bucket_end_s,scope,subject, then one column per
 * measurement; a row per bucket and subject; empty cells where a column does not apply. */
int output_timeseries_csv(const char *dir, const sim_timeseries *ts, double duration_s,
                          char *err, size_t err_size);

/* The summary as an aligned table (with +- half-widths when there are replications). */
void output_summary_table(FILE *out, const sim_metrics *metrics);

#endif
