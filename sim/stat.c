#include "sim/stat.h"

#include <math.h>

#include <gsl/gsl_cdf.h>

#include "sim/rng.h"

void sim_stat_reset(sim_stat *s)
{
    *s = (sim_stat){ 0, 0, 0, INFINITY, -INFINITY };
}

void sim_stat_merge(sim_stat *into, const sim_stat *from)
{
    if (from->n == 0)
        return;
    if (into->n == 0) {
        *into = *from;
        return;
    }
    double na = (double)into->n, nb = (double)from->n, n = na + nb;
    double delta = from->mean - into->mean;
    into->mean += delta * nb / n;
    into->m2 += from->m2 + delta * delta * na * nb / n;
    into->n += from->n;
    if (from->min < into->min)
        into->min = from->min;
    if (from->max > into->max)
        into->max = from->max;
}

double sim_stat_mean(const sim_stat *s) { return s->n ? s->mean : NAN; }
double sim_stat_variance(const sim_stat *s) { return s->n > 1 ? s->m2 / (double)(s->n - 1) : NAN; }
double sim_stat_sd(const sim_stat *s) { return sqrt(sim_stat_variance(s)); }

sim_ci sim_ci_student(const sim_stat *s, double level)
{
    sim_ci ci = { sim_stat_mean(s), NAN, NAN, NAN, s->n };
    if (s->n < 2 || !(level > 0 && level < 1))
        return ci;
    sim_gsl_quiet();
    double t = gsl_cdf_tdist_Pinv((1 + level) / 2, (double)(s->n - 1));
    ci.half_width = t * sim_stat_sd(s) / sqrt((double)s->n);
    ci.low = ci.mean - ci.half_width;
    ci.high = ci.mean + ci.half_width;
    return ci;
}
