#include "serving_run.h"

#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

run_result serving_run(const serving_config *c, double duration_s)
{
    char err[256];
    sim_engine *e = sim_engine_create();
    serving *s = serving_create(e, c, err, sizeof err);
    cr_assert_not_null(s, "%s", err);
    serving_start(s);
    sim_engine_run_until(e, duration_s);
    run_result r;
    memset(&r, 0, sizeof r);
    r.stats = *serving_get_stats(s);
    r.ttft_p99 = sim_histogram_quantile(&r.stats.ttft_hist_s, 0.99);
    r.tpot_p99 = sim_histogram_quantile(&r.stats.tpot_hist_s, 0.99);
    r.e2e_p99 = sim_histogram_quantile(&r.stats.e2e_hist_s, 0.99);
    r.transfer_p99 = sim_histogram_quantile(&r.stats.transfer_hist_s, 0.99);
    r.utilization = serving_utilization(s, duration_s);
    r.batch_mean = serving_batch_mean(s, duration_s);
    r.batch_max = serving_batch_max(s);
    r.kv_mean = serving_kv_utilization(s, duration_s);
    r.kv_max = serving_kv_max(s);
    r.events = sim_engine_events_run(e);
    r.preemptions = serving_preemptions(s);
    for (unsigned g = 0; g < serving_groups(s) && g < SERVING_GROUPS_MAX; g++)
        r.groups[g] = serving_group_get_stats(s, g, duration_s);
    r.sessions = serving_sessions_stats(s);
    memset(&r.stats.ttft_hist_s, 0, sizeof r.stats.ttft_hist_s); /* freed with s */
    memset(&r.stats.tpot_hist_s, 0, sizeof r.stats.tpot_hist_s);
    memset(&r.stats.e2e_hist_s, 0, sizeof r.stats.e2e_hist_s);
    memset(&r.stats.transfer_hist_s, 0, sizeof r.stats.transfer_hist_s);
    memset(&r.stats.lora.wait_hist_s, 0, sizeof r.stats.lora.wait_hist_s);
    serving_free(s);
    sim_engine_free(e);
    return r;
}

void expect_the_same_runs(serving_config c, double duration_s, const char *what,
                          uint64_t preempted)
{
    for (unsigned seed = 1; seed <= 3; seed++) {
        c.seed = seed;
        c.replica.reference = false;
        run_result fast = serving_run(&c, duration_s);
        c.replica.reference = true;
        run_result ref = serving_run(&c, duration_s);
        cr_assert_gt(ref.stats.completed, 500, "%s", what);
        cr_assert_geq(ref.preemptions, preempted, "%s, seed %u: %g preemptions", what, seed,
                      (double)ref.preemptions);
        cr_expect_eq(fast.stats.completed, ref.stats.completed, "%s, seed %u: %g / %g", what,
                     seed, (double)fast.stats.completed, (double)ref.stats.completed);
        cr_expect_eq(fast.preemptions, ref.preemptions, "%s, seed %u: %g / %g", what, seed,
                     (double)fast.preemptions, (double)ref.preemptions);
        cr_expect_leq(fabs(fast.stats.tpot_s.mean / ref.stats.tpot_s.mean - 1), 1e-9,
                      "%s, seed %u: TPOT %.12g / %.12g", what, seed, fast.stats.tpot_s.mean,
                      ref.stats.tpot_s.mean);
        cr_expect_leq(fabs(fast.stats.ttft_s.mean / ref.stats.ttft_s.mean - 1), 1e-9,
                      "%s, seed %u: TTFT %.12g / %.12g", what, seed, fast.stats.ttft_s.mean,
                      ref.stats.ttft_s.mean);
        cr_expect_leq(fabs(fast.ttft_p99 / ref.ttft_p99 - 1), 1e-9,
                      "%s, seed %u: TTFT p99 %.12g / %.12g", what, seed, fast.ttft_p99,
                      ref.ttft_p99);
        cr_expect_leq(fabs(fast.stats.e2e_s.mean / ref.stats.e2e_s.mean - 1), 1e-9,
                      "%s, seed %u: e2e %.12g / %.12g", what, seed, fast.stats.e2e_s.mean,
                      ref.stats.e2e_s.mean);
    }
}
