/* Streaming moments (count, mean, variance, min, max) and confidence intervals.
 *
 * sim_stat is Welford's update, O(1) memory, and merges exactly (Chan, Golub and LeVeque's
 * pairwise formula), so per-replica or per-process accumulators combine into one.
 */
#ifndef FLEETSIM_SIM_STAT_H
#define FLEETSIM_SIM_STAT_H

#include <stdint.h>

typedef struct sim_stat {
    uint64_t n;
    double mean;
    double m2;  /* sum of squared deviations from the mean */
    double min, max;
} sim_stat;

/* An empty accumulator (also what zero-initialising and then sim_stat_reset gives). */
void sim_stat_reset(sim_stat *s);

static inline void sim_stat_add(sim_stat *s, double x)
{
    s->n++;
    double delta = x - s->mean;
    s->mean += delta / (double)s->n;
    s->m2 += delta * (x - s->mean);
    if (x < s->min)
        s->min = x;
    if (x > s->max)
        s->max = x;
}

/* into += from, as if every value added to `from` had been added to `into`. */
void sim_stat_merge(sim_stat *into, const sim_stat *from);

/* Sample variance (n - 1 denominator) and standard deviation; NaN when n < 2.  The mean
 * is s->mean (NaN when n == 0 through sim_stat_mean). */
double sim_stat_mean(const sim_stat *s);
double sim_stat_variance(const sim_stat *s);
double sim_stat_sd(const sim_stat *s);

/* A two-sided confidence interval for a mean. */
typedef struct sim_ci {
    double mean;
    double low, high;
    double half_width;
    uint64_t n;
} sim_ci;

/* Student-t interval at `level` (e.g. 0.95) for the mean of the values in s, taken as
 * independent observations (one per replication).  With n < 2 the bounds are NaN. */
sim_ci sim_ci_student(const sim_stat *s, double level);

#endif
