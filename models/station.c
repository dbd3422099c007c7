/* G/G/c/K FIFO station (see station.h). */
#include "models/station.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/fatal.h"
#include "sim/rng.h"

/* Arrival times of waiting customers, oldest first, in a ring that doubles when full. */
typedef struct fifo {
    double *times_s;
    size_t capacity, head, length;
} fifo;

struct station {
    sim_engine *engine;
    station_config config;
    gsl_rng *arrival_rng;
    gsl_rng *service_rng;
    fifo queue;
    unsigned busy;
    uint64_t generated;
    station_stats stats;
};

static void fifo_push(fifo *q, double t)
{
    if (q->length == q->capacity) {
        size_t cap = q->capacity ? q->capacity * 2 : 64;
        double *grown = malloc(cap * sizeof *grown);
        if (!grown)
            sim_fatal("out of memory growing a queue to %zu customers", cap);
        for (size_t i = 0; i < q->length; i++)
            grown[i] = q->times_s[(q->head + i) % q->capacity];
        free(q->times_s);
        q->times_s = grown;
        q->capacity = cap;
        q->head = 0;
    }
    q->times_s[(q->head + q->length++) % q->capacity] = t;
}

static double fifo_pop(fifo *q)
{
    double t = q->times_s[q->head];
    q->head = (q->head + 1) % q->capacity;
    q->length--;
    return t;
}

static void on_departure(sim_engine *engine, void *data);

/* Starts serving a customer who arrived at arrived_s. */
static void begin_service(station *st, double now, double arrived_s)
{
    double service_s = sim_dist_sample(&st->config.service, st->service_rng);
    sim_event_schedule(st->engine, now + service_s, 0, on_departure, st);
    if (arrived_s < st->config.warmup_s)
        return;
    double wait_s = now - arrived_s;
    station_stats *s = &st->stats;
    sim_stat_add(&s->wait_s, wait_s);
    sim_histogram_add(&s->wait_hist_s, wait_s);
    sim_stat_add(&s->sojourn_s, wait_s + service_s);
    sim_histogram_add(&s->sojourn_hist_s, wait_s + service_s);
    if (wait_s > 0)
        s->waited++;
}

static void on_arrival(sim_engine *engine, void *data)
{
    station *st = data;
    double now = sim_engine_now(engine);
    st->generated++;
    if (st->config.max_arrivals == 0 || st->generated < st->config.max_arrivals)
        sim_event_schedule(engine, now + sim_dist_sample(&st->config.interarrival,
                                                         st->arrival_rng),
                           0, on_arrival, st);
    bool counted = now >= st->config.warmup_s;
    st->stats.arrivals += counted;
    if (st->busy < st->config.servers) {
        sim_timeavg_set(&st->stats.busy_servers, now, ++st->busy);
        begin_service(st, now, now);
    } else if (st->config.queue_limit && st->queue.length >= st->config.queue_limit) {
        st->stats.dropped += counted;
    } else {
        fifo_push(&st->queue, now);
        sim_timeavg_set(&st->stats.queue_length, now, (double)st->queue.length);
    }
}

static void on_departure(sim_engine *engine, void *data)
{
    station *st = data;
    double now = sim_engine_now(engine);
    if (st->queue.length == 0) {
        sim_timeavg_set(&st->stats.busy_servers, now, --st->busy);
        return;
    }
    double arrived_s = fifo_pop(&st->queue);
    sim_timeavg_set(&st->stats.queue_length, now, (double)st->queue.length);
    begin_service(st, now, arrived_s);
}

static void on_warmup_end(sim_engine *engine, void *data)
{
    station *st = data;
    double now = sim_engine_now(engine);
    sim_timeavg_restart(&st->stats.busy_servers, now);
    sim_timeavg_restart(&st->stats.queue_length, now);
}

static void stats_init(station_stats *s, double t0)
{
    memset(s, 0, sizeof *s);
    sim_stat_reset(&s->wait_s);
    sim_stat_reset(&s->sojourn_s);
    sim_histogram_init(&s->wait_hist_s);
    sim_histogram_init(&s->sojourn_hist_s);
    sim_timeavg_init(&s->busy_servers, t0, 0);
    sim_timeavg_init(&s->queue_length, t0, 0);
}

station *station_create(sim_engine *engine, const station_config *config,
                        char *err, size_t err_size)
{
    char why[160];
    if (config->servers < 1) {
        snprintf(err, err_size, "station servers must be >= 1, got %u", config->servers);
        return NULL;
    }
    if (!(config->warmup_s >= 0)) {
        snprintf(err, err_size, "station warmup must be >= 0 s, got %g", config->warmup_s);
        return NULL;
    }
    if (sim_dist_check(&config->interarrival, why, sizeof why) != 0) {
        snprintf(err, err_size, "station inter-arrival time: %s", why);
        return NULL;
    }
    if (sim_dist_check(&config->service, why, sizeof why) != 0) {
        snprintf(err, err_size, "station service time: %s", why);
        return NULL;
    }
    station *st = calloc(1, sizeof *st);
    if (!st)
        sim_fatal("out of memory creating a station");
    st->engine = engine;
    st->config = *config;
    const char *name = config->name ? config->name : "station";
    char stream[256];
    snprintf(stream, sizeof stream, "%s.arrivals", name);
    st->arrival_rng = sim_rng_stream(config->seed, config->replication, stream);
    snprintf(stream, sizeof stream, "%s.service", name);
    st->service_rng = sim_rng_stream(config->seed, config->replication, stream);
    stats_init(&st->stats, sim_engine_now(engine));
    return st;
}

void station_start(station *st)
{
    double now = sim_engine_now(st->engine);
    if (st->config.warmup_s > now)
        sim_event_schedule(st->engine, st->config.warmup_s, -1, on_warmup_end, st);
    sim_event_schedule(st->engine, now + sim_dist_sample(&st->config.interarrival,
                                                         st->arrival_rng),
                       0, on_arrival, st);
}

void station_free(station *st)
{
    if (!st)
        return;
    gsl_rng_free(st->arrival_rng);
    gsl_rng_free(st->service_rng);
    free(st->queue.times_s);
    sim_histogram_release(&st->stats.wait_hist_s);
    sim_histogram_release(&st->stats.sojourn_hist_s);
    free(st);
}

const station_stats *station_get_stats(const station *st) { return &st->stats; }

double station_utilization(const station *st, double end_s)
{
    return sim_timeavg_mean(&st->stats.busy_servers, end_s) / st->config.servers;
}

size_t station_memory_bytes(const station *st)
{
    return sizeof *st + st->queue.capacity * sizeof *st->queue.times_s
           + sim_histogram_memory_bytes(&st->stats.wait_hist_s)
           + sim_histogram_memory_bytes(&st->stats.sojourn_hist_s);
}
