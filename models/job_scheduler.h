/* Training jobs scheduled on one GPU pool: a queue, a policy (FIFO, priority with
 * preemption, EASY backfilling), gang starts (a job runs on all its GPUs or none), and
 * losses (GPU failures, spot preemptions) that cost the work since the last checkpoint.
 *
 * A job waits in the queue until the pool grants its whole gang, runs for the closed-form
 * length of its segment (training.h), and either completes or is cut short:
 *   - a failure in its gang, or a preemption without time to checkpoint: the work since
 *     its last completed checkpoint is lost;
 *   - a spot notice of at least write_s (and a job that checkpoints): it stops, writes a
 *     checkpoint in the notice, gives its GPUs back and loses nothing more;
 *   - the priority policy preempting it for a higher-priority job: as a failure.
 * It then goes back to the head of its priority class, and pays restart_s at its next
 * start.  Events per job: its arrival, one per run segment, and the pool's.
 *
 * Results per job (job_record): wait_s is all the time queued (arrival to grant,
 * provisioning included, and again after each loss); gpu_hours the GPUs held from each
 * grant to each release (lost work, checkpoint writes and reloads included); goodput the
 * useful step time over that held time (work x gpus / held GPU time); mfu_effective the
 * model-FLOPs utilisation of a step times goodput (NaN when the job has no model).
 */
#ifndef FLEETSIM_MODELS_JOB_SCHEDULER_H
#define FLEETSIM_MODELS_JOB_SCHEDULER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "models/gpu_pool.h"
#include "models/noisy.h"
#include "models/training.h"
#include "sim/engine.h"
#include "sim/metrics.h"

typedef struct job_record {
    char name[128];          /* the job's, or "<stream>#<k>" for a stream's k-th job */
    const char *workload;    /* the stream's name, or the job's (valid while the
                                scheduler's specs live) */
    uint64_t replication;
    double arrival_s;
    double start_s;          /* first start; NaN if never started */
    double end_s;            /* completion; NaN if not completed */
    double wait_s;
    unsigned gpus;
    double gpu_hours;
    double work_s;           /* useful step time: all of it when completed, else done so far */
    double goodput;          /* NaN before any GPU time */
    double mfu_effective;
    unsigned restarts, preemptions, failures;
    bool completed;
} job_record;

typedef void (*job_record_fn)(void *context, const job_record *record);

typedef struct job_scheduler job_scheduler;

/* A scheduler for the jobs of one pool (borrowed; the scheduler becomes its listener).
 * name names the pool in messages.  NULL with a message when out of memory. */
job_scheduler *job_scheduler_create(sim_engine *engine, gpu_pool *pool,
                                    const scheduler_spec *spec, const char *name,
                                    uint64_t seed, uint64_t replication, char *err,
                                    size_t err_size);
/* NULL is fine. */
void job_scheduler_free(job_scheduler *s);

/* Called for each job when it completes, and by job_scheduler_finish for the others. */
void job_scheduler_set_recorder(job_scheduler *s, job_record_fn fn, void *context);

/* The pool's GPUs have noisy neighbours (borrowed; call before adding jobs): a job's
 * work runs at noisy_gang_speed of its GPUs and its step's phases (a job without a
 * model, compute-bound), since a synchronous step waits for its slowest GPU. */
void job_scheduler_set_noisy(job_scheduler *s, const noisy_spec *noisy);

/* Keeps every job of a stream whole to the end, for job_scheduler_job; call before
 * adding streams.  Without it a stream's finished job is folded into the stream's
 * figures (and its record given to the recorder) and freed once every job of the stream
 * that came before it has finished, so that a year of a large cluster holds the jobs
 * queued and running, not the million that passed; the figures are the same, bit for
 * bit.  Named jobs (job_scheduler_add_job) are always kept. */
void job_scheduler_keep_jobs(job_scheduler *s);

/* Adds a job arriving at job->at_s (borrowed: it must outlive the scheduler).  -1 with a
 * message when the job can never run (more GPUs than the pool can ever hold, a negative
 * amount of work...). */
int job_scheduler_add_job(job_scheduler *s, const training_spec *job, char *err,
                          size_t err_size);

/* Adds a stream of jobs (borrowed), arriving from now on; random streams
 * "<name>.arrivals", "<name>.gpus" and "<name>.duration".  -1 with a message for a trace
 * row or a distribution that cannot be run. */
int job_scheduler_add_stream(job_scheduler *s, const job_stream_spec *stream, char *err,
                             size_t err_size);

/* Records every job that arrived and did not complete, as seen at end_s (its GPU time
 * and wait up to end_s); call once, at the end of the replication. */
void job_scheduler_finish(job_scheduler *s, double end_s);

/* Jobs kept (named ones, and streams' with job_scheduler_keep_jobs) and the record of
 * the i-th (in arrival order) as of end_s. */
size_t job_scheduler_jobs(const job_scheduler *s);
job_record job_scheduler_job(const job_scheduler *s, size_t i, double end_s);

/* Adds one replication's training metrics as of end_s: for each named job (scope "job",
 * subject its name) wait_s, start_s, end_s, gpu_hours, goodput, mfu_effective,
 * restarts, preemptions, failures, completed (0 or 1); for each stream (scope
 * "workload", subject its name) jobs_arrived, jobs_completed, wait_mean_s, wait_p99_s
 * (of the jobs that started), turnaround_mean_s (arrival to end, completed jobs),
 * goodput_mean (over the jobs that held GPUs), gpu_hours, restarts, preemptions,
 * failures; and for both cost_usd, their GPU-hours at usd_per_gpu_hour (NaN: no price). */
void training_record_metrics(const job_scheduler *s, double end_s, double usd_per_gpu_hour,
                             sim_metrics *m);

#endif
