/* Continuous batching and serving: against the performance model at low load, capacity
 * limits, drops, routing, and the fast path against one event per iteration. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "lua/catalog.h"
#include "models/serving.h"
#include "models/serving_fleet.h"
#include "support/serving_run.h"

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

TestSuite(serving, .init = setup, .fini = teardown);

static serving_config base_config(double rate, unsigned replicas)
{
    serving_config c = {
        .name = "chat", .replicas = replicas, .routing = ROUTE_ROUND_ROBIN,
        .interarrival = sim_dist_exponential(1 / rate),
        .prompt_tokens = sim_dist_lognormal(400, 0.8),
        .output_tokens = sim_dist_lognormal(150, 0.7),
        .rtt_s = sim_dist_constant(0.05), .seed = 1,
    };
    c.replica = (replica_config){
        .model = llama, .device = h100, .profile = perf_default_profile(h100),
        .prec = PREC_FP16, .kv_prec = PREC_FP16, .tp = 1, .max_batch = 128, .max_tokens = 4096,
        .kv_capacity_tokens = memory_inference(llama, h100, PREC_FP16, PREC_FP16, 1).kv_capacity_tokens,
    };
    return c;
}

Test(serving, one_request_sees_prefill_plus_network_and_the_model_decode_time)
{
    serving_config c = base_config(1, 1);
    c.interarrival = sim_dist_constant(1);
    c.prompt_tokens = sim_dist_constant(512);
    c.output_tokens = sim_dist_constant(200);
    c.max_arrivals = 1;
    run_result r = serving_run(&c, 100);
    cr_assert_eq(r.stats.completed, 1);
    perf_profile p = perf_default_profile(h100);
    perf_setup s = { .model = llama, .device = h100, .profile = &p, .weights = PREC_FP16, .kv = PREC_FP16, .tp = 1 };
    double prefill = perf_prefill(&s, 1, 512).total_s;
    cr_expect_float_eq(r.stats.ttft_s.mean, prefill + 0.05, 1e-12, "ttft %g, prefill %g",
                       r.stats.ttft_s.mean, prefill);
    /* 199 decode steps from context 513; the mean step is the model's step at the mean
     * context within a fraction of a percent (the cost is linear in the context) */
    double step = perf_decode_step(&s, 1, 513 + 99).total_s;
    cr_expect_leq(fabs(r.stats.tpot_s.mean / step - 1), 0.001, "tpot %g, model %g",
                  r.stats.tpot_s.mean, step);
    cr_expect_float_eq(r.stats.e2e_s.mean, prefill + 199 * r.stats.tpot_s.mean + 0.05, 1e-9);
    cr_expect_float_eq(r.stats.queue_wait_s.mean, 0, 0);
}

Test(serving, the_cache_caps_concurrency)
{
    serving_config c = base_config(40, 1);
    c.prompt_tokens = sim_dist_constant(1000);
    c.output_tokens = sim_dist_constant(200);
    c.replica.kv_capacity_tokens = 3 * 1200 + 100; /* room for three requests */
    c.replica.max_wait_s = 5;
    char err[256];
    sim_engine *e = sim_engine_create();
    serving *s = serving_create(e, &c, err, sizeof err);
    serving_start(s);
    sim_engine_run_until(e, 300);
    cr_expect_leq(serving_batch_max(s), 3, "never more than 3 in the batch");
    double batch = serving_batch_mean(s, 300);
    cr_expect_leq(batch, 3.0, "mean batch %g over the cache's room for 3", batch);
    cr_expect_gt(batch, 2.5, "overloaded, the batch stays near its cap: %g", batch);
    cr_expect_gt(serving_get_stats(s)->dropped, 0, "requests waiting over 5 s are dropped");
    serving_free(s);
    sim_engine_free(e);
}

Test(serving, drops_only_when_waits_pass_the_limit)
{
    serving_config c = base_config(2, 2);
    c.replica.max_wait_s = 30;
    run_result r = serving_run(&c, 600);
    cr_expect_eq(r.stats.dropped, 0, "a light load drops nothing");
    cr_expect_gt(r.stats.completed, 1000);
    serving_config heavy = base_config(400, 1);
    heavy.replica.max_wait_s = 2;
    run_result h = serving_run(&heavy, 120);
    cr_expect_gt(h.stats.dropped, h.stats.arrived / 4, "an overload far past capacity drops");
    cr_expect_leq(h.stats.queue_wait_s.max, 2 + 1, "no served request waited much past 2 s");
}

Test(serving, load_aware_routing_beats_round_robin)
{
    /* heavy-tailed lengths at high load (40 requests/s: ~85% of what 8 replicas of batch
     * 16 serve, the engine's host work per iteration included): least outstanding,
     * shortest tokens and power of two choices see the imbalance round robin ignores */
    serving_config c = base_config(40, 8);
    c.output_tokens = sim_dist_lognormal(150, 1.2);
    c.replica.max_batch = 16; /* small batches, so that requests queue at ~85% load */
    run_result rr = serving_run(&c, 1200);
    routing_policy better[] = { ROUTE_LEAST_OUTSTANDING, ROUTE_SHORTEST_TOKENS, ROUTE_POWER_OF_TWO };
    for (int i = 0; i < 3; i++) {
        c.routing = better[i];
        run_result r = serving_run(&c, 1200);
        cr_expect_lt(r.stats.e2e_s.mean, rr.stats.e2e_s.mean, "%s: mean e2e %g vs round robin %g",
                     routing_policy_name(better[i]), r.stats.e2e_s.mean, rr.stats.e2e_s.mean);
        cr_expect_lt(r.ttft_p99, rr.ttft_p99, "%s: p99 ttft %g vs round robin %g",
                     routing_policy_name(better[i]), r.ttft_p99, rr.ttft_p99);
    }
}


static void expect_within_1_percent(double fast, double reference, const char *what)
{
    cr_expect_leq(fabs(fast / reference - 1), 0.01, "%s: fast %g, reference %g", what, fast,
                  reference);
}

/* min_ratio: how many times fewer events the fast path must need (at high load batch
 * changes come with every arrival, so the gain is smaller; the fast path's events stay
 * a few per request whatever the number of tokens). */
static void check_fast_against_reference(serving_config c, double duration_s, double min_ratio)
{
    c.replica.reference = false;
    run_result fast = serving_run(&c, duration_s);
    c.replica.reference = true;
    run_result ref = serving_run(&c, duration_s);
    cr_assert_gt(fast.stats.completed, 100);
    cr_expect_eq(fast.stats.completed, ref.stats.completed);
    cr_expect_eq(fast.stats.dropped, ref.stats.dropped);
    expect_within_1_percent(fast.kv_mean + 1e-9, ref.kv_mean + 1e-9, "cache use");
    expect_within_1_percent(fast.stats.ttft_s.mean, ref.stats.ttft_s.mean, "ttft mean");
    expect_within_1_percent(fast.ttft_p99, ref.ttft_p99, "ttft p99");
    expect_within_1_percent(fast.stats.tpot_s.mean, ref.stats.tpot_s.mean, "tpot mean");
    expect_within_1_percent(fast.tpot_p99, ref.tpot_p99, "tpot p99");
    expect_within_1_percent(fast.stats.e2e_s.mean, ref.stats.e2e_s.mean, "e2e mean");
    expect_within_1_percent(fast.e2e_p99, ref.e2e_p99, "e2e p99");
    cr_expect_gt((double)ref.events / fast.events, min_ratio, "events: fast %llu, reference %llu",
                 (unsigned long long)fast.events, (unsigned long long)ref.events);
    cr_expect_leq((double)fast.events, 8.0 * fast.stats.arrived + 100,
                  "a few events per request, not one per token");
}

Test(serving, fast_path_agrees_with_one_event_per_iteration_at_low_load)
{
    check_fast_against_reference(base_config(3, 2), 600, 10);
}

Test(serving, fast_path_agrees_at_high_load, .timeout = 120)
{
    check_fast_against_reference(base_config(30, 2), 300, 1.5);
}

Test(serving, fast_path_agrees_with_chunked_prefill_and_a_full_cache, .timeout = 120)
{
    serving_config c = base_config(20, 1);
    c.replica.chunked_prefill = true;
    c.replica.max_tokens = 512;
    c.replica.kv_capacity_tokens = 40000;
    c.routing = ROUTE_LEAST_OUTSTANDING;
    check_fast_against_reference(c, 300, 1.5);
}

/* Speculative decoding (llama-3.2-1b drafting 4 tokens, each request's acceptance drawn
 * uniformly in [0.5, 0.9]): a fast run of rounds against one event a round. */
static serving_config speculative_config(double rate)
{
    serving_config c = base_config(rate, 2);
    c.replica.spec_k = 4;
    c.replica.draft = catalog_model(&cat, "llama-3.2-1b");
    c.replica.spec_tokens = perf_speculative_tokens(0.7, 4);
    c.replica.kv_capacity_tokens = memory_inference_with_draft(llama, c.replica.draft, h100,
                                                               PREC_FP16, PREC_FP16, 1, NULL)
                                       .kv_capacity_tokens;
    c.spec_acceptance = sim_dist_uniform(0.5, 0.9);
    return c;
}

Test(serving, fast_path_agrees_with_speculative_decoding, .timeout = 120)
{
    check_fast_against_reference(speculative_config(3), 600, 5);
    /* and it pays at this load: ~2.73 tokens a round (a uniform in [0.5, 0.9] through
     * (1 - a^5) / (1 - a)) for a round costing about 1.9 plain steps (a 1B draft's four
     * steps beside the 8B target's verification) */
    serving_config spec = speculative_config(3), plain = spec;
    plain.replica.spec_k = 0;
    run_result with = serving_run(&spec, 300), without = serving_run(&plain, 300);
    double gain = without.stats.tpot_s.mean / with.stats.tpot_s.mean;
    cr_expect(gain > 1.3 && gain < 2.73, "tpot %g without, %g with: %g", without.stats.tpot_s.mean,
              with.stats.tpot_s.mean, gain);
    cr_expect_eq(with.stats.completed, without.stats.completed, "the same requests");
    cr_expect_float_eq(sim_stat_mean(&with.stats.acceptance), 0.7, 0.01);
    serving_config c = speculative_config(30);
    c.replica.chunked_prefill = true;
    c.replica.max_tokens = 1024;
    check_fast_against_reference(c, 300, 1.2);
}

/* Near saturation, the cache growing and preempting: the same requests complete and are
 * preempted at the same rounds, at the same times.  Until 2026-12-07 one event a round
 * read a sequence's context in whole tokens (floor(j E) made after j rounds) and a fast
 * run's closed form as growing E a round: under a token apart, enough to move an arrival
 * across an iteration's end, and single seeds' mean TTFT differed by up to 8% either way;
 * both now read the expected context (replica_spec.h). */
Test(serving, fast_path_speculating_near_saturation_is_exact, .timeout = 120)
{
    serving_config c = speculative_config(16);
    c.replica.kv_policy = KV_PREEMPT;
    c.replica.kv_capacity_tokens = 8000;
    expect_the_same_runs(c, 600, "speculating past saturation", 50);
    c.interarrival = sim_dist_exponential(1 / 9.0);
    expect_the_same_runs(c, 600, "speculating below saturation", 0);
    /* an offload tier's host reads grow with the rounds' expected cache alike */
    c.replica.kv_capacity_tokens = 30000;
    c.replica.kv_device_tokens = 8000;
    c.replica.kv_bytes_per_token = model_kv_bytes_per_token(llama, PREC_FP16);
    c.replica.host_kv_bytes_per_s = 25e9;
    expect_the_same_runs(c, 600, "speculating with an offload tier", 0);
}

/* Routing by the fewest tokens left: one event per iteration counts each replica's tokens
 * down at every iteration's end, so a request arriving within a fast run must see the
 * tokens made by then (until 2026-12-07 it saw them as of the run's start, and single
 * seeds' TTFT differed by up to 3%), with and without speculation. */
Test(serving, fast_path_routes_by_tokens_as_one_event_per_iteration_does, .timeout = 120)
{
    serving_config c = base_config(24, 2);
    c.routing = ROUTE_SHORTEST_TOKENS;
    c.replica.kv_policy = KV_PREEMPT;
    c.replica.kv_capacity_tokens = 30000;
    expect_the_same_runs(c, 300, "shortest tokens", 0);
    c = speculative_config(14);
    c.routing = ROUTE_SHORTEST_TOKENS;
    c.replica.kv_policy = KV_PREEMPT;
    c.replica.kv_capacity_tokens = 8000;
    expect_the_same_runs(c, 300, "shortest tokens, speculating", 20);
}

/* Multi-LoRA (models/lora.h): 40 adapters by Zipf on 4 slots a replica, rank 16 on
 * attention: loads, waits for a slot and each batch's distinct adapters in the cost. */
static serving_config lora_config(double rate, const lora_popularity *pop)
{
    serving_config c = base_config(rate, 2);
    c.lora = pop;
    c.replica.lora_slots = 4;
    c.replica.lora_adapters = pop->adapters;
    c.replica.lora_load_s = 0.01;
    c.replica.lora_bytes = lora_adapter_bytes(llama, 16, LORA_ATTENTION, LORA_BYTES_PER_VALUE);
    c.replica.lora_flops_per_token = lora_flops_per_token(llama, 16, LORA_ATTENTION);
    return c;
}

Test(serving, fast_path_agrees_with_mixed_lora_adapters, .timeout = 120)
{
    lora_popularity pop;
    cr_assert_eq(lora_popularity_zipf(&pop, 40, 1), 0);
    check_fast_against_reference(lora_config(3, &pop), 600, 5);
    serving_config c = lora_config(20, &pop);
    c.replica.kv_policy = KV_PREEMPT;
    c.replica.kv_capacity_tokens = 40000;
    check_fast_against_reference(c, 300, 1.2);
    run_result r = serving_run(&c, 300);
    cr_expect_gt(r.stats.lora.loads, 50, "adapters came and went: %lu loads",
                 (unsigned long)r.stats.lora.loads);
    cr_expect_gt(r.stats.lora.distinct_sum / r.stats.lora.iterations, 2);
    lora_popularity_release(&pop);
}

/* The two add-ons together: the draft's rounds and the batch's adapters. */
Test(serving, fast_path_agrees_with_adapters_under_speculation, .timeout = 120)
{
    lora_popularity pop;
    cr_assert_eq(lora_popularity_zipf(&pop, 40, 1), 0);
    serving_config c = speculative_config(10), l = lora_config(10, &pop);
    c.lora = l.lora;
    c.replica.lora_slots = l.replica.lora_slots;
    c.replica.lora_adapters = l.replica.lora_adapters;
    c.replica.lora_load_s = l.replica.lora_load_s;
    c.replica.lora_bytes = l.replica.lora_bytes;
    c.replica.lora_flops_per_token = l.replica.lora_flops_per_token;
    check_fast_against_reference(c, 300, 4); /* 5.5x fewer events at this writing */
    run_result r = serving_run(&c, 300);
    cr_expect_gt(r.stats.lora.loads, 20, "%lu loads", (unsigned long)r.stats.lora.loads);
    cr_expect_float_eq(sim_stat_mean(&r.stats.acceptance), 0.7, 0.01);
    lora_popularity_release(&pop);
}

Test(serving, same_seed_same_results)
{
    serving_config c = base_config(20, 4);
    c.routing = ROUTE_POWER_OF_TWO;
    run_result a = serving_run(&c, 200), b = serving_run(&c, 200);
    cr_expect_eq(a.stats.completed, b.stats.completed);
    cr_expect(memcmp(&a.stats.e2e_s, &b.stats.e2e_s, sizeof a.stats.e2e_s) == 0);
}

Test(serving, preemption_admits_more_and_still_finishes_everything, .timeout = 120)
{
    /* a cache of 60,000 tokens: reserving 550 tokens a request admits ~100 at once;
     * growing the cache a token at a time admits more, and preempts when it fills */
    serving_config c = base_config(30, 1);
    c.replica.kv_capacity_tokens = 60000;
    c.replica.max_batch = 256;
    run_result reserve = serving_run(&c, 400);
    c.replica.kv_policy = KV_PREEMPT;
    char err[256];
    sim_engine *e = sim_engine_create();
    serving *s = serving_create(e, &c, err, sizeof err);
    serving_start(s);
    sim_engine_run_until(e, 400);
    double batch = serving_batch_mean(s, 400);
    cr_expect_gt(serving_preemptions(s), 0, "the cache fills, so sequences are preempted");
    cr_expect_gt(batch, reserve.batch_mean, "preemption %g vs reservation %g in the batch",
                 batch, reserve.batch_mean);
    /* nothing is lost to preemption: the only drop, if any, is a prompt drawn longer
     * than the model's context, refused as it arrives */
    cr_expect_eq(serving_get_stats(s)->dropped, serving_get_stats(s)->over_context);
    serving_free(s);
    sim_engine_free(e);
}

Test(serving, fast_path_agrees_under_preemption, .timeout = 120)
{
    serving_config c = base_config(30, 1);
    c.replica.kv_capacity_tokens = 60000;
    c.replica.kv_policy = KV_PREEMPT;
    /* a full cache ends a decode run every few iterations: little to skip, but never more
     * events than the reference */
    check_fast_against_reference(c, 300, 1.0);
}

static serving_config swap_config(double rate, double host_sequences)
{
    serving_config c = base_config(rate, 1);
    c.replica.kv_capacity_tokens = 60000;
    c.replica.kv_policy = KV_SWAP;
    c.replica.kv_bytes_per_token = model_kv_bytes_per_token(llama, PREC_FP16);
    c.replica.host_kv_bytes = host_sequences * 600 * c.replica.kv_bytes_per_token;
    c.replica.host_kv_bytes_per_s = 25e9;
    c.replica.host_kv_latency_s = 10e-6;
    return c;
}

/* when_full = "swap": the fast path still agrees with one event per iteration within
 * 1%, copies included, with a host tier of a few sequences that fills now and then */
Test(serving, fast_path_agrees_under_swapping, .timeout = 120)
{
    check_fast_against_reference(swap_config(30, 4), 300, 1.0);
}

/* Swapping's counts add up, and its memory is a replica's counters: what the serving
 * holds stays that of the requests in flight (a load the replica keeps up with; only
 * the latency histograms' touched buckets may grow, by a few). */
Test(serving, swapping_counts_add_up_and_memory_stays_flat, .timeout = 120)
{
    serving_config c = swap_config(15, 2);
    char err[256];
    sim_engine *e = sim_engine_create();
    serving *s = serving_create(e, &c, err, sizeof err);
    cr_assert_not_null(s, "%s", err);
    serving_start(s);
    sim_engine_run_until(e, 300);
    size_t early = serving_memory_bytes(s);
    sim_engine_run_until(e, 900);
    const serving_stats *st = serving_get_stats(s);
    cr_assert_gt(st->completed, 0.99 * st->arrived - 100, "not overloaded: %llu of %llu",
                 (unsigned long long)st->completed, (unsigned long long)st->arrived);
    serving_group_stats g = serving_group_get_stats(s, 0, 900);
    cr_expect_gt(g.kv_swap.swaps_out, 0, "sequences were swapped");
    cr_expect_eq(g.kv_swap.swaps_out + g.kv_swap.recomputes, g.kv_preemptions);
    cr_expect_leq(g.kv_swap.swaps_in, g.kv_swap.swaps_out);
    cr_expect_gt(g.kv_swap.stall_s, 0);
    cr_expect_leq(serving_memory_bytes(s), early * 1.1, "memory grew with the requests: %zu "
                  "then %zu bytes", early, serving_memory_bytes(s));
    serving_free(s);
    sim_engine_free(e);
}

Test(serving, network_spikes_add_to_what_users_see)
{
    /* 10% of round trips meet a 1 s spike: the mean TTFT grows by 0.1 s and the p99
     * carries the whole spike */
    serving_config c = base_config(4, 2);
    run_result calm = serving_run(&c, 1000);
    c.spike_probability = 0.1;
    c.spike_s = sim_dist_constant(1);
    run_result spiky = serving_run(&c, 1000);
    double extra = spiky.stats.ttft_s.mean - calm.stats.ttft_s.mean;
    double se = sqrt(0.1 * 0.9 / calm.stats.completed);
    cr_expect_leq(fabs(extra - 0.1), 4 * se, "mean TTFT grew by %g", extra);
    cr_expect_gt(spiky.ttft_p99, 1.0, "p99 %g", spiky.ttft_p99);
    cr_expect_lt(calm.ttft_p99, 1.0);
}

Test(serving, fast_path_agrees_when_waits_expire, .timeout = 120)
{
    /* an overload with a short max_wait: requests expire at the head of the queue while
     * a decode run is in progress; the fast path must end its run where one event per
     * iteration would drop them */
    serving_config c = base_config(60, 1);
    c.replica.max_batch = 8;
    c.replica.max_wait_s = 0.5;
    check_fast_against_reference(c, 200, 1.0);
}

Test(serving, preemption_never_overfills_the_cache, .timeout = 120)
{
    serving_config c = base_config(40, 1);
    c.replica.kv_capacity_tokens = 5000;
    c.replica.kv_policy = KV_PREEMPT;
    c.replica.chunked_prefill = true;
    c.replica.max_tokens = 256;
    for (int mode = 0; mode < 2; mode++) {
        c.replica.reference = mode == 1;
        run_result r = serving_run(&c, 200);
        cr_expect_leq(r.kv_max, 1.0, "%s mode: the cache held %g of its capacity",
                      mode ? "reference" : "fast", r.kv_max);
        cr_expect_gt(r.stats.completed, 100);
    }
}

/* Issue 17, finding 5: on a device so slow that one iteration outlasts the run, the
 * requests past max_wait are dropped as later ones arrive, so what waits stays near
 * rate x max_wait (it once grew to every arrival, and out of memory). */
Test(serving, max_wait_bounds_the_queue_when_an_iteration_never_ends)
{
    device_spec slow = *h100;
    slow.bandwidth_bytes_per_s = 1e3;
    serving_config c = base_config(1e4, 1);
    c.replica.device = &slow;
    c.replica.profile = perf_default_profile(&slow);
    c.replica.max_wait_s = 1;
    char err[256];
    sim_engine *e = sim_engine_create();
    serving *s = serving_create(e, &c, err, sizeof err);
    cr_assert_not_null(s, "%s", err);
    serving_start(s);
    sim_engine_run_until(e, 30);
    const serving_stats *st = serving_get_stats(s);
    double waiting = (double)(st->arrived - st->completed - st->dropped);
    cr_expect_eq(st->completed, 0, "no iteration ends within the run");
    cr_expect(st->arrived > 290000, "%llu arrived", (unsigned long long)st->arrived);
    /* 1e4/s x 1 s, the batch that started, and Poisson noise */
    cr_expect(waiting < 1.05e4 + 128, "%g still in the system", waiting);
    cr_expect(serving_memory_bytes(s) < 8e6, "%zu bytes", serving_memory_bytes(s));
    serving_free(s);
    sim_engine_free(e);
}

/* Issue 17, finding 13: prompts drawn from an unbounded distribution that fill the
 * model's context are dropped as they arrive and counted; an output that would run
 * past the context ends where it does, as an engine's generation ends at its maximum
 * length. */
Test(serving, prompts_beyond_the_context_are_dropped_and_long_outputs_cut)
{
    serving_config c = base_config(20, 2);
    c.prompt_tokens = sim_dist_lognormal(6000, 0.3);  /* a quarter fill 8,192 tokens */
    c.output_tokens = sim_dist_constant(1000);
    char err[256];
    sim_engine *e = sim_engine_create();
    serving *s = serving_create(e, &c, err, sizeof err);
    cr_assert_not_null(s, "%s", err);
    serving_start(s);
    sim_engine_run_until(e, 300);
    const serving_stats *st = serving_get_stats(s);
    double over = (double)st->over_context / (double)st->arrived;
    double cut = (double)st->truncated / (double)st->arrived;
    /* P(prompt >= 8192) = P(z >= ln(8192/6000)/0.3 = 1.038) = 0.150; prompts in
     * (7192, 8192) run past it with 1,000 output tokens: 0.275 - 0.150 = 0.125 */
    cr_expect(fabs(over - 0.150) < 0.02, "%g dropped over the context", over);
    cr_expect(fabs(cut - 0.125) < 0.02, "%g cut where the context ends", cut);
    cr_expect_eq(st->dropped, st->over_context, "no other drops");
    cr_expect_float_eq(st->output_tokens / (double)st->completed,
                       1000 - 0.125 / 0.85 * 500, 40, "the cut outputs are shorter");
    serving_free(s);
    sim_engine_free(e);
}

/* Sliding-window attention (gpt-oss: every other layer keeps the last 128 tokens): runs
 * cut where a sequence crosses its window, so the closed form still agrees with one event
 * per iteration, with reservation and with preemption. */
static serving_config windowed_config(void)
{
    serving_config c = base_config(20, 1);
    const model_spec *m = catalog_model(&cat, "gpt-oss-20b");
    cr_assert_not_null(m);
    c.replica.model = m;
    c.prompt_tokens = sim_dist_lognormal(100, 0.8); /* prompts either side of the window */
    c.replica.kv_capacity_tokens = 30000;
    return c;
}

Test(serving, fast_path_agrees_across_a_sliding_window, .timeout = 120)
{
    /* a crossing is one more cut a sequence: fewer events saved at this load */
    check_fast_against_reference(windowed_config(), 300, 1.0);
}

Test(serving, fast_path_agrees_across_a_sliding_window_under_preemption, .timeout = 120)
{
    serving_config c = windowed_config();
    c.replica.kv_policy = KV_PREEMPT;
    c.replica.kv_capacity_tokens = 12000;
    check_fast_against_reference(c, 300, 1.0);
}

/* Speculation over sliding windows (refused until 2026-12-06): a lookup drafting 4
 * tokens on gpt-oss-20b (every other layer keeps the last 128), and Gemma-3-1B drafting
 * for Gemma-3-27B (five layers in six keep 512 and 1,024 tokens): runs end where a
 * sequence crosses either model's window, so the closed form still agrees with one event
 * a round, reserving and growing the cache. */
static serving_config speculating_windowed_config(const char *target, const char *draft)
{
    serving_config c = windowed_config();
    c.replica.model = catalog_model(&cat, target);
    c.replica.draft = draft ? catalog_model(&cat, draft) : NULL;
    cr_assert(c.replica.model && (!draft || c.replica.draft));
    c.replica.spec_k = 4;
    c.replica.spec_step_s = draft ? 0 : 0.0002;
    c.replica.spec_tokens = perf_speculative_tokens(0.7, 4);
    c.spec_acceptance = sim_dist_uniform(0.5, 0.9);
    if (draft) { /* prompts either side of 512 and 1,024 */
        c.interarrival = sim_dist_exponential(1.0 / 3);
        c.prompt_tokens = sim_dist_lognormal(700, 0.8);
        c.replica.kv_capacity_tokens = 60000;
    }
    return c;
}

Test(serving, fast_path_agrees_speculating_across_sliding_windows, .timeout = 180)
{
    serving_config c = speculating_windowed_config("gpt-oss-20b", NULL);
    check_fast_against_reference(c, 300, 1.0);
    expect_the_same_runs(c, 300, "gpt-oss-20b, a lookup", 0);
    c.replica.kv_policy = KV_PREEMPT;
    c.replica.kv_capacity_tokens = 5000;
    expect_the_same_runs(c, 300, "gpt-oss-20b, a lookup, preempting", 20);
    expect_the_same_runs(speculating_windowed_config("gemma-3-27b", "gemma-3-1b"), 300,
                         "gemma-3-27b drafted by gemma-3-1b", 0);
}

/* One request speculating on gpt-oss-20b (a 64-token prompt, 400 tokens out, a lookup
 * drafting 4 at acceptance 0.7: E = (1 - 0.7^5) / 0.3 = 2.77 tokens a round): round j
 * reads the cache the target keeps of its context, 64 + M_j + 1 tokens with M_j the
 * tokens made before it (floor(j E), the prefill's first token aside) and the fraction
 * j E - M_j its rounds have made in expectation beyond them, past 128 only half the
 * layers growing; the rounds are the fewest that make the 399 tokens after the first.
 * One event a round and the fast path's runs both read exactly that sum. */
Test(serving, speculation_reads_what_the_window_keeps)
{
    serving_config c = speculating_windowed_config("gpt-oss-20b", NULL);
    c.replicas = 1;
    c.max_arrivals = 1;
    c.prompt_tokens = sim_dist_constant(64);
    c.output_tokens = sim_dist_constant(400);
    c.spec_acceptance = sim_dist_constant(0.7);
    const model_spec *m = c.replica.model;
    double e = (float)perf_speculative_tokens(0.7, 4); /* as a request carries it */
    double reads = 0;
    unsigned rounds = 0;
    for (unsigned made = 0; made < 399; rounds++) {
        double at = 64 + made + 1.0 + (rounds * e - floor(rounds * e));
        reads += at <= 128 ? at : at - 0.5 * (at - 128); /* 18 of 36 layers keep 128 */
        made = (unsigned)floor((rounds + 1) * e);
    }
    cr_assert_eq(model_local_layers(m) * 2, m->layers);
    cr_assert_eq(rounds, 144); /* 399 / 2.77, the last round cut at the output's end */
    for (int reference = 1; reference >= 0; reference--) {
        c.replica.reference = reference;
        run_result r = serving_run(&c, 60);
        cr_assert_eq(r.stats.completed, 1);
        cr_expect_eq(r.groups[0].spec_rounds, rounds, "%s: %g rounds",
                     reference ? "reference" : "fast", r.groups[0].spec_rounds);
        cr_expect_float_eq(r.groups[0].cache_tokens_read, reads, 1e-9 * reads,
                           "%s: read %g, by hand %g",
                           reference ? "reference" : "fast", r.groups[0].cache_tokens_read,
                           reads);
    }
}

/* Swapping and the offload tier with a sliding window: what moves and what is read from
 * host memory is what the cache holds; the closed form still agrees. */
Test(serving, fast_path_agrees_across_a_sliding_window_with_swap_and_offload, .timeout = 120)
{
    serving_config c = windowed_config();
    c.replica.kv_policy = KV_SWAP;
    c.replica.kv_capacity_tokens = 12000;
    c.replica.kv_bytes_per_token = model_kv_bytes_per_token(c.replica.model, PREC_FP16);
    c.replica.host_kv_bytes = 3000 * c.replica.kv_bytes_per_token;
    c.replica.host_kv_bytes_per_s = 25e9;
    c.replica.host_kv_latency_s = 10e-6;
    check_fast_against_reference(c, 300, 1.0);
    c.replica.kv_policy = KV_PREEMPT;
    c.replica.kv_device_tokens = 6000; /* half the cache in host memory */
    check_fast_against_reference(c, 300, 1.0);
    /* both were exercised */
    for (int k = 0; k < 2; k++) {
        c.replica.kv_policy = k ? KV_PREEMPT : KV_SWAP;
        c.replica.kv_device_tokens = k ? 6000 : 0;
        char err[256];
        sim_engine *e = sim_engine_create();
        serving *s = serving_create(e, &c, err, sizeof err);
        cr_assert_not_null(s, "%s", err);
        serving_start(s);
        sim_engine_run_until(e, 300);
        serving_group_stats g = serving_group_get_stats(s, 0, 300);
        if (k)
            cr_expect_gt(g.kv_swap.offload_s, 0, "the offload tier was read");
        else
            cr_expect_gt(g.kv_swap.swaps_in, 0, "sequences were swapped out and back");
        serving_free(s);
        sim_engine_free(e);
    }
}

Test(serving, a_sliding_window_lets_more_long_sequences_share_the_cache, .timeout = 60)
{
    /* Gemma 3 12B: 48 layers, 8 global, 40 local with a 1024-token window.  A request of
     * 4000 + 200 tokens reserves (8 x 4200 + 40 x 1024) / 48 = 1553.3 tokens of every
     * layer, so a cache of 100,000 holds 64 of them; counted whole (4200) it held 23. */
    serving_config c = base_config(50, 1);
    const model_spec *m = catalog_model(&cat, "gemma-3-12b");
    c.replica.model = m;
    c.prompt_tokens = sim_dist_constant(4000);
    c.output_tokens = sim_dist_constant(200);
    c.replica.kv_capacity_tokens = 100000;
    c.replica.max_batch = 256;
    run_result r = serving_run(&c, 60);
    cr_expect_float_eq(r.batch_max, 64, 0, "sequences at once: %g", r.batch_max);
    model_spec whole = *m;
    whole.window = whole.global_every = 0;
    c.replica.model = &whole;
    r = serving_run(&c, 60);
    cr_expect_float_eq(r.batch_max, 23, 0, "without the window: %g", r.batch_max);
}
