/* Arrival processes: thinning follows the profile, MMPP has its mean and its bursts,
 * closed-loop users obey the interactive response time law. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "lua/catalog.h"
#include "models/serving.h"
#include "models/traffic.h"
#include "sim/rng.h"

Test(traffic, thinning_follows_a_profile)
{
    /* 10/s for 100 s, then 30/s for 100 s, repeating: 5,000 periods */
    double rates[] = { 10, 30 };
    traffic_spec spec = { .kind = TRAFFIC_PROFILE, .rates = rates, .n = 2, .step_s = 100 };
    gsl_rng *rng = sim_rng_stream(1, 0, "profile");
    traffic_state s;
    traffic_start(&s, &spec, rng, 0);
    double counts[2] = { 0, 0 }, t = 0, horizon = 200 * 5000.0;
    while ((t = traffic_next(&s, t, NULL, 0)) < horizon)
        counts[(int)fmod(floor(t / 100), 2)]++;
    double expected[2] = { 10 * 100 * 5000.0, 30 * 100 * 5000.0 };
    for (int i = 0; i < 2; i++)
        cr_expect_leq(fabs(counts[i] - expected[i]), 4 * sqrt(expected[i]), "half %d: %g vs %g",
                      i, counts[i], expected[i]);
    cr_expect_float_eq(traffic_mean_rate(&spec), 20, 1e-12);
    gsl_rng_free(rng);
}

Test(traffic, mmpp_has_its_mean_rate_and_is_burstier_than_poisson)
{
    /* calm 2/s for 60 s on average, burst 50/s for 5 s: mean (2 x 60 + 50 x 5) / 65 */
    double rates[] = { 2, 50 }, dwell[] = { 60, 5 };
    traffic_spec spec = { .kind = TRAFFIC_MMPP, .rates = rates, .dwell_s = dwell, .n = 2 };
    double mean = traffic_mean_rate(&spec);
    cr_expect_float_eq(mean, (2 * 60 + 50 * 5) / 65.0, 1e-12);
    gsl_rng *rng = sim_rng_stream(2, 0, "mmpp");
    traffic_state s;
    traffic_start(&s, &spec, rng, 0);
    enum { WINDOWS = 20000 };
    static double counts[WINDOWS];
    double t = 0, horizon = WINDOWS * 10.0, total = 0;
    while ((t = traffic_next(&s, t, NULL, 0)) < horizon) {
        counts[(int)(t / 10)]++;
        total++;
    }
    cr_expect_leq(fabs(total / horizon / mean - 1), 0.03, "rate %g vs %g", total / horizon, mean);
    double m = total / WINDOWS, var = 0;
    for (int i = 0; i < WINDOWS; i++)
        var += (counts[i] - m) * (counts[i] - m) / (WINDOWS - 1);
    cr_expect_gt(var / m, 5, "index of dispersion %g: Poisson would give 1", var / m);
    gsl_rng_free(rng);
}

/* Closed-loop users of llama-3-8b on one H100 (fp16, the scenario defaults), prompts
 * and answers of fixed lengths; cat must outlive the config. */
static serving_config users_config(catalog *cat, const traffic_spec *users, double prompt,
                                   double output)
{
    char err[512];
    cr_assert_eq(catalog_load(cat, err, sizeof err), 0);
    const model_spec *m = catalog_model(cat, "llama-3-8b");
    const device_spec *d = catalog_device(cat, "H100-SXM");
    serving_config c = {
        .name = "users", .replicas = 1, .routing = ROUTE_ROUND_ROBIN,
        .interarrival = sim_dist_exponential(1), .prompt_tokens = sim_dist_constant(prompt),
        .output_tokens = sim_dist_constant(output), .rtt_s = sim_dist_constant(0),
        .traffic = users, .seed = 3,
    };
    c.replica = (replica_config){
        .model = m, .device = d, .profile = perf_default_profile(d), .prec = PREC_FP16,
        .kv_prec = PREC_FP16, .tp = 1, .max_batch = 256, .max_tokens = 8192,
        .chunked_prefill = true,
        .kv_capacity_tokens = memory_inference(m, d, PREC_FP16, PREC_FP16, 1).kv_capacity_tokens,
    };
    return c;
}

Test(traffic, closed_loop_users_follow_the_response_time_law)
{
    /* N users thinking Z seconds between answers complete N / (Z + R) requests per second,
     * R the mean response time the server gives them */
    catalog cat;
    char err[512];
    traffic_spec spec = { .kind = TRAFFIC_CLOSED_LOOP, .users = 50, .think_s = sim_dist_exponential(5) };
    serving_config c = users_config(&cat, &spec, 300, 100);
    c.warmup_s = 100;
    sim_engine *e = sim_engine_create();
    serving *s = serving_create(e, &c, err, sizeof err);
    cr_assert_not_null(s, "%s", err);
    serving_start(s);
    sim_engine_run_until(e, 3700);
    const serving_stats *st = serving_get_stats(s);
    double throughput = st->completed / 3600.0, law = 50 / (5 + st->e2e_s.mean);
    cr_expect_leq(fabs(throughput / law - 1), 0.03, "throughput %g, law %g (R %g)", throughput,
                  law, st->e2e_s.mean);
    serving_free(s);
    sim_engine_free(e);
    catalog_release(&cat);
}

Test(traffic, closed_loop_users_whose_requests_all_end_on_arrival_stop_the_run)
{
    /* prompts past llama-3-8b's 8,192-token context end as they arrive, and users with no
     * think time ask again at the same instant: without the guard the run never leaves
     * t = 0; with it the run stops there with the reason */
    catalog cat;
    char err[512];
    traffic_spec spec = { .kind = TRAFFIC_CLOSED_LOOP, .users = 4, .think_s = sim_dist_constant(0) };
    serving_config c = users_config(&cat, &spec, 9000, 10);
    sim_engine *e = sim_engine_create();
    serving *s = serving_create(e, &c, err, sizeof err);
    cr_assert_not_null(s, "%s", err);
    serving_start(s);
    sim_engine_run_until(e, 60);
    cr_expect_eq(sim_engine_now(e), 0);
    const char *why = serving_error(s);
    cr_assert_not_null(why);
    cr_expect(strstr(why, "without time passing") && strstr(why, "think time"), "%s", why);
    /* 4 users a thousand times each, plus a thousand asks: then it stops, the requests
     * still scheduled (one a user at most) never arriving */
    uint64_t ended = serving_get_stats(s)->over_context;
    cr_expect(ended >= 4 * 1000 + 1000 - 4 && ended <= 4 * 1000 + 1000, "%llu",
              (unsigned long long)ended);
    serving_free(s);
    sim_engine_free(e);
    catalog_release(&cat);
}
