/* A serving configuration run for a while on an engine of its own, for the tests: what
 * they read of it, taken before it is freed. */
#ifndef FLEETSIM_TESTS_SERVING_RUN_H
#define FLEETSIM_TESTS_SERVING_RUN_H

#include <stdint.h>

#include "models/serving.h"

typedef struct run_result {
    serving_stats stats;        /* its histograms detached (freed with the serving): read
                                   the quantiles below instead */
    double ttft_p99, tpot_p99, e2e_p99, transfer_p99;
    double utilization, batch_mean, batch_max, kv_mean, kv_max;
    uint64_t events, preemptions;
    serving_group_stats groups[SERVING_GROUPS_MAX]; /* own, then serving_config.groups */
    sessions_stats sessions;
} run_result;

/* Runs c for duration_s simulated seconds (a Criterion assertion if it is refused). */
run_result serving_run(const serving_config *c, double duration_s);

/* c run fast and one event per iteration, seeds 1 to 3: the same requests complete and
 * are preempted (at least `preempted` of them in the reference, and more than 500
 * complete), at the same times but for rounding (TPOT, TTFT and e2e means and TTFT's p99
 * within 1e-9). */
void expect_the_same_runs(serving_config c, double duration_s, const char *what,
                          uint64_t preempted);

#endif
