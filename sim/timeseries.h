/* Values per time bucket and subject, averaged over replications: the curves of a run
 * (utilization, queue length, throughput, latency quantiles over time).
 *
 * The table is buckets x subjects x columns; each cell keeps a sum and a count, so
 * every replication adds its value and the cell reports their mean.  A cell no
 * replication filled is empty (NaN).  Memory: 16 bytes a cell, fixed at creation.
 */
#ifndef FLEETSIM_SIM_TIMESERIES_H
#define FLEETSIM_SIM_TIMESERIES_H

#include <stddef.h>

typedef struct sim_timeseries sim_timeseries;

/* Cells a timeseries may hold at most (buckets x subjects x columns): 64 MB of cells. */
#define SIM_TIMESERIES_MAX_CELLS ((size_t)4 << 20)

/* A table of nbuckets buckets of bucket_s seconds, for the given columns (copied).
 * NULL if out of memory or over SIM_TIMESERIES_MAX_CELLS once subjects are added. */
sim_timeseries *sim_timeseries_create(size_t nbuckets, double bucket_s,
                                      const char *const *columns, size_t ncolumns);
/* NULL is fine. */
void sim_timeseries_free(sim_timeseries *ts);

/* Adds a subject, as (scope, name); returns its index.  Aborts if out of memory or over
 * the cell limit (callers check sim_timeseries_cells_needed first). */
size_t sim_timeseries_add_subject(sim_timeseries *ts, const char *scope, const char *name);

/* Cells a table of this shape needs. */
size_t sim_timeseries_cells_needed(size_t nbuckets, size_t nsubjects, size_t ncolumns);

/* Adds one replication's value of a cell; NaN adds nothing.  Buckets past the end are
 * ignored (a run's last partial bucket is counted in the one it starts). */
void sim_timeseries_add(sim_timeseries *ts, size_t bucket, size_t subject, size_t column,
                        double value);

/* Shape and contents, for output. */
size_t sim_timeseries_buckets(const sim_timeseries *ts);
double sim_timeseries_bucket_s(const sim_timeseries *ts);
size_t sim_timeseries_subjects(const sim_timeseries *ts);
size_t sim_timeseries_columns(const sim_timeseries *ts);
const char *sim_timeseries_column(const sim_timeseries *ts, size_t column);
const char *sim_timeseries_subject_scope(const sim_timeseries *ts, size_t subject);
const char *sim_timeseries_subject_name(const sim_timeseries *ts, size_t subject);
/* Mean over the replications that filled the cell, or NaN. */
double sim_timeseries_value(const sim_timeseries *ts, size_t bucket, size_t subject,
                            size_t column);

#endif
