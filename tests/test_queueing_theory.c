/* The closed forms (Erlang C, Erlang 1917; Pollaczek-Khinchine; Kingman 1961) against
 * figures that follow from them by hand, and a call-centre example often used for
 * Erlang C (docs/accuracy.md, "Sources"). */
#include <criterion/criterion.h>
#include <math.h>

#include "sim/queueing_theory.h"

Test(queueing_theory, erlang_c_three_servers_two_erlangs_is_four_ninths)
{
    cr_expect_float_eq(queueing_erlang_c(3, 2), 4.0 / 9, 1e-12);
}

Test(queueing_theory, erlang_c_two_servers_textbook_example)
{
    /* lambda = 8/h, mu = 12/h: P(wait) = 1/6, Wq = 0.625 min */
    cr_expect_float_eq(queueing_erlang_c(2, 8.0 / 12), 1.0 / 6, 1e-12);
    double wq_s = queueing_mmc_wait_mean_s(2, 8.0 / 3600, 12.0 / 3600);
    cr_expect_float_eq(wq_s, 0.625 * 60, 1e-9);
}

Test(queueing_theory, erlang_c_call_centre_48_erlangs_55_agents)
{
    /* 360 calls per 30 min, 240 s each: P(wait) = 0.23870, mean wait 8.184 s */
    cr_expect_float_eq(queueing_erlang_c(55, 48), 0.23870, 5e-6);
    cr_expect_float_eq(queueing_mmc_wait_mean_s(55, 360.0 / 1800, 1.0 / 240), 8.184, 5e-4);
}

Test(queueing_theory, erlang_c_stays_finite_for_thousands_of_servers)
{
    double p = queueing_erlang_c(5000, 4950);
    cr_expect(p > 0 && p < 1, "P(wait) %g", p);
    cr_expect(isnan(queueing_erlang_c(4, 4)), "unstable queue");
    cr_expect(isnan(queueing_erlang_c(0, 0.5)));
}

Test(queueing_theory, pollaczek_khinchine_at_rho_0_8)
{
    /* M/D/1 gives 2 tau, M/M/1 4 tau */
    double tau = 0.5, lambda = 0.8 / tau;
    cr_expect_float_eq(queueing_mg1_wait_mean_s(lambda, tau, 0), 2 * tau, 1e-12);
    cr_expect_float_eq(queueing_mg1_wait_mean_s(lambda, tau, tau * tau), 4 * tau, 1e-12);
    cr_expect_float_eq(queueing_mmc_wait_mean_s(1, lambda, 1 / tau), 4 * tau, 1e-12);
    /* Kingman is exact for M/M/1 */
    cr_expect_float_eq(queueing_kingman_wait_mean_s(lambda, tau, 1, 1), 4 * tau, 1e-12);
}
