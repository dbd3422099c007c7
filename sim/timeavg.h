/* Time-weighted average of a piecewise-constant quantity (busy servers, queue length,
 * GPUs held): the integral of the value over time divided by the time elapsed. */
#ifndef FLEETSIM_SIM_TIMEAVG_H
#define FLEETSIM_SIM_TIMEAVG_H

typedef struct sim_timeavg {
    double start_s;  /* start of the observed period */
    double last_s;   /* time of the last change */
    double value;    /* value since last_s */
    double area;     /* integral of the value from start_s to last_s */
    double max;      /* largest value held during the period */
} sim_timeavg;

/* Starts observing at time t_s with the value `value`. */
void sim_timeavg_init(sim_timeavg *a, double t_s, double value);

/* The value changes to `value` at time t_s (t_s >= the last change). */
static inline void sim_timeavg_set(sim_timeavg *a, double t_s, double value)
{
    a->area += a->value * (t_s - a->last_s);
    a->last_s = t_s;
    a->value = value;
    if (value > a->max)
        a->max = value;
}

/* Forgets the past (end of a warm-up): the period now starts at t_s, value kept. */
void sim_timeavg_restart(sim_timeavg *a, double t_s);

/* Integral of the value from the start to end_s (end_s >= the last change). */
static inline double sim_timeavg_integral(const sim_timeavg *a, double end_s)
{
    return a->area + a->value * (end_s - a->last_s);
}

/* Average over [start, end_s] (end_s >= the last change); the current value if the
 * period is empty. */
double sim_timeavg_mean(const sim_timeavg *a, double end_s);

#endif
