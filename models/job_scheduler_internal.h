/* What job_scheduler.c (queue, policies, losses, streams) and job_scheduler_results.c (records
 * and metrics) share: the state of a job and of a scheduler.  Not for other modules. */
#ifndef FLEETSIM_MODELS_JOB_SCHEDULER_INTERNAL_H
#define FLEETSIM_MODELS_JOB_SCHEDULER_INTERNAL_H

#include <gsl/gsl_rng.h>

#include "models/job_scheduler.h"
#include "sim/histogram.h"
#include "sim/ranking.h"
#include "sim/stat.h"

typedef enum job_state {
    JOB_PENDING,     /* not arrived yet */
    JOB_QUEUED,
    JOB_STARTING,    /* its GPUs are on order */
    JOB_RUNNING,
    JOB_EVACUATING,  /* writing a checkpoint in a preemption notice */
    JOB_DONE,
} job_state;

typedef struct job {
    job_scheduler *s;
    size_t index;               /* in s->jobs, arrival order */
    const training_spec *spec;  /* a named job's; NULL for a stream's */
    size_t stream;              /* a stream's job: its stream ... */
    uint64_t number;            /* ... and its number there, from 1 */
    double arrival_s;
    unsigned gpus;
    int priority;
    double work_s;              /* useful step time in all */
    checkpoint_spec checkpoint;
    double restart_s, mfu;
    /* state */
    job_state state;
    double saved_s;             /* work kept by checkpoints */
    bool pay_restart;           /* lost before: reload at the next start */
    int64_t request;            /* from the pool */
    double segment_start_s, segment_restart_s;
    sim_event_id event;         /* end of the segment, or of the evacuation */
    double evacuated_s;         /* saved_s once the evacuation's checkpoint is written */
    double evacuation_fallback_s; /* saved_s if a failure cuts the evacuation short */
    double queued_since_s;
    int64_t order;              /* place within its priority class */
    double queued_length_s;     /* queued: the segment it would run if started now */
    size_t running_pos;
    uint32_t end_id;            /* running: its id in s->by_end */
    /* results */
    double start_s, end_s, wait_s, held_gpu_s;
    unsigned restarts, preemptions, failures;
} job;

/* What a stream's figures need of one job, as of the end (or of its finish). */
typedef struct job_summary {
    double wait_s, turnaround_s, goodput, gpu_hours;
    uint32_t restarts, preemptions, failures;
    bool started, completed;
} job_summary;

/* A stream's figures over its jobs, added in arrival order (job_scheduler_results.c). */
typedef struct stream_tally {
    sim_stat wait, turnaround, goodput;
    sim_histogram waits;
    double arrived, completed, gpu_hours, restarts, preemptions, failures;
} stream_tally;

/* A stream's job not folded yet: the job, or once it finished (and was freed) its
 * summary. */
typedef struct stream_entry {
    job *j; /* NULL: finished, `done` holds what counts */
    job_summary done;
} stream_entry;

typedef struct job_stream {
    job_scheduler *s;
    size_t index;
    const job_stream_spec *spec;
    gsl_rng *arrival_rng, *gpus_rng, *duration_rng;
    uint64_t arrived;
    /* Its jobs not folded yet, in arrival order: live[head .. head + n), the first being
     * job number `folded` + 1.  A finished job is freed and leaves its summary (56 bytes
     * for 260); summaries at the front are added to `tally`.  So memory follows the jobs
     * queued and running, and the summaries behind the oldest of them, never the jobs
     * that passed; adding in arrival order gives the figures a walk over every job at the
     * end would, bit for bit. */
    stream_entry *live;
    size_t live_head, nlive, live_cap;
    uint64_t folded;
    stream_tally tally;
} job_stream;

struct job_scheduler {
    sim_engine *engine;
    gpu_pool *pool;
    scheduler_spec spec;
    char *name;
    uint64_t seed, replication;
    job **jobs;                 /* kept whole, in arrival order: the named jobs, and a
                                 * stream's too with keep_jobs */
    size_t njobs, jobs_cap;
    size_t arrived;             /* jobs that arrived or were added: the next index */
    bool keep_jobs;
    job **queue;                /* by (class, order) */
    unsigned *queue_gpus;       /* the same jobs' GPUs, side by side: backfilling looks for
                                 * the next that fits without reading each job */
    size_t nqueue, queue_cap;
    job **running;              /* RUNNING and EVACUATING, any order */
    size_t nrunning, running_cap;
    sim_ranking by_end;         /* the same by the end of their segment (or evacuation),
                                 * ties by arrival: backfilling's reservation */
    sim_ids end_ids;
    job **by_end_id;
    size_t by_end_cap;
    int64_t head_order, tail_order;
    job_stream **streams;
    size_t nstreams, streams_cap;
    sim_event_id dispatch_event;
    bool dispatching;
    job_record_fn record;
    void *record_context;
    const noisy_spec *noisy;    /* the pool's noisy neighbours; NULL: none */
};

/* The job's record as of end_s. */
job_record job_snapshot(const job *j, double end_s);

/* What of the job's record as of end_s a stream's figures need. */
job_summary job_summarize(const job *j, double end_s);

/* A tally starts empty with stream_tally_init and ends with stream_tally_release;
 * stream_tally_add adds a job's summary. */
void stream_tally_init(stream_tally *t);
void stream_tally_release(stream_tally *t);
void stream_tally_add(stream_tally *t, const job_summary *x);

#endif
