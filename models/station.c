/* Multi-class G/G/c/K FIFO station (see station.h). */
#include "models/station.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/event_order.h"
#include "sim/array.h"
#include "sim/fatal.h"
#include "sim/rng.h"

/* A waiting customer: when it arrived, and its class. */
typedef struct waiting {
    double arrived_s;
    uint32_t class_index;
} waiting;

/* Waiting customers, oldest first, in a ring that doubles when full. */
typedef struct fifo {
    waiting *items;
    size_t capacity, head, length;
} fifo;

typedef struct station station;

/* Per-class state; event data points here so departures know their class. */
typedef struct class_state {
    station *st;
    uint32_t index;
    const station_class_config *config;
    gsl_rng *arrival_rng;
    gsl_rng *service_rng;
    uint64_t generated;
    size_t waiting;           /* customers of this class in the queue */
    station_class_stats bucket; /* the bucket in progress */
} class_state;

struct station {
    sim_engine *engine;
    station_config config;
    class_state *classes;
    fifo queue;
    unsigned busy;
    station_stats stats;
    /* buckets */
    station_bucket_fn on_bucket;
    void *bucket_context;
    double bucket_start_s;
    sim_timeavg bucket_busy, bucket_queue;
    station_class_stats *bucket_view; /* handed to the callback */
};

static void fifo_push(fifo *q, waiting w)
{
    if (q->length == q->capacity) {
        size_t old = q->capacity;
        q->items = sim_array_grow(q->items, &q->capacity, old < 64 ? 64 : old + 1,
                                  sizeof *q->items, "a station's queue");
        /* the ring's wrapped part, before head, moves past the old end: at least doubled,
         * the array has room for it there and the order runs on from head */
        memcpy(q->items + old, q->items, q->head * sizeof *q->items);
    }
    q->items[(q->head + q->length++) % q->capacity] = w;
}

static waiting fifo_pop(fifo *q)
{
    waiting w = q->items[q->head];
    q->head = (q->head + 1) % q->capacity;
    q->length--;
    return w;
}

static void class_stats_init(station_class_stats *s)
{
    memset(s, 0, sizeof *s);
    sim_stat_reset(&s->wait_s);
    sim_stat_reset(&s->response_s);
    sim_histogram_init(&s->wait_hist_s);
    sim_histogram_init(&s->response_hist_s);
}

static void class_stats_release(station_class_stats *s)
{
    sim_histogram_release(&s->wait_hist_s);
    sim_histogram_release(&s->response_hist_s);
}

/* Empties the stats, keeping the histograms' memory for the next bucket. */
static void class_stats_clear(station_class_stats *s)
{
    s->arrivals = s->dropped = s->waited = s->completed = 0;
    sim_stat_reset(&s->wait_s);
    sim_stat_reset(&s->response_s);
    sim_histogram_clear(&s->wait_hist_s);
    sim_histogram_clear(&s->response_hist_s);
}

static void record_start(station_class_stats *s, double wait_s, double response_s)
{
    sim_stat_add(&s->wait_s, wait_s);
    sim_histogram_add(&s->wait_hist_s, wait_s);
    sim_stat_add(&s->response_s, response_s);
    sim_histogram_add(&s->response_hist_s, response_s);
    if (wait_s > 0)
        s->waited++;
}

static void set_busy(station *st, double now, unsigned busy)
{
    st->busy = busy;
    sim_timeavg_set(&st->stats.busy_servers, now, busy);
    if (st->on_bucket)
        sim_timeavg_set(&st->bucket_busy, now, busy);
}

static void set_queue_length(station *st, double now)
{
    double length = (double)st->queue.length;
    sim_timeavg_set(&st->stats.queue_length, now, length);
    if (st->on_bucket)
        sim_timeavg_set(&st->bucket_queue, now, length);
}

static void on_departure(sim_engine *engine, void *data);

/* Starts serving a customer of class c who arrived at arrived_s. */
static void begin_service(station *st, class_state *c, double now, double arrived_s)
{
    double service_s = sim_dist_sample(&c->config->service, c->service_rng);
    sim_event_schedule(st->engine, now + service_s, EVENT_MODEL, on_departure, c);
    double wait_s = now - arrived_s;
    if (st->on_bucket)
        record_start(&c->bucket, wait_s, wait_s + service_s);
    if (arrived_s >= st->config.warmup_s)
        record_start(&st->stats.classes[c->index], wait_s, wait_s + service_s);
}

static void on_arrival(sim_engine *engine, void *data)
{
    class_state *c = data;
    station *st = c->st;
    double now = sim_engine_now(engine);
    c->generated++;
    if (c->config->max_arrivals == 0 || c->generated < c->config->max_arrivals)
        sim_event_schedule(engine, now + sim_dist_sample(&c->config->interarrival,
                                                         c->arrival_rng),
                           EVENT_MODEL, on_arrival, c);
    bool counted = now >= st->config.warmup_s;
    station_class_stats *s = &st->stats.classes[c->index];
    s->arrivals += counted;
    c->bucket.arrivals++;
    if (st->busy < st->config.servers) {
        set_busy(st, now, st->busy + 1);
        begin_service(st, c, now, now);
    } else if (c->config->queue_limit && c->waiting >= c->config->queue_limit) {
        s->dropped += counted;
        c->bucket.dropped++;
    } else {
        fifo_push(&st->queue, (waiting){ now, c->index });
        c->waiting++;
        set_queue_length(st, now);
    }
}

static void on_departure(sim_engine *engine, void *data)
{
    class_state *finished = data;
    station *st = finished->st;
    double now = sim_engine_now(engine);
    finished->bucket.completed++;
    if (now >= st->config.warmup_s)
        st->stats.classes[finished->index].completed++;
    if (st->queue.length == 0) {
        set_busy(st, now, st->busy - 1);
        return;
    }
    waiting next = fifo_pop(&st->queue);
    class_state *c = &st->classes[next.class_index];
    c->waiting--;
    set_queue_length(st, now);
    begin_service(st, c, now, next.arrived_s);
}

static void on_warmup_end(sim_engine *engine, void *data)
{
    station *st = data;
    double now = sim_engine_now(engine);
    sim_timeavg_restart(&st->stats.busy_servers, now);
    sim_timeavg_restart(&st->stats.queue_length, now);
}

/* Hands the bucket [bucket_start, end_s) to the callback and starts the next one. */
static void close_bucket(station *st, double end_s)
{
    station_bucket b = {
        st->bucket_start_s, end_s,
        sim_timeavg_mean(&st->bucket_busy, end_s),
        sim_timeavg_mean(&st->bucket_queue, end_s),
        st->bucket_view,
    };
    for (size_t i = 0; i < st->config.nclasses; i++)
        st->bucket_view[i] = st->classes[i].bucket;
    st->on_bucket(st->bucket_context, &b);
    for (size_t i = 0; i < st->config.nclasses; i++)
        class_stats_clear(&st->classes[i].bucket);
    sim_timeavg_restart(&st->bucket_busy, end_s);
    sim_timeavg_restart(&st->bucket_queue, end_s);
    st->bucket_start_s = end_s;
}

static void on_bucket_end(sim_engine *engine, void *data)
{
    station *st = data;
    double now = sim_engine_now(engine);
    close_bucket(st, now);
    sim_event_schedule(engine, now + st->config.bucket_s, EVENT_BUCKET, on_bucket_end, st);
}

static int check_config(const station_config *config, char *err, size_t err_size)
{
    char why[160];
    if (config->servers < 1) {
        snprintf(err, err_size, "station servers must be >= 1, got %u", config->servers);
        return -1;
    }
    if (!(config->warmup_s >= 0)) {
        snprintf(err, err_size, "station warmup must be >= 0 s, got %g", config->warmup_s);
        return -1;
    }
    if (!(config->bucket_s >= 0)) {
        snprintf(err, err_size, "station bucket must be >= 0 s, got %g", config->bucket_s);
        return -1;
    }
    if (config->nclasses == 0) {
        snprintf(err, err_size, "station needs at least one class of customers");
        return -1;
    }
    for (size_t i = 0; i < config->nclasses; i++) {
        const station_class_config *c = &config->classes[i];
        const char *name = c->name ? c->name : "station";
        if (sim_dist_check(&c->interarrival, why, sizeof why) != 0) {
            snprintf(err, err_size, "%s inter-arrival time: %s", name, why);
            return -1;
        }
        if (sim_dist_check(&c->service, why, sizeof why) != 0) {
            snprintf(err, err_size, "%s service time: %s", name, why);
            return -1;
        }
    }
    return 0;
}

station *station_create(sim_engine *engine, const station_config *config,
                        char *err, size_t err_size)
{
    if (check_config(config, err, err_size) != 0)
        return NULL;
    station *st = calloc(1, sizeof *st);
    size_t n = config->nclasses;
    if (st) {
        st->classes = calloc(n, sizeof *st->classes);
        st->stats.classes = calloc(n, sizeof *st->stats.classes);
        st->bucket_view = calloc(n, sizeof *st->bucket_view);
    }
    if (!st || !st->classes || !st->stats.classes || !st->bucket_view)
        sim_out_of_memory("out of memory creating a station");
    st->engine = engine;
    st->config = *config;
    double now = sim_engine_now(engine);
    for (size_t i = 0; i < n; i++) {
        class_state *c = &st->classes[i];
        const char *name = config->classes[i].name ? config->classes[i].name : "station";
        char stream[256];
        c->st = st;
        c->index = (uint32_t)i;
        c->config = &config->classes[i];
        snprintf(stream, sizeof stream, "%s.arrivals", name);
        c->arrival_rng = sim_rng_stream(config->seed, config->replication, stream);
        snprintf(stream, sizeof stream, "%s.service", name);
        c->service_rng = sim_rng_stream(config->seed, config->replication, stream);
        class_stats_init(&c->bucket);
        class_stats_init(&st->stats.classes[i]);
    }
    sim_timeavg_init(&st->stats.busy_servers, now, 0);
    sim_timeavg_init(&st->stats.queue_length, now, 0);
    sim_timeavg_init(&st->bucket_busy, now, 0);
    sim_timeavg_init(&st->bucket_queue, now, 0);
    st->bucket_start_s = now;
    return st;
}

void station_on_bucket(station *st, station_bucket_fn fn, void *context)
{
    st->on_bucket = st->config.bucket_s > 0 ? fn : NULL;
    st->bucket_context = context;
}

void station_start(station *st)
{
    double now = sim_engine_now(st->engine);
    if (st->config.warmup_s > now)
        sim_event_schedule(st->engine, st->config.warmup_s, EVENT_WARMUP, on_warmup_end, st);
    if (st->on_bucket)
        sim_event_schedule(st->engine, now + st->config.bucket_s, EVENT_BUCKET, on_bucket_end, st);
    for (size_t i = 0; i < st->config.nclasses; i++) {
        class_state *c = &st->classes[i];
        sim_event_schedule(st->engine, now + sim_dist_sample(&c->config->interarrival,
                                                             c->arrival_rng),
                           EVENT_MODEL, on_arrival, c);
    }
}

void station_finish(station *st, double end_s)
{
    if (st->on_bucket && end_s > st->bucket_start_s)
        close_bucket(st, end_s);
}

void station_free(station *st)
{
    if (!st)
        return;
    for (size_t i = 0; i < st->config.nclasses; i++) {
        gsl_rng_free(st->classes[i].arrival_rng);
        gsl_rng_free(st->classes[i].service_rng);
        class_stats_release(&st->classes[i].bucket);
        class_stats_release(&st->stats.classes[i]);
    }
    free(st->classes);
    free(st->stats.classes);
    free(st->bucket_view);
    free(st->queue.items);
    free(st);
}

const station_stats *station_get_stats(const station *st) { return &st->stats; }

double station_utilization(const station *st, double end_s)
{
    return sim_timeavg_mean(&st->stats.busy_servers, end_s) / st->config.servers;
}

size_t station_memory_bytes(const station *st)
{
    size_t bytes = sizeof *st + st->queue.capacity * sizeof *st->queue.items;
    for (size_t i = 0; i < st->config.nclasses; i++) {
        const station_class_stats *s[2] = { &st->stats.classes[i], &st->classes[i].bucket };
        for (int k = 0; k < 2; k++)
            bytes += sim_histogram_memory_bytes(&s[k]->wait_hist_s)
                     + sim_histogram_memory_bytes(&s[k]->response_hist_s);
    }
    return bytes;
}
