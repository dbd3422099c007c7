/* Plain queueing work in a run: each pool's multi-class station, its buckets and its
 * metrics (see run_part.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "models/overload.h"
#include "models/run_part.h"
#include "models/station.h"
#include "sim/fatal.h"

/* One pool's station in one replication, and where its buckets go. */
typedef struct pool_run {
    const scenario *sc;
    size_t pool;
    station *st;
    station_class_config *classes;
    size_t *services;          /* scenario index of each class */
    size_t nclasses;
    sim_timeseries *ts;
    size_t pool_subject;       /* timeseries subject of the pool */
    size_t *class_subjects;    /* ... and of each class's workload */
} pool_run;

static void record_bucket(void *context, const station_bucket *b)
{
    pool_run *pr = context;
    double span = b->end_s - b->start_s;
    size_t bucket = run_bucket_index(pr->sc, b->start_s);
    unsigned servers = pr->sc->pools[pr->pool].count;
    sim_timeseries_add(pr->ts, bucket, pr->pool_subject, COL_UTILIZATION,
                       b->busy_servers_mean / servers);
    sim_timeseries_add(pr->ts, bucket, pr->pool_subject, COL_QUEUE_LENGTH, b->queue_length_mean);
    for (size_t i = 0; i < pr->nclasses; i++) {
        const station_class_stats *c = &b->classes[i];
        size_t s = pr->class_subjects[i];
        sim_timeseries_add(pr->ts, bucket, s, COL_ARRIVALS, (double)c->arrivals);
        sim_timeseries_add(pr->ts, bucket, s, COL_COMPLETED, (double)c->completed);
        sim_timeseries_add(pr->ts, bucket, s, COL_DROPPED, (double)c->dropped);
        sim_timeseries_add(pr->ts, bucket, s, COL_THROUGHPUT, (double)c->completed / span);
        sim_timeseries_add(pr->ts, bucket, s, COL_WAIT_MEAN, sim_stat_mean(&c->wait_s));
        sim_timeseries_add(pr->ts, bucket, s, COL_WAIT_P50, sim_histogram_quantile(&c->wait_hist_s, 0.5));
        sim_timeseries_add(pr->ts, bucket, s, COL_WAIT_P99, sim_histogram_quantile(&c->wait_hist_s, 0.99));
        sim_timeseries_add(pr->ts, bucket, s, COL_RESPONSE_MEAN, sim_stat_mean(&c->response_s));
        sim_timeseries_add(pr->ts, bucket, s, COL_RESPONSE_P99,
                           sim_histogram_quantile(&c->response_hist_s, 0.99));
    }
}

/* Adds one replication's metrics of a pool and its workloads. */
static void record_pool(sim_metrics *m, const pool_run *pr, double end_s)
{
    const scenario *sc = pr->sc;
    const pool_spec *pool = &sc->pools[pr->pool];
    double measured_s = end_s - sc->warmup_s;
    for (size_t i = 0; i < sc->ninferences; i++)
        if (sc->inferences[i].pool == pr->pool)
            return; /* its inference workload reports it */
    if (!pr->st) { /* a pool no workload uses */
        sim_metrics_add(m, "pool", pool->name, "servers", "servers", pool->count);
        sim_metrics_add(m, "pool", pool->name, "utilization_mean", "1", 0);
        sim_metrics_add(m, "pool", pool->name, "queue_length_mean", "requests", 0);
        return;
    }
    const station_stats *s = station_get_stats(pr->st);
    sim_metrics_add(m, "pool", pool->name, "servers", "servers", pool->count);
    sim_metrics_add(m, "pool", pool->name, "utilization_mean", "1",
                    station_utilization(pr->st, end_s));
    sim_metrics_add(m, "pool", pool->name, "busy_servers_mean", "servers",
                    sim_timeavg_mean(&s->busy_servers, end_s));
    sim_metrics_add(m, "pool", pool->name, "queue_length_mean", "requests",
                    sim_timeavg_mean(&s->queue_length, end_s));
    sim_metrics_add(m, "pool", pool->name, "queue_length_max", "requests", s->queue_length.max);
    for (size_t i = 0; i < pr->nclasses; i++) {
        const station_class_stats *c = &s->classes[i];
        const char *w = sc->services[pr->services[i]].name;
        double served = (double)c->wait_s.n;
        sim_metrics_add(m, "workload", w, "requests_arrived", "requests", (double)c->arrivals);
        sim_metrics_add(m, "workload", w, "requests_completed", "requests", (double)c->completed);
        overload_record(m, w, &(overload_view){
            .arrived = (double)c->arrivals, .completed = (double)c->completed,
            .dropped = (double)c->dropped, .measured_s = measured_s,
            .busy = station_utilization(pr->st, end_s), .wait_first_s = NAN,
            .wait_last_s = NAN });
        sim_metrics_add(m, "workload", w, "requests_dropped", "requests", (double)c->dropped);
        sim_metrics_add(m, "workload", w, "drop_fraction", "1",
                        c->arrivals ? (double)c->dropped / (double)c->arrivals : NAN);
        sim_metrics_add(m, "workload", w, "throughput_per_s", "requests/s",
                        measured_s > 0 ? (double)c->completed / measured_s : NAN);
        sim_metrics_add(m, "workload", w, "wait_probability", "1",
                        served > 0 ? (double)c->waited / served : NAN);
        sim_metrics_add(m, "workload", w, "queue_wait_mean_s", "s", sim_stat_mean(&c->wait_s));
        sim_metrics_add(m, "workload", w, "queue_wait_p50_s", "s", sim_histogram_quantile(&c->wait_hist_s, 0.5));
        sim_metrics_add(m, "workload", w, "queue_wait_p90_s", "s", sim_histogram_quantile(&c->wait_hist_s, 0.9));
        sim_metrics_add(m, "workload", w, "queue_wait_p99_s", "s", sim_histogram_quantile(&c->wait_hist_s, 0.99));
        sim_metrics_add(m, "workload", w, "queue_wait_max_s", "s", c->wait_s.n ? c->wait_s.max : NAN);
        sim_metrics_add(m, "workload", w, "response_mean_s", "s", sim_stat_mean(&c->response_s));
        sim_metrics_add(m, "workload", w, "response_p50_s", "s", sim_histogram_quantile(&c->response_hist_s, 0.5));
        sim_metrics_add(m, "workload", w, "response_p90_s", "s", sim_histogram_quantile(&c->response_hist_s, 0.9));
        sim_metrics_add(m, "workload", w, "response_p99_s", "s", sim_histogram_quantile(&c->response_hist_s, 0.99));
        sim_metrics_add(m, "workload", w, "response_max_s", "s", c->response_s.n ? c->response_s.max : NAN);
    }
}

/* The per-pool runs (classes, subjects); they outlive the replications. */
static void *plan(run_shared *rs)
{
    const scenario *sc = rs->sc;
    sim_timeseries *ts = rs->ts;
    pool_run *runs = calloc(sc->npools + 1, sizeof *runs); /* ends with an empty one */
    size_t *workload_subject = calloc(sc->nservices + 1, sizeof *workload_subject);
    if (!runs || !workload_subject)
        sim_out_of_memory("out of memory planning a run");
    for (size_t p = 0; p < sc->npools; p++)
        runs[p].pool_subject = rs->pool_subjects[p];
    for (size_t w = 0; w < sc->nservices; w++)
        workload_subject[w] = sim_timeseries_add_subject(ts, "workload", sc->services[w].name);
    for (size_t p = 0; p < sc->npools; p++) {
        pool_run *pr = &runs[p];
        pr->sc = sc;
        pr->pool = p;
        pr->ts = ts;
        pr->classes = calloc(sc->nservices + 1, sizeof *pr->classes);
        pr->services = calloc(sc->nservices + 1, sizeof *pr->services);
        pr->class_subjects = calloc(sc->nservices + 1, sizeof *pr->class_subjects);
        if (!pr->classes || !pr->services || !pr->class_subjects)
            sim_out_of_memory("out of memory planning a run");
        for (size_t w = 0; w < sc->nservices; w++) {
            const service_spec *sv = &sc->services[w];
            if (sv->pool != p)
                continue;
            pr->classes[pr->nclasses] = (station_class_config){
                .name = sv->name, .interarrival = arrival_interarrival(&sv->arrivals),
                .service = sv->service, .queue_limit = sv->queue_limit,
            };
            pr->services[pr->nclasses] = w;
            pr->class_subjects[pr->nclasses] = workload_subject[w];
            pr->nclasses++;
        }
    }
    free(workload_subject);
    return runs;
}

static void release(void *parts)
{
    pool_run *runs = parts;
    for (size_t p = 0; runs[p].sc; p++) {
        free(runs[p].classes);
        free(runs[p].services);
        free(runs[p].class_subjects);
    }
    free(runs);
}

static int start(void *parts, run_shared *rs, char *err, size_t err_size)
{
    const scenario *sc = rs->sc;
    pool_run *runs = parts;
    for (size_t p = 0; p < sc->npools; p++) {
        pool_run *pr = &runs[p];
        if (pr->nclasses == 0)
            continue;
        station_config config = {
            .servers = sc->pools[p].count, .classes = pr->classes,
            .nclasses = pr->nclasses, .warmup_s = sc->warmup_s, .bucket_s = sc->bucket_s,
            .seed = sc->seed, .replication = rs->replication,
        };
        pr->st = station_create(rs->engine, &config, err, err_size);
        if (!pr->st)
            return -1;
        station_on_bucket(pr->st, record_bucket, pr);
        station_start(pr->st);
    }
    return 0;
}

/* Every pool without GPU accounting reports here (one with it reports through its GPUs
 * and its workloads). */
static void record_workloads(void *parts, run_shared *rs, double end_s, sim_metrics *m)
{
    pool_run *runs = parts;
    for (size_t p = 0; p < rs->sc->npools; p++) {
        if (runs[p].st)
            station_finish(runs[p].st, end_s);
        if (!rs->gpus[p].gp)
            record_pool(m, &runs[p], end_s);
    }
}

static void stop(void *parts, run_shared *rs)
{
    pool_run *runs = parts;
    for (size_t p = 0; p < rs->sc->npools; p++) {
        station_free(runs[p].st);
        runs[p].st = NULL;
    }
}

const run_part_kind run_stations = {
    .what = "stations", .plan = plan, .start = start,
    .record = { [RUN_STAGE_WORKLOADS] = record_workloads }, .stop = stop, .release = release,
};
