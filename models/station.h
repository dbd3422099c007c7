/* A FIFO queue in front of c identical servers (a multi-class G/G/c/K station) on the
 * event engine: the plain queueing workload of scenarios (fs.service on a pool), and the
 * model the engine's correctness tests check against queueing theory.
 *
 * Each class has its own arrival stream (i.i.d. inter-arrival times), service-time
 * distribution and queue limit; all classes share one FIFO queue and the servers, each
 * serving one customer at a time.  An arrival of a class that already has queue_limit
 * customers waiting is dropped.  Memory grows with the longest queue seen, never with
 * the number of customers.
 */
#ifndef FLEETSIM_MODELS_STATION_H
#define FLEETSIM_MODELS_STATION_H

#include <stddef.h>
#include <stdint.h>

#include "sim/dist.h"
#include "sim/engine.h"
#include "sim/histogram.h"
#include "sim/stat.h"
#include "sim/timeavg.h"

typedef struct station_class_config {
    const char *name;      /* names the streams "<name>.arrivals" and "<name>.service" */
    sim_dist interarrival; /* seconds; borrowed, must outlive the station */
    sim_dist service;      /* seconds; borrowed, must outlive the station */
    size_t queue_limit;    /* most customers of this class waiting; 0 = no limit */
    uint64_t max_arrivals; /* stop generating arrivals after this many; 0 = no limit */
} station_class_config;

typedef struct station_config {
    unsigned servers;                     /* >= 1 */
    const station_class_config *classes;  /* borrowed; at least one */
    size_t nclasses;
    double warmup_s;       /* statistics ignore customers arriving before this time */
    double bucket_s;       /* > 0: also measure per bucket of this length (see below) */
    uint64_t seed;
    uint64_t replication;
} station_config;

/* What one class measured, over customers arriving at or after the warm-up. */
typedef struct station_class_stats {
    uint64_t arrivals;        /* dropped ones included */
    uint64_t dropped;
    uint64_t waited;          /* customers who started service after waiting */
    uint64_t completed;       /* customers whose service ended (any arrival time) */
    sim_stat wait_s;          /* time in queue of customers who started service */
    sim_histogram wait_hist_s;
    sim_stat response_s;      /* time in queue plus service, recorded at service start */
    sim_histogram response_hist_s;
} station_class_stats;

/* Time averages over the measured period (from the warm-up on). */
typedef struct station_stats {
    sim_timeavg busy_servers;
    sim_timeavg queue_length; /* customers waiting, all classes */
    station_class_stats *classes;
} station_stats;

/* One bucket's measurements (all customers, warm-up included), handed to the bucket
 * callback when the bucket closes: [start_s, end_s). */
typedef struct station_bucket {
    double start_s, end_s;
    double busy_servers_mean;
    double queue_length_mean;
    const station_class_stats *classes; /* per-class counts, moments and histograms */
} station_bucket;

typedef void (*station_bucket_fn)(void *context, const station_bucket *bucket);

typedef struct station station;

/* A station on `engine` (borrowed), idle until station_start.  NULL with a message in err
 * when the configuration is invalid (naming the field, its value and what was expected);
 * aborts if out of memory. */
station *station_create(sim_engine *engine, const station_config *config,
                        char *err, size_t err_size);

/* With config.bucket_s > 0, calls fn(context, bucket) as each bucket closes. */
void station_on_bucket(station *st, station_bucket_fn fn, void *context);

/* Schedules the first arrival of each class and the end of warm-up. */
void station_start(station *st);

/* Closes the bucket in progress at end_s (a partial bucket) and the time averages; call
 * once after the run. */
void station_finish(station *st, double end_s);

/* NULL-safe.  Events the station scheduled must not run afterwards: free the engine
 * first, or drain it. */
void station_free(station *st);

const station_stats *station_get_stats(const station *st);

/* Mean fraction of servers busy from the end of warm-up to end_s. */
double station_utilization(const station *st, double end_s);

/* Bytes the station holds (queue buffer and histograms). */
size_t station_memory_bytes(const station *st);

#endif
