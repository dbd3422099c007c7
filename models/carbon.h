/* Carbon of a pool: operational, its facility energy times its grid's intensity hour by
 * hour, and embodied, its hardware's manufacturing emissions spread over its life by the
 * GPU-hours held.  Defaults and their sources: lua/pool_load.c (fs.power). */
#ifndef FLEETSIM_MODELS_CARBON_H
#define FLEETSIM_MODELS_CARBON_H

#include <stddef.h>

typedef struct carbon_spec {
    double grid_g_per_kwh; /* the intensity when there is no hourly profile */
    double *hourly;        /* owned: g/kWh of each hour from t = 0, repeating; NULL: none */
    double *prefix;        /* owned: prefix[i] = the sum of hourly[0 .. i-1], n + 1 */
    size_t nhourly;
    double embodied_kg;    /* per GPU, its share of the server's included */
    double life_years;     /* over which it is spread */
} carbon_spec;

/* Takes an hourly profile of n > 0 values (owned from now on).  0, or -1 out of memory
 * (values then freed). */
int carbon_spec_set_hourly(carbon_spec *c, double *values, size_t n);

/* Frees the profile; NULL is fine. */
void carbon_spec_release(carbon_spec *c);

/* The grid's mean intensity over [t0_s, t1_s) (g/kWh): the hourly profile's average
 * over the span, each hour weighted by its overlap (the constant without a profile;
 * the intensity at t0_s for an empty span). */
double carbon_grid_mean(const carbon_spec *c, double t0_s, double t1_s);

/* The start in [earliest_s, latest_s] whose span of duration_s has the least mean grid
 * intensity: earliest_s, latest_s and every whole hour between them tried, the earliest
 * of equals kept (earliest_s under a constant grid). */
double carbon_lowest_start(const carbon_spec *c, double earliest_s, double latest_s,
                           double duration_s);

/* Embodied kg of `gpu_seconds` of GPUs held. */
double carbon_embodied_kg(const carbon_spec *c, double gpu_seconds);

#endif
