/* Training jobs as the scheduler sees them: an amount of work in steps of known length,
 * the GPUs it needs as one gang, and how it checkpoints and restarts.
 *
 * Progress is continuous and never simulated step by step: a run segment that starts at
 * t0 pays restart_s (reloading after a loss), then alternates every_s of training with
 * write_s of checkpoint writing (the job pauses while writing), and ends as soon as the
 * work is done (no final checkpoint).  The work done and the work saved at any instant
 * follow in closed form (training_progress), so a job costs O(1) events per run segment
 * however many steps and checkpoints it has.
 *
 * The specs below are what a scenario's fs.training and fs.job_stream become; each is
 * released by its *_release function (NULL-safe, a zeroed spec is empty).
 */
#ifndef FLEETSIM_MODELS_TRAINING_H
#define FLEETSIM_MODELS_TRAINING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "models/device.h"
#include "models/llm.h"
#include "models/perf.h"
#include "models/perf_training.h"
#include "models/training_schedule.h"
#include "sim/dist.h"

typedef struct checkpoint_spec {
    double every_s;  /* training time between checkpoints; 0: the job never checkpoints */
    double write_s;  /* time the job pauses to write one */
} checkpoint_spec;

/* fs.training: one job. */
typedef struct training_spec {
    char *name;            /* owned */
    size_t pool;           /* index into the scenario's pools (for the loader and run) */
    double at_s;           /* arrival (under start = "low_carbon": its chosen start) */
    bool low_carbon;       /* start within [arrival, deadline - work] at the grid's least
                            * intensity over its work (models/carbon.h) */
    double arrival_s;      /* as stated, before a low-carbon start moved it */
    double deadline_s;     /* with low_carbon: when it must end; 0: none */
    unsigned gpus;
    int priority;          /* higher runs first under the priority scheduler */
    double steps;          /* work */
    double step_s;         /* seconds per step at full speed */
    double tokens_per_step;/* 0 when not derived from a model */
    double mfu;            /* model-FLOPs utilisation of a step; NaN when unknown */
    perf_phases work_share;/* a step's time by phase, as shares (power); zeros when not
                            * derived from a model: compute-bound throughout */
    training_setup setup;  /* a job of a model: the plan its steps are timed on */
    bool has_engine;       /* a job of a model: its training engine (index into the
                            * scenario's catalog.engines) */
    size_t engine;
    checkpoint_spec checkpoint;
    double restart_s;      /* reload after a loss, paid at the next start */
} training_spec;

/* Frees the name; NULL is fine. */
void training_spec_release(training_spec *s);

/* Rows of a job trace (fs.job_stream { trace = "jobs.csv" }), in arrival order. */
typedef struct job_trace {
    double *at_s;
    unsigned *gpus;
    double *duration_s;    /* work at full speed */
    int *priority;         /* NULL when the file has no priority column */
    size_t n;
} job_trace;

/* Reads a CSV with a header naming at_s, gpus, duration_s and optionally priority (in
 * any order, other columns ignored).  0, or -1 with "file:row N: column: message" in err
 * (the header is row 1): a missing column, a value that is not a number, gpus not a
 * positive integer, a negative time or duration, arrivals out of order. */
int job_trace_read(const char *path, job_trace *out, char *err, size_t err_size);
/* Frees the columns and empties the trace; NULL is fine. */
void job_trace_release(job_trace *t);

/* fs.job_stream: jobs arriving at random, or replayed from a trace. */
typedef struct job_stream_spec {
    char *name;            /* owned; names the random streams "<name>.arrivals", ... */
    size_t pool;
    sim_dist interarrival_s; /* owned */
    sim_dist gpus;         /* owned; drawn, rounded, at least 1, at most the pool's capacity */
    sim_dist duration_s;   /* owned; work at full speed */
    uint64_t count;        /* jobs in all; 0: until the run's end */
    int priority;          /* for jobs whose trace row names none */
    checkpoint_spec checkpoint;
    double restart_s;
    bool has_trace;
    job_trace trace;       /* owned; replaces the three distributions */
    char *streams;         /* owned; names the random streams instead of name (common
                              random numbers across compared pools); NULL: name */
} job_stream_spec;

/* Frees the name, the distributions and the trace; NULL is fine. */
void job_stream_spec_release(job_stream_spec *s);

typedef enum scheduler_policy {
    SCHED_FIFO,      /* arrival order, strict head of line; priorities ignored */
    SCHED_PRIORITY,  /* higher priority first; preempts lower-priority jobs to start */
    SCHED_BACKFILL,  /* arrival order with EASY backfilling */
} scheduler_policy;

typedef struct scheduler_spec {
    scheduler_policy policy;
} scheduler_spec;

/* "fifo", "priority", "backfill". */
const char *scheduler_policy_name(scheduler_policy p);

/* ---- closed-form progress ------------------------------------------------------------ */

/* Wall time of a run segment that pays restart_s and then does remaining_s of work with
 * checkpoints c: restart_s + m (every + write) + (remaining - m every), m = the number
 * of checkpoints written before the end, ceil(remaining / every) - 1. */
double training_segment_s(const checkpoint_spec *c, double restart_s, double remaining_s);

/* At elapsed_s into such a segment: the work done (*done_s) and the part of it saved by
 * a completed checkpoint (*saved_s), both at most remaining_s.  A checkpoint being
 * written when the segment is cut short is not saved. */
void training_progress(const checkpoint_spec *c, double restart_s, double remaining_s,
                       double elapsed_s, double *done_s, double *saved_s);

/* ---- from a model ------------------------------------------------------------------- */

/* Fills out->gpus, step_s, tokens_per_step, mfu, setup and steps for `model` trained on
 * gpus devices d in prec with sequences of seq_len tokens, global_batch sequences per step,
 * on the fastest setup that fits within c (perf_training_plan_within: every field set is
 * imposed, the rest the planner's) under `schedule` (training_plan_scheduled; c.dualpipe
 * and c.zero_bubble impose theirs too; a field c leaves free is the planner's, so a stated
 * pp leaves tp free); c.lora trains adapters on the frozen model.  The work is
 * `tokens` (> 0; steps = ceil(tokens / tokens per step)) or else `steps`.  When no setup
 * fits, a message in err and: -2 where none could be timed, a stated degree (or the
 * batch) no setup can take, with the planner's cause and numbers
 * (training_estimate.refusal: "tp 3 does not divide the 32 attention heads of
 * llama-3-8b"); -1 where none fits in memory, naming the bytes per GPU and the smallest
 * power-of-two multiple of gpus that would fit with the planner free but for adapters
 * and schedule: "llama-3-70b on 8 H100-SXM: needs 137.4 GB per GPU, 72.0 GB usable ...;
 * the smallest that fits is 32 GPUs". */
int training_job_from_model(training_spec *out, const model_spec *m, const device_spec *d,
                            const perf_profile *profile, precision prec, unsigned gpus,
                            training_constraints c, training_schedule schedule,
                            unsigned seq_len, unsigned global_batch, double tokens,
                            double steps, char *err, size_t err_size);

#endif
