/* What job_scheduler.c (queue, policies, losses, streams) and job_scheduler_results.c (records
 * and metrics) share: the state of a job and of a scheduler.  Not for other modules. */
#ifndef FLEETSIM_MODELS_JOB_SCHEDULER_INTERNAL_H
#define FLEETSIM_MODELS_JOB_SCHEDULER_INTERNAL_H

#include <gsl/gsl_rng.h>

#include "models/job_scheduler.h"

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
    size_t running_pos;
    /* results */
    double start_s, end_s, wait_s, held_gpu_s;
    unsigned restarts, preemptions, failures;
} job;

typedef struct job_stream {
    job_scheduler *s;
    size_t index;
    const job_stream_spec *spec;
    gsl_rng *arrival_rng, *gpus_rng, *duration_rng;
    uint64_t arrived;
} job_stream;

struct job_scheduler {
    sim_engine *engine;
    gpu_pool *pool;
    scheduler_spec spec;
    char *name;
    uint64_t seed, replication;
    job **jobs;
    size_t njobs, jobs_cap;
    job **queue;                /* by (class, order) */
    size_t nqueue, queue_cap;
    job **running;              /* RUNNING and EVACUATING, any order */
    size_t nrunning, running_cap;
    int64_t head_order, tail_order;
    job_stream **streams;
    size_t nstreams, streams_cap;
    sim_event_id dispatch_event;
    bool dispatching;
    job_record_fn record;
    void *record_context;
};

/* The job's record as of end_s. */
job_record job_snapshot(const job *j, double end_s);

#endif
