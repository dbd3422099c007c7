/* M/M/8 at rho = 0.9: the engine, the full station model, and a bare loop.
 *
 * All three draw inter-arrival and service times from the same two streams in the same
 * order, so they must report the same mean wait; the table says so.  The bare loop keeps
 * the eight completion times in an array and scans it: what a person would write by hand
 * for this one model. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include <gsl/gsl_randist.h>

#include "bench.h"
#include "models/station.h"
#include "sim/engine.h"
#include "sim/rng.h"
#include "sim/fatal.h"

enum { SERVERS = 8 };
static const double MEAN_SERVICE_S = 1.0;
static const double MEAN_INTERARRIVAL_S = 1.0 / (0.9 * SERVERS);

typedef struct mm8_result {
    double seconds;
    uint64_t events;
    double wait_mean_s;
    size_t model_bytes; /* event list and queue at the end */
} mm8_result;

/* Arrival times of waiting customers: a ring that doubles when full. */
typedef struct ring {
    double *t;
    size_t cap, head, len;
} ring;

static void ring_push(ring *r, double t)
{
    if (r->len == r->cap) {
        size_t cap = r->cap ? 2 * r->cap : 64;
        double *g = malloc(cap * sizeof *g);
        if (!g)
            sim_fatal("bench: out of memory");
        for (size_t i = 0; i < r->len; i++)
            g[i] = r->t[(r->head + i) & (r->cap - 1)];
        free(r->t);
        r->t = g;
        r->cap = cap;
        r->head = 0;
    }
    r->t[(r->head + r->len++) & (r->cap - 1)] = t;
}

static double ring_pop(ring *r)
{
    double t = r->t[r->head];
    r->head = (r->head + 1) & (r->cap - 1);
    r->len--;
    return t;
}

/* ---- bare loop -------------------------------------------------------------------- */

static mm8_result run_bare(uint64_t customers)
{
    gsl_rng *arrivals = sim_rng_stream(1, 0, "mm8.arrivals");
    gsl_rng *service = sim_rng_stream(1, 0, "mm8.service");
    double start = bench_now_s();
    double completion[SERVERS];
    for (int i = 0; i < SERVERS; i++)
        completion[i] = INFINITY;
    ring queue = { 0 };
    double next_arrival = gsl_ran_exponential(arrivals, MEAN_INTERARRIVAL_S);
    uint64_t generated = 0, events = 0, served = 0;
    double wait_sum = 0;
    for (;;) {
        int first = 0;
        for (int i = 1; i < SERVERS; i++)
            if (completion[i] < completion[first])
                first = i;
        if (next_arrival <= completion[first]) {
            if (isinf(next_arrival))
                break;
            double now = next_arrival;
            events++;
            generated++;
            next_arrival = generated < customers
                               ? now + gsl_ran_exponential(arrivals, MEAN_INTERARRIVAL_S)
                               : INFINITY;
            int idle = -1;
            for (int i = 0; i < SERVERS && idle < 0; i++)
                if (isinf(completion[i]))
                    idle = i;
            if (idle >= 0) {
                completion[idle] = now + gsl_ran_exponential(service, MEAN_SERVICE_S);
                served++;
            } else {
                ring_push(&queue, now);
            }
        } else {
            double now = completion[first];
            events++;
            if (queue.len) {
                wait_sum += now - ring_pop(&queue);
                served++;
                completion[first] = now + gsl_ran_exponential(service, MEAN_SERVICE_S);
            } else {
                completion[first] = INFINITY;
            }
        }
    }
    mm8_result r = { bench_now_s() - start, events, wait_sum / (double)served,
                     queue.cap * sizeof(double) + sizeof completion };
    free(queue.t);
    gsl_rng_free(arrivals);
    gsl_rng_free(service);
    return r;
}

/* ---- the same model on the engine --------------------------------------------------- */

typedef struct engine_mm8 {
    gsl_rng *arrivals, *service;
    ring queue;
    int busy;
    uint64_t generated, customers, served;
    double wait_sum;
} engine_mm8;

static void on_departure(sim_engine *e, void *data)
{
    engine_mm8 *m = data;
    if (m->queue.len) {
        double now = sim_engine_now(e);
        m->wait_sum += now - ring_pop(&m->queue);
        m->served++;
        sim_event_schedule(e, now + gsl_ran_exponential(m->service, MEAN_SERVICE_S), 0,
                           on_departure, m);
    } else {
        m->busy--;
    }
}

static void on_arrival(sim_engine *e, void *data)
{
    engine_mm8 *m = data;
    double now = sim_engine_now(e);
    if (++m->generated < m->customers)
        sim_event_schedule(e, now + gsl_ran_exponential(m->arrivals, MEAN_INTERARRIVAL_S), 0,
                           on_arrival, m);
    if (m->busy < SERVERS) {
        m->busy++;
        m->served++;
        sim_event_schedule(e, now + gsl_ran_exponential(m->service, MEAN_SERVICE_S), 0,
                           on_departure, m);
    } else {
        ring_push(&m->queue, now);
    }
}

static mm8_result run_engine(uint64_t customers)
{
    engine_mm8 m = { .arrivals = sim_rng_stream(1, 0, "mm8.arrivals"),
                     .service = sim_rng_stream(1, 0, "mm8.service"), .customers = customers };
    double start = bench_now_s();
    sim_engine *e = sim_engine_create();
    sim_event_schedule(e, gsl_ran_exponential(m.arrivals, MEAN_INTERARRIVAL_S), 0, on_arrival, &m);
    uint64_t events = sim_engine_run(e);
    mm8_result r = { bench_now_s() - start, events, m.wait_sum / (double)m.served,
                     sim_engine_memory_bytes(e) + m.queue.cap * sizeof(double) };
    sim_engine_free(e);
    free(m.queue.t);
    gsl_rng_free(m.arrivals);
    gsl_rng_free(m.service);
    return r;
}

/* ---- the full station model (moments, histograms, time averages) ------------------ */

static mm8_result run_station(uint64_t customers)
{
    sim_dist inter = sim_dist_exponential(MEAN_INTERARRIVAL_S);
    sim_dist service = sim_dist_exponential(MEAN_SERVICE_S);
    station_class_config cls = { .name = "mm8", .interarrival = inter, .service = service,
                                 .max_arrivals = customers };
    station_config config = { .servers = SERVERS, .classes = &cls, .nclasses = 1, .seed = 1 };
    char err[128];
    double start = bench_now_s();
    sim_engine *e = sim_engine_create();
    station *st = station_create(e, &config, err, sizeof err);
    station_start(st);
    uint64_t events = sim_engine_run(e);
    const station_stats *s = station_get_stats(st);
    /* the station counts waits of zero too; the loops above average over all served */
    mm8_result r = { bench_now_s() - start, events, s->classes[0].wait_s.mean,
                     sim_engine_memory_bytes(e) + station_memory_bytes(st) };
    station_free(st);
    sim_engine_free(e);
    return r;
}

static mm8_result best_of(mm8_result (*run)(uint64_t), uint64_t customers)
{
    mm8_result best = run(customers);
    for (int i = 1; i < BENCH_REPEATS; i++) {
        mm8_result r = run(customers);
        if (r.seconds < best.seconds)
            best = r;
    }
    return best;
}

double bench_mm8_bare_rate(uint64_t customers)
{
    mm8_result bare = best_of(run_bare, customers);
    return (double)bare.events / bare.seconds;
}

void bench_mm8_table(int quick)
{
    const uint64_t sizes[] = { 200000, 2000000 };
    printf("M/M/8 at rho 0.9, exponential service of mean 1 s (2 events per customer)\n");
    printf("%-10s %-8s %14s %9s %12s %14s\n", "customers", "model", "events/s",
           "vs bare", "mean wait s", "model bytes");
    for (int k = quick ? 0 : 0; k < (quick ? 1 : 2); k++) {
        uint64_t n = quick ? 20000 : sizes[k];
        mm8_result bare = best_of(run_bare, n);
        mm8_result eng = best_of(run_engine, n);
        mm8_result sta = best_of(run_station, n);
        struct { const char *name; mm8_result r; } rows[] = {
            { "bare", bare }, { "engine", eng }, { "station", sta },
        };
        for (int i = 0; i < 3; i++) {
            double rate = (double)rows[i].r.events / rows[i].r.seconds;
            double bare_rate = (double)bare.events / bare.seconds;
            printf("%-10llu %-8s %14.3e %8.0f%% %12.6f %14zu\n", (unsigned long long)n,
                   rows[i].name, rate, 100 * rate / bare_rate, rows[i].r.wait_mean_s,
                   rows[i].r.model_bytes);
        }
        if (eng.wait_mean_s != bare.wait_mean_s || eng.events != bare.events)
            printf("WARNING: the engine and the bare loop disagree\n");
    }
    printf("peak resident memory so far: %.1f MiB\n", bench_peak_rss_mib());
}
