/* Scenario runs: replications of the pools' stations (see run.h). */
#include "models/run.h"
#include "models/run_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/event_order.h"
#include "models/station.h"
#include "sim/fatal.h"
#include "sim/interrupt.h"

const char *const run_timeseries_columns[] = {
    "utilization", "queue_length", "batch_size", "kv_cache_utilization", "arrivals",
    "completed", "dropped", "throughput_per_s", "throughput_tokens_per_s",
    "queue_wait_mean_s", "queue_wait_p50_s", "queue_wait_p99_s", "response_mean_s",
    "response_p99_s", "ttft_mean_s", "ttft_p99_s", "tpot_mean_s", "e2e_mean_s", "e2e_p99_s",
    "gpus_held", "gpus_busy", "gpus_idle", "replicas", "gpu_allocation", "fragmentation",
    "tasks_pending", "cost_usd",
};
const size_t run_timeseries_ncolumns = NCOLUMNS;

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
    size_t bucket = (size_t)floor(b->start_s / pr->sc->bucket_s + 0.5);
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
static void record_metrics(sim_metrics *m, const pool_run *pr, double end_s)
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

/* ---- inference workloads ---- */

typedef struct inference_run {
    const scenario *sc;
    const inference_spec *spec;
    pool_gpus *pools;          /* the run's, by pool: where its work and egress are billed */
    serving *sv;
    sim_timeseries *ts;
    size_t pool_subject, workload_subject;
    double bucket_start_s;
} inference_run;

static replica_config replica_config_of(const scenario *sc, const inference_spec *w,
                                        size_t pool, size_t device, unsigned tp)
{
    const model_spec *m = &sc->catalog.models[w->model];
    const device_spec *d = &sc->catalog.devices[device];
    const pool_spec *p = &sc->pools[pool];
    return (replica_config){
        .model = m, .device = d, .prec = w->prec,
        .profile = p->has_profile ? p->profile : perf_default_profile(d),
        .tp = tp, .max_batch = w->max_batch, .max_tokens = w->max_tokens,
        .chunked_prefill = w->chunked_prefill,
        .kv_capacity_tokens = memory_inference(m, d, w->prec, precision_cache(w->prec),
                                               tp).kv_capacity_tokens,
        .max_wait_s = w->max_wait_s, .reference = w->reference, .kv_policy = w->kv_policy,
    };
}

static serving_config serving_config_of(const scenario *sc, const inference_spec *w, unsigned r,
                                        gpu_pool *const *gpu_pools,
                                        serving_group_config *overflow)
{
    const pool_spec *pool = &sc->pools[w->pool];
    serving_config c = {
        .name = w->name, .replicas = w->replicas, .routing = w->routing,
        .pool = gpu_pools[w->pool], .pool_name = pool->name,
        .min_replicas = pool->min / w->tp, .max_replicas = pool->capacity.max / w->tp,
        .autoscaler = &pool->autoscaler, .overflow_threshold = w->overflow_threshold,
        .sharing = &pool->sharing, .noisy = pool->has_noisy ? &pool->noisy : NULL,
        .units_per_gpu = pool->units_per_gpu,
        .custom_route = w->custom_route, .route_context = w->route_context,
        .interarrival = arrival_interarrival(&w->arrivals), .prompt_tokens = w->prompt_tokens,
        .output_tokens = w->output_tokens, .warmup_s = sc->warmup_s,
        .rtt_s = w->has_rtt ? w->rtt_s : sc->pools[w->pool].site.rtt_s,
        .spike_probability = sc->pools[w->pool].site.spike_probability,
        .spike_s = sc->pools[w->pool].site.spike_s,
        .slo_ttft_s = w->slo_ttft_s, .slo_tpot_s = w->slo_tpot_s, .slo_e2e_s = w->slo_e2e_s,
        .seed = sc->seed, .replication = r,
        .trace = w->has_trace ? &w->trace : NULL, .lengths_from_trace = w->lengths_from_trace,
        .loop = w->loop, .sample = w->sample,
        .traffic = w->has_traffic ? &w->traffic : NULL,
    };
    c.replica = replica_config_of(sc, w, w->pool, w->device, w->tp);
    if (w->has_overflow) {
        const pool_spec *o = &sc->pools[w->overflow_pool];
        *overflow = (serving_group_config){
            .pool_name = o->name,
            .replica = replica_config_of(sc, w, w->overflow_pool, w->overflow_device,
                                         w->overflow_tp),
            .replicas = o->count / w->overflow_tp, .min = o->min / w->overflow_tp,
            .max = o->capacity.max / w->overflow_tp, .pool = gpu_pools[w->overflow_pool],
            .autoscaler = &o->autoscaler, .rtt_s = o->site.rtt_s,
            .spike_probability = o->site.spike_probability, .spike_s = o->site.spike_s,
            .sharing = &o->sharing, .noisy = o->has_noisy ? &o->noisy : NULL,
            .units_per_gpu = o->units_per_gpu,
        };
        c.overflow = overflow;
    }
    return c;
}

static void record_inference_bucket(inference_run *ir, double end_s)
{
    double span = end_s - ir->bucket_start_s;
    if (!(span > 0))
        return;
    const serving_bucket *b = serving_bucket_close(ir->sv, end_s);
    size_t bucket = (size_t)floor(ir->bucket_start_s / ir->sc->bucket_s + 0.5);
    size_t p = ir->pool_subject, w = ir->workload_subject;
    sim_timeseries *ts = ir->ts;
    sim_timeseries_add(ts, bucket, p, COL_UTILIZATION, b->busy);
    sim_timeseries_add(ts, bucket, p, COL_BATCH, b->batch);
    sim_timeseries_add(ts, bucket, p, COL_KV, b->kv);
    sim_timeseries_add(ts, bucket, p, COL_REPLICAS, b->replicas);
    sim_timeseries_add(ts, bucket, w, COL_ARRIVALS, (double)b->arrived);
    sim_timeseries_add(ts, bucket, w, COL_COMPLETED, (double)b->completed);
    sim_timeseries_add(ts, bucket, w, COL_DROPPED, (double)b->dropped);
    sim_timeseries_add(ts, bucket, w, COL_THROUGHPUT, (double)b->completed / span);
    sim_timeseries_add(ts, bucket, w, COL_TOKENS_PER_S, b->output_tokens / span);
    sim_timeseries_add(ts, bucket, w, COL_WAIT_MEAN, sim_stat_mean(&b->queue_wait_s));
    sim_timeseries_add(ts, bucket, w, COL_TTFT_MEAN, sim_stat_mean(&b->ttft_s));
    sim_timeseries_add(ts, bucket, w, COL_TTFT_P99, sim_histogram_quantile(&b->ttft_hist_s, 0.99));
    sim_timeseries_add(ts, bucket, w, COL_TPOT_MEAN, sim_stat_mean(&b->tpot_s));
    sim_timeseries_add(ts, bucket, w, COL_E2E_MEAN, sim_stat_mean(&b->e2e_s));
    sim_timeseries_add(ts, bucket, w, COL_E2E_P99, sim_histogram_quantile(&b->e2e_hist_s, 0.99));
    const inference_spec *spec = ir->spec;
    size_t where[2] = { spec->pool, spec->overflow_pool };
    unsigned tp[2] = { spec->tp, spec->overflow_tp };
    for (unsigned g = 0; g < serving_groups(ir->sv); g++)
        if (ir->pools[where[g]].gp)
            pool_gpus_add_work(&ir->pools[where[g]], b->group_busy_s[g] * tp[g],
                               b->group_output_tokens[g] * spec->response_bytes_per_token, end_s);
    ir->bucket_start_s = end_s;
}

static void on_inference_bucket(sim_engine *e, void *data)
{
    inference_run *ir = data;
    double now = sim_engine_now(e);
    record_inference_bucket(ir, now);
    sim_event_schedule(e, now + ir->sc->bucket_s, EVENT_BUCKET, on_inference_bucket, ir);
}

static void record_inference_metrics(sim_metrics *m, const inference_run *ir, double end_s)
{
    const scenario *sc = ir->sc;
    const inference_spec *w = ir->spec;
    const serving_stats *st = serving_get_stats(ir->sv);
    const char *pool = sc->pools[w->pool].name, *name = w->name;
    double measured_s = end_s - sc->warmup_s;
    for (unsigned g = 0; g < serving_groups(ir->sv); g++) {
        serving_group_stats gs = serving_group_get_stats(ir->sv, g, end_s);
        const char *where = g == 0 ? pool : sc->pools[w->overflow_pool].name;
        sim_metrics_add(m, "pool", where, "replicas_mean", "replicas", gs.replicas_mean);
        sim_metrics_add(m, "pool", where, "replicas_max", "replicas", gs.replicas_max);
        sim_metrics_add(m, "pool", where, "utilization_mean", "1", gs.utilization);
        sim_metrics_add(m, "pool", where, "batch_size_mean", "requests", gs.batch_mean);
        sim_metrics_add(m, "pool", where, "kv_cache_utilization_mean", "1", gs.kv_mean);
        sim_metrics_add(m, "pool", where, "kv_preemptions", "preemptions",
                        (double)gs.kv_preemptions);
        sim_metrics_add(m, "pool", where, "replicas_lost", "replicas", (double)gs.replica_losses);
        if (g == 1)
            sim_metrics_add(m, "workload", name, "overflow_fraction", "1",
                            st->completed ? (double)gs.served / (double)st->completed : NAN);
    }
    struct { const char *metric; const sim_histogram *h; double q; } quantiles[] = {
        { "ttft_p50_s", &st->ttft_hist_s, 0.5 }, { "ttft_p95_s", &st->ttft_hist_s, 0.95 },
        { "ttft_p99_s", &st->ttft_hist_s, 0.99 }, { "tpot_p50_s", &st->tpot_hist_s, 0.5 },
        { "tpot_p99_s", &st->tpot_hist_s, 0.99 }, { "e2e_p50_s", &st->e2e_hist_s, 0.5 },
        { "e2e_p99_s", &st->e2e_hist_s, 0.99 },
    };
    sim_metrics_add(m, "workload", name, "requests_arrived", "requests", (double)st->arrived);
    sim_metrics_add(m, "workload", name, "requests_completed", "requests", (double)st->completed);
    sim_metrics_add(m, "workload", name, "requests_dropped", "requests", (double)st->dropped);
    sim_metrics_add(m, "workload", name, "ttft_mean_s", "s", sim_stat_mean(&st->ttft_s));
    sim_metrics_add(m, "workload", name, "tpot_mean_s", "s", sim_stat_mean(&st->tpot_s));
    sim_metrics_add(m, "workload", name, "e2e_mean_s", "s", sim_stat_mean(&st->e2e_s));
    for (size_t i = 0; i < sizeof quantiles / sizeof quantiles[0]; i++)
        sim_metrics_add(m, "workload", name, quantiles[i].metric, "s",
                        sim_histogram_quantile(quantiles[i].h, quantiles[i].q));
    sim_metrics_add(m, "workload", name, "queue_wait_mean_s", "s", sim_stat_mean(&st->queue_wait_s));
    sim_metrics_add(m, "workload", name, "slo_attainment", "1",
                    st->completed + st->dropped
                        ? (double)st->slo_met / (double)(st->completed + st->dropped) : NAN);
    sim_metrics_add(m, "workload", name, "throughput_tokens_per_s", "tokens/s",
                    measured_s > 0 ? st->output_tokens / measured_s : NAN);
    sim_metrics_add(m, "workload", name, "prompt_tokens", "tokens", st->prompt_tokens);
    sim_metrics_add(m, "workload", name, "output_tokens", "tokens", st->output_tokens);
    sim_metrics_add(m, "workload", name, "egress_gb", "GB",
                    st->output_tokens * w->response_bytes_per_token / 1e9);
}

/* Cost per million output tokens: what the workload's pools cost after the warm-up
 * (its own and its overflow pool, each serving it alone). */
static void record_inference_cost(sim_metrics *m, const inference_run *ir)
{
    const inference_spec *w = ir->spec;
    const pool_spec *own = &ir->sc->pools[w->pool];
    if (!own->has_cost && !(w->has_overflow && ir->sc->pools[w->overflow_pool].has_cost))
        return;
    double usd = ir->pools[w->pool].measured.total_usd;
    if (w->has_overflow)
        usd += ir->pools[w->overflow_pool].measured.total_usd;
    double tokens = serving_get_stats(ir->sv)->output_tokens;
    sim_metrics_add(m, "workload", w->name, "cost_per_mtok_usd", "USD/Mtok",
                    tokens > 0 ? usd / (tokens / 1e6) : NAN);
}

/* ---- GPU task replays ---- */

typedef struct gpu_tasks_run {
    const scenario *sc;
    gpu_tasks *t;
    sim_timeseries *ts;
    size_t subject;
    double bucket_start_s;
} gpu_tasks_run;

static void record_tasks_bucket(gpu_tasks_run *tr, double end_s)
{
    if (!(end_s > tr->bucket_start_s))
        return;
    gpu_tasks_bucket_stats b = gpu_tasks_bucket(tr->t, end_s);
    size_t bucket = (size_t)floor(tr->bucket_start_s / tr->sc->bucket_s + 0.5);
    sim_timeseries_add(tr->ts, bucket, tr->subject, COL_GPU_ALLOCATION, b.allocation_rate);
    sim_timeseries_add(tr->ts, bucket, tr->subject, COL_FRAGMENTATION, b.fragmentation);
    sim_timeseries_add(tr->ts, bucket, tr->subject, COL_TASKS_PENDING, b.tasks_pending);
    sim_timeseries_add(tr->ts, bucket, tr->subject, COL_ARRIVALS, (double)b.arrived);
    tr->bucket_start_s = end_s;
}

static void on_tasks_bucket(sim_engine *e, void *data)
{
    gpu_tasks_run *tr = data;
    double now = sim_engine_now(e);
    record_tasks_bucket(tr, now);
    sim_event_schedule(e, now + tr->sc->bucket_s, EVENT_BUCKET, on_tasks_bucket, tr);
}

static void on_tasks_warmup(sim_engine *e, void *data) { gpu_tasks_reset_stats(data); }

/* Progress events: about 100 per replication, after everything else at their time. */
typedef struct progress_state {
    run_progress_fn fn;
    void *context;
    run_progress p;
    uint64_t events_before; /* in earlier replications */
    double step_s;
} progress_state;

static void on_progress(sim_engine *e, void *data)
{
    progress_state *ps = data;
    ps->p.sim_time_s = sim_engine_now(e);
    ps->p.events = ps->events_before + sim_engine_events_run(e);
    ps->fn(ps->context, &ps->p);
    double next = sim_engine_now(e) + ps->step_s;
    if (next < ps->p.duration_s)
        sim_event_schedule(e, next, EVENT_PROGRESS, on_progress, ps);
}

/* Builds the per-pool runs (classes, subjects); they outlive the replications. */
static pool_run *plan_pools(const scenario *sc, sim_timeseries *ts)
{
    pool_run *runs = calloc(sc->npools ? sc->npools : 1, sizeof *runs);
    size_t *workload_subject = calloc(sc->nservices + 1, sizeof *workload_subject);
    if (!runs || !workload_subject)
        sim_fatal("out of memory planning a run");
    for (size_t p = 0; p < sc->npools; p++)
        runs[p].pool_subject = sim_timeseries_add_subject(ts, "pool", sc->pools[p].name);
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
            sim_fatal("out of memory planning a run");
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

static void free_plan(pool_run *runs, size_t npools)
{
    for (size_t p = 0; p < npools; p++) {
        free(runs[p].classes);
        free(runs[p].services);
        free(runs[p].class_subjects);
    }
    free(runs);
}

int scenario_run(const scenario *sc, const run_options *options, run_results *out,
                 char *err, size_t err_size)
{
    run_progress_fn progress = options ? options->progress : NULL;
    void *context = options ? options->progress_context : NULL;
    memset(out, 0, sizeof *out);
    sim_metrics_init(&out->metrics);
    unsigned first = options ? options->replication_first : 0;
    unsigned count = options && options->replication_count ? options->replication_count
                                                           : sc->replications - first;
    if (first >= sc->replications || count > sc->replications - first) {
        snprintf(err, err_size, "replications %u to %u of a scenario with %u", first + 1,
                 first + count, sc->replications);
        return -1;
    }
    size_t nbuckets = (size_t)ceil(sc->duration_s / sc->bucket_s - 1e-9);
    size_t subjects = sc->npools + sc->nservices + sc->ninferences + sc->ngpu_tasks;
    if (sim_timeseries_cells_needed(nbuckets, subjects, NCOLUMNS)
        > SIM_TIMESERIES_MAX_CELLS) {
        snprintf(err, err_size, "the time series would need %zu buckets for %zu pools and "
                 "workloads, over the limit of %zu cells: use a larger bucket", nbuckets,
                 subjects, SIM_TIMESERIES_MAX_CELLS);
        return -1;
    }
    out->timeseries = sim_timeseries_create(nbuckets, sc->bucket_s, run_timeseries_columns,
                                            NCOLUMNS);
    if (!out->timeseries)
        sim_fatal("out of memory creating the time series");
    pool_run *runs = plan_pools(sc, out->timeseries);
    inference_run *inferences = calloc(sc->ninferences + 1, sizeof *inferences);
    pool_gpus *gpu_runs = calloc(sc->npools + 1, sizeof *gpu_runs);
    gpu_pool **gpu_pools = calloc(sc->npools + 1, sizeof *gpu_pools);
    serving_group_config *overflows = calloc(sc->ninferences + 1, sizeof *overflows);
    gpu_tasks_run *task_runs = calloc(sc->ngpu_tasks + 1, sizeof *task_runs);
    if (!inferences || !gpu_runs || !gpu_pools || !overflows || !task_runs)
        sim_fatal("out of memory planning a run");
    for (size_t i = 0; i < sc->ngpu_tasks; i++)
        task_runs[i] = (gpu_tasks_run){
            .sc = sc, .ts = out->timeseries,
            .subject = sim_timeseries_add_subject(out->timeseries, "workload", sc->gpu_tasks[i].name),
        };
    for (size_t p = 0; p < sc->npools; p++)
        gpu_runs[p] = (pool_gpus){ .sc = sc, .pool = p, .ts = out->timeseries,
                                   .subject = runs[p].pool_subject };
    for (size_t i = 0; i < sc->ninferences; i++) {
        inferences[i] = (inference_run){ .sc = sc, .spec = &sc->inferences[i],
                                         .ts = out->timeseries, .pools = gpu_runs };
        inferences[i].pool_subject = runs[sc->inferences[i].pool].pool_subject;
        inferences[i].workload_subject = sim_timeseries_add_subject(out->timeseries, "workload",
                                                                    sc->inferences[i].name);
    }
    progress_state ps = { progress, context, { 0, sc->replications, 0, sc->duration_s, 0 },
                          0, sc->duration_s / 100 };
    int status = 0;
    out->reached_s = 0;
    for (unsigned r = first; r < first + count && status == 0 && !out->partial; r++) {
        if (sim_interrupt_signal()) { /* between replications: none is started */
            out->partial = true;
            break;
        }
        sim_engine *e = sim_engine_create();
        if (!e)
            sim_fatal("out of memory creating an engine");
        for (size_t p = 0; p < sc->npools && status == 0; p++) {
            pool_run *pr = &runs[p];
            if (pr->nclasses == 0)
                continue;
            station_config config = {
                .servers = sc->pools[p].count, .classes = pr->classes,
                .nclasses = pr->nclasses, .warmup_s = sc->warmup_s, .bucket_s = sc->bucket_s,
                .seed = sc->seed, .replication = r,
            };
            pr->st = station_create(e, &config, err, err_size);
            if (!pr->st) {
                status = -1;
                break;
            }
            station_on_bucket(pr->st, record_bucket, pr);
            station_start(pr->st);
        }
        for (size_t p = 0; p < sc->npools && status == 0; p++) {
            if (!pool_gpus_needed(sc, p))
                continue;
            status = pool_gpus_start(&gpu_runs[p], e, r, options, err, err_size);
            gpu_pools[p] = gpu_runs[p].gp;
        }
        for (size_t i = 0; i < sc->ngpu_tasks && status == 0; i++) {
            gpu_tasks_run *tr = &task_runs[i];
            tr->t = gpu_tasks_create(e, &sc->gpu_tasks[i].spec.trace, &sc->gpu_tasks[i].spec.options,
                                     err, err_size);
            if (!tr->t) {
                status = -1;
                break;
            }
            tr->bucket_start_s = 0;
            gpu_tasks_start(tr->t);
            if (sc->warmup_s > 0)
                sim_event_schedule(e, sc->warmup_s, EVENT_WARMUP, on_tasks_warmup, tr->t);
            sim_event_schedule(e, sc->bucket_s, EVENT_BUCKET, on_tasks_bucket, tr);
        }
        for (size_t i = 0; i < sc->ninferences && status == 0; i++) {
            inference_run *ir = &inferences[i];
            serving_config config = serving_config_of(sc, ir->spec, r, gpu_pools, &overflows[i]);
            if (options) {
                config.on_request = options->on_request;
                config.request_context = options->request_context;
            }
            ir->sv = serving_create(e, &config, err, err_size);
            if (!ir->sv) {
                status = -1;
                break;
            }
            ir->bucket_start_s = 0;
            serving_start(ir->sv);
            sim_event_schedule(e, sc->bucket_s, EVENT_BUCKET, on_inference_bucket, ir);
        }
        if (status == 0) {
            ps.p.replication = r;
            if (progress)
                sim_event_schedule(e, ps.step_s, EVENT_PROGRESS, on_progress, &ps);
            sim_interrupt_watch(e); /* only while events run: see sim/interrupt.h */
            sim_engine_run_until(e, sc->duration_s);
            sim_interrupt_watch(NULL);
            if (sim_engine_stopped(e) && sim_interrupt_signal())
                out->partial = true;
            for (size_t i = 0; i < sc->ninferences && status == 0; i++) {
                const char *why = serving_error(inferences[i].sv);
                if (why) {
                    snprintf(err, err_size, "%s", why);
                    status = -1;
                }
            }
            if (status == 0 && sim_engine_stopped(e) && !out->partial) {
                snprintf(err, err_size, "the run stopped before its end");
                status = -1;
            }
        }
        /* an interrupted replication is measured up to the time it reached */
        double end_s = out->partial ? sim_engine_now(e) : sc->duration_s;
        if (status == 0) {
            out->reached_s = end_s;
            if (!out->partial)
                out->replications_completed++;
            uint64_t events = sim_engine_events_run(e);
            out->events += events;
            ps.events_before += events;
            sim_metrics_add(&out->metrics, "run", sc->name, "events", "events", (double)events);
            for (size_t p = 0; p < sc->npools; p++) {
                if (runs[p].st)
                    station_finish(runs[p].st, end_s);
                if (!gpu_pools[p]) /* else its GPU accounting and workloads report it */
                    record_metrics(&out->metrics, &runs[p], end_s);
            }
            for (size_t i = 0; i < sc->ninferences; i++) {
                record_inference_bucket(&inferences[i], end_s);
                record_inference_metrics(&out->metrics, &inferences[i], end_s);
            }
            for (size_t p = 0; p < sc->npools; p++)
                if (gpu_runs[p].gp)
                    pool_gpus_finish(&gpu_runs[p], end_s, &out->metrics);
            for (size_t i = 0; i < sc->ninferences; i++)
                record_inference_cost(&out->metrics, &inferences[i]);
            run_cost_metrics(sc, gpu_runs, end_s, &out->metrics);
            for (size_t i = 0; i < sc->ngpu_tasks; i++) {
                record_tasks_bucket(&task_runs[i], end_s);
                gpu_tasks_record_metrics(&out->metrics, sc->gpu_tasks[i].name, task_runs[i].t,
                                         end_s);
            }
        }
        for (size_t i = 0; i < sc->ninferences; i++) {
            serving_free(inferences[i].sv);
            inferences[i].sv = NULL;
        }
        for (size_t p = 0; p < sc->npools; p++) {
            station_free(runs[p].st);
            runs[p].st = NULL;
            pool_gpus_stop(&gpu_runs[p]);
            gpu_pools[p] = NULL;
        }
        sim_engine_free(e); /* before the replays: its pending events point into them */
        for (size_t i = 0; i < sc->ngpu_tasks; i++) {
            gpu_tasks_free(task_runs[i].t);
            task_runs[i].t = NULL;
        }
    }
    if (status == 0 && out->partial) {
        sim_metrics_add(&out->metrics, "run", sc->name, "partial", "1", 1);
        sim_metrics_add(&out->metrics, "run", sc->name, "sim_time_reached_s", "s",
                        out->reached_s);
        sim_metrics_add(&out->metrics, "run", sc->name, "replications_completed",
                        "replications", out->replications_completed);
    }
    free_plan(runs, sc->npools);
    free(task_runs);
    free(inferences);
    free(gpu_runs);
    free(gpu_pools);
    free(overflows);
    if (status != 0)
        run_results_release(out);
    return status;
}

void run_results_release(run_results *results)
{
    sim_metrics_release(&results->metrics);
    sim_timeseries_free(results->timeseries);
    results->timeseries = NULL;
    results->events = 0;
}
