/* Statistics: moments, merging, confidence intervals, histogram quantiles, time averages. */
#include <criterion/criterion.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>

#include "sim/histogram.h"
#include "sim/rng.h"
#include "sim/stat.h"
#include "sim/timeavg.h"
#include "support/fatal_check.h"

Test(stat, welford_matches_two_pass_on_data_with_a_large_offset)
{
    enum { N = 10000 };
    static double x[N];
    gsl_rng *r = sim_rng_stream(1, 0, "welford");
    sim_stat s;
    sim_stat_reset(&s);
    for (int i = 0; i < N; i++)
        sim_stat_add(&s, x[i] = 1e9 + gsl_ran_gaussian(r, 3)); /* naive sums lose digits here */
    cr_expect_eq(s.n, N);
    /* relative 1e-14 on the mean and 1e-6 on the variance, where a sum-of-squares
     * formula keeps no correct digit at this offset */
    cr_expect_float_eq(s.mean, gsl_stats_mean(x, 1, N), 1e-5, "mean %.17g vs %.17g", s.mean,
                       gsl_stats_mean(x, 1, N));
    cr_expect_float_eq(sim_stat_variance(&s), gsl_stats_variance(x, 1, N), 9e-6,
                       "variance %.17g vs %.17g", sim_stat_variance(&s),
                       gsl_stats_variance(x, 1, N));
    cr_expect_float_eq(s.min, gsl_stats_min(x, 1, N), 0);
    cr_expect_float_eq(s.max, gsl_stats_max(x, 1, N), 0);
    gsl_rng_free(r);
}

Test(stat, merge_equals_one_stream)
{
    sim_stat all, left, right, empty;
    sim_stat_reset(&all);
    sim_stat_reset(&left);
    sim_stat_reset(&right);
    sim_stat_reset(&empty);
    for (int i = 0; i < 1000; i++) {
        double v = sin(i) * 10 + i * 0.01;
        sim_stat_add(&all, v);
        sim_stat_add(i < 300 ? &left : &right, v);
    }
    sim_stat_merge(&left, &right);
    sim_stat_merge(&left, &empty);
    cr_expect_eq(left.n, all.n);
    cr_expect_float_eq(left.mean, all.mean, 1e-12);
    cr_expect_float_eq(sim_stat_variance(&left), sim_stat_variance(&all), 1e-10);
    cr_expect_float_eq(left.min, all.min, 0);
    cr_expect_float_eq(left.max, all.max, 0);
    sim_stat_merge(&empty, &all);
    cr_expect_float_eq(empty.mean, all.mean, 0);
}

Test(stat, student_interval_uses_the_t_quantile)
{
    /* values 1..10: mean 5.5, sd sqrt(55/6); t(0.975, 9) = 2.262157 */
    sim_stat s;
    sim_stat_reset(&s);
    for (int i = 1; i <= 10; i++)
        sim_stat_add(&s, i);
    sim_ci ci = sim_ci_student(&s, 0.95);
    double half = 2.2621571627409915 * sqrt(55.0 / 6) / sqrt(10);
    cr_expect_float_eq(ci.mean, 5.5, 1e-12);
    cr_expect_float_eq(ci.half_width, half, 1e-9);
    cr_expect_float_eq(ci.low, 5.5 - half, 1e-9);
    cr_expect_float_eq(ci.high, 5.5 + half, 1e-9);
    sim_stat one;
    sim_stat_reset(&one);
    sim_stat_add(&one, 3);
    cr_expect(isnan(sim_ci_student(&one, 0.95).half_width), "one replication has no interval");
}

/* The histogram's quantiles against exact order statistics of the same values. */
static void check_quantiles(const double *values, size_t n)
{
    sim_histogram h;
    sim_histogram_init(&h);
    double *sorted = malloc(n * sizeof *sorted);
    for (size_t i = 0; i < n; i++)
        sim_histogram_add(&h, sorted[i] = values[i]);
    gsl_sort(sorted, 1, n);
    const double qs[] = { 0.001, 0.01, 0.1, 0.25, 0.5, 0.75, 0.9, 0.99, 0.999, 0.9999 };
    for (size_t k = 0; k < sizeof qs / sizeof qs[0]; k++) {
        size_t rank = (size_t)ceil(qs[k] * (double)n);
        double exact = sorted[rank - 1], got = sim_histogram_quantile(&h, qs[k]);
        cr_expect_leq(fabs(got - exact), SIM_HISTOGRAM_REL_ERROR * fabs(exact) * (1 + 1e-12),
                      "q %g: histogram %.9g, exact %.9g (rel error %.3g%%)", qs[k], got,
                      exact, 100 * fabs(got / exact - 1));
    }
    cr_expect_float_eq(sim_histogram_quantile(&h, 0), sorted[0], 0);
    cr_expect_float_eq(sim_histogram_quantile(&h, 1), sorted[n - 1], 0);
    free(sorted);
    sim_histogram_release(&h);
}

Test(histogram, quantiles_within_documented_error_on_lognormal_latencies)
{
    enum { N = 200000 };
    double *x = malloc(N * sizeof *x);
    gsl_rng *r = sim_rng_stream(2, 0, "lognormal");
    for (int i = 0; i < N; i++)
        x[i] = gsl_ran_lognormal(r, log(0.05), 1.2); /* 50 ms median, long tail */
    check_quantiles(x, N);
    free(x);
    gsl_rng_free(r);
}

Test(histogram, quantiles_within_documented_error_on_heavy_tails_and_wide_ranges)
{
    enum { N = 200000 };
    double *x = malloc(N * sizeof *x);
    gsl_rng *r = sim_rng_stream(3, 0, "pareto");
    for (int i = 0; i < N; i++)
        x[i] = gsl_ran_pareto(r, 1.1, 1e-6); /* spans many decades */
    check_quantiles(x, N);
    free(x);
    gsl_rng_free(r);
}

Test(histogram, worst_case_is_a_value_at_a_bucket_edge)
{
    /* 1.0 sits at the lower edge of its bucket [1, 1 + 1/128), alone in it: its midpoint
     * 1 + 1/256 is reported, within the bound (the error is largest for a bucket of many
     * values bunched at one edge, and still under its width, 1/128 of the value). */
    sim_histogram h;
    sim_histogram_init(&h);
    sim_histogram_add(&h, 0.5);
    sim_histogram_add(&h, 1.0);
    sim_histogram_add(&h, 4.0);
    double got = sim_histogram_quantile(&h, 0.5);
    cr_expect_float_eq(got, 1 + 1.0 / 256, 1e-15);
    cr_expect_leq(fabs(got - 1), SIM_HISTOGRAM_REL_ERROR);
    sim_histogram_release(&h);
}

/* Dense values: interpolated quantiles follow the data within a small share of a bucket,
 * and two streams that differ a little give quantiles that differ (they snapped to the
 * same bucket midpoint before, issue 18). */
Test(histogram, quantiles_interpolate_within_a_bucket)
{
    sim_histogram h;
    sim_histogram_init(&h);
    for (int i = 1; i <= 100000; i++)
        sim_histogram_add(&h, i * 1e-3); /* 1 ms .. 100 s, evenly */
    const double qs[] = { 0.5, 0.9, 0.99, 0.999 };
    for (size_t k = 0; k < sizeof qs / sizeof qs[0]; k++) {
        double exact = ceil(qs[k] * 100000) * 1e-3, got = sim_histogram_quantile(&h, qs[k]);
        cr_expect_leq(fabs(got / exact - 1), 2e-5, "q %g: %.9g for %.9g (a bucket is 0.78%%)",
                      qs[k], got, exact);
    }
    sim_histogram shifted;
    sim_histogram_init(&shifted);
    for (int i = 1; i <= 100000; i++)
        sim_histogram_add(&shifted, i * 1e-3 * 1.001);
    double a = sim_histogram_quantile(&h, 0.99), b = sim_histogram_quantile(&shifted, 0.99);
    cr_expect(fabs(b / a - 1.001) < 1e-4, "0.1%% longer values give a 0.1%% longer p99: %.9g "
              "vs %.9g", b, a);
    sim_histogram_release(&h);
    sim_histogram_release(&shifted);
}

Test(histogram, zeros_and_huge_values_are_counted_and_reported_exactly)
{
    sim_histogram h;
    sim_histogram_init(&h);
    for (int i = 0; i < 30; i++)
        sim_histogram_add(&h, 0); /* e.g. customers who did not wait */
    for (int i = 0; i < 60; i++)
        sim_histogram_add(&h, 2.0);
    for (int i = 0; i < 10; i++)
        sim_histogram_add(&h, 1e15);
    cr_expect_eq(h.n, 100);
    cr_expect_eq(h.underflow, 30);
    cr_expect_eq(h.overflow, 10);
    cr_expect_float_eq(sim_histogram_quantile(&h, 0.3), 0, 0);
    cr_expect_leq(fabs(sim_histogram_quantile(&h, 0.5) - 2), 2 * SIM_HISTOGRAM_REL_ERROR);
    cr_expect_float_eq(sim_histogram_quantile(&h, 0.95), 1e15, 0);
    cr_expect(isnan(sim_histogram_quantile(&h, 1.5)));
    sim_histogram_release(&h);
}

Test(histogram, merge_equals_one_stream)
{
    sim_histogram a, b, all;
    sim_histogram_init(&a);
    sim_histogram_init(&b);
    sim_histogram_init(&all);
    gsl_rng *r = sim_rng_stream(4, 0, "merge");
    for (int i = 0; i < 50000; i++) {
        double v = gsl_ran_exponential(r, i % 2 ? 1e-3 : 10); /* disjoint ranges */
        sim_histogram_add(i % 2 ? &a : &b, v);
        sim_histogram_add(&all, v);
    }
    sim_histogram_merge(&a, &b);
    cr_expect_eq(a.n, all.n);
    for (double q = 0.05; q < 1; q += 0.05)
        cr_expect_float_eq(sim_histogram_quantile(&a, q), sim_histogram_quantile(&all, q), 0);
    sim_histogram_release(&a);
    sim_histogram_release(&b);
    sim_histogram_release(&all);
    gsl_rng_free(r);
}

Test(histogram, memory_does_not_grow_with_the_number_of_values)
{
    sim_histogram h;
    sim_histogram_init(&h);
    gsl_rng *r = sim_rng_stream(5, 0, "memory");
    for (int i = 0; i < 1000000; i++)
        sim_histogram_add(&h, 1e-3 + gsl_rng_uniform(r) * 10); /* 1 ms to 10 s */
    /* 128 buckets of 8 bytes per power of two spanned, plus the growth slack */
    double octaves = ceil(log2(h.max)) - floor(log2(h.min));
    size_t bound = (size_t)(octaves * 128 * 8) + 4 * 64 * 8;
    size_t bytes = sim_histogram_memory_bytes(&h);
    cr_expect_leq(bytes, bound, "%zu bytes for %g octaves", bytes, octaves);
    cr_expect_leq(bytes, 16384, "the header promises about 12 KB for 1 ms to 10 s");
    for (int i = 0; i < 3000000; i++) /* three times more values, in the range seen */
        sim_histogram_add(&h, h.min + gsl_rng_uniform(r) * (h.max - h.min));
    cr_expect_eq(sim_histogram_memory_bytes(&h), bytes);
    sim_histogram_release(&h);
    gsl_rng_free(r);
}

static void add_nan(void *context)
{
    sim_histogram h;
    sim_histogram_init(&h);
    sim_histogram_add(&h, NAN);
}

Test(histogram, nan_is_a_bug)
{
    expect_fatal(add_nan, NULL, "fleetsim: fatal: sim_histogram_add: NaN value (a model "
                 "computed an undefined quantity)\n");
}

Test(timeavg, hand_computed_average_with_restart)
{
    /* 0 on [0,2), 3 on [2,5), 1 on [5,10): area 0 + 9 + 5 = 14 over 10 s */
    sim_timeavg a;
    sim_timeavg_init(&a, 0, 0);
    sim_timeavg_set(&a, 2, 3);
    sim_timeavg_set(&a, 5, 1);
    cr_expect_float_eq(sim_timeavg_mean(&a, 10), 1.4, 1e-12);
    cr_expect_float_eq(a.max, 3, 0);
    sim_timeavg_restart(&a, 6); /* 1 on [6, 10) */
    cr_expect_float_eq(sim_timeavg_mean(&a, 10), 1, 1e-12);
    sim_timeavg_set(&a, 8, 4); /* 1 on [6,8), 4 on [8,10): 10 / 4 */
    cr_expect_float_eq(sim_timeavg_mean(&a, 10), 2.5, 1e-12);
}
