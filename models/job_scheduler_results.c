/* Per-job records and training metrics (see job_scheduler.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "models/job_scheduler_internal.h"
#include "sim/fatal.h"
#include "sim/histogram.h"

job_record job_snapshot(const job *j, double end_s)
{
    const job_scheduler *s = j->s;
    job_record r = { .replication = s->replication, .arrival_s = j->arrival_s,
                     .start_s = j->start_s, .end_s = j->end_s, .wait_s = j->wait_s,
                     .gpus = j->gpus, .restarts = j->restarts, .preemptions = j->preemptions,
                     .failures = j->failures, .completed = j->state == JOB_DONE };
    if (j->spec) {
        snprintf(r.name, sizeof r.name, "%s", j->spec->name);
        r.workload = j->spec->name;
    } else {
        const char *stream = s->streams[j->stream]->spec->name;
        snprintf(r.name, sizeof r.name, "%s#%llu", stream, (unsigned long long)j->number);
        r.workload = stream;
    }
    double held = j->held_gpu_s, work = j->saved_s;
    bool holding = j->state == JOB_RUNNING || j->state == JOB_EVACUATING;
    if (holding) {
        double done, saved;
        held += j->gpus * (end_s - j->segment_start_s);
        training_progress(&j->checkpoint, j->segment_restart_s, j->work_s - j->saved_s,
                          end_s - j->segment_start_s, &done, &saved);
        work += j->state == JOB_EVACUATING ? j->evacuated_s - j->saved_s : done;
    }
    if (j->state == JOB_QUEUED || j->state == JOB_STARTING)
        r.wait_s += end_s - j->queued_since_s;
    if (j->state == JOB_PENDING)
        r.wait_s = NAN;
    r.gpu_hours = held / 3600;
    r.work_s = work;
    r.goodput = held > 0 ? work * j->gpus / held : NAN;
    r.mfu_effective = j->mfu * r.goodput;
    return r;
}

size_t job_scheduler_jobs(const job_scheduler *s)
{
    return s->njobs;
}

job_record job_scheduler_job(const job_scheduler *s, size_t i, double end_s)
{
    return job_snapshot(s->jobs[i], end_s);
}

static int by_index(const void *a, const void *b)
{
    const job *x = *(const job *const *)a, *y = *(const job *const *)b;
    return x->index < y->index ? -1 : x->index > y->index;
}

static bool unfinished(const job *j) { return j->state != JOB_DONE && j->state != JOB_PENDING; }

void job_scheduler_finish(job_scheduler *s, double end_s)
{
    if (!s->record)
        return;
    /* the jobs still in hand, kept ones and each stream's, back in arrival order */
    size_t n = s->njobs;
    for (size_t k = 0; !s->keep_jobs && k < s->nstreams; k++)
        n += s->streams[k]->nlive;
    const job **all = malloc((n + 1) * sizeof *all);
    if (!all)
        sim_out_of_memory("out of memory writing the jobs' records");
    size_t m = 0;
    for (size_t i = 0; i < s->njobs; i++)
        if (unfinished(s->jobs[i]))
            all[m++] = s->jobs[i];
    for (size_t k = 0; !s->keep_jobs && k < s->nstreams; k++) {
        const job_stream *st = s->streams[k];
        for (size_t i = 0; i < st->nlive; i++) {
            const job *j = st->live[st->live_head + i].j;
            if (j && unfinished(j))
                all[m++] = j;
        }
    }
    qsort(all, m, sizeof *all, by_index);
    for (size_t i = 0; i < m; i++) {
        job_record r = job_snapshot(all[i], end_s);
        s->record(s->record_context, &r);
    }
    free(all);
}

void stream_tally_init(stream_tally *t)
{
    *t = (stream_tally){ 0 };
    sim_stat_reset(&t->wait);
    sim_stat_reset(&t->turnaround);
    sim_stat_reset(&t->goodput);
    sim_histogram_init(&t->waits);
}

void stream_tally_release(stream_tally *t) { sim_histogram_release(&t->waits); }

job_summary job_summarize(const job *j, double end_s)
{
    job_record r = job_snapshot(j, end_s);
    return (job_summary){ .wait_s = r.wait_s, .turnaround_s = r.end_s - r.arrival_s,
                          .goodput = r.goodput, .gpu_hours = r.gpu_hours,
                          .restarts = r.restarts, .preemptions = r.preemptions,
                          .failures = r.failures, .started = !isnan(r.start_s),
                          .completed = r.completed };
}

void stream_tally_add(stream_tally *t, const job_summary *x)
{
    t->arrived++;
    if (x->started) {
        sim_stat_add(&t->wait, x->wait_s);
        sim_histogram_add(&t->waits, x->wait_s);
    }
    if (x->completed) {
        t->completed++;
        sim_stat_add(&t->turnaround, x->turnaround_s);
    }
    if (!isnan(x->goodput))
        sim_stat_add(&t->goodput, x->goodput);
    t->gpu_hours += x->gpu_hours;
    t->restarts += x->restarts;
    t->preemptions += x->preemptions;
    t->failures += x->failures;
}

static void add(sim_metrics *m, const char *scope, const char *subject, const char *name,
                const char *unit, double value)
{
    sim_metrics_add(m, scope, subject, name, unit, value);
}

static void job_metrics(const job *j, double end_s, double usd_per_gpu_hour, sim_metrics *m)
{
    job_record r = job_snapshot(j, end_s);
    const char *n = r.name;
    add(m, "job", n, "wait_s", "s", r.wait_s);
    add(m, "job", n, "start_s", "s", r.start_s);
    add(m, "job", n, "end_s", "s", r.end_s);
    add(m, "job", n, "gpu_hours", "h", r.gpu_hours);
    add(m, "job", n, "goodput", "1", r.goodput);
    add(m, "job", n, "mfu_effective", "1", r.mfu_effective);
    add(m, "job", n, "restarts", "1", r.restarts);
    add(m, "job", n, "preemptions", "1", r.preemptions);
    add(m, "job", n, "failures", "1", r.failures);
    add(m, "job", n, "completed", "1", r.completed);
    add(m, "job", n, "cost_usd", "USD", r.gpu_hours * usd_per_gpu_hour);
}

static void stream_metrics(const job_scheduler *s, size_t k, double end_s,
                           double usd_per_gpu_hour, sim_metrics *m)
{
    /* the folded jobs' figures, then the rest in arrival order */
    const job_stream *st = s->streams[k];
    stream_tally t = st->tally;
    sim_histogram_init(&t.waits);
    sim_histogram_merge(&t.waits, &st->tally.waits);
    for (size_t i = 0; i < st->nlive; i++) {
        const stream_entry *e = &st->live[st->live_head + i];
        job_summary x = e->j ? job_summarize(e->j, end_s) : e->done;
        stream_tally_add(&t, &x);
    }
    const char *n = st->spec->name;
    add(m, "workload", n, "jobs_arrived", "jobs", t.arrived);
    add(m, "workload", n, "jobs_completed", "jobs", t.completed);
    add(m, "workload", n, "wait_mean_s", "s", sim_stat_mean(&t.wait));
    add(m, "workload", n, "wait_p99_s", "s", sim_histogram_quantile(&t.waits, 0.99));
    add(m, "workload", n, "turnaround_mean_s", "s", sim_stat_mean(&t.turnaround));
    add(m, "workload", n, "goodput_mean", "1", sim_stat_mean(&t.goodput));
    add(m, "workload", n, "gpu_hours", "h", t.gpu_hours);
    add(m, "workload", n, "restarts", "1", t.restarts);
    add(m, "workload", n, "preemptions", "1", t.preemptions);
    add(m, "workload", n, "failures", "1", t.failures);
    add(m, "workload", n, "cost_usd", "USD", t.gpu_hours * usd_per_gpu_hour);
    stream_tally_release(&t);
}

void training_record_metrics(const job_scheduler *s, double end_s, double usd_per_gpu_hour,
                             sim_metrics *m)
{
    for (size_t i = 0; i < s->njobs; i++)
        if (s->jobs[i]->spec)
            job_metrics(s->jobs[i], end_s, usd_per_gpu_hour, m);
    for (size_t k = 0; k < s->nstreams; k++)
        stream_metrics(s, k, end_s, usd_per_gpu_hour, m);
}
