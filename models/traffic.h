/* Arrival processes beyond renewal ones: a rate that follows a profile over time (a
 * diurnal curve, sampled by thinning), a Markov-modulated Poisson process (bursts), and
 * closed-loop users.  Each draws from its own random stream. */
#ifndef FLEETSIM_MODELS_TRAFFIC_H
#define FLEETSIM_MODELS_TRAFFIC_H

#include <stddef.h>

#include <gsl/gsl_rng.h>

#include "sim/dist.h"

typedef enum traffic_kind {
    TRAFFIC_PROFILE,     /* Poisson with a piecewise-constant rate that repeats */
    TRAFFIC_MMPP,        /* Poisson whose rate switches between states */
    TRAFFIC_CLOSED_LOOP, /* users who wait a think time after each answer */
    TRAFFIC_FUNCTION,    /* Poisson with a rate given by a function of time, up to a peak */
} traffic_kind;

/* "profile", "mmpp", "closed-loop", "rate function". */
const char *traffic_kind_name(traffic_kind kind);

/* A rate function: the rate per second at time_s, or a negative value with a message in
 * err (the run then stops with it). */
typedef double (*rate_fn)(void *context, double time_s, char *err, size_t err_size);

typedef struct traffic_spec {
    traffic_kind kind;
    /* profile: rates[i] per second during [i step, (i + 1) step), then again from the
     * start; mmpp: rates[i] in state i, which lasts an exponential time of mean
     * dwell_s[i], then state i + 1 (cyclically) */
    double *rates;
    double *dwell_s;
    size_t n;
    double step_s;
    /* closed loop */
    unsigned users;
    sim_dist think_s;
    /* function: rate(t) <= peak (thinning draws candidates at the peak) */
    rate_fn rate;
    void *rate_context;
    double peak;
} traffic_spec;

/* Frees the arrays and the think-time distribution.  NULL-safe. */
void traffic_spec_release(traffic_spec *t);

/* Long-run mean arrival rate (open processes); NaN for closed loops. */
double traffic_mean_rate(const traffic_spec *t);

/* The state of an open process in one run. */
typedef struct traffic_state {
    const traffic_spec *spec;
    gsl_rng *rng;     /* borrowed */
    double max_rate;
    size_t state;     /* mmpp */
    double state_until_s;
} traffic_state;

void traffic_start(traffic_state *s, const traffic_spec *spec, gsl_rng *rng, double now);

/* The next arrival after now (INFINITY if the rate is 0 forever; NAN after a rate
 * function's error, whose message is then in err). */
double traffic_next(traffic_state *s, double now, char *err, size_t err_size);

#endif
