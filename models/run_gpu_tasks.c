/* Fractional GPU task replays in a run (the OpenB trace): each replay, its buckets and
 * its metrics (see run_part.h). */
#include <math.h>
#include <stdlib.h>

#include "models/event_order.h"
#include "models/gpu_tasks.h"
#include "models/run.h"
#include "models/run_part.h"
#include "sim/fatal.h"

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
    size_t bucket = run_bucket_index(tr->sc, tr->bucket_start_s);
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

static void *plan(run_shared *rs)
{
    const scenario *sc = rs->sc;
    gpu_tasks_run *runs = calloc(sc->ngpu_tasks + 1, sizeof *runs);
    if (!runs)
        sim_out_of_memory("out of memory planning a run");
    for (size_t i = 0; i < sc->ngpu_tasks; i++)
        runs[i] = (gpu_tasks_run){
            .sc = sc, .ts = rs->ts,
            .subject = sim_timeseries_add_subject(rs->ts, "workload", sc->gpu_tasks[i].name),
        };
    return runs;
}

static int start(void *parts, run_shared *rs, char *err, size_t err_size)
{
    const scenario *sc = rs->sc;
    gpu_tasks_run *runs = parts;
    for (size_t i = 0; i < sc->ngpu_tasks; i++) {
        gpu_tasks_run *tr = &runs[i];
        tr->t = gpu_tasks_create(rs->engine, &sc->gpu_tasks[i].spec.trace,
                                 &sc->gpu_tasks[i].spec.options, err, err_size);
        if (!tr->t)
            return -1;
        tr->bucket_start_s = 0;
        gpu_tasks_start(tr->t);
        if (sc->warmup_s > 0)
            sim_event_schedule(rs->engine, sc->warmup_s, EVENT_WARMUP, on_tasks_warmup, tr->t);
        sim_event_schedule(rs->engine, sc->bucket_s, EVENT_BUCKET, on_tasks_bucket, tr);
    }
    return 0;
}

static void record_replays(void *parts, run_shared *rs, double end_s, sim_metrics *m)
{
    gpu_tasks_run *runs = parts;
    for (size_t i = 0; i < rs->sc->ngpu_tasks; i++) {
        record_tasks_bucket(&runs[i], end_s);
        gpu_tasks_record_metrics(m, rs->sc->gpu_tasks[i].name, runs[i].t, end_s);
    }
}

/* The replay's pending events point into it: the engine never runs again after this. */
static void stop(void *parts, run_shared *rs)
{
    gpu_tasks_run *runs = parts;
    for (size_t i = 0; i < rs->sc->ngpu_tasks; i++) {
        gpu_tasks_free(runs[i].t);
        runs[i].t = NULL;
    }
}

const run_part_kind run_gpu_tasks = {
    .what = "gpu tasks", .plan = plan, .start = start,
    .record = { [RUN_STAGE_OUTSIDE] = record_replays }, .stop = stop, .release = free,
};
