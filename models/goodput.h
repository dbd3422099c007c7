/* Goodput of a training run: the expected wall time and GPU-hours of W seconds of
 * productive training on a gang of G GPUs once failures, restarts and checkpoint stalls
 * are paid, as `fleetsim estimate` reports it beside the productive figures.  Pure
 * functions; no engine.
 *
 * The expectation is that of fleetsim's own simulated fs.training job (models/training.h,
 * models/job_scheduler.c, models/gpu_pool.h), exactly, when the pool has spares enough
 * that the job never waits for a repair:
 *   - a run segment pays restart_s after a loss (not at the first start), then
 *     alternates every_s of training with write_s of checkpoint writing, and ends as soon
 *     as the work is done, with no final checkpoint;
 *   - every GPU of the pool fails at 1 / mtbf_s, a Poisson process, busy or not; a
 *     failure of any of the job's G GPUs, during training, a write or a restart alike,
 *     loses everything since the last completed write (a write cut short saves nothing)
 *     and the job starts again at once on spares, paying restart_s.
 *
 * Derivation.  The job's GPUs fail at lambda = G / mtbf_s (its own MTBF is mtbf_s / G).
 * With tau = every_s, w = write_s, R = restart_s and the work W, the run is n = ceil(W /
 * tau) - 1 stages of b = tau + w (train, then write: the stage is kept when the write
 * completes), then a last stage of b = L = W - n tau, unsaved; without checkpoints (tau
 * = 0) one stage of b = W.  A stage's first attempt follows the previous stage's save
 * (or the job's start) with no restart; a failure at time X < b into it starts retries
 * of R + b each (the restart is part of the attempt: a failure during it starts another),
 * until one runs R + b without a failure.  An interval of length a repeated until it runs
 * whole takes (e^{lambda a} - 1) / lambda on average (the renewal argument: E[T] =
 * E[min(X, a)] + P(X < a) E[T]), so a stage takes
 *     E[min(X, b)] + P(X < b) (e^{lambda (R + b)} - 1) / lambda
 *       = (1 - e^{-lambda b}) / lambda + (1 - e^{-lambda b}) (e^{lambda (R + b)} - 1) / lambda
 *       = e^{lambda R} (e^{lambda b} - 1) / lambda,
 * and the run
 *     E[T] = e^{lambda R} / lambda x [ n (e^{lambda (tau + w)} - 1) + e^{lambda L} - 1 ],
 * which tends to W + n w as lambda -> 0.  The failures are a Poisson process over the time
 * the job holds its GPUs, all of T, so E[failures] = lambda E[T] (Wald).  Each failure
 * starts a restart that lasts min(R, the next failure), (1 - e^{-lambda R}) / lambda on
 * average (Wald again, per stage: the number of attempts is a stopping time of the
 * failure gaps), so the restarts take E[T] (1 - e^{-lambda R}).  The writes that complete
 * take n w; the rest, E[T] - W - n w - restarts, is lost: training done again and writes
 * cut short.  GPU-hours are G E[T] / 3600: the job holds its gang all along.
 *
 * Stragglers (straggler > 0) stretch every second of training by 1 + straggler (slow
 * GPUs hold back the whole synchronous gang); the simulator has none, so with straggler 0
 * the figures are the simulator's.
 *
 * The checkpoint interval that minimises E[T] is, to first order in tau / M with M =
 * mtbf_s / G, Young's sqrt(2 w M) (J. W. Young, "A first order approximation to the
 * optimum checkpoint interval", CACM 17(9), 1974; J. T. Daly, "A higher order estimate
 * of the optimum checkpoint interval for restart dumps", FGCS 22(3), 2006): the minimum
 * of (e^{lambda (tau + w)} - 1) / tau, the expected time a second of work costs.
 */
#ifndef FLEETSIM_MODELS_GOODPUT_H
#define FLEETSIM_MODELS_GOODPUT_H

typedef struct goodput_inputs {
    double work_s;      /* productive training time: steps x step time, >= 0 */
    unsigned gpus;      /* the job's gang, >= 1 */
    double mtbf_s;      /* mean time between failures of one GPU; 0: no failures */
    double every_s;     /* training time between checkpoints; 0: never checkpoints */
    double write_s;     /* the job's pause to write one */
    double restart_s;   /* detection, reinitialisation and reload, after each failure */
    double straggler;   /* share by which stragglers stretch training; 0: none */
} goodput_inputs;

typedef struct goodput_result {
    double wall_s;         /* expected wall time (INFINITY when it overflows: the run
                            * practically never gets through a stage) */
    double gpu_hours;      /* gpus x wall_s / 3600 */
    double failures;       /* expected failures of the job's GPUs */
    double goodput;        /* work_s / wall_s, the productive share */
    double job_mtbf_s;     /* mtbf_s / gpus (INFINITY without failures) */
    double checkpoints;    /* writes completed: n */
    /* wall_s = work_s + straggler_s + checkpoint_s + restart_s + lost_s */
    double straggler_s;    /* work_s x straggler */
    double checkpoint_s;   /* n x write_s */
    double restart_s;      /* in restarts, whole or cut short by a failure */
    double lost_s;         /* training done again and writes cut short */
} goodput_result;

/* The expectation above.  Inputs out of range (negative times, no GPUs) are a caller's
 * bug (asserted). */
goodput_result goodput_expect(const goodput_inputs *in);

/* Young's interval sqrt(2 write_s job_mtbf_s); 0 (never checkpoint) when job_mtbf_s is 0
 * or infinite (no failures). */
double goodput_young_daly_s(double write_s, double job_mtbf_s);

/* The figures `fleetsim estimate` assumes where the user gives none; goodput.c says where
 * each comes from and how it was set.  The *_source strings credit the source. */
typedef struct goodput_defaults {
    double gpu_mtbf_s;
    const char *mtbf_source;
    double restart_s;
    const char *restart_source;
    double write_bytes_per_s_per_gpu; /* the storage's sustained write rate, a GPU's share */
    const char *write_source;
    double weight_bytes, optimizer_bytes; /* a parameter's checkpointed state when the
                                           * training engine does not say (2 + 12) */
} goodput_defaults;

extern const goodput_defaults GOODPUT_DEFAULTS;

#endif
