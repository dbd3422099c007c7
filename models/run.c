/* Scenario runs: the replications, each driven through the table of part kinds
 * (run_part.h), and their results (see run.h). */
#include "models/run.h"
#include "models/run_part.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/event_order.h"
#include "sim/fatal.h"
#include "sim/interrupt.h"

const char *const run_timeseries_columns[] = {
    "utilization", "queue_length", "batch_size", "kv_cache_utilization", "arrivals",
    "completed", "dropped", "throughput_per_s", "throughput_tokens_per_s",
    "queue_wait_mean_s", "queue_wait_p50_s", "queue_wait_p99_s", "response_mean_s",
    "response_p99_s", "ttft_mean_s", "ttft_p99_s", "tpot_mean_s", "e2e_mean_s", "e2e_p99_s",
    "gpus_held", "gpus_busy", "gpus_idle", "replicas", "gpu_allocation", "fragmentation",
    "tasks_pending", "cost_usd", "power_kw",
};
const size_t run_timeseries_ncolumns = NCOLUMNS;

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

/* Every kind of part, in the order they start (run_part.h). */
static const run_part_kind *const KINDS[] = {
    &run_stations, &run_pool_gpus, &run_gpu_tasks, &run_inference,
};
enum { NKINDS = sizeof KINDS / sizeof KINDS[0] };

size_t run_bucket_index(const scenario *sc, double start_s)
{
    return (size_t)floor(start_s / sc->bucket_s + 0.5);
}

/* One replication on an engine of its own: start, events, records, stop (dry: start
 * and stop only, the checks a run makes before its first event).  0, or -1 with the
 * message. */
static int run_replication(run_shared *rs, void *const *parts, progress_state *ps, bool dry,
                           run_results *out, char *err, size_t err_size)
{
    const scenario *sc = rs->sc;
    sim_engine *e = sim_engine_create();
    if (!e)
        sim_out_of_memory("out of memory creating an engine");
    rs->engine = e;
    rs->site = (site_power){ .start_s = NAN };
    if (sc->runtime && sc->runtime_rewind)
        sc->runtime_rewind(sc->runtime); /* nothing a replication keeps reaches the next */
    int status = 0;
    for (size_t k = 0; k < NKINDS && status == 0; k++)
        status = KINDS[k]->start(parts[k], rs, err, err_size);
    if (status == 0 && !dry) {
        ps->p.replication = rs->replication;
        if (ps->fn)
            sim_event_schedule(e, ps->step_s, EVENT_PROGRESS, on_progress, ps);
        sim_interrupt_watch(e); /* only while events run: see sim/interrupt.h */
        sim_engine_run_until(e, sc->duration_s);
        sim_interrupt_watch(NULL);
        if (sim_engine_stopped(e) && sim_interrupt_signal())
            out->partial = true;
        for (size_t k = 0; k < NKINDS && status == 0; k++) {
            const char *why = KINDS[k]->failure ? KINDS[k]->failure(parts[k]) : NULL;
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
    if (status == 0 && !dry) {
        /* an interrupted replication is measured up to the time it reached */
        double end_s = out->partial ? sim_engine_now(e) : sc->duration_s;
        out->reached_s = end_s;
        if (!out->partial)
            out->replications_completed++;
        uint64_t events = sim_engine_events_run(e);
        out->events += events;
        ps->events_before += events;
        sim_metrics_add(&out->metrics, "run", sc->name, "events", "events", (double)events);
        for (int stage = 0; stage < RUN_NSTAGES; stage++) {
            if (stage == RUN_STAGE_OUTSIDE) /* the run's totals over its pools */
                run_cost_metrics(sc, rs->gpus, &rs->site, end_s, &out->metrics);
            for (size_t k = 0; k < NKINDS; k++)
                if (KINDS[k]->record[stage])
                    KINDS[k]->record[stage](parts[k], rs, end_s, &out->metrics);
        }
    }
    for (size_t k = NKINDS; k-- > 0;)
        KINDS[k]->stop(parts[k], rs);
    sim_engine_free(e);
    rs->engine = NULL;
    return status;
}

static int run(const scenario *sc, const run_options *options, bool dry, run_results *out,
               char *err, size_t err_size)
{
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
    /* inference workloads count twice: a pool several models share reports each's */
    size_t subjects = sc->npools + sc->nservices + 2 * sc->ninferences + sc->ngpu_tasks;
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
        sim_out_of_memory("out of memory creating the time series");
    run_shared rs = { .sc = sc, .options = options, .ts = out->timeseries };
    rs.pool_subjects = calloc(sc->npools + 1, sizeof *rs.pool_subjects);
    rs.gpus = calloc(sc->npools + 1, sizeof *rs.gpus);
    if (!rs.pool_subjects || !rs.gpus)
        sim_out_of_memory("out of memory planning a run");
    for (size_t p = 0; p < sc->npools; p++) {
        rs.pool_subjects[p] = sim_timeseries_add_subject(out->timeseries, "pool",
                                                         sc->pools[p].name);
        rs.gpus[p] = (pool_gpus){ .sc = sc, .pool = p, .ts = out->timeseries,
                                  .subject = rs.pool_subjects[p], .site = &rs.site };
    }
    void *parts[NKINDS];
    for (size_t k = 0; k < NKINDS; k++)
        parts[k] = KINDS[k]->plan(&rs);
    progress_state ps = { options ? options->progress : NULL,
                          options ? options->progress_context : NULL,
                          { 0, sc->replications, 0, sc->duration_s, 0 }, 0,
                          sc->duration_s / 100 };
    int status = 0;
    for (unsigned r = first; r < first + count && status == 0 && !out->partial; r++) {
        if (sim_interrupt_signal()) { /* between replications: none is started */
            out->partial = true;
            break;
        }
        rs.replication = r;
        status = run_replication(&rs, parts, &ps, dry, out, err, err_size);
    }
    if (status == 0 && out->partial) {
        sim_metrics_add(&out->metrics, "run", sc->name, "partial", "1", 1);
        sim_metrics_add(&out->metrics, "run", sc->name, "sim_time_reached_s", "s",
                        out->reached_s);
        sim_metrics_add(&out->metrics, "run", sc->name, "replications_completed",
                        "replications", out->replications_completed);
    }
    for (size_t k = 0; k < NKINDS; k++)
        KINDS[k]->release(parts[k]);
    free(rs.pool_subjects);
    free(rs.gpus);
    if (status != 0)
        run_results_release(out);
    return status;
}

int scenario_run(const scenario *sc, const run_options *options, run_results *out,
                 char *err, size_t err_size)
{
    return run(sc, options, false, out, err, err_size);
}

int scenario_run_check(const scenario *sc, char *err, size_t err_size)
{
    run_options first = { .replication_count = 1 };
    run_results dry;
    int status = run(sc, &first, true, &dry, err, err_size);
    if (status == 0)
        run_results_release(&dry);
    return status;
}

void run_results_release(run_results *results)
{
    sim_metrics_release(&results->metrics);
    sim_timeseries_free(results->timeseries);
    results->timeseries = NULL;
    results->events = 0;
}
