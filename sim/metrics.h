/* Named results of a run, one observation per replication: the narrow interface between
 * the models, which add values, and output/, which formats them.
 *
 * A metric is keyed by (scope, subject, name): scope is "run", "pool", "workload", ...;
 * subject the pool's or workload's name; name a stable identifier such as
 * "queue_wait_mean_s" (its unit in its name and in `unit`).  Metrics keep the order in
 * which they were first added, so outputs are in a fixed order.
 */
#ifndef FLEETSIM_SIM_METRICS_H
#define FLEETSIM_SIM_METRICS_H

#include <stddef.h>

#include "sim/stat.h"

typedef struct sim_metric {
    char *scope;
    char *subject;
    char *name;
    char *unit;               /* "s", "1" (dimensionless), "requests", ... */
    sim_stat replications;    /* one value per replication that had one */
} sim_metric;

typedef struct sim_metrics {
    sim_metric *items;
    size_t count, capacity;
    /* items by their key, open addressing: item + 1, 0 empty; a power of two past twice
     * the count (800 workloads' 48,000 metrics made every lookup a linear search) */
    size_t *index;
    size_t index_size;
} sim_metrics;

void sim_metrics_init(sim_metrics *m);
void sim_metrics_release(sim_metrics *m);

/* Adds one replication's value of the metric, creating it if new.  NaN (nothing to
 * measure, e.g. a mean over no request) creates the metric but adds no observation.
 * The strings are copied.  Aborts if out of memory. */
void sim_metrics_add(sim_metrics *m, const char *scope, const char *subject,
                     const char *name, const char *unit, double value);

/* Adds metric from's statistics over replications to m (a copy when m has none of its
 * key). */
void sim_metrics_add_metric(sim_metrics *m, const sim_metric *from);

/* The metric, or NULL; O(1) on average. */
const sim_metric *sim_metrics_find(const sim_metrics *m, const char *scope,
                                   const char *subject, const char *name);

/* The metric's mean over its replications; NaN when absent or never observed. */
double sim_metrics_mean(const sim_metrics *m, const char *scope, const char *subject,
                        const char *name);

#endif
