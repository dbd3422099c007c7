#include "sim/timeavg.h"

void sim_timeavg_init(sim_timeavg *a, double t_s, double value)
{
    *a = (sim_timeavg){ t_s, t_s, value, 0, value };
}

void sim_timeavg_restart(sim_timeavg *a, double t_s)
{
    sim_timeavg_init(a, t_s, a->value);
}

double sim_timeavg_mean(const sim_timeavg *a, double end_s)
{
    double span = end_s - a->start_s;
    if (!(span > 0))
        return a->value;
    return (a->area + a->value * (end_s - a->last_s)) / span;
}
