/* Serving on GPU pools: autoscaling within bounds, scale from zero after the
 * provisioning delay, overflow into a second pool, and requests surviving the loss of
 * their replica. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "lua/catalog.h"
#include "models/serving.h"
#include "models/serving_fleet.h"

static catalog cat;
static const model_spec *llama;
static const device_spec *h100;

static void setup(void)
{
    serving_fleet_check_rankings(true); /* every routing also against a look at each replica */
    char err[512];
    cr_assert_eq(catalog_load(&cat, err, sizeof err), 0, "%s", err);
    llama = catalog_model(&cat, "llama-3-8b");
    h100 = catalog_device(&cat, "H100-SXM");
}
static void teardown(void) { catalog_release(&cat); }

TestSuite(fleet, .init = setup, .fini = teardown);

static replica_config h100_replica(void)
{
    return (replica_config){
        .model = llama, .device = h100, .profile = perf_default_profile(h100),
        .prec = PREC_FP16, .kv_prec = PREC_FP16, .tp = 1, .max_batch = 64, .max_tokens = 4096,
        .kv_capacity_tokens = memory_inference(llama, h100, PREC_FP16, PREC_FP16, 1).kv_capacity_tokens,
    };
}

static serving_config chat(double rate)
{
    return (serving_config){
        .name = "chat", .routing = ROUTE_LEAST_OUTSTANDING,
        .interarrival = sim_dist_exponential(1 / rate),
        .prompt_tokens = sim_dist_constant(800), .output_tokens = sim_dist_constant(200),
        .rtt_s = sim_dist_constant(0), .seed = 7, .replica = h100_replica(),
    };
}

static pool_capacity cloud(unsigned count, unsigned max, double provision_s)
{
    return (pool_capacity){
        .kind = POOL_CLOUD, .count = count, .max = max,
        .provision_s = sim_dist_constant(provision_s), .retry_s = 60,
    };
}

/* Records of the requests that ended, for tests that look at single requests. */
typedef struct trail {
    double first_ttft, max_ttft, rtt_sum;
    uint64_t n, with_rtt;
} trail;

static void on_request(void *context, const request_record *r)
{
    trail *t = context;
    if (r->dropped)
        return;
    if (t->n == 0)
        t->first_ttft = r->ttft_s;
    t->max_ttft = fmax(t->max_ttft, r->ttft_s);
    t->with_rtt += r->rtt_s > 0;
    t->n++;
}

Test(fleet, the_autoscaler_never_holds_more_than_max)
{
    char err[256];
    sim_engine *e = sim_engine_create();
    pool_capacity cap = cloud(1, 4, 120);
    gpu_pool *gp = gpu_pool_create(e, &cap, "cloud", 7, 0, err, sizeof err);
    cr_assert_not_null(gp, "%s", err);
    autoscaler_spec a = { .enabled = true, .metric = AUTOSCALE_QUEUE, .target = 4,
                          .interval_s = 10, .cooldown_s = 0, .scale_in_delay_s = 60 };
    serving_config c = chat(60); /* far more than 4 replicas can serve */
    c.replicas = 1;
    c.min_replicas = 1;
    c.max_replicas = 4;
    c.pool = gp;
    c.autoscaler = &a;
    c.replica.max_wait_s = 30;
    serving *s = serving_create(e, &c, err, sizeof err);
    cr_assert_not_null(s, "%s", err);
    serving_start(s);
    sim_engine_run_until(e, 1800);
    serving_group_stats g = serving_group_get_stats(s, 0, 1800);
    cr_expect_eq(g.replicas_max, 4, "it scales out to max and no further: %g", g.replicas_max);
    cr_expect_leq(gpu_pool_get_stats(gp)->held.max, 4);
    /* after the first provisioning delay it holds max for the rest of the run */
    cr_expect_gt(g.replicas_mean, 4 * (1800 - 2 * 120) / 1800.0, "%g", g.replicas_mean);
    serving_free(s);
    gpu_pool_free(gp);
    sim_engine_free(e);
}

Test(fleet, from_zero_the_first_answer_waits_for_a_provisioned_gpu)
{
    char err[256];
    sim_engine *e = sim_engine_create();
    pool_capacity cap = cloud(0, 2, 90);
    gpu_pool *gp = gpu_pool_create(e, &cap, "cloud", 7, 0, err, sizeof err);
    cr_assert_not_null(gp, "%s", err);
    autoscaler_spec a = { .enabled = true, .metric = AUTOSCALE_QUEUE, .target = 8,
                          .interval_s = 5, .cooldown_s = 0, .scale_in_delay_s = 600 };
    serving_config c = chat(0.5);
    c.interarrival = sim_dist_constant(2); /* first request at 2 s */
    c.pool = gp;
    c.autoscaler = &a;
    c.max_replicas = 2;
    trail t = { 0 };
    c.on_request = on_request;
    c.request_context = &t;
    serving *s = serving_create(e, &c, err, sizeof err);
    cr_assert_not_null(s, "%s", err);
    serving_start(s);
    sim_engine_run_until(e, 600);
    /* the request at 2 s waits for the evaluation at 5 s, then 90 s of provisioning:
     * its first token comes after 95 s, less the 2 s it arrived after the start */
    cr_expect_geq(t.first_ttft, 93, "first ttft %g", t.first_ttft);
    cr_expect_lt(t.first_ttft, 94, "first ttft %g", t.first_ttft);
    cr_expect_gt(t.n, 200, "the rest are served: %lu", (unsigned long)t.n);
    serving_free(s);
    gpu_pool_free(gp);
    sim_engine_free(e);
}

Test(fleet, saturated_requests_overflow_and_pay_its_round_trip)
{
    char err[256];
    sim_engine *e = sim_engine_create();
    serving_config c = chat(30);
    serving_group other = { .role = ROLE_OVERFLOW,
                            .fleet = { .pool_name = "far", .replica = h100_replica(),
                                       .replicas = 2, .rtt_s = sim_dist_constant(0.08) },
                            .routing = c.routing };
    c.replicas = 1;
    c.groups = &other;
    c.ngroups = 1;
    c.overflow_threshold = 8;
    trail t = { 0 };
    c.on_request = on_request;
    c.request_context = &t;
    serving *s = serving_create(e, &c, err, sizeof err);
    cr_assert_not_null(s, "%s", err);
    serving_start(s);
    sim_engine_run_until(e, 600);
    serving_group_stats own = serving_group_get_stats(s, 0, 600);
    serving_group_stats far = serving_group_get_stats(s, 1, 600);
    uint64_t completed = serving_get_stats(s)->completed;
    cr_expect_eq(own.served + far.served, completed);
    cr_expect_gt(far.served, 0, "one replica cannot hold 30 requests/s under 8 in flight");
    cr_expect_gt(own.served, 0);
    /* exactly the requests served far away met the 80 ms round trip */
    cr_expect_eq(t.with_rtt, far.served, "%lu with a round trip, %lu served far",
                 (unsigned long)t.with_rtt, (unsigned long)far.served);
    serving_free(s);
    sim_engine_free(e);
}

Test(fleet, requests_on_a_lost_replica_are_served_elsewhere)
{
    char err[256];
    sim_engine *e = sim_engine_create();
    double times[] = { 100, 200, 300 };
    pool_capacity cap = cloud(2, 2, 60);
    cap.kind = POOL_SPOT;
    cap.preemption_times_s = times;
    cap.npreemption_times = 3;
    cap.notice_s = 0;
    gpu_pool *gp = gpu_pool_create(e, &cap, "spot", 7, 0, err, sizeof err);
    cr_assert_not_null(gp, "%s", err);
    serving_config c = chat(4);
    c.replicas = 2;
    c.max_replicas = 2;
    c.pool = gp;
    serving *s = serving_create(e, &c, err, sizeof err);
    cr_assert_not_null(s, "%s", err);
    serving_start(s);
    sim_engine_run_until(e, 1200);
    const serving_stats *st = serving_get_stats(s);
    serving_group_stats g = serving_group_get_stats(s, 0, 1200);
    cr_expect_eq(g.replica_losses, 3, "three preemptions, three replicas lost");
    cr_expect_eq(gpu_pool_get_stats(gp)->preemptions, 3);
    cr_expect_eq(st->dropped, 0, "nothing is dropped: lost requests are routed again");
    /* everything that arrived more than a minute before the end has finished */
    cr_expect_geq(st->completed + 4 * 60, st->arrived, "%lu of %lu",
                  (unsigned long)st->completed, (unsigned long)st->arrived);
    serving_free(s);
    gpu_pool_free(gp);
    sim_engine_free(e);
}

/* The fast path cuts a decode run where the speed changes, so it agrees with one event
 * per iteration on noisy, time-sliced GPUs too. */
static serving_stats run_shared(bool reference, const noisy_spec *noisy, const sharing_spec *share)
{
    char err[256];
    sim_engine *e = sim_engine_create();
    serving_config c = chat(12);
    c.replicas = 4;
    c.prompt_tokens = sim_dist_lognormal(600, 0.8);
    c.output_tokens = sim_dist_lognormal(150, 0.7);
    c.replica.reference = reference;
    c.noisy = noisy;
    c.sharing = share;
    c.units_per_gpu = share ? share->tenants : 1;
    serving *s = serving_create(e, &c, err, sizeof err);
    cr_assert_not_null(s, "%s", err);
    serving_start(s);
    sim_engine_run_until(e, 1800);
    serving_stats st = *serving_get_stats(s);
    memset(&st.ttft_hist_s, 0, sizeof st.ttft_hist_s); /* freed with s */
    memset(&st.tpot_hist_s, 0, sizeof st.tpot_hist_s);
    memset(&st.e2e_hist_s, 0, sizeof st.e2e_hist_s);
    serving_free(s);
    sim_engine_free(e);
    return st;
}

Test(fleet, the_fast_path_agrees_with_reference_mode_under_noise_and_time_slicing)
{
    noisy_spec noisy = { sim_dist_exponential(60), sim_dist_exponential(30),
                         sim_dist_uniform(1.5, 3), 0.2 };
    sharing_spec share = { .mode = SHARE_TIME_SLICING, .tenants = 2, .slice_s = 2e-3,
                           .switch_s = 50e-6 };
    serving_stats fast = run_shared(false, &noisy, &share);
    serving_stats ref = run_shared(true, &noisy, &share);
    serving_stats calm = run_shared(false, NULL, NULL);
    cr_expect_eq(fast.completed, ref.completed);
    cr_expect_leq(fabs(fast.tpot_s.mean / ref.tpot_s.mean - 1), 0.01, "tpot fast %g, reference %g",
                  fast.tpot_s.mean, ref.tpot_s.mean);
    cr_expect_leq(fabs(fast.e2e_s.mean / ref.e2e_s.mean - 1), 0.01, "e2e fast %g, reference %g",
                  fast.e2e_s.mean, ref.e2e_s.mean);
    cr_expect_leq(fabs(fast.ttft_s.mean / ref.ttft_s.mean - 1), 0.02, "ttft fast %g, reference %g",
                  fast.ttft_s.mean, ref.ttft_s.mean);
    /* and sharing plus noise is slower than a calm GPU of one's own */
    cr_expect_gt(fast.tpot_s.mean, 1.3 * calm.tpot_s.mean, "shared %g, alone %g",
                 fast.tpot_s.mean, calm.tpot_s.mean);
}

Test(fleet, a_noisy_process_that_is_never_contended_changes_nothing)
{
    noisy_spec calm_only = { sim_dist_exponential(60), sim_dist_constant(0),
                             sim_dist_constant(2), 0.2 };
    serving_stats noisy = run_shared(false, &calm_only, NULL);
    serving_stats plain = run_shared(false, NULL, NULL);
    cr_expect_eq(noisy.completed, plain.completed);
    cr_expect_eq(noisy.ttft_s.mean, plain.ttft_s.mean, "bit for bit");
    cr_expect_eq(noisy.tpot_s.mean, plain.tpot_s.mean, "bit for bit");
    cr_expect_eq(noisy.e2e_s.m2, plain.e2e_s.m2, "bit for bit");
}
