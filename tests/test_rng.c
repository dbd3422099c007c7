/* Random streams: the generator is xoshiro256**, keys are stable, streams independent. */
#include <criterion/criterion.h>
#include <gsl/gsl_cdf.h>
#include <math.h>
#include <string.h>

#include "sim/rng.h"

Test(rng, generator_is_xoshiro256starstar)
{
    /* From the state {1, 2, 3, 4} the algorithm's first output is
     * rotl(2 * 5, 7) * 9 = 1280 * 9 = 11520; the state then becomes
     * {7, 0, 262146, rotl(6, 45)} and the second output is rotl(0, 7) * 9 = 0. */
    gsl_rng *r = gsl_rng_alloc(sim_rng_xoshiro256ss);
    uint64_t state[4] = { 1, 2, 3, 4 };
    cr_assert_eq(gsl_rng_size(r), sizeof state);
    memcpy(gsl_rng_state(r), state, sizeof state);
    cr_expect_eq(gsl_rng_get(r), 11520ul);
    cr_expect_eq(gsl_rng_get(r), 0ul);
    /* then s[1] = 262149, so the third is rotl(262149 * 5, 7) * 9 */
    cr_expect_eq(gsl_rng_get(r), 1509978240ul);
    gsl_rng_free(r);
}

Test(rng, keys_are_stable_across_versions)
{
    /* A golden value: if this changes, every result of every scenario changes. */
    cr_expect_eq(sim_rng_key(1, 0, "arrivals"), sim_rng_key(1, 0, "arrivals"));
    uint64_t k = sim_rng_key(42, 3, "workload.chat.arrivals");
    cr_expect_eq(k, 0xca5f5c0438afe6e5ull, "key is %#llx", (unsigned long long)k);
}

Test(rng, same_key_same_numbers_bit_for_bit)
{
    gsl_rng *a = sim_rng_stream(7, 2, "pool.cloud.failures");
    gsl_rng *b = sim_rng_stream(7, 2, "pool.cloud.failures");
    for (int i = 0; i < 1000; i++) {
        double x = gsl_rng_uniform(a), y = gsl_rng_uniform(b);
        cr_assert(memcmp(&x, &y, sizeof x) == 0, "draw %d differs", i);
    }
    gsl_rng_free(a);
    gsl_rng_free(b);
}

static int count_equal_draws(gsl_rng *a, gsl_rng *b, int n)
{
    int same = 0;
    for (int i = 0; i < n; i++)
        same += gsl_rng_get(a) == gsl_rng_get(b);
    return same;
}

Test(rng, seed_replication_and_name_each_change_the_stream)
{
    gsl_rng *base = sim_rng_stream(1, 0, "x");
    gsl_rng *other_seed = sim_rng_stream(2, 0, "x");
    gsl_rng *other_rep = sim_rng_stream(1, 1, "x");
    gsl_rng *other_name = sim_rng_stream(1, 0, "y");
    cr_expect_eq(count_equal_draws(base, other_seed, 1000), 0);
    cr_expect_eq(count_equal_draws(base, other_rep, 1000), 0);
    cr_expect_eq(count_equal_draws(base, other_name, 1000), 0);
    gsl_rng_free(base);
    gsl_rng_free(other_seed);
    gsl_rng_free(other_rep);
    gsl_rng_free(other_name);
}

Test(rng, adding_a_source_does_not_shift_another)
{
    gsl_rng *alone = sim_rng_stream(5, 0, "arrivals");
    double first_alone = gsl_rng_uniform(alone);
    gsl_rng *extra = sim_rng_stream(5, 0, "sizes");
    for (int i = 0; i < 100; i++)
        gsl_rng_uniform(extra);
    gsl_rng *again = sim_rng_stream(5, 0, "arrivals");
    double first_again = gsl_rng_uniform(again);
    cr_expect_float_eq(first_again, first_alone, 0);
    gsl_rng_free(alone);
    gsl_rng_free(extra);
    gsl_rng_free(again);
}

/* Pearson chi-square of 10^6 uniforms in 100 cells; and lag-1 correlation between two
 * streams with adjacent replication numbers. */
Test(rng, uniform_draws_pass_chi_square_and_streams_are_uncorrelated)
{
    enum { CELLS = 100, N = 1000000 };
    static long cells[CELLS];
    gsl_rng *r = sim_rng_stream(1, 0, "chi-square");
    gsl_rng *s = sim_rng_stream(1, 1, "chi-square");
    double sxy = 0, sx = 0, sy = 0, sxx = 0, syy = 0;
    for (int i = 0; i < N; i++) {
        double x = gsl_rng_uniform(r), y = gsl_rng_uniform(s);
        cr_assert(x >= 0 && x < 1);
        cells[(int)(x * CELLS)]++;
        sx += x; sy += y; sxy += x * y; sxx += x * x; syy += y * y;
    }
    double expected = (double)N / CELLS, chi2 = 0;
    for (int c = 0; c < CELLS; c++)
        chi2 += (cells[c] - expected) * (cells[c] - expected) / expected;
    /* 99.9% point of chi-square with 99 degrees of freedom */
    cr_expect_lt(chi2, gsl_cdf_chisq_Pinv(0.999, CELLS - 1), "chi2 = %g", chi2);
    double corr = (sxy - sx * sy / N) / sqrt((sxx - sx * sx / N) * (syy - sy * sy / N));
    cr_expect_lt(fabs(corr), 4 / sqrt(N), "correlation %g", corr); /* 4 standard errors */
    gsl_rng_free(r);
    gsl_rng_free(s);
}

Test(rng, gsl_builtin_types_remain_available_and_deterministic)
{
    gsl_rng *a = sim_rng_stream_typed(gsl_rng_mt19937, 1, 0, "x");
    gsl_rng *b = sim_rng_stream_typed(gsl_rng_mt19937, 1, 0, "x");
    gsl_rng *c = sim_rng_stream_typed(gsl_rng_mt19937, 1, 1, "x");
    cr_expect_str_eq(gsl_rng_name(a), "mt19937");
    cr_expect_eq(count_equal_draws(a, b, 100), 100);
    cr_expect_eq(count_equal_draws(a, c, 100), 0);
    gsl_rng_free(a);
    gsl_rng_free(b);
    gsl_rng_free(c);
}
