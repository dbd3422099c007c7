/* Grid intensity and embodied carbon (see carbon.h). */
#include "models/carbon.h"

#include <math.h>
#include <stdlib.h>

int carbon_spec_set_hourly(carbon_spec *c, double *values, size_t n)
{
    carbon_spec_release(c);
    double *prefix = malloc((n + 1) * sizeof *prefix);
    if (!prefix) {
        free(values);
        return -1;
    }
    prefix[0] = 0;
    for (size_t i = 0; i < n; i++)
        prefix[i + 1] = prefix[i] + values[i];
    c->hourly = values;
    c->prefix = prefix;
    c->nhourly = n;
    return 0;
}

void carbon_spec_release(carbon_spec *c)
{
    if (!c)
        return;
    free(c->hourly);
    free(c->prefix);
    c->hourly = c->prefix = NULL;
    c->nhourly = 0;
}

/* the intensity of hour h (from t = 0, any whole number) */
static double hour_g(const carbon_spec *c, double h)
{
    double n = (double)c->nhourly;
    return c->hourly[(size_t)(h - n * floor(h / n))];
}

/* The integral of the hourly profile from 0 to t (g/kWh x h): whole cycles, whole hours,
 * then the part of the last hour. */
static double profile_integral(const carbon_spec *c, double t_s)
{
    double hours = t_s / 3600, n = (double)c->nhourly;
    double cycles = floor(hours / n), rest = hours - cycles * n;
    size_t whole = (size_t)floor(rest);
    if (whole >= c->nhourly) /* rounding at a cycle's end */
        whole = c->nhourly - 1;
    return cycles * c->prefix[c->nhourly] + c->prefix[whole]
           + (rest - (double)whole) * c->hourly[whole];
}

double carbon_grid_mean(const carbon_spec *c, double t0_s, double t1_s)
{
    if (!c->hourly || c->nhourly == 0)
        return c->grid_g_per_kwh;
    if (!(t1_s > t0_s))
        return hour_g(c, floor(t0_s / 3600));
    return (profile_integral(c, t1_s) - profile_integral(c, t0_s)) / ((t1_s - t0_s) / 3600);
}

double carbon_lowest_start(const carbon_spec *c, double earliest_s, double latest_s,
                           double duration_s)
{
    if (!c->hourly || !(latest_s > earliest_s))
        return earliest_s;
    double best = earliest_s, least = carbon_grid_mean(c, earliest_s, earliest_s + duration_s);
    /* every whole hour in (earliest, latest], then latest itself */
    for (double h = floor(earliest_s / 3600) + 1;; h++) {
        double t = fmin(h * 3600, latest_s);
        double g = carbon_grid_mean(c, t, t + duration_s);
        if (g < least - 1e-12 * fabs(least)) {
            least = g;
            best = t;
        }
        if (t >= latest_s)
            break;
    }
    return best;
}

double carbon_embodied_kg(const carbon_spec *c, double gpu_seconds)
{
    if (!(c->life_years > 0))
        return 0;
    return c->embodied_kg * gpu_seconds / (c->life_years * 8760 * 3600);
}
