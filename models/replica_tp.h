/* The default tensor parallelism of a serving replica (issue 18, 1): not the smallest
 * that holds the weights, which leaves a 70B model on H100s room for three requests,
 * but the one that serves the most output tokens per second per device at the
 * workload's lengths, as `fleetsim estimate`'s best throughput does. */
#ifndef FLEETSIM_MODELS_REPLICA_TP_H
#define FLEETSIM_MODELS_REPLICA_TP_H

#include <stddef.h>

#include "models/perf.h"

/* Among the powers of two up to max_tp that divide `divides` and whose replica holds the
 * weights and one request of prompt + output tokens, the tp with the most output tokens
 * per second per device on a wave of as many requests as the cache holds (at most
 * max_batch): a prefill of the wave, then `output` decode steps.  Ties go to the smaller
 * tp.  s->tp is ignored.  0 when none fits. */
unsigned replica_default_tp(const perf_setup *s, unsigned max_tp, unsigned divides,
                            double prompt, double output, unsigned max_batch);

/* The candidates replica_default_tp weighs, best first (a larger tp ranks above a
 * smaller only when it does strictly better), at most max of them into tps: the count. */
size_t replica_tp_ranked(const perf_setup *s, unsigned max_tp, unsigned divides, double prompt,
                         double output, unsigned max_batch, unsigned *tps, size_t max);

/* Output tokens per second per device of that wave on replicas of s->tp devices; 0 when
 * the replica does not hold one request. */
double replica_wave_rate_per_device(const perf_setup *s, double prompt, double output,
                                    unsigned max_batch);

#endif
