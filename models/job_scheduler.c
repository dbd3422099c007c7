/* Training jobs on a GPU pool: queue, policies, losses and job streams (see
 * job_scheduler.h).  Records and metrics are in job_scheduler_results.c. */
#include <gsl/gsl_randist.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/event_order.h"
#include "models/job_scheduler_internal.h"
#include "sim/array.h"
#include "sim/fatal.h"
#include "sim/rng.h"

#define NOT_RUNNING ((size_t)-1)

/* The end of an evacuation runs before a preemption's loss at the same instant, so the
 * checkpoint written in the notice counts. */

static void dispatch(job_scheduler *s);

/* ---- queue and running set --------------------------------------------------------- */

static int64_t job_class(const job_scheduler *s, const job *j)
{
    return s->spec.policy == SCHED_PRIORITY ? -(int64_t)j->priority : 0;
}

static bool queued_before(const job_scheduler *s, const job *a, const job *b)
{
    int64_t ca = job_class(s, a), cb = job_class(s, b);
    return ca != cb ? ca < cb : a->order < b->order;
}

/* Into the queue: at the tail of its class, or at its head after a loss. */
static void enqueue(job_scheduler *s, job *j, bool at_head)
{
    j->state = JOB_QUEUED;
    j->queued_since_s = sim_engine_now(s->engine);
    j->order = at_head ? --s->head_order : ++s->tail_order;
    j->queued_length_s = training_segment_s(&j->checkpoint, j->pay_restart ? j->restart_s : 0,
                                            j->work_s - j->saved_s);
    size_t lo = 0, hi = s->nqueue;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (queued_before(s, s->queue[mid], j))
            lo = mid + 1;
        else
            hi = mid;
    }
    size_t cap = s->queue_cap; /* both from the same capacity to the same one */
    s->queue_gpus = sim_array_grow(s->queue_gpus, &cap, s->nqueue + 1, sizeof *s->queue_gpus,
                                   "a job scheduler");
    s->queue = sim_array_grow(s->queue, &s->queue_cap, s->nqueue + 1,
                              sizeof *s->queue, "a job scheduler");
    memmove(s->queue + lo + 1, s->queue + lo, (s->nqueue - lo) * sizeof *s->queue);
    memmove(s->queue_gpus + lo + 1, s->queue_gpus + lo, (s->nqueue - lo) * sizeof *s->queue_gpus);
    s->queue[lo] = j;
    s->queue_gpus[lo] = j->gpus;
    s->nqueue++;
}

static void queue_remove_at(job_scheduler *s, size_t i)
{
    memmove(s->queue + i, s->queue + i + 1, (s->nqueue - i - 1) * sizeof *s->queue);
    memmove(s->queue_gpus + i, s->queue_gpus + i + 1,
            (s->nqueue - i - 1) * sizeof *s->queue_gpus);
    s->nqueue--;
}

/* j runs, its segment's end event scheduled. */
static void running_add(job_scheduler *s, job *j)
{
    s->running = sim_array_grow(s->running, &s->running_cap, s->nrunning + 1,
                                sizeof *s->running, "a job scheduler");
    j->running_pos = s->nrunning;
    s->running[s->nrunning++] = j;
    j->end_id = sim_ids_take(&s->end_ids);
    s->by_end_id = sim_array_grow(s->by_end_id, &s->by_end_cap, (size_t)j->end_id + 1,
                                  sizeof *s->by_end_id, "a job scheduler");
    s->by_end_id[j->end_id] = j;
    sim_ranking_insert(&s->by_end, j->end_id, sim_event_time(s->engine, j->event), j->index);
}

static void running_remove(job_scheduler *s, job *j)
{
    job *last = s->running[--s->nrunning];
    s->running[j->running_pos] = last;
    last->running_pos = j->running_pos;
    j->running_pos = NOT_RUNNING;
    sim_ranking_remove(&s->by_end, j->end_id);
    sim_ids_give(&s->end_ids, j->end_id);
}

static void on_dispatch(sim_engine *e, void *data)
{
    job_scheduler *s = data;
    s->dispatch_event = 0;
    dispatch(s);
}

/* Dispatches once at this instant, after what else happens now (arrivals and releases
 * at the same time are seen together). */
static void dispatch_soon(job_scheduler *s)
{
    if (!s->dispatch_event)
        s->dispatch_event = sim_event_schedule_in(s->engine, 0, EVENT_POOL_NOTIFY,
                                                  on_dispatch, s);
}

static void on_pool_changed(void *context)
{
    dispatch(context); /* called from the pool's own event */
}

/* ---- a stream's jobs ---------------------------------------------------------------- */

static void stream_keep(job_stream *st, job *j)
{
    if (st->live_head > 0 && st->live_head + st->nlive == st->live_cap
        && st->live_head >= st->nlive) { /* room at the front: move down */
        memmove(st->live, st->live + st->live_head, st->nlive * sizeof *st->live);
        st->live_head = 0;
    }
    st->live = sim_array_grow(st->live, &st->live_cap, st->live_head + st->nlive + 1,
                              sizeof *st->live, "a job stream");
    st->live[st->live_head + st->nlive++] = (stream_entry){ .j = j };
}

/* A stream's job finished: its summary takes its place, and the summaries at the front
 * go into the stream's figures. */
static void stream_fold(job_stream *st, job *j)
{
    stream_entry *e = &st->live[st->live_head + (j->number - 1 - st->folded)];
    e->done = job_summarize(j, j->end_s);
    e->j = NULL;
    free(j);
    while (st->nlive > 0 && !st->live[st->live_head].j) {
        stream_tally_add(&st->tally, &st->live[st->live_head].done);
        st->live_head++;
        st->nlive--;
        st->folded++;
    }
}

/* ---- segments ------------------------------------------------------------------------ */

static void on_segment_end(sim_engine *e, void *data);

static void on_granted(void *context, const unsigned *gpus, unsigned n)
{
    job *j = context;
    job_scheduler *s = j->s;
    double now = sim_engine_now(s->engine);
    j->wait_s += now - j->queued_since_s;
    if (isnan(j->start_s))
        j->start_s = now;
    j->state = JOB_RUNNING;
    j->segment_start_s = now;
    j->segment_restart_s = j->pay_restart ? j->restart_s : 0;
    j->pay_restart = false;
    double length = training_segment_s(&j->checkpoint, j->segment_restart_s,
                                       j->work_s - j->saved_s);
    j->event = sim_event_schedule(s->engine, now + length, EVENT_MODEL, on_segment_end, j);
    running_add(s, j);
}

/* Work done and saved in the current segment by now. */
static void segment_progress(const job *j, double now, double *done_s, double *saved_s)
{
    training_progress(&j->checkpoint, j->segment_restart_s, j->work_s - j->saved_s,
                      now - j->segment_start_s, done_s, saved_s);
}

/* The job stops holding GPUs now. */
static void segment_close(job *j, double now)
{
    j->held_gpu_s += j->gpus * (now - j->segment_start_s);
    running_remove(j->s, j);
    if (j->event)
        sim_event_cancel(j->s->engine, j->event);
    j->event = 0;
}

static void on_segment_end(sim_engine *e, void *data)
{
    job *j = data;
    job_scheduler *s = j->s;
    double now = sim_engine_now(e);
    j->event = 0;
    segment_close(j, now);
    j->saved_s = j->work_s;
    j->state = JOB_DONE;
    j->end_s = now;
    gpu_pool_release(s->pool, j->request);
    if (s->record) {
        job_record r = job_snapshot(j, now);
        s->record(s->record_context, &r);
    }
    if (!j->spec && !s->keep_jobs)
        stream_fold(s->streams[j->stream], j); /* j is freed */
}

/* Cut short now, keeping only the work saved by checkpoints; back to the head of its
 * class.  The caller gives the GPUs back (or the pool took them). */
static void segment_lose(job *j, double now)
{
    double done, saved;
    segment_progress(j, now, &done, &saved);
    j->saved_s += saved;
    segment_close(j, now);
    j->restarts++;
    j->pay_restart = true;
    enqueue(j->s, j, true);
}

static void on_evacuated(sim_engine *e, void *data)
{
    job *j = data;
    double now = sim_engine_now(e);
    j->event = 0;
    segment_close(j, now);
    j->saved_s = j->evacuated_s;
    j->preemptions++;
    j->restarts++;
    j->pay_restart = true;
    enqueue(j->s, j, true);
    gpu_pool_release(j->s->pool, j->request); /* the pool drops the preempted GPU */
}

static void on_warned(void *context, double lost_at_s)
{
    job *j = context;
    job_scheduler *s = j->s;
    double now = sim_engine_now(s->engine);
    if (j->state != JOB_RUNNING || sim_event_time(s->engine, j->event) <= lost_at_s)
        return; /* done before the loss anyway */
    if (j->checkpoint.every_s <= 0 || lost_at_s - now < j->checkpoint.write_s)
        return; /* no time to write: the loss costs the work since the last checkpoint */
    double done, saved;
    segment_progress(j, now, &done, &saved);
    j->evacuated_s = j->saved_s + done;
    j->evacuation_fallback_s = j->saved_s + saved;
    sim_event_cancel(s->engine, j->event);
    j->event = sim_event_schedule(s->engine, now + j->checkpoint.write_s, EVENT_RELEASE,
                                  on_evacuated, j);
    sim_ranking_update(&s->by_end, j->end_id, now + j->checkpoint.write_s);
    j->state = JOB_EVACUATING;
}

static void on_lost(void *context, gpu_loss why)
{
    job *j = context;
    double now = sim_engine_now(j->s->engine);
    if (j->state == JOB_EVACUATING) {
        /* a preemption: the checkpoint ended with the notice; a failure cut it short */
        segment_close(j, now);
        bool failed = why == GPU_FAILED;
        j->saved_s = failed ? j->evacuation_fallback_s : j->evacuated_s;
        j->failures += failed;
        j->preemptions += !failed;
        j->restarts++;
        j->pay_restart = true;
        enqueue(j->s, j, true);
        return;
    }
    if (why == GPU_FAILED)
        j->failures++;
    else
        j->preemptions++;
    segment_lose(j, now);
}

static const gpu_holder HOLDER = { on_granted, on_warned, on_lost };

/* ---- policies ------------------------------------------------------------------------ */

/* A job's step by phase, as shares: a job of a model, its step's; another,
 * compute-bound throughout. */
static const perf_phases *job_share(const job *j)
{
    static const perf_phases compute_bound = { .compute_s = 1 };
    if (j->spec && j->spec->work_share.compute_s + j->spec->work_share.memory_s > 0)
        return &j->spec->work_share;
    return &compute_bound;
}

/* The wall time of `work_s` of j's steps on the pool's GPUs: slower by its gang's
 * noisy-neighbour speed where the pool has them. */
static double gang_work_s(const job_scheduler *s, const job *j, double work_s)
{
    return s->noisy ? work_s / noisy_gang_speed_of(s->noisy, j->gpus, job_share(j)) : work_s;
}

/* Asks the pool for j's gang; false when refused.  The caller takes j off the queue. */
static bool try_start(job_scheduler *s, job *j)
{
    const perf_phases *share = job_share(j);
    int64_t request = gpu_pool_acquire_working(s->pool, j->gpus, &HOLDER, j, share);
    if (request < 0)
        return false;
    j->request = request;
    if (j->state == JOB_QUEUED)
        j->state = JOB_STARTING; /* not granted at once: on order */
    return true;
}

typedef struct victim {
    job *j;
    double key_time;
} victim;

static int by_priority_then_newest(const void *a, const void *b)
{
    const job *x = ((const victim *)a)->j, *y = ((const victim *)b)->j;
    if (x->priority != y->priority)
        return x->priority < y->priority ? -1 : 1;
    if (x->segment_start_s != y->segment_start_s)
        return x->segment_start_s > y->segment_start_s ? -1 : 1;
    return x->index > y->index ? -1 : 1;
}

/* Preempts the lowest-priority running jobs (the most recently started first) when that
 * frees enough GPUs for head; false (nothing done) otherwise. */
static bool preempt_for(job_scheduler *s, job *head)
{
    unsigned available = gpu_pool_available(s->pool);
    if (head->gpus <= available)
        return false;
    victim *v = malloc((s->nrunning + 1) * sizeof *v);
    if (!v)
        sim_out_of_memory("out of memory choosing jobs to preempt");
    size_t n = 0;
    for (size_t i = 0; i < s->nrunning; i++)
        if (s->running[i]->state == JOB_RUNNING && s->running[i]->priority < head->priority)
            v[n++] = (victim){ s->running[i], 0 };
    qsort(v, n, sizeof *v, by_priority_then_newest);
    size_t k = 0;
    unsigned freed = 0;
    while (k < n && available + freed < head->gpus)
        freed += v[k++].j->gpus;
    bool enough = available + freed >= head->gpus;
    double now = sim_engine_now(s->engine);
    for (size_t i = 0; enough && i < k; i++) {
        job *j = v[i].j;
        j->preemptions++;
        segment_lose(j, now);
        gpu_pool_release(s->pool, j->request);
    }
    free(v);
    return enough;
}

/* The walk to the head's reservation: the running jobs by end time, adding each one's
 * GPUs to what is free then until the head fits. */
typedef struct shadow_walk {
    const job_scheduler *s;
    unsigned need, free_then;
    double shadow;
} shadow_walk;

static bool add_ending(void *context, uint32_t id, double end_s)
{
    shadow_walk *w = context;
    w->free_then += w->s->by_end_id[id]->gpus;
    if (w->free_then < w->need)
        return true;
    w->shadow = end_s;
    return false;
}

/* EASY backfilling: the head is reserved the earliest instant at which the running jobs'
 * expected ends free enough GPUs (the shadow time); a later job starts now when it fits
 * and either ends by then or uses only GPUs the head will not need then.  The ends come
 * from the ranking by end time, walked only as far as the head needs. */
static void backfill(job_scheduler *s)
{
    job *head = s->queue[0];
    shadow_walk w = { s, head->gpus, gpu_pool_available(s->pool), INFINITY };
    sim_ranking_walk(&s->by_end, add_ending, &w);
    double shadow = w.shadow;
    unsigned extra = isinf(shadow) ? 0 : w.free_then - head->gpus;
    double now = sim_engine_now(s->engine);
    unsigned available = gpu_pool_available(s->pool);
    for (size_t k = 1; k < s->nqueue;) {
        while (k < s->nqueue && s->queue_gpus[k] > available)
            k++;
        if (k == s->nqueue)
            break;
        job *j = s->queue[k];
        bool ends_before = now + j->queued_length_s <= shadow;
        if (!ends_before && j->gpus > extra) {
            k++;
            continue;
        }
        bool started = try_start(s, j);
        available = gpu_pool_available(s->pool); /* what the pool holds now */
        if (!started) {
            k++;
            continue;
        }
        queue_remove_at(s, k);
        if (!ends_before)
            extra -= j->gpus;
    }
}

static void dispatch(job_scheduler *s)
{
    if (s->dispatching)
        return;
    s->dispatching = true;
    while (s->nqueue > 0) {
        if (try_start(s, s->queue[0])) {
            queue_remove_at(s, 0);
            continue;
        }
        if (s->spec.policy == SCHED_PRIORITY && preempt_for(s, s->queue[0]))
            continue;
        if (s->spec.policy == SCHED_BACKFILL)
            backfill(s);
        break;
    }
    s->dispatching = false;
}

/* ---- arrivals ------------------------------------------------------------------------ */

/* A new job, the next in arrival order; kept in s->jobs when named (stream: NULL) or
 * when the scheduler keeps every job, and in its stream's list when it has one. */
static job *job_new(job_scheduler *s, job_stream *stream)
{
    job *j = calloc(1, sizeof *j);
    if (!j)
        sim_out_of_memory("out of memory adding a job");
    j->s = s;
    j->index = s->arrived++;
    j->request = -1;
    j->running_pos = NOT_RUNNING;
    j->start_s = j->end_s = NAN;
    j->mfu = NAN;
    j->state = JOB_PENDING;
    if (stream) {
        j->stream = stream->index;
        stream_keep(stream, j);
    }
    if (!stream || s->keep_jobs) {
        s->jobs = sim_array_grow(s->jobs, &s->jobs_cap, s->njobs + 1, sizeof *s->jobs,
                                 "a job scheduler");
        s->jobs[s->njobs++] = j;
    }
    return j;
}

static void arrive(job *j)
{
    j->arrival_s = sim_engine_now(j->s->engine);
    enqueue(j->s, j, false);
    dispatch_soon(j->s);
}

static void on_job_arrival(sim_engine *e, void *data)
{
    arrive(data);
}

static void on_stream_arrival(sim_engine *e, void *data);

static void stream_schedule_next(job_stream *st)
{
    const job_stream_spec *sp = st->spec;
    sim_engine *e = st->s->engine;
    if (sp->has_trace) {
        if (st->arrived < sp->trace.n)
            sim_event_schedule(e, fmax(sim_engine_now(e), sp->trace.at_s[st->arrived]), EVENT_MODEL,
                               on_stream_arrival, st);
    } else if (sp->count == 0 || st->arrived < sp->count) {
        double gap = fmax(0, sim_dist_sample(&sp->interarrival_s, st->arrival_rng));
        sim_event_schedule_in(e, gap, EVENT_MODEL, on_stream_arrival, st);
    }
}

static void on_stream_arrival(sim_engine *e, void *data)
{
    job_stream *st = data;
    const job_stream_spec *sp = st->spec;
    job *j = job_new(st->s, st);
    j->number = st->arrived + 1;
    j->priority = sp->priority;
    j->checkpoint = sp->checkpoint;
    j->restart_s = sp->restart_s;
    if (sp->has_trace) {
        j->gpus = sp->trace.gpus[st->arrived];
        j->work_s = sp->trace.duration_s[st->arrived];
        if (sp->trace.priority)
            j->priority = sp->trace.priority[st->arrived];
    } else {
        double cap = gpu_pool_capacity_gpus(st->s->pool);
        double g = round(sim_dist_sample(&sp->gpus, st->gpus_rng));
        j->gpus = (unsigned)fmin(fmax(g, 1), cap);
        j->work_s = fmax(0, sim_dist_sample(&sp->duration_s, st->duration_rng));
    }
    j->work_s = gang_work_s(st->s, j, j->work_s);
    st->arrived++;
    arrive(j);
    stream_schedule_next(st);
}

/* ---- public -------------------------------------------------------------------------- */

job_scheduler *job_scheduler_create(sim_engine *engine, gpu_pool *pool,
                                    const scheduler_spec *spec, const char *name,
                                    uint64_t seed, uint64_t replication, char *err,
                                    size_t err_size)
{
    job_scheduler *s = calloc(1, sizeof *s);
    if (!s || !(s->name = strdup(name ? name : "pool"))) {
        free(s);
        snprintf(err, err_size, "out of memory creating a job scheduler");
        return NULL;
    }
    s->engine = engine;
    s->pool = pool;
    s->spec = *spec;
    s->seed = seed;
    s->replication = replication;
    gpu_pool_set_listener(pool, on_pool_changed, s);
    return s;
}

void job_scheduler_free(job_scheduler *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->njobs; i++)
        free(s->jobs[i]);
    for (size_t i = 0; i < s->nstreams; i++) {
        job_stream *st = s->streams[i];
        for (size_t k = 0; !s->keep_jobs && k < st->nlive; k++) /* kept: freed above */
            free(st->live[st->live_head + k].j);
        free(st->live);
        stream_tally_release(&st->tally);
        gsl_rng_free(s->streams[i]->arrival_rng);
        gsl_rng_free(s->streams[i]->gpus_rng);
        gsl_rng_free(s->streams[i]->duration_rng);
        free(s->streams[i]);
    }
    free(s->streams);
    free(s->jobs);
    free(s->queue);
    free(s->queue_gpus);
    free(s->running);
    sim_ranking_release(&s->by_end);
    sim_ids_release(&s->end_ids);
    free(s->by_end_id);
    free(s->name);
    free(s);
}

void job_scheduler_keep_jobs(job_scheduler *s) { s->keep_jobs = true; }

void job_scheduler_set_noisy(job_scheduler *s, const noisy_spec *noisy)
{
    s->noisy = noisy;
}

void job_scheduler_set_recorder(job_scheduler *s, job_record_fn fn, void *context)
{
    s->record = fn;
    s->record_context = context;
}

static int check_job(const job_scheduler *s, const char *name, unsigned gpus, double work_s,
                     const checkpoint_spec *c, double restart_s, char *err, size_t err_size)
{
    unsigned cap = gpu_pool_capacity_gpus(s->pool);
    if (gpus < 1 || gpus > cap) {
        snprintf(err, err_size, "%s needs %u GPUs; pool \"%s\" can hold at most %u", name,
                 gpus, s->name, cap);
        return -1;
    }
    if (!(work_s >= 0 && isfinite(work_s))) {
        snprintf(err, err_size, "%s: its work must be a finite time >= 0, got %g s", name,
                 work_s);
        return -1;
    }
    if (!(c->every_s >= 0 && c->write_s >= 0 && restart_s >= 0)) {
        snprintf(err, err_size, "%s: checkpoint every %g s, write %g s and restart %g s must "
                 "be >= 0", name, c->every_s, c->write_s, restart_s);
        return -1;
    }
    return 0;
}

int job_scheduler_add_job(job_scheduler *s, const training_spec *spec, char *err,
                          size_t err_size)
{
    double work = spec->steps * spec->step_s;
    if (check_job(s, spec->name, spec->gpus, work, &spec->checkpoint, spec->restart_s, err,
                  err_size) != 0)
        return -1;
    job *j = job_new(s, NULL);
    j->spec = spec;
    j->gpus = spec->gpus;
    j->priority = spec->priority;
    j->work_s = gang_work_s(s, j, work);
    j->checkpoint = spec->checkpoint;
    j->restart_s = spec->restart_s;
    j->mfu = spec->mfu;
    j->arrival_s = spec->at_s;
    sim_event_schedule(s->engine, fmax(spec->at_s, sim_engine_now(s->engine)), EVENT_MODEL,
                       on_job_arrival, j);
    return 0;
}

int job_scheduler_add_stream(job_scheduler *s, const job_stream_spec *spec, char *err,
                             size_t err_size)
{
    if (spec->has_trace) {
        for (size_t i = 0; i < spec->trace.n; i++) {
            char name[160];
            snprintf(name, sizeof name, "%s: trace row %zu", spec->name, i + 2);
            if (check_job(s, name, spec->trace.gpus[i], spec->trace.duration_s[i],
                          &spec->checkpoint, spec->restart_s, err, err_size) != 0)
                return -1;
        }
    } else {
        const sim_dist *d[] = { &spec->interarrival_s, &spec->gpus, &spec->duration_s };
        const char *what[] = { "arrivals", "gpus", "duration" };
        for (int i = 0; i < 3; i++) {
            char why[200];
            if (sim_dist_check(d[i], why, sizeof why) != 0) {
                snprintf(err, err_size, "%s: %s: %s", spec->name, what[i], why);
                return -1;
            }
        }
        if (check_job(s, spec->name, 1, 0, &spec->checkpoint, spec->restart_s, err,
                      err_size) != 0)
            return -1;
    }
    job_stream *st = calloc(1, sizeof *st);
    if (!st)
        sim_out_of_memory("out of memory adding a job stream");
    s->streams = sim_array_grow(s->streams, &s->streams_cap, s->nstreams + 1,
                                sizeof *s->streams, "the job streams");
    st->s = s;
    st->index = s->nstreams;
    st->spec = spec;
    stream_tally_init(&st->tally);
    char stream[256];
    const char *named = spec->streams ? spec->streams : spec->name;
    snprintf(stream, sizeof stream, "%s.arrivals", named);
    st->arrival_rng = sim_rng_stream(s->seed, s->replication, stream);
    snprintf(stream, sizeof stream, "%s.gpus", named);
    st->gpus_rng = sim_rng_stream(s->seed, s->replication, stream);
    snprintf(stream, sizeof stream, "%s.duration", named);
    st->duration_rng = sim_rng_stream(s->seed, s->replication, stream);
    s->streams[s->nstreams++] = st;
    stream_schedule_next(st);
    return 0;
}
