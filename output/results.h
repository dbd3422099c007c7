/* The files and the table a run leaves: summary.csv, timeseries.csv, and the aligned
 * summary printed at the end.  The file formats are documented in README.md. */
#ifndef FLEETSIM_OUTPUT_RESULTS_H
#define FLEETSIM_OUTPUT_RESULTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "sim/metrics.h"
#include "sim/timeseries.h"

/* The columns of a summary row, as summary.csv's header names them. */
#define OUTPUT_SUMMARY_COLUMNS "scope,subject,metric,value,unit,ci95_lo,ci95_hi,n"

/* The fields of a summary row for metric m with its interval ci (the value is ci.mean,
 * then ci.low, ci.high and ci.n), preceded by a comma unless first; no newline.  The
 * rows of summary.csv, sweep.csv, sweep_diff.csv and search.csv. */
void output_summary_fields(FILE *out, const sim_metric *m, sim_ci ci, bool first);

/* summary.csv: OUTPUT_SUMMARY_COLUMNS.  value is the mean over replications; the
 * interval is Student-t at 95% (empty with fewer than two). */
int output_summary_csv(const char *dir, const sim_metrics *metrics, char *err, size_t err_size);

/* timeseries.csv: bucket_start_s,bucket_end_s,scope,subject, then one column per
 * measurement; a row per bucket and subject; empty cells where a column does not apply. */
int output_timeseries_csv(const char *dir, const sim_timeseries *ts, double duration_s,
                          char *err, size_t err_size);

/* The summary as an aligned table (with +- half-widths when there are replications). */
void output_summary_table(FILE *out, const sim_metrics *metrics);

#endif
