/* Overload (issue 18, 2): a workload offered more than its pool serves.  Its queue grows
 * without bound, so its latencies only measure how long the run was; a run says so
 * rather than report a blank attainment. */
#ifndef FLEETSIM_MODELS_OVERLOAD_H
#define FLEETSIM_MODELS_OVERLOAD_H

#include <stdbool.h>

#include "sim/metrics.h"

/* Completions below this share of arrivals ... */
#define OVERLOAD_SERVED_SHARE 0.9
/* ... while the bottleneck (the servers, the replicas) is busy at least this share of
 * the time: a pool with idle time that completes few requests drops them for another
 * reason (a queue limit, prompts too long), which its own metrics name. */
#define OVERLOAD_BUSY_SHARE 0.95
/* Fewer arrivals than this say nothing either way. */
#define OVERLOAD_MIN_ARRIVALS 20

/* Whether `arrived` requests of which `completed` finished over measured_s seconds, on
 * a bottleneck busy `busy` of the time (0-1), are an overload. */
bool overload_detected(double arrived, double completed, double measured_s, double busy);

/* The rows offered_rate_per_s, served_rate_per_s and overloaded (0 or 1) of workload
 * `name`. */
void overload_record(sim_metrics *m, const char *name, double arrived, double completed,
                     double measured_s, double busy);

#endif
