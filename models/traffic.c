/* Time-varying and bursty arrivals (see traffic.h). */
#include "models/traffic.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include <gsl/gsl_randist.h>

void traffic_spec_release(traffic_spec *t)
{
    if (!t)
        return;
    free(t->rates);
    free(t->dwell_s);
    sim_dist_release(&t->think_s);
    t->rates = t->dwell_s = NULL;
    t->n = 0;
}

double traffic_mean_rate(const traffic_spec *t)
{
    double sum = 0, weight = 0;
    if (t->kind == TRAFFIC_CLOSED_LOOP || t->kind == TRAFFIC_FUNCTION)
        return NAN;
    for (size_t i = 0; i < t->n; i++) {
        double w = t->kind == TRAFFIC_MMPP ? t->dwell_s[i] : 1;
        sum += t->rates[i] * w;
        weight += w;
    }
    return weight > 0 ? sum / weight : 0;
}

void traffic_start(traffic_state *s, const traffic_spec *spec, gsl_rng *rng, double now)
{
    s->spec = spec;
    s->rng = rng;
    s->max_rate = 0;
    for (size_t i = 0; i < spec->n; i++)
        s->max_rate = fmax(s->max_rate, spec->rates[i]);
    if (spec->kind == TRAFFIC_FUNCTION)
        s->max_rate = spec->peak;
    s->state = 0;
    s->state_until_s = spec->kind == TRAFFIC_MMPP
                           ? now + gsl_ran_exponential(rng, spec->dwell_s[0]) : INFINITY;
}

static double profile_rate(const traffic_spec *t, double time_s)
{
    size_t i = (size_t)fmod(floor(time_s / t->step_s), (double)t->n);
    return t->rates[i];
}

double traffic_next(traffic_state *s, double now, char *err, size_t err_size)
{
    const traffic_spec *t = s->spec;
    if (!(s->max_rate > 0))
        return INFINITY;
    if (t->kind == TRAFFIC_FUNCTION) { /* thinning against the declared peak */
        double time = now;
        for (;;) {
            time += gsl_ran_exponential(s->rng, 1 / s->max_rate);
            double rate = t->rate(t->rate_context, time, err, err_size);
            if (rate < 0)
                return NAN;
            if (rate > s->max_rate * (1 + 1e-12)) {
                snprintf(err, err_size, "the rate function gave %g/s at t = %g s, above its "
                         "peak of %g/s", rate, time, s->max_rate);
                return NAN;
            }
            if (gsl_rng_uniform(s->rng) * s->max_rate < rate)
                return time;
        }
    }
    if (t->kind == TRAFFIC_PROFILE) {
        /* thinning (Lewis and Shedler 1979): candidates at the peak rate, each kept with
         * probability rate(t) / peak */
        double time = now;
        for (;;) {
            time += gsl_ran_exponential(s->rng, 1 / s->max_rate);
            if (gsl_rng_uniform(s->rng) * s->max_rate < profile_rate(t, time))
                return time;
        }
    }
    /* MMPP: within a state arrivals are Poisson; memorylessness lets a candidate past the
     * state's end be redrawn from there in the next state */
    double time = now;
    for (;;) {
        double rate = t->rates[s->state];
        double candidate = rate > 0 ? time + gsl_ran_exponential(s->rng, 1 / rate) : INFINITY;
        if (candidate < s->state_until_s)
            return candidate;
        time = s->state_until_s;
        s->state = (s->state + 1) % t->n;
        s->state_until_s = time + gsl_ran_exponential(s->rng, t->dwell_s[s->state]);
    }
}

const char *traffic_kind_name(traffic_kind kind)
{
    static const char *const names[] = { "profile", "mmpp", "closed-loop", "rate function" };
    return kind <= TRAFFIC_FUNCTION ? names[kind] : "?";
}
