/* A FIFO queue in front of c identical servers (a G/G/c/K station) on the event engine:
 * the plain queueing workload of scenarios, and the model the engine's correctness tests
 * check against queueing theory.
 *
 * Customers arrive with i.i.d. inter-arrival times, wait in one FIFO queue, and are
 * served one at a time per server with i.i.d. service times.  An arrival that finds
 * queue_limit customers waiting is dropped.  Memory grows with the longest queue seen,
 * never with the number of customers.
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

typedef struct station_config {
    const char *name;      /* names the random streams "<name>.arrivals", "<name>.service" */
    unsigned servers;      /* >= 1 */
    sim_dist interarrival; /* seconds; borrowed, must outlive the station */
    sim_dist service;      /* seconds; borrowed, must outlive the station */
    size_t queue_limit;    /* most customers waiting; 0 = no limit */
    double warmup_s;       /* statistics ignore customers arriving before this time */
    uint64_t max_arrivals; /* stop generating arrivals after this many; 0 = no limit */
    uint64_t seed;
    uint64_t replication;
} station_config;

/* What the station measured, over customers arriving at or after the warm-up and time
 * from the warm-up on. */
typedef struct station_stats {
    uint64_t arrivals;        /* counted arrivals, dropped ones included */
    uint64_t dropped;
    uint64_t waited;          /* served customers who found every server busy */
    sim_stat wait_s;          /* time in queue of customers who started service */
    sim_histogram wait_hist_s;
    sim_stat sojourn_s;       /* time in queue plus service */
    sim_histogram sojourn_hist_s;
    sim_timeavg busy_servers;
    sim_timeavg queue_length;
} station_stats;

typedef struct station station;

/* A station on `engine` (borrowed), idle until station_start.  NULL with a message in err
 * when the configuration is invalid (naming the field, its value and what was expected);
 * aborts if out of memory. */
station *station_create(sim_engine *engine, const station_config *config,
                        char *err, size_t err_size);

/* Schedules the first arrival (one inter-arrival time after now) and the end of warm-up. */
void station_start(station *st);

/* NULL-safe.  Events the station scheduled must not run afterwards: free the engine
 * first, or drain it. */
void station_free(station *st);

const station_stats *station_get_stats(const station *st);

/* Mean fraction of servers busy from the end of warm-up to end_s. */
double station_utilization(const station *st, double end_s);

/* Bytes the station holds (queue buffer and histograms). */
size_t station_memory_bytes(const station *st);

#endif
