/* Chart scripts for a run's timeseries.csv: one script per chart, and only charts with
 * data (latency for inference workloads, queue wait for plain services, throughput,
 * utilization and queue length per pool, GPUs held/busy/idle and replicas of each pool,
 * GPU allocation, fragmentation and waiting tasks of task replays, cumulative cost per
 * pool).  Series are picked by the scope and subject columns and read by column name,
 * so the scripts stay right when columns are added. */
#ifndef FLEETSIM_OUTPUT_PLOT_TIMESERIES_H
#define FLEETSIM_OUTPUT_PLOT_TIMESERIES_H

#include <stddef.h>

#include "output/plot_script.h"

/* Writes DIR/plots/NAME.gp for each chart that DIR/timeseries.csv has data for, and
 * adds each NAME to written.  No timeseries.csv: nothing written, 0.  -1 with a
 * message on failure. */
int plot_timeseries_scripts(const char *dir, plot_list *written, char *err, size_t err_size);

#endif
