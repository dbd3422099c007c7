/* An experiment's files written as its points complete, so that memory does not grow
 * with the number of points (issue 37): each point's folder (summary.csv and
 * timeseries.csv), and its rows of sweep.csv and sweep_diff.csv (README.md,
 * "Experiments"; the columns are output/sweep.h's).
 *
 * Everything goes under temporary names inside DIR (the folders under
 * ".points.tmp-<pid>-<n>", the tables as atomic files): commit puts it all in place,
 * abort removes it, so an experiment that fails or is interrupted leaves nothing that
 * looks whole, and an earlier run's files stay until the caller clears them just before
 * the commit. */
#ifndef FLEETSIM_OUTPUT_SWEEP_STREAM_H
#define FLEETSIM_OUTPUT_SWEEP_STREAM_H

#include <stdbool.h>
#include <stddef.h>

#include "output/sweep.h"
#include "sim/timeseries.h"

typedef struct sweep_stream sweep_stream;

/* Starts sweep.csv (the keys, one column each, then the summary's columns) and, with
 * diff, sweep_diff.csv; NULL with a message in err. */
sweep_stream *sweep_stream_open(const char *dir, const char *const *keys, size_t nkeys,
                                bool diff, char *err, size_t err_size);

/* Point k (1, 2, ... in order): its folder points/<k>, a row of sweep.csv per metric,
 * and with diff, after the first point, a row of sweep_diff.csv per metric the first
 * point has too (the mean over replications of point - first, paired replication by
 * replication, with its Student-t 95% interval; n the number of pairs).  first is point
 * 1's view (ignored for k = 1); ts NULL writes no timeseries.csv.  0, or -1 with a
 * message. */
int sweep_stream_point(sweep_stream *s, size_t k, const sweep_point_view *point,
                       const sweep_point_view *first, const sim_timeseries *ts,
                       double duration_s, char *err, size_t err_size);

/* Moves the point folders to DIR/points/<k> and renames the tables into place; frees s.
 * DIR/points/<k> must not exist (output_clear_run_folder first).  0, or -1 with a
 * message (what was not yet in place is removed). */
int sweep_stream_commit(sweep_stream *s, char *err, size_t err_size);

/* Removes everything s wrote; frees s.  NULL-safe. */
void sweep_stream_abort(sweep_stream *s);

#endif
