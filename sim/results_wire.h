/* The results of one replication as bytes, for a worker process to send and the parent
 * to merge: each metric with its single value, each time-series cell with its single
 * value.  Re-adding them replication by replication, in replication order, gives the
 * same sums, bit for bit, as one process adding them as it ran.
 */
#ifndef FLEETSIM_SIM_RESULTS_WIRE_H
#define FLEETSIM_SIM_RESULTS_WIRE_H

#include <stddef.h>

#include "sim/metrics.h"
#include "sim/timeseries.h"
#include "sim/wire.h"

/* Packs every metric of m, in order, with its value (NaN when it has none).  m must
 * hold one replication: 0, or -1 with a message naming a metric that holds several
 * values (they could not be re-added one by one). */
int sim_metrics_pack(sim_wire *w, const sim_metrics *m, char *err, size_t err_size);

/* Called for each unpacked metric: its index in `into` and its value (maybe NaN). */
typedef void (*sim_metric_value_fn)(void *context, size_t index, double value);

/* Re-adds packed metrics to into with sim_metrics_add, in the packed order; calls each
 * (if not NULL) for every one.  0, or -1 if the bytes are malformed. */
int sim_metrics_unpack_add(sim_wire_reader *r, sim_metrics *into, sim_metric_value_fn each,
                           void *context);

/* Packs a time series one replication filled: its shape, its subjects and the value of
 * every filled cell. */
void sim_timeseries_pack(sim_wire *w, const sim_timeseries *ts);

/* Re-adds packed cells to *into with sim_timeseries_add.  When *into is NULL it is
 * created with the packed shape (the caller frees it).  0, or -1 if the bytes are
 * malformed or of another shape than *into. */
int sim_timeseries_unpack_add(sim_wire_reader *r, sim_timeseries **into);

#endif
