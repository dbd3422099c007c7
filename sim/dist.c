/* Distributions: parameters, checks, draws, and analytic moments (see dist.h). */
#include "sim/dist.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_cdf.h>

#include "sim/rng.h"

struct sim_empirical {
    size_t n;
    double *values;           /* sorted ascending */
    double *cumulative;       /* cumulative weight fraction up to values[i]; discrete only */
    gsl_ran_discrete_t *alias; /* discrete only */
    bool interpolate;
};

sim_dist sim_dist_constant(double value) { return (sim_dist){ SIM_DIST_CONSTANT, value, 0, NULL }; }
sim_dist sim_dist_exponential(double mean) { return (sim_dist){ SIM_DIST_EXPONENTIAL, mean, 0, NULL }; }
sim_dist sim_dist_uniform(double low, double high) { return (sim_dist){ SIM_DIST_UNIFORM, low, high, NULL }; }
sim_dist sim_dist_normal(double mean, double sd) { return (sim_dist){ SIM_DIST_NORMAL, mean, sd, NULL }; }
sim_dist sim_dist_gamma(double shape, double scale) { return (sim_dist){ SIM_DIST_GAMMA, shape, scale, NULL }; }
sim_dist sim_dist_weibull(double scale, double shape) { return (sim_dist){ SIM_DIST_WEIBULL, scale, shape, NULL }; }
sim_dist sim_dist_pareto(double shape, double minimum) { return (sim_dist){ SIM_DIST_PARETO, shape, minimum, NULL }; }

sim_dist sim_dist_lognormal(double median, double sigma)
{
    return (sim_dist){ SIM_DIST_LOGNORMAL, median > 0 ? log(median) : NAN, sigma, NULL };
}

sim_dist sim_dist_lognormal_p99(double median, double p99)
{
    static const double z99 = 2.3263478740408408; /* standard normal 0.99 quantile */
    return sim_dist_lognormal(median, median > 0 && p99 > 0 ? log(p99 / median) / z99 : NAN);
}

const char *sim_dist_name(sim_dist_kind kind)
{
    static const char *const names[] = {
        "constant", "exponential", "uniform", "normal", "lognormal",
        "gamma", "weibull", "pareto", "empirical",
    };
    return (unsigned)kind < sizeof names / sizeof names[0] ? names[kind] : "unknown";
}

/* ---- empirical ---------------------------------------------------------------- */

typedef struct weighted_value {
    double value, weight;
} weighted_value;

static int by_value(const void *a, const void *b)
{
    double x = ((const weighted_value *)a)->value, y = ((const weighted_value *)b)->value;
    return (x > y) - (x < y);
}

/* Writes a message for the user into err (if given) and returns -1. */
__attribute__((format(printf, 3, 4)))
static int fail(char *err, size_t err_size, const char *format, ...)
{
    if (err && err_size) {
        va_list args;
        va_start(args, format);
        vsnprintf(err, err_size, format, args);
        va_end(args);
    }
    return -1;
}

int sim_dist_empirical(sim_dist *out, const double *values, const double *weights, size_t n,
                       bool interpolate, char *err, size_t err_size)
{
    *out = (sim_dist){ SIM_DIST_EMPIRICAL, 0, 0, NULL };
    if (n == 0)
        return fail(err, err_size, "empirical distribution needs at least one value");
    if (interpolate && weights)
        return fail(err, err_size, "an interpolated empirical distribution takes no weights");
    double total = 0;
    for (size_t i = 0; i < n; i++) {
        if (!isfinite(values[i]))
            return fail(err, err_size, "empirical value must be a finite number, got %g", values[i]);
        if (weights && !(weights[i] >= 0 && isfinite(weights[i])))
            return fail(err, err_size, "empirical weight must be >= 0, got %g", weights[i]);
        total += weights ? weights[i] : 1;
    }
    if (!(total > 0))
        return fail(err, err_size, "empirical weights must not all be 0");

    weighted_value *pairs = malloc(n * sizeof *pairs);
    sim_empirical *emp = calloc(1, sizeof *emp);
    if (emp) {
        emp->values = malloc(n * sizeof *emp->values);
        emp->cumulative = interpolate ? NULL : malloc(n * sizeof *emp->cumulative);
    }
    if (!pairs || !emp || !emp->values || (!interpolate && !emp->cumulative))
        goto out_of_memory;
    for (size_t i = 0; i < n; i++)
        pairs[i] = (weighted_value){ values[i], weights ? weights[i] : 1 };
    qsort(pairs, n, sizeof *pairs, by_value);
    emp->n = n;
    emp->interpolate = interpolate;
    double running = 0;
    for (size_t i = 0; i < n; i++) {
        emp->values[i] = pairs[i].value;
        if (!interpolate) {
            running += pairs[i].weight;
            emp->cumulative[i] = running / total;
            pairs[i].value = pairs[i].weight; /* the alias table takes the weights alone */
        }
    }
    if (!interpolate) {
        double *w = malloc(n * sizeof *w);
        if (!w)
            goto out_of_memory;
        for (size_t i = 0; i < n; i++)
            w[i] = pairs[i].value;
        sim_gsl_quiet();
        emp->alias = gsl_ran_discrete_preproc(n, w);
        free(w);
        if (!emp->alias)
            goto out_of_memory;
    }
    free(pairs);
    out->empirical = emp;
    return 0;

out_of_memory:
    free(pairs);
    if (emp) {
        free(emp->values);
        free(emp->cumulative);
        free(emp);
    }
    return fail(err, err_size, "out of memory for an empirical distribution of %zu values", n);
}

void sim_dist_release(sim_dist *dist)
{
    if (!dist || !dist->empirical)
        return;
    if (dist->empirical->alias)
        gsl_ran_discrete_free(dist->empirical->alias);
    free(dist->empirical->values);
    free(dist->empirical->cumulative);
    free(dist->empirical);
    dist->empirical = NULL;
}

/* Linear interpolation in the sorted values at fractional position u * (n - 1). */
static double interpolate_at(const sim_empirical *emp, double u)
{
    if (emp->n == 1)
        return emp->values[0];
    double pos = u * (double)(emp->n - 1);
    size_t i = (size_t)pos;
    if (i >= emp->n - 1)
        return emp->values[emp->n - 1];
    double frac = pos - (double)i;
    return emp->values[i] + frac * (emp->values[i + 1] - emp->values[i]);
}

/* ---- checks -------------------------------------------------------------------- */

#define REQUIRE(cond, ...) \
    do { if (!(cond)) return fail(err, err_size, __VA_ARGS__); } while (0)

/* A tail so heavy that a draw overflows a double (a Weibull of shape 0.001 draws
 * infinity one time in eight, a Pareto of shape 1e-300 nearly always) would put infinite
 * times into the run, and results of inf: its largest draw, the quantile at 1 - 2^-53
 * (the least chance of a draw from a 53-bit uniform), must be finite. */
static int check_largest_draw(const sim_dist *d, const char *name, char *err, size_t err_size)
{
    double largest = sim_dist_quantile(d, 1 - 0x1p-53);
    REQUIRE(isfinite(largest), "%s with these parameters draws values past the largest "
            "number (its quantile at 1 - 2^-53 overflows): its tail is too heavy", name);
    return 0;
}

int sim_dist_check(const sim_dist *d, char *err, size_t err_size)
{
    switch (d->kind) {
    case SIM_DIST_CONSTANT:
        REQUIRE(isfinite(d->a), "constant value must be a finite number, got %g", d->a);
        return 0;
    case SIM_DIST_EXPONENTIAL:
        REQUIRE(d->a > 0 && isfinite(d->a), "exponential mean must be > 0, got %g", d->a);
        return 0;
    case SIM_DIST_UNIFORM:
        REQUIRE(isfinite(d->a), "uniform low must be a finite number, got %g", d->a);
        REQUIRE(d->b > d->a && isfinite(d->b), "uniform high must be > low, got %g", d->b);
        return 0;
    case SIM_DIST_NORMAL:
        REQUIRE(isfinite(d->a), "normal mean must be a finite number, got %g", d->a);
        REQUIRE(d->b > 0 && isfinite(d->b), "normal sd must be > 0, got %g", d->b);
        return 0;
    case SIM_DIST_LOGNORMAL:
        REQUIRE(isfinite(d->a), "lognormal median must be > 0, got %g", exp(d->a));
        REQUIRE(d->b > 0 && isfinite(d->b),
                "lognormal sigma must be > 0 (a p99 must exceed the median), got %g", d->b);
        return 0;
    case SIM_DIST_GAMMA:
        REQUIRE(d->a > 0 && isfinite(d->a), "gamma shape must be > 0, got %g", d->a);
        REQUIRE(d->b > 0 && isfinite(d->b), "gamma scale must be > 0, got %g", d->b);
        return 0;
    case SIM_DIST_WEIBULL:
        REQUIRE(d->a > 0 && isfinite(d->a), "weibull scale must be > 0, got %g", d->a);
        REQUIRE(d->b > 0 && isfinite(d->b), "weibull shape must be > 0, got %g", d->b);
        return check_largest_draw(d, "weibull", err, err_size);
    case SIM_DIST_PARETO:
        REQUIRE(d->a > 0 && isfinite(d->a), "pareto shape must be > 0, got %g", d->a);
        REQUIRE(d->b > 0 && isfinite(d->b), "pareto minimum must be > 0, got %g", d->b);
        return check_largest_draw(d, "pareto", err, err_size);
    case SIM_DIST_EMPIRICAL:
        REQUIRE(d->empirical != NULL, "empirical distribution has no values");
        return 0;
    }
    return fail(err, err_size, "unknown distribution kind %d", (int)d->kind);
}

/* ---- draws and moments ------------------------------------------------------------ */

double sim_dist_sample(const sim_dist *d, gsl_rng *rng)
{
    switch (d->kind) {
    case SIM_DIST_CONSTANT: return d->a;
    case SIM_DIST_EXPONENTIAL: return gsl_ran_exponential(rng, d->a);
    case SIM_DIST_UNIFORM: return gsl_ran_flat(rng, d->a, d->b);
    case SIM_DIST_NORMAL: return d->a + gsl_ran_gaussian_ziggurat(rng, d->b);
    case SIM_DIST_LOGNORMAL: return gsl_ran_lognormal(rng, d->a, d->b);
    case SIM_DIST_GAMMA: return gsl_ran_gamma(rng, d->a, d->b);
    case SIM_DIST_WEIBULL: return gsl_ran_weibull(rng, d->a, d->b);
    case SIM_DIST_PARETO: return gsl_ran_pareto(rng, d->a, d->b);
    case SIM_DIST_EMPIRICAL:
        if (d->empirical->interpolate)
            return interpolate_at(d->empirical, gsl_rng_uniform(rng));
        return d->empirical->values[gsl_ran_discrete(rng, d->empirical->alias)];
    }
    return NAN;
}

/* Mean and second moment of the empirical distribution as sampled. */
static void empirical_moments(const sim_empirical *emp, double *mean, double *second)
{
    double m = 0, s = 0;
    if (emp->interpolate && emp->n > 1) {
        /* n - 1 equally likely segments, each uniform between neighbouring values */
        for (size_t i = 0; i + 1 < emp->n; i++) {
            double a = emp->values[i], b = emp->values[i + 1];
            m += (a + b) / 2;
            s += (a * a + a * b + b * b) / 3;
        }
        m /= (double)(emp->n - 1);
        s /= (double)(emp->n - 1);
    } else if (emp->interpolate) {
        m = emp->values[0];
        s = m * m;
    } else {
        double previous = 0;
        for (size_t i = 0; i < emp->n; i++) {
            double p = emp->cumulative[i] - previous, v = emp->values[i];
            previous = emp->cumulative[i];
            m += p * v;
            s += p * v * v;
        }
    }
    *mean = m;
    *second = s;
}

double sim_dist_mean(const sim_dist *d)
{
    switch (d->kind) {
    case SIM_DIST_CONSTANT: return d->a;
    case SIM_DIST_EXPONENTIAL: return d->a;
    case SIM_DIST_UNIFORM: return (d->a + d->b) / 2;
    case SIM_DIST_NORMAL: return d->a;
    case SIM_DIST_LOGNORMAL: return exp(d->a + d->b * d->b / 2);
    case SIM_DIST_GAMMA: return d->a * d->b;
    case SIM_DIST_WEIBULL: return d->a * tgamma(1 + 1 / d->b);
    case SIM_DIST_PARETO: return d->a > 1 ? d->a * d->b / (d->a - 1) : INFINITY;
    case SIM_DIST_EMPIRICAL: {
        double m, s;
        empirical_moments(d->empirical, &m, &s);
        return m;
    }
    }
    return NAN;
}

double sim_dist_variance(const sim_dist *d)
{
    switch (d->kind) {
    case SIM_DIST_CONSTANT: return 0;
    case SIM_DIST_EXPONENTIAL: return d->a * d->a;
    case SIM_DIST_UNIFORM: return (d->b - d->a) * (d->b - d->a) / 12;
    case SIM_DIST_NORMAL: return d->b * d->b;
    case SIM_DIST_LOGNORMAL: return expm1(d->b * d->b) * exp(2 * d->a + d->b * d->b);
    case SIM_DIST_GAMMA: return d->a * d->b * d->b;
    case SIM_DIST_WEIBULL: {
        double g1 = tgamma(1 + 1 / d->b), g2 = tgamma(1 + 2 / d->b);
        return d->a * d->a * (g2 - g1 * g1);
    }
    case SIM_DIST_PARETO:
        if (d->a <= 2)
            return INFINITY;
        return d->b * d->b * d->a / ((d->a - 1) * (d->a - 1) * (d->a - 2));
    case SIM_DIST_EMPIRICAL: {
        double m, s;
        empirical_moments(d->empirical, &m, &s);
        return s - m * m > 0 ? s - m * m : 0;
    }
    }
    return NAN;
}

double sim_dist_max(const sim_dist *d)
{
    switch (d->kind) {
    case SIM_DIST_CONSTANT: return d->a;
    case SIM_DIST_UNIFORM: return d->b;
    case SIM_DIST_EMPIRICAL: return d->empirical->values[d->empirical->n - 1];
    default: return INFINITY; /* exponential, normal, lognormal, gamma, Weibull, Pareto */
    }
}

double sim_dist_quantile(const sim_dist *d, double p)
{
    if (!(p > 0 && p < 1))
        return NAN;
    switch (d->kind) {
    case SIM_DIST_CONSTANT: return d->a;
    case SIM_DIST_EXPONENTIAL: return gsl_cdf_exponential_Pinv(p, d->a);
    case SIM_DIST_UNIFORM: return gsl_cdf_flat_Pinv(p, d->a, d->b);
    case SIM_DIST_NORMAL: return d->a + gsl_cdf_gaussian_Pinv(p, d->b);
    case SIM_DIST_LOGNORMAL: return gsl_cdf_lognormal_Pinv(p, d->a, d->b);
    case SIM_DIST_GAMMA: return gsl_cdf_gamma_Pinv(p, d->a, d->b);
    case SIM_DIST_WEIBULL: return gsl_cdf_weibull_Pinv(p, d->a, d->b);
    case SIM_DIST_PARETO: return gsl_cdf_pareto_Pinv(p, d->a, d->b);
    case SIM_DIST_EMPIRICAL: {
        const sim_empirical *emp = d->empirical;
        if (emp->interpolate)
            return interpolate_at(emp, p);
        size_t lo = 0, hi = emp->n - 1; /* first value whose cumulative weight >= p */
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (emp->cumulative[mid] >= p)
                hi = mid;
            else
                lo = mid + 1;
        }
        return emp->values[lo];
    }
    }
    return NAN;
}
