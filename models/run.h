/* Runs a scenario: every replication, each on an engine of its own with its own random
 * streams, and gathers the metrics (one value per replication) and the time series
 * (averaged over replications).
 *
 * Metric names (scope, name, unit) are stable; README.md lists them.
 */
#ifndef FLEETSIM_MODELS_RUN_H
#define FLEETSIM_MODELS_RUN_H

#include <stdbool.h>
#include <stdint.h>

#include "models/job_scheduler.h"
#include "models/scenario.h"
#include "sim/metrics.h"
#include "sim/timeseries.h"

/* Where a run stands, for a progress display. */
typedef struct run_progress {
    unsigned replication;   /* 0-based */
    unsigned replications;
    double sim_time_s;      /* reached in this replication */
    double duration_s;
    uint64_t events;        /* run so far, all replications */
} run_progress;

typedef void (*run_progress_fn)(void *context, const run_progress *progress);

typedef struct run_results {
    sim_metrics metrics;
    sim_timeseries *timeseries;
    uint64_t events;
    /* Interrupted by SIGINT or SIGTERM (sim/interrupt.h): the replications run so far,
     * the last one measured up to reached_s, and the metrics run/partial (1),
     * run/sim_time_reached_s and run/replications_completed added. */
    bool partial;
    double reached_s;        /* simulated time reached in the last replication run */
    unsigned replications_completed;
} run_results;

typedef struct run_options {
    run_progress_fn progress;      /* NULL, or called ~100 times per replication */
    void *progress_context;
    request_record_fn on_request;  /* NULL, or called for every inference request that ends */
    void *request_context;
    job_record_fn on_job;          /* NULL, or called for every training job (jobs.csv) */
    void *job_context;
    /* Runs replications first .. first + count - 1 only (count 0: all of them), for
     * workers that share a scenario's replications; each is the same as in a whole
     * run, since its random streams depend on its number only. */
    unsigned replication_first, replication_count;
} run_options;

/* Runs sc.  Returns 0, or -1 with a message in err (a configuration the models refuse,
 * a trace that failed); out is then empty.  Release out with run_results_release.
 * After a signal (sim_interrupt_install) the replication running stops at its next
 * event, is recorded up to there, no later one starts, and out->partial is set. */
int scenario_run(const scenario *sc, const run_options *options, run_results *out,
                 char *err, size_t err_size);

/* What scenario_run checks before its first event, without running any: the time
 * series fits its limit, and every part of replication 1 can be made (the models
 * accept their configurations, traces open).  0, or -1 with the message in err, the
 * same message scenario_run would give. */
int scenario_run_check(const scenario *sc, char *err, size_t err_size);

void run_results_release(run_results *results);

/* The time-series columns, in order. */
extern const char *const run_timeseries_columns[];
extern const size_t run_timeseries_ncolumns;

#endif
