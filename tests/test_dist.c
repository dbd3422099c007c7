/* Distributions: draws agree with their analytic mean, variance and quantiles, and bad
 * parameters are refused with a message that names them. */
#include <criterion/criterion.h>
#include <gsl/gsl_sort.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim/dist.h"
#include "sim/rng.h"
#include "sim/stat.h"

enum { DRAWS = 400000 };

/* Draws DRAWS values and checks the sample mean against the analytic one within 5
 * standard errors, the sample variance within 5% (when finite), and the empirical
 * p10, p50 and p90 against the analytic quantiles within 2%. */
static void check_against_theory(const sim_dist *d, const char *label)
{
    char err[160];
    cr_assert_eq(sim_dist_check(d, err, sizeof err), 0, "%s: %s", label, err);
    gsl_rng *r = sim_rng_stream(11, 0, label);
    double *x = malloc(DRAWS * sizeof *x);
    sim_stat s;
    sim_stat_reset(&s);
    for (int i = 0; i < DRAWS; i++)
        sim_stat_add(&s, x[i] = sim_dist_sample(d, r));
    double mean = sim_dist_mean(d), var = sim_dist_variance(d);
    double se = sqrt(var / DRAWS);
    cr_expect_leq(fabs(s.mean - mean), 5 * se + 1e-12, "%s: mean %g, theory %g (se %g)",
                  label, s.mean, mean, se);
    if (isfinite(var) && var > 0)
        cr_expect_leq(fabs(sim_stat_variance(&s) / var - 1), 0.05,
                      "%s: variance %g, theory %g", label, sim_stat_variance(&s), var);
    gsl_sort(x, 1, DRAWS);
    const double ps[] = { 0.1, 0.5, 0.9 };
    for (int k = 0; k < 3; k++) {
        double q = sim_dist_quantile(d, ps[k]);
        double got = x[(size_t)(ps[k] * DRAWS)];
        cr_expect_leq(fabs(got - q), 0.02 * fabs(q) + 1e-9, "%s: p%g %g, theory %g",
                      label, 100 * ps[k], got, q);
    }
    free(x);
    gsl_rng_free(r);
}

Test(dist, exponential) { sim_dist d = sim_dist_exponential(2.5); check_against_theory(&d, "exponential"); }
Test(dist, uniform) { sim_dist d = sim_dist_uniform(-1, 3); check_against_theory(&d, "uniform"); }
Test(dist, normal) { sim_dist d = sim_dist_normal(10, 2); check_against_theory(&d, "normal"); }
Test(dist, lognormal) { sim_dist d = sim_dist_lognormal(0.2, 0.8); check_against_theory(&d, "lognormal"); }
Test(dist, gamma) { sim_dist d = sim_dist_gamma(2.5, 0.4); check_against_theory(&d, "gamma"); }
Test(dist, weibull) { sim_dist d = sim_dist_weibull(3, 1.5); check_against_theory(&d, "weibull"); }
Test(dist, pareto) { sim_dist d = sim_dist_pareto(5, 1); check_against_theory(&d, "pareto"); }

Test(dist, constant_is_constant)
{
    sim_dist d = sim_dist_constant(0.25);
    gsl_rng *r = sim_rng_stream(1, 0, "c");
    for (int i = 0; i < 100; i++)
        cr_assert_float_eq(sim_dist_sample(&d, r), 0.25, 0);
    cr_expect_float_eq(sim_dist_variance(&d), 0, 0);
    gsl_rng_free(r);
}

Test(dist, lognormal_by_median_and_p99_hits_both)
{
    /* the DESIGN.md example: network round trip with median 60 ms and p99 180 ms */
    sim_dist d = sim_dist_lognormal_p99(0.060, 0.180);
    cr_expect_float_eq(sim_dist_quantile(&d, 0.5), 0.060, 1e-12);
    cr_expect_float_eq(sim_dist_quantile(&d, 0.99), 0.180, 1e-9);
    cr_expect_float_eq(d.b, log(3) / 2.3263478740408408, 1e-12);
    check_against_theory(&d, "lognormal-p99");
}

Test(dist, pareto_with_small_shape_has_infinite_moments)
{
    sim_dist heavy = sim_dist_pareto(1.5, 1), heavier = sim_dist_pareto(0.9, 1);
    cr_expect(isinf(sim_dist_variance(&heavy)));
    cr_expect_float_eq(sim_dist_mean(&heavy), 3, 1e-12);
    cr_expect(isinf(sim_dist_mean(&heavier)));
}

Test(dist, empirical_discrete_draws_each_value_with_its_weight)
{
    const double values[] = { 30, 10, 20 };
    const double weights[] = { 1, 2, 7 };
    sim_dist d;
    char err[128];
    cr_assert_eq(sim_dist_empirical(&d, values, weights, 3, false, err, sizeof err), 0, "%s", err);
    cr_expect_float_eq(sim_dist_mean(&d), 0.2 * 10 + 0.7 * 20 + 0.1 * 30, 1e-12);
    cr_expect_float_eq(sim_dist_quantile(&d, 0.15), 10, 0);
    cr_expect_float_eq(sim_dist_quantile(&d, 0.5), 20, 0);
    cr_expect_float_eq(sim_dist_quantile(&d, 0.95), 30, 0);
    gsl_rng *r = sim_rng_stream(3, 0, "emp");
    int hits[3] = { 0 };
    for (int i = 0; i < 100000; i++) {
        double v = sim_dist_sample(&d, r);
        cr_assert(v == 10 || v == 20 || v == 30, "drew %g", v);
        hits[(int)v / 10 - 1]++;
    }
    /* binomial standard error at n = 1e5 is at most 0.0016 */
    cr_expect_leq(fabs(hits[0] / 1e5 - 0.2), 0.008);
    cr_expect_leq(fabs(hits[1] / 1e5 - 0.7), 0.008);
    cr_expect_leq(fabs(hits[2] / 1e5 - 0.1), 0.008);
    gsl_rng_free(r);
    sim_dist_release(&d);
    sim_dist_release(&d); /* twice is harmless */
}

Test(dist, empirical_interpolated_is_piecewise_uniform_between_samples)
{
    const double values[] = { 4, 0, 1, 2 }; /* sorted: 0 1 2 4 */
    sim_dist d;
    char err[128];
    cr_assert_eq(sim_dist_empirical(&d, values, NULL, 4, true, err, sizeof err), 0);
    /* three equally likely segments [0,1] [1,2] [2,4]: mean (0.5 + 1.5 + 3) / 3 */
    cr_expect_float_eq(sim_dist_mean(&d), 5.0 / 3, 1e-12);
    /* E[X^2] = (1/3 + 7/3 + 28/3) / 3 = 4 */
    cr_expect_float_eq(sim_dist_variance(&d), 4 - 25.0 / 9, 1e-12);
    cr_expect_float_eq(sim_dist_quantile(&d, 0.5), 1.5, 1e-12);
    check_against_theory(&d, "empirical-interpolated");
    sim_dist_release(&d);
}

/* Tails so heavy that draws overflow (a fuzzing run, 2026-12-07: a Weibull of shape 0.001
 * wrote a mean response of inf, exit 0) are refused; heavy tails whose largest draw is a
 * number are not.  By hand: a Weibull's largest draw is scale x (53 ln 2)^(1/shape) =
 * 36.74^1000 past 1.8e308 at shape 0.001 and 36.74^20 = 2e31 at 0.05; a Pareto's is
 * minimum x 2^(53/shape), infinite at shape 1e-300 and 2^530 = 3.5e159 at 0.1. */
Test(dist, tails_whose_largest_draw_overflows_are_refused)
{
    char err[200];
    sim_dist heavy[] = { sim_dist_weibull(1, 1e-3), sim_dist_pareto(1e-300, 1) };
    for (size_t i = 0; i < 2; i++) {
        cr_expect_eq(sim_dist_check(&heavy[i], err, sizeof err), -1, "case %zu accepted", i);
        cr_expect(strstr(err, "draws values past the largest number (its quantile at 1 - 2^-53 "
                              "overflows): its tail is too heavy"), "case %zu: %s", i, err);
    }
    sim_dist w = sim_dist_weibull(1, 0.05), p = sim_dist_pareto(0.1, 1);
    cr_expect_eq(sim_dist_check(&w, err, sizeof err), 0, "%s", err);
    cr_expect_leq(fabs(sim_dist_quantile(&w, 1 - 0x1p-53) / pow(53 * log(2), 20) - 1), 1e-9);
    cr_expect_eq(sim_dist_check(&p, err, sizeof err), 0, "%s", err);
    cr_expect_leq(fabs(sim_dist_quantile(&p, 1 - 0x1p-53) / pow(2, 530) - 1), 1e-9);
}

Test(dist, bad_parameters_are_refused_with_the_value)
{
    char err[160];
    sim_dist bad[] = {
        sim_dist_exponential(-1), sim_dist_uniform(2, 1), sim_dist_normal(0, 0),
        sim_dist_lognormal(-1, 1), sim_dist_lognormal_p99(0.1, 0.05), sim_dist_gamma(0, 1),
        sim_dist_weibull(1, -2), sim_dist_pareto(2, 0), sim_dist_constant(NAN),
    };
    const char *expected[] = {
        "exponential mean must be > 0, got -1", "uniform high must be > low, got 1",
        "normal sd must be > 0, got 0", "lognormal median must be > 0",
        "lognormal sigma must be > 0 (a p99 must exceed the median)",
        "gamma shape must be > 0, got 0", "weibull shape must be > 0, got -2",
        "pareto minimum must be > 0, got 0", "constant value must be a finite number",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        err[0] = 0;
        cr_expect_eq(sim_dist_check(&bad[i], err, sizeof err), -1, "case %zu accepted", i);
        cr_expect(strstr(err, expected[i]) != NULL, "case %zu: message '%s'", i, err);
    }
    sim_dist d;
    cr_expect_eq(sim_dist_empirical(&d, NULL, NULL, 0, false, err, sizeof err), -1);
    cr_expect_str_eq(err, "empirical distribution needs at least one value");
    const double v[] = { 1, 2 }, w[] = { 0, 0 };
    cr_expect_eq(sim_dist_empirical(&d, v, w, 2, false, err, sizeof err), -1);
    cr_expect_str_eq(err, "empirical weights must not all be 0");
}
