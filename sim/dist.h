/* Probability distributions of durations, sizes and counts, sampled from random streams.
 *
 * A sim_dist is a small value describing one distribution; constructors only fill it in.
 * sim_dist_check validates the parameters and writes a message for the user, so a
 * scenario loader can report a bad value with its file and line.  Sampling assumes a
 * distribution that passed the check.
 *
 * Parameters are in the caller's unit (seconds, tokens, bytes); the distribution has no
 * unit of its own.
 */
#ifndef FLEETSIM_SIM_DIST_H
#define FLEETSIM_SIM_DIST_H

#include <stdbool.h>
#include <stddef.h>

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>

typedef enum sim_dist_kind {
    SIM_DIST_CONSTANT,    /* a = value */
    SIM_DIST_EXPONENTIAL, /* a = mean */
    SIM_DIST_UNIFORM,     /* a = low, b = high */
    SIM_DIST_NORMAL,      /* a = mean, b = standard deviation */
    SIM_DIST_LOGNORMAL,   /* a = mu (log of the median), b = sigma */
    SIM_DIST_GAMMA,       /* a = shape k, b = scale theta */
    SIM_DIST_WEIBULL,     /* a = scale lambda, b = shape k */
    SIM_DIST_PARETO,      /* a = shape alpha, b = scale x_m (the minimum) */
    SIM_DIST_EMPIRICAL,   /* samples in `empirical` */
} sim_dist_kind;

typedef struct sim_empirical sim_empirical;

typedef struct sim_dist {
    sim_dist_kind kind;
    double a, b;
    sim_empirical *empirical; /* owned; only for SIM_DIST_EMPIRICAL */
} sim_dist;

sim_dist sim_dist_constant(double value);
sim_dist sim_dist_exponential(double mean);
sim_dist sim_dist_uniform(double low, double high);
sim_dist sim_dist_normal(double mean, double sd);
/* Lognormal by its median and the sigma of its logarithm. */
sim_dist sim_dist_lognormal(double median, double sigma);
/* Lognormal by its median and 99th percentile (p99 > median). */
sim_dist sim_dist_lognormal_p99(double median, double p99);
sim_dist sim_dist_gamma(double shape, double scale);
sim_dist sim_dist_weibull(double scale, double shape);
sim_dist sim_dist_pareto(double shape, double minimum);

/* Empirical distribution of n observed values (copied).  weights may be NULL (all equal)
 * or give each value's weight (>= 0, not all 0).  With interpolate, samples are drawn
 * from the piecewise-linear inverse of the sample CDF (a continuous distribution between
 * the smallest and largest value; weights must then be NULL); without it, each draw is
 * one of the values (Walker's alias method, O(1) per draw).  Returns 0, or -1 with a
 * message in err (for bad input or out of memory), leaving *out unusable.  Release with
 * sim_dist_release. */
int sim_dist_empirical(sim_dist *out, const double *values, const double *weights, size_t n,
                       bool interpolate, char *err, size_t err_size);

/* Releases what an empirical distribution owns; a no-op for the others.  NULL-safe. */
void sim_dist_release(sim_dist *dist);

/* 0 if the parameters describe a distribution, else -1 and a message in err naming the
 * parameter, its value and what was expected (e.g. "exponential mean must be > 0, got -1"). */
int sim_dist_check(const sim_dist *dist, char *err, size_t err_size);

/* One draw. */
double sim_dist_sample(const sim_dist *dist, gsl_rng *rng);

/* Analytic mean, variance (INFINITY where it does not exist, e.g. Pareto alpha <= 2) and
 * quantile (0 < p < 1; for empirical ones, of the distribution sampled). */
double sim_dist_mean(const sim_dist *dist);
double sim_dist_variance(const sim_dist *dist);
double sim_dist_quantile(const sim_dist *dist, double p);
/* The largest value a draw can take: finite for a constant, a uniform and an empirical
 * list, INFINITY for the others. */
double sim_dist_max(const sim_dist *dist);

/* "exponential", "lognormal", ... */
const char *sim_dist_name(sim_dist_kind kind);

#endif
