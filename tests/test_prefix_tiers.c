/* The prefix cache's tiers below GPU memory: the plan an admission makes (by hand, on
 * costs of round numbers), a shared store that gives one replica what another computed
 * (the first token later by exactly the fetch), a store too slow to be worth it, host
 * memory that is each replica's own, and a scenario whose prefixes outgrow the GPUs. */
#include <criterion/criterion.h>
#include <math.h>

#include "lua/catalog.h"
#include "models/prefix_tiers.h"
#include "models/serving.h"
#include "tests/support/scratch.h"
#include "tests/support/serving_run.h"

/* ---- the plan, on costs of round numbers --------------------------------------------- */

/* 1,000 bytes a token; a prefill of 1 us a token */
static double toy_prefill_s(const void *context, const void *q, unsigned from, unsigned to)
{
    (void)context, (void)q;
    return (to - from) * 1e-6;
}

static double toy_bytes(const void *context, unsigned from, unsigned to)
{
    (void)context;
    return (to - from) * 1000.0;
}

static const prefix_costs TOY = { toy_prefill_s, toy_bytes, NULL };

typedef struct toy_tiers {
    prefix_tiers t;
    prefix_chain chain;
} toy_tiers;

/* host holding the chain's first `host` tokens, shared its first `shared` */
static toy_tiers toy(unsigned host, unsigned shared, double host_rate, double shared_rate)
{
    toy_tiers x = { .chain = { .own = 7 } };
    x.t.n = 2;
    x.t.tier[0] = (prefix_tier){ PREFIX_TIER_HOST, prefix_cache_create(16), 1000, host_rate,
                                 1e-6 };
    x.t.tier[1] = (prefix_tier){ PREFIX_TIER_SHARED, prefix_cache_create(16), 1000,
                                 shared_rate, 10e-6 };
    prefix_cache_insert(x.t.tier[0].cache, &x.chain, host, 1000);
    prefix_cache_insert(x.t.tier[1].cache, &x.chain, shared, 1000);
    return x;
}

static void toy_free(toy_tiers *x)
{
    for (unsigned i = 0; i < x->t.n; i++)
        prefix_cache_free(x->t.tier[i].cache);
}

Test(prefix_tiers, each_tier_gives_what_it_holds_beyond_the_last)
{
    /* GPU hit 16; host holds 64, shared 160, of a 200-token want.  Host: 48 tokens,
     * 48,000 bytes at 1e9 B/s = 48 us + 1 us, against 48 us of prefill: declined (not
     * quicker).  At 1e10 B/s: 4.8 + 1 = 5.8 us, fetched.  Shared then gives 64..160: 96
     * tokens, 96,000 B at 1e10 = 9.6 + 10 = 19.6 us against 96 us: fetched. */
    toy_tiers x = toy(64, 160, 1e9, 1e10);
    prefix_fetch p = prefix_tiers_plan(&x.t, &x.chain, 16, 200, &TOY, NULL);
    cr_expect(p.declined[0]);
    cr_expect_eq(p.tokens[0], 0);
    cr_expect_eq(p.tokens[1], 160 - 16, "the shared store gives all from the GPU's hit on");
    cr_expect_eq(p.to, 160);
    cr_expect_float_eq(p.seconds, 10e-6 + 144000 / 1e10, 1e-15);
    toy_free(&x);

    x = toy(64, 160, 1e10, 1e10);
    p = prefix_tiers_plan(&x.t, &x.chain, 16, 200, &TOY, NULL);
    cr_expect_eq(p.tokens[0], 48);
    cr_expect_eq(p.tokens[1], 96);
    cr_expect_eq(p.to, 160);
    cr_expect_float_eq(p.seconds_of[0], 1e-6 + 48000 / 1e10, 1e-15);
    cr_expect_float_eq(p.seconds_of[1], 10e-6 + 96000 / 1e10, 1e-15);
    cr_expect_float_eq(p.bytes[1], 96000, 1e-9);
    cr_expect_float_eq(p.seconds, p.seconds_of[0] + p.seconds_of[1], 1e-15);
    prefix_tier_stats st[PREFIX_TIERS_MAX] = { { 0 } };
    prefix_tiers_fetched(&x.t, &x.chain, &p, st);
    cr_expect_eq(st[0].fetches, 1);
    cr_expect_float_eq(st[1].tokens, 96, 1e-12);
    cr_expect_float_eq(st[1].stall_s, p.seconds_of[1], 1e-15);
    /* written through: the host now holds what was read from the shared store */
    cr_expect_eq(prefix_cache_longest(x.t.tier[0].cache, &x.chain, 200), 160);
    toy_free(&x);
}

Test(prefix_tiers, nothing_beyond_the_gpu_nothing_fetched)
{
    /* the GPU already holds 64: a host of 64 and a shared store of 48 add nothing; a
     * want of 32 stops every tier at 32 */
    toy_tiers x = toy(64, 48, 1e10, 1e10);
    prefix_fetch p = prefix_tiers_plan(&x.t, &x.chain, 64, 200, &TOY, NULL);
    cr_expect_eq(p.to, 64);
    cr_expect_eq(p.seconds, 0);
    cr_expect(!p.declined[0] && !p.declined[1]);
    p = prefix_tiers_plan(&x.t, &x.chain, 0, 40, &TOY, NULL);
    cr_expect_eq(p.to, 32, "whole blocks of the want");
    cr_expect_eq(p.tokens[0], 32);
    toy_free(&x);
}

/* ---- a replica's admissions ------------------------------------------------------------ */

static catalog cat;
static const model_spec *llama;
static const device_spec *h100;

static void setup(void)
{
    char err[512];
    cr_assert_eq(catalog_load(&cat, err, sizeof err), 0, "%s", err);
    llama = catalog_model(&cat, "llama-3-8b");
    h100 = catalog_device(&cat, "H100-SXM");
}
static void teardown(void) { catalog_release(&cat); }

static const system_prompt SYSTEM_2048[] = { { 2048, 1, 1 } };

/* Two requests 10 s apart, each the 2,048-token system prompt and 64 tokens of its
 * own, 100 out, blocks of 16, round robin over `replicas`, one tier of `kind`. */
static serving_config two_apart(unsigned replicas, int kind, double rate)
{
    serving_config c = {
        .name = "two", .replicas = replicas, .routing = ROUTE_ROUND_ROBIN,
        .interarrival = sim_dist_constant(10), .max_arrivals = 2,
        .prompt_tokens = sim_dist_constant(64), .output_tokens = sim_dist_constant(100),
        .rtt_s = sim_dist_constant(0), .seed = 1, .prefix_block = 16,
        .system_prompts = SYSTEM_2048, .nsystem_prompts = 1,
    };
    c.replica = (replica_config){
        .model = llama, .device = h100, .profile = perf_default_profile(h100),
        .prec = PREC_FP16, .kv_prec = PREC_FP16, .tp = 1, .max_batch = 128, .max_tokens = 8192,
        .kv_capacity_tokens = 1e6, .kv_bytes_per_token = model_kv_bytes_per_token(llama, PREC_FP16),
    };
    if (kind >= 0)
        c.replica.prefix_tiers = (prefix_tiers){
            1, { { (prefix_tier_kind)kind, NULL, 1000000, rate, 10e-6 } } };
    return c;
}

TestSuite(prefix_tiers_serving, .init = setup, .fini = teardown);

Test(prefix_tiers_serving, a_shared_store_gives_one_replica_what_another_computed)
{
    /* Llama-3-8B's cache: 32 layers x 8 KV heads x 128 x 2 (K, V) x 2 bytes = 131,072
     * bytes a token.  The first request prefills the prompt on replica 1, which stores
     * its 128 whole blocks of system prompt in the shared store as they are computed.
     * The second goes to replica 2 (round robin), whose GPU holds nothing: it fetches
     * the 2,048 tokens, 268,435,456 bytes at 50 GB/s and 10 us = 5.378 ms, and
     * prefills its own 64 as it would on replica 1 with the prefix in GPU memory.  So
     * its first token comes exactly the fetch later than on one replica. */
    cr_assert_float_eq(model_kv_bytes_per_token(llama, PREC_FP16), 131072, 1e-9);
    double fetch_s = 10e-6 + 2048 * 131072 / 50e9;
    serving_config one = two_apart(1, -1, 0);
    run_result gpu = serving_run(&one, 100);
    serving_config c = two_apart(2, PREFIX_TIER_SHARED, 50e9);
    run_result tier = serving_run(&c, 100);
    cr_assert_eq(gpu.stats.completed, 2);
    cr_assert_eq(tier.stats.completed, 2);
    cr_expect_eq(gpu.stats.prefix_cached_tokens, 2048);
    cr_expect_eq(tier.stats.prefix_cached_tokens, 2048);
    /* the first request's TTFT is the same in both; the mean moves by half the fetch */
    cr_expect_float_eq(tier.stats.ttft_s.mean - gpu.stats.ttft_s.mean, fetch_s / 2, 1e-12,
                       "%.9g vs %.9g", tier.stats.ttft_s.mean - gpu.stats.ttft_s.mean,
                       fetch_s / 2);
    const prefix_tier_stats *st = &tier.groups[0].prefix_tiers[0];
    cr_expect_eq(st->fetches, 1);
    cr_expect_float_eq(st->tokens, 2048, 1e-12);
    cr_expect_float_eq(st->bytes, 2048 * 131072.0, 1e-3);
    cr_expect_float_eq(st->stall_s, fetch_s, 1e-15);
    cr_expect_eq(st->declined, 0);
}

Test(prefix_tiers_serving, a_store_slower_than_the_prefill_is_passed_over)
{
    /* at 1 MB/s the 268 MB would take 268 s: the replica prefills, as with no tier */
    serving_config none = two_apart(2, -1, 0);
    run_result apart = serving_run(&none, 1000);
    serving_config c = two_apart(2, PREFIX_TIER_SHARED, 1e6);
    run_result slow = serving_run(&c, 1000);
    cr_expect_eq(slow.stats.prefix_cached_tokens, 0);
    cr_expect_float_eq(slow.stats.ttft_s.mean, apart.stats.ttft_s.mean, 1e-15);
    cr_expect_eq(slow.groups[0].prefix_tiers[0].declined, 1);
    cr_expect_eq(slow.groups[0].prefix_tiers[0].fetches, 0);
}

Test(prefix_tiers_serving, host_memory_is_each_replicas_own)
{
    /* the second replica's host tier never saw the first's prefill: a miss, as with no
     * tier; on one replica the GPU's hit leaves the host nothing to add */
    serving_config none = two_apart(2, -1, 0);
    run_result apart = serving_run(&none, 100);
    serving_config c = two_apart(2, PREFIX_TIER_HOST, 50e9);
    run_result host = serving_run(&c, 100);
    cr_expect_eq(host.stats.prefix_cached_tokens, 0);
    cr_expect_float_eq(host.stats.ttft_s.mean, apart.stats.ttft_s.mean, 1e-15);
    cr_expect_eq(host.groups[0].prefix_tiers[0].fetches, 0);
    cr_expect_eq(host.groups[0].prefix_tiers[0].declined, 0);
    c = two_apart(1, PREFIX_TIER_HOST, 50e9);
    run_result one = serving_run(&c, 100);
    cr_expect_eq(one.stats.prefix_cached_tokens, 2048);
    cr_expect_eq(one.groups[0].prefix_tiers[0].fetches, 0);
}
