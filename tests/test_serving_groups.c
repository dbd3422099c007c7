/* A workload's groups of replicas (models/serving.h: serving_group): several serve
 * pools behind one gateway, an overflow cascade, several decode pools; each case by
 * hand from the routing rules, on bursts that arrive before any request ends. */
#include <criterion/criterion.h>
#include <math.h>

#include "lua/catalog.h"
#include "models/memory.h"
#include "models/serving.h"
#include "models/serving_fleet.h"
#include "tests/support/serving_run.h"

static catalog cat;
static const model_spec *llama;
static const device_spec *h100;
static serving_group groups[4];

static void setup(void)
{
    serving_fleet_check_rankings(true); /* every routing also against a look at each replica */
    char err[512];
    cr_assert_eq(catalog_load(&cat, err, sizeof err), 0, "%s", err);
    llama = catalog_model(&cat, "llama-3-8b");
    h100 = catalog_device(&cat, "H100-SXM");
}
static void teardown(void) { catalog_release(&cat); }

TestSuite(serving_groups, .init = setup, .fini = teardown);

static replica_config replica_of(void)
{
    return (replica_config){
        .model = llama, .device = h100, .profile = perf_default_profile(h100),
        .prec = PREC_FP16, .kv_prec = PREC_FP16, .tp = 1, .max_batch = 64, .max_tokens = 4096,
        .kv_capacity_tokens = memory_inference(llama, h100, PREC_FP16, PREC_FP16, 1)
                                  .kv_capacity_tokens,
    };
}

/* n requests of 200 + 400 tokens, 1 us apart: all routed before the first prefill ends
 * (a prefill of 200 tokens takes milliseconds), so each sees the loads the ones before
 * it left; the own pool has `own` replicas */
static serving_config burst(unsigned n, unsigned own)
{
    serving_config c = {
        .name = "chat", .replicas = own, .routing = ROUTE_LEAST_OUTSTANDING,
        .interarrival = sim_dist_constant(1e-6), .max_arrivals = n,
        .prompt_tokens = sim_dist_constant(200), .output_tokens = sim_dist_constant(400),
        .rtt_s = sim_dist_constant(0), .seed = 7,
    };
    c.replica = replica_of();
    return c;
}

static serving_group group(serving_role role, const char *name, unsigned replicas, double rtt)
{
    return (serving_group){
        .role = role,
        .fleet = { .pool_name = name, .replica = replica_of(), .replicas = replicas,
                   .max = replicas, .rtt_s = sim_dist_constant(rtt) },
        .routing = ROUTE_LEAST_OUTSTANDING,
    };
}

/* The own pool saturates at 2, the first overflow pool at 3, the second takes the rest:
 * of 9 requests, 2 stay, 3 go to the first and 4 to the second, each paying its own
 * pool's round trip. */
Test(serving_groups, an_overflow_cascade_fills_each_pool_to_its_threshold_in_order)
{
    serving_config c = burst(9, 1);
    c.overflow_threshold = 2;
    groups[0] = group(ROLE_OVERFLOW, "reserved", 1, 0.01);
    groups[0].threshold = 3;
    groups[1] = group(ROLE_OVERFLOW, "on-demand", 1, 0.05);
    c.groups = groups;
    c.ngroups = 2;
    run_result r = serving_run(&c, 60);
    cr_assert_eq(r.stats.completed, 9);
    cr_expect_eq(r.groups[0].served, 2);
    cr_expect_eq(r.groups[1].served, 3);
    cr_expect_eq(r.groups[2].served, 4);
    /* the round trips: 2 x 0 + 3 x 10 ms + 4 x 50 ms over 9, on top of the same prefill
     * and decode work everywhere but the batch sizes: seen in the mean TTFT's floor */
    cr_expect_gt(r.stats.ttft_s.mean, (3 * 0.01 + 4 * 0.05) / 9);
}

/* Without a threshold an overflow pool saturates at its replicas' max_batch (64): a
 * burst of 70 on one own replica at threshold 1 sends 1 to the own pool, 64 to the
 * first overflow pool and 5 to the second. */
Test(serving_groups, an_overflow_pool_saturates_at_its_batch_by_default)
{
    serving_config c = burst(70, 1);
    c.overflow_threshold = 1;
    groups[0] = group(ROLE_OVERFLOW, "reserved", 1, 0);
    groups[1] = group(ROLE_OVERFLOW, "on-demand", 1, 0);
    c.groups = groups;
    c.ngroups = 2;
    run_result r = serving_run(&c, 120);
    cr_assert_eq(r.stats.completed, 70);
    cr_expect_eq(r.groups[0].served, 1);
    cr_expect_eq(r.groups[1].served, 64);
    cr_expect_eq(r.groups[2].served, 5);
}

/* Two serve pools, the own of 1 replica and another of 2: each request to the pool
 * whose least loaded replica holds the fewest, the own on a tie.  Loads (own | other):
 * 0|0,0 -> own; 1|0,0 -> other; 1|1,0 -> other; 1|1,1 -> own; 2|1,1 -> other;
 * 2|2,1 -> other: the own pool serves 2 of 6, the other 4 (2 a replica). */
Test(serving_groups, serve_pools_share_new_requests_by_their_least_loaded_replica)
{
    serving_config c = burst(6, 1);
    groups[0] = group(ROLE_SERVE, "other", 2, 0);
    c.groups = groups;
    c.ngroups = 1;
    run_result r = serving_run(&c, 60);
    cr_assert_eq(r.stats.completed, 6);
    cr_expect_eq(r.groups[0].served, 2);
    cr_expect_eq(r.groups[1].served, 4);
}

/* Ties go to the earlier pool: two pools of one replica each and 3 requests, loads 0|0
 * -> own, 1|0 -> other, 1|1 -> own: 2 and 1 (the later pool winning ties would give 1
 * and 2). */
Test(serving_groups, a_tie_between_serve_pools_goes_to_the_earlier)
{
    serving_config c = burst(3, 1);
    groups[0] = group(ROLE_SERVE, "other", 1, 0);
    c.groups = groups;
    c.ngroups = 1;
    run_result r = serving_run(&c, 60);
    cr_assert_eq(r.stats.completed, 3);
    cr_expect_eq(r.groups[0].served, 2);
    cr_expect_eq(r.groups[1].served, 1);
}

/* The front saturates only when every serve pool does: own and other at threshold 1
 * (1 replica each) take one request each, then the overflow pool takes the rest. */
Test(serving_groups, the_front_spills_when_every_serve_pool_is_saturated)
{
    serving_config c = burst(5, 1);
    c.overflow_threshold = 1;
    groups[0] = group(ROLE_SERVE, "other", 1, 0);
    groups[0].threshold = 1;
    groups[1] = group(ROLE_OVERFLOW, "cloud", 1, 0);
    c.groups = groups;
    c.ngroups = 2;
    run_result r = serving_run(&c, 60);
    cr_assert_eq(r.stats.completed, 5);
    cr_expect_eq(r.groups[0].served, 1);
    cr_expect_eq(r.groups[1].served, 1);
    cr_expect_eq(r.groups[2].served, 3);
}

/* Disaggregated over two decode pools: each prefilled request's cache goes to the decode
 * pool whose least loaded replica holds the fewest, the first on a tie.  Requests 0.5 s
 * apart that decode for longer than 1 s (400 tokens at some ms a step): the first to
 * the first pool, the second to the second (the first holds one), the third to the
 * first again (1 | 1: a tie). */
Test(serving_groups, decode_pools_share_the_prefilled_requests)
{
    serving_config c = burst(3, 1);
    c.interarrival = sim_dist_constant(0.5);
    c.link = (kv_link_spec){ 50e9, 20e-6, KV_LINK_PER_REPLICA, 0 };
    c.kv_bytes_per_token = model_kv_bytes_per_token(llama, PREC_FP16);
    groups[0] = group(ROLE_DECODE, "decode-a", 1, 0);
    groups[1] = group(ROLE_DECODE, "decode-b", 1, 0);
    c.groups = groups;
    c.ngroups = 2;
    run_result r = serving_run(&c, 60);
    cr_assert_eq(r.stats.completed, 3);
    cr_expect_eq(r.stats.transfers, 3);
    cr_expect_eq(r.groups[0].served, 3, "the prefill pool made every first token");
    cr_expect_eq(r.groups[1].served, 2);
    cr_expect_eq(r.groups[2].served, 1);
}

/* Two prefill pools (the own and a serve group) feeding one decode pool: two requests
 * 1 us apart prefill side by side, one on each pool's replica (both unit 0 of their
 * pool), and their caches leave 1 us apart.  Each pool sends over its own links, so
 * each transfer takes the lone time (latency + bytes / bandwidth), not the shared one,
 * at its own pool's rate: 50 GB/s from the own pool, 25 from the other. */
Test(serving_groups, every_prefill_pool_sends_over_its_own_links)
{
    serving_config c = burst(2, 1);
    c.link = (kv_link_spec){ 50e9, 20e-6, KV_LINK_PER_REPLICA, 0 };
    c.kv_bytes_per_token = model_kv_bytes_per_token(llama, PREC_FP16);
    groups[0] = group(ROLE_SERVE, "prefill-b", 1, 0);
    groups[0].link = (kv_link_spec){ 25e9, 20e-6, KV_LINK_PER_REPLICA, 0 };
    groups[1] = group(ROLE_DECODE, "decode", 2, 0);
    c.groups = groups;
    c.ngroups = 2;
    run_result r = serving_run(&c, 60);
    cr_assert_eq(r.stats.completed, 2);
    cr_expect_eq(r.groups[0].served, 1, "prefills");
    cr_expect_eq(r.groups[1].served, 1, "prefills");
    cr_expect_eq(r.groups[2].served, 2, "decodes");
    double bytes = 200 * model_kv_bytes_per_token(llama, PREC_FP16);
    double mean = (20e-6 + bytes / 50e9 + 20e-6 + bytes / 25e9) / 2;
    cr_expect_float_eq(r.stats.transfer_s.mean, mean, 1e-12, "%.12g against %.12g",
                       r.stats.transfer_s.mean, mean);
}

/* A configuration with too many groups, or a group's custom routing without its
 * function, is refused with every problem named. */
Test(serving_groups, too_many_groups_and_a_missing_function_are_refused)
{
    serving_config c = burst(1, 1);
    serving_group many[SERVING_GROUPS_MAX];
    for (unsigned i = 0; i < SERVING_GROUPS_MAX; i++)
        many[i] = group(ROLE_OVERFLOW, "cloud", 1, 0);
    c.groups = many;
    c.ngroups = SERVING_GROUPS_MAX;
    config_problems p = { 0 };
    serving_config_check(&c, &p);
    cr_assert_eq(p.n, 1);
    cr_expect_str_eq(p.text[0], "a workload has at most 7 groups of replicas beside its own "
                                "pool");
    c.ngroups = 3;
    many[2].routing = ROUTE_CUSTOM;
    p = (config_problems){ 0 };
    serving_config_check(&c, &p);
    cr_assert_eq(p.n, 1);
    cr_expect_str_eq(p.text[0], "the overflow pool 3's custom routing needs its function");
}

/* The fast path (a few events a request) against one event per iteration, over a serve
 * pool and a cascade of two overflow pools under Poisson load that reaches the second:
 * the same requests complete, with latencies within 1%. */
Test(serving_groups, the_fast_path_agrees_with_reference_over_groups, .timeout = 120)
{
    serving_config c = burst(0, 1);
    c.interarrival = sim_dist_exponential(1.0 / 12);
    c.prompt_tokens = sim_dist_lognormal(400, 0.8);
    c.output_tokens = sim_dist_lognormal(150, 0.7);
    c.max_arrivals = 0;
    c.overflow_threshold = 6;
    groups[0] = group(ROLE_SERVE, "other", 1, 0);
    groups[0].threshold = 6;
    groups[1] = group(ROLE_OVERFLOW, "reserved", 1, 0.01);
    groups[1].threshold = 6;
    groups[2] = group(ROLE_OVERFLOW, "burst", 2, 0.05);
    c.groups = groups;
    c.ngroups = 3;
    run_result r[2];
    for (int reference = 0; reference < 2; reference++) {
        c.replica.reference = reference;
        for (unsigned g = 0; g < c.ngroups; g++)
            groups[g].fleet.replica.reference = reference;
        r[reference] = serving_run(&c, 300);
    }
    cr_assert_gt(r[0].stats.completed, 3000);
    cr_expect_eq(r[0].stats.completed, r[1].stats.completed);
    cr_expect_gt(r[0].groups[3].served, 0, "the cascade's last pool served");
    double pairs[][2] = {
        { r[0].stats.ttft_s.mean, r[1].stats.ttft_s.mean },
        { r[0].stats.tpot_s.mean, r[1].stats.tpot_s.mean },
        { r[0].stats.e2e_s.mean, r[1].stats.e2e_s.mean },
        { r[0].e2e_p99, r[1].e2e_p99 },
    };
    for (unsigned i = 0; i < 4; i++)
        cr_expect_leq(fabs(pairs[i][0] / pairs[i][1] - 1), 0.01, "%u: fast %g, reference %g", i,
                      pairs[i][0], pairs[i][1]);
    cr_expect_lt(r[0].events * 3, r[1].events, "events: fast %llu, reference %llu",
                 (unsigned long long)r[0].events, (unsigned long long)r[1].events);
}
