/* Noisy neighbours: a GPU on a shared host alternates between calm spells (it runs at
 * its own speed) and contended ones (a neighbour competes for memory bandwidth, L2,
 * PCIe and power, and the GPU runs slower), on the event engine.
 *
 * Dwell times in each state are drawn from distributions.  On entering a contended
 * spell a memory slowdown m is drawn (values under 1 count as 1), and compute slows by
 * 1 + (m - 1) x compute_sensitivity: memory-bound phases (decode streaming weights and
 * the key-value cache) compete with a neighbour for the bandwidth itself, compute-bound
 * ones (prefill's matrix products, working from registers and shared memory) only
 * through the shared L2, clocks and power.  NOISY_DEFAULT_COMPUTE_SENSITIVITY is an
 * assumption, not a measurement: about a fifth of the memory slowdown, in line with a
 * published comparison of MPS and MIG (shared/reference) where co-located kernels
 * lose ~30% under memory contention, much more than compute-bound ones.
 *
 * The process starts in its stationary state: contended with probability
 * mean_contended / (mean_calm + mean_contended), drawn from its stream, the first spell
 * a whole dwell (exact for exponential dwell times, the usual choice).  A contended spell
 * of length 0, or one whose slowdown is 1, changes nothing: no callback is made, so a
 * process that is never contended leaves a run bit-identical.
 */
#ifndef FLEETSIM_MODELS_NOISY_H
#define FLEETSIM_MODELS_NOISY_H

#include <stdbool.h>
#include <stddef.h>

#include <gsl/gsl_rng.h>

#include "models/perf.h"
#include "sim/dist.h"
#include "sim/engine.h"

#define NOISY_DEFAULT_COMPUTE_SENSITIVITY 0.2

typedef struct noisy_spec {
    sim_dist calm_s, contended_s; /* dwell times, seconds (owned) */
    sim_dist slowdown;            /* memory time multiplier when contended (owned) */
    double compute_sensitivity;   /* in [0, 1] */
} noisy_spec;

/* The long-run speed, relative to calm GPUs, of a synchronous gang of `gpus` GPUs of a
 * noisy pool whose step spends compute_share of its time compute-bound and
 * memory_share memory-bound (the rest, collectives and launches, untouched): each step
 * waits for its slowest GPU, so the gang runs at 1 / max over its GPUs of their step
 * factors 1 + (m - 1) x memory_share + (m - 1) x compute_sensitivity x compute_share
 * (calm: 1).  Each GPU is contended with its stationary probability, independently,
 * its slowdown m at NOISY_GANG_QUANTILES quantiles of the distribution: the time mean of
 * 1 / (the slowest factor), exact where spells are long beside a step (minutes against
 * seconds), which is how a run's work accrues.  1 for one calm GPU's spec (never
 * contended). */
#define NOISY_GANG_QUANTILES 1000
double noisy_gang_speed(const noisy_spec *spec, unsigned gpus, double compute_share,
                        double memory_share);
/* The same for a step by phase (times or shares; NULL or one without compute or memory
 * time: compute-bound throughout, as a job without a model is). */
double noisy_gang_speed_of(const noisy_spec *spec, unsigned gpus, const perf_phases *step);

/* Releases the distributions.  NULL-safe. */
void noisy_spec_release(noisy_spec *spec);

/* 0, or -1 and a message: the distributions must pass sim_dist_check, the dwell means
 * be finite and not both 0, compute_sensitivity lie in [0, 1]. */
int noisy_spec_check(const noisy_spec *spec, char *err, size_t err_size);

/* Told the GPU's new factors (>= 1; 1 and 1 when calm) each time they change. */
typedef void (*noisy_changed_fn)(void *context, double compute_factor, double memory_factor);

typedef struct noisy_process noisy_process;

/* A process that has not started (calm).  spec (checked) and rng are borrowed and must
 * outlive it; the rng should be the process's own stream.  NULL if out of memory. */
noisy_process *noisy_create(sim_engine *engine, const noisy_spec *spec, gsl_rng *rng,
                            noisy_changed_fn changed, void *context);

/* Draws the initial state (telling `changed` if contended) and schedules the first
 * change.  Call once. */
void noisy_start(noisy_process *p);

/* Cancels the pending change.  NULL-safe. */
void noisy_free(noisy_process *p);

/* Whether contended now, and the current factors. */
bool noisy_contended(const noisy_process *p);
void noisy_factors(const noisy_process *p, double *compute_factor, double *memory_factor);

/* Fraction of [start, end_s] spent contended (end_s >= the last change). */
double noisy_contended_fraction(const noisy_process *p, double end_s);

/* Forgets the past (end of a warm-up). */
void noisy_restart_stats(noisy_process *p, double now);

#endif
