/* Overload (issue 18, 2; issue 39, 4): a workload offered more than its pool serves.  Its
 * queue grows without bound, so its latencies only measure how long the run was; a run
 * says so, and names the figure that shows it, rather than report a blank attainment.
 *
 * Overload is judged by what grows, not by a served share: a run whose answers are long
 * ends with many requests still decoding (few completions, latency flat: no overload),
 * and one that serves 91% of its requests may still have waits that rise through the
 * run (an overload).  In order:
 *   - sheds: a tenth or more of the requests dropped (max_wait, a queue limit) while the
 *     bottleneck is busy: the queue is held down by dropping what it cannot serve;
 *   - waits grow: the mean queue wait of the requests completed in the last third of the
 *     measured window is more than twice the first third's, and more than
 *     OVERLOAD_WAIT_FLOOR_S beyond it (a queue that is stable fluctuates less); with no
 *     completion in the first third (answers longer than a third of the run), from 0;
 *   - no waits known in the last third (a station's queue; nothing completed then): the
 *     served-share rule, completions under 90% of arrivals on a busy bottleneck. */
#ifndef FLEETSIM_MODELS_OVERLOAD_H
#define FLEETSIM_MODELS_OVERLOAD_H

#include <stdbool.h>

#include "sim/metrics.h"

/* Completions below this share of arrivals (the rule without waits) ... */
#define OVERLOAD_SERVED_SHARE 0.9
/* ... or drops at least this share of arrivals ... */
#define OVERLOAD_DROPPED_SHARE 0.1
/* ... while the bottleneck (the servers, the replicas) is busy at least this share of
 * the time: a pool with idle time that completes few requests drops them for another
 * reason (a queue limit, prompts too long), which its own metrics name. */
#define OVERLOAD_BUSY_SHARE 0.95
/* Waits that grow: the last third's mean over the first's at least this ratio ... */
#define OVERLOAD_WAIT_GROWTH 2.0
/* ... and at least this much longer, in seconds: a wait of 5 ms becoming 20 ms is noise
 * at a batch's scale, not a queue without bound. */
#define OVERLOAD_WAIT_FLOOR_S 0.1
/* Fewer arrivals than this say nothing either way. */
#define OVERLOAD_MIN_ARRIVALS 20

/* What a workload's run shows of its load. */
typedef struct overload_view {
    double arrived, completed, dropped;
    double measured_s;
    double busy;                      /* the bottleneck's busy share, 0-1 */
    double wait_first_s, wait_last_s; /* mean queue waits by third; NaN: not known */
} overload_view;

typedef enum overload_cause {
    OVERLOAD_NONE, OVERLOAD_SHEDS, OVERLOAD_WAITS_GROW, OVERLOAD_FEW_SERVED,
} overload_cause;

/* Which of the rules above holds, the first in their order. */
overload_cause overload_of(const overload_view *v);

/* The rows offered_rate_per_s, served_rate_per_s and overloaded (0 or 1) of workload
 * `name` (a workload whose waits are known by third reports them itself). */
void overload_record(sim_metrics *m, const char *name, const overload_view *v);

#endif
