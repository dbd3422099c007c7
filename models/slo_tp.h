/* The tensor parallelism of a serving workload that states an SLO (issue 39, 3).
 *
 * Chosen for tokens/s per GPU alone (replica_tp.h), Llama-3-70B on 48 H200s takes tp 2,
 * whose p99 time to first token misses 1 s where tp 4 meets it: that ranking prices a
 * full wave of requests, not the prefill a request waits for at the workload's rate.
 * Where a workload states an SLO and leaves tp out, the loader therefore tries each
 * candidate tp by simulating the workload alone on its pool over the run's own span
 * and replications (the same seeds draw the same requests), up to a budget, and keeps the first in
 * the throughput ranking whose every p99 is within its limit without overload; where
 * none is, the one with the largest share of requests within the SLO.  The trials are
 * kept on the workload (inference_spec.tp_trials) for `check` and the run to show.
 */
#ifndef FLEETSIM_MODELS_SLO_TP_H
#define FLEETSIM_MODELS_SLO_TP_H

#include <stdbool.h>
#include <stddef.h>

#include "models/scenario.h"

/* A trial is the run itself, its duration and replications, up to this many requests
 * after the warm-up: then the kept tp's trial gives the run's own figures.  Past it,
 * fewer replications, and on arrivals at a steady rate a shorter span (at least
 * SLO_TP_TRIAL_MIN_S, so that a queue that grows shows in the thirds overload compares:
 * models/overload.h).  The p99 of one 20,000-request run of a chatbot near its limit
 * moved by +-50 ms against a 500 ms SLO between replications; of 200,000, by about 15. */
#define SLO_TP_TRIAL_REQUESTS 200000
#define SLO_TP_TRIAL_MIN_S 300.0

/* Whether w's tp is chosen by trials: tp not given, an SLO stated, replicas not stated,
 * a pool of whole GPUs of a fixed count (an autoscaled one meets its SLO by adding
 * GPUs, and what it costs is GPU-hours, not its count) that no other workload uses, and
 * no Lua function the run would call for it (a routing or a rate function). */
bool slo_tp_applies(const scenario *sc, const inference_spec *w);

/* A trial's span: its end (the warm-up and then the measured part) and replications,
 * as above, at the mean rate.  Where the rate varies with time (a profile, a diurnal
 * day, an MMPP) or a trace or sessions set it, no shorter span is like the run's: a
 * replication past the budget gives 0 replications, and the workload is not tried. */
typedef struct slo_tp_span {
    double end_s;
    unsigned replications;
} slo_tp_span;
slo_tp_span slo_tp_trial_span(const scenario *sc, const inference_spec *w);

/* Runs w (its tp as set) alone on sc's pools over the trial span, and judges the means
 * of its replications' p99s against w's SLO into *out.  0, or -1 with the reason in err
 * (the run's message, or a span past the budget). */
int slo_tp_trial(const scenario *sc, const inference_spec *w, tp_trial *out, char *err,
                 size_t err_size);

/* Of n trials in the order of the throughput ranking, the one to keep: the first that
 * meets the SLO, else the first with the largest share within it. */
size_t slo_tp_pick(const tp_trial *trials, size_t n);

#endif
