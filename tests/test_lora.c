/* Multi-LoRA (models/lora.h, replica_config's lora_*): an adapter's bytes by hand, the
 * slots' LRU order, a load's duration, a cold adapter's TTFT, one adapter at no cost
 * against no LoRA, and bad input (the fast path against one event per iteration:
 * tests/test_serving.c). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tests/support/catalog_fixture.h"
#include "tests/support/cli.h"
#include "models/kv_swap.h"
#include "models/lora.h"
#include "models/memory.h"
#include "models/replica.h"
#include "models/serving.h"
#include "tests/support/scratch.h"
#include "tests/support/serving_run.h"

static const model_spec *llama;
static const device_spec *h100;

static void setup(void)
{
    test_catalog_setup();
    llama = test_model("llama-3.1-8b");
    h100 = test_device("H100-SXM");
}

TestSuite(lora, .init = setup, .fini = test_catalog_teardown);

Test(lora, an_adapters_bytes_are_rank_by_in_plus_out_over_projections_and_layers)
{
    /* Llama-3.1-8B: hidden 4096, 32 heads and 8 kv heads of 128, ffn 14336, 32 layers.
     * q 4096 + 4096, k and v 4096 + 1024 each, o 4096 + 4096: 26,624 a layer at rank 1;
     * rank 16 in 16 bits: 32 x 16 x 26,624 x 2 = 27,262,976 bytes. */
    cr_expect_float_eq(lora_layer_width(llama, LORA_ATTENTION), 26624, 0);
    cr_expect_float_eq(lora_adapter_bytes(llama, 16, LORA_ATTENTION, 2), 27262976, 0);
    /* q and v: 8192 + 5120; all: the MLP's gate, up (4096 + 14336) and down likewise */
    cr_expect_float_eq(lora_layer_width(llama, LORA_Q | LORA_V), 13312, 0);
    cr_expect_float_eq(lora_adapter_bytes(llama, 8, LORA_ALL, 2), 32.0 * 8 * 81920 * 2, 0);
    cr_expect_float_eq(lora_flops_per_token(llama, 16, LORA_ATTENTION), 2.0 * 32 * 16 * 26624, 0);
}

Test(lora, slots_evict_the_least_recently_used_adapter_no_sequence_uses)
{
    lora_slots *s = lora_slots_create(2, 5);
    unsigned gone = 7;
    cr_expect_eq(lora_slots_acquire(s, 0, &gone), LORA_LOADED);
    cr_expect_eq(gone, UINT32_MAX, "a free slot");
    cr_expect_eq(lora_slots_acquire(s, 1, NULL), LORA_LOADED);
    cr_expect_eq(lora_slots_acquire(s, 1, NULL), LORA_HIT);
    cr_expect_eq(lora_slots_in_use(s), 2);
    cr_expect_not(lora_slots_can_acquire(s, 2), "both slots in use");
    cr_expect_eq(lora_slots_acquire(s, 2, NULL), LORA_NO_SLOT);
    lora_slots_release(s, 1);
    lora_slots_release(s, 0); /* 0 unused since after 1's first release */
    cr_expect_eq(lora_slots_acquire(s, 2, &gone), LORA_LOADED);
    cr_expect_eq(gone, 0, "0 was released before 1's last user was: it goes first");
    cr_expect(lora_slots_resident(s, 1) && !lora_slots_resident(s, 0));
    lora_slots_release(s, 1);
    lora_slots_release(s, 2);
    lora_slots_acquire(s, 1, NULL); /* 1 used last: 2 is the older */
    lora_slots_release(s, 1);
    cr_expect_eq(lora_slots_acquire(s, 3, &gone), LORA_LOADED);
    cr_expect_eq(gone, 2);
    lora_slots_free(s);
}

Test(lora, a_load_is_the_adapters_bytes_over_the_host_link)
{
    /* H100-SXM: PCIe gen 5 x16, 64 GB/s a direction, 80% achieved: 51.2 GB/s; 27.26 MB
     * take 0.5325 ms */
    double bw = kv_swap_bandwidth(&(host_kv_spec){ 0 }, h100, 1);
    cr_expect_float_eq(bw, 0.8 * h100->pcie_bytes_per_s, 1);
    double s = lora_load_s(lora_adapter_bytes(llama, 16, LORA_ATTENTION, 2), bw);
    cr_expect_float_eq(s, 27262976 / (0.8 * h100->pcie_bytes_per_s), 1e-15);
    cr_expect_float_eq(s, 27262976 / 51.2e9, 1e-3 * s, "%g s with %g B/s", s, h100->pcie_bytes_per_s);
}

static replica_config replica_of(bool lora)
{
    replica_config c = {
        .model = llama, .device = h100, .profile = perf_default_profile(h100),
        .prec = PREC_FP16, .kv_prec = PREC_FP16, .tp = 1, .max_batch = 64, .max_tokens = 8192,
        .kv_capacity_tokens = 1e5,
    };
    if (lora) {
        c.lora_slots = 4;
        c.lora_adapters = 10;
        c.lora_load_s = 0.0833;
        c.lora_bytes = lora_adapter_bytes(llama, 16, LORA_ATTENTION, 2);
        c.lora_flops_per_token = lora_flops_per_token(llama, 16, LORA_ATTENTION);
    }
    return c;
}

static void note_done(void *context, llm_request *q, bool dropped)
{
    (void)q;
    cr_assert(!dropped);
    ++*(int *)context;
}

/* One request of 1,000 tokens and `output` out, adapter `adapter`, alone on a replica
 * of configuration c (its lora_stats: st); the request as it ended. */
static llm_request run_alone(const replica_config *c, lora_stats *st, unsigned output,
                             unsigned adapter)
{
    sim_engine *e = sim_engine_create();
    int done = 0;
    replica_config rc = *c;
    rc.lora_stats = st;
    replica *r = replica_create(e, &rc, note_done, &done);
    llm_request q = { .prompt = 1000, .output = output, .adapter = adapter };
    replica_enqueue(r, &q);
    sim_engine_run(e);
    cr_assert_eq(done, 1);
    replica_free(r);
    sim_engine_free(e);
    return q;
}

static double first_token_s(const replica_config *c, lora_stats *st)
{
    return run_alone(c, st, 3, 7).first_token_s;
}

Test(lora, a_cold_adapter_adds_its_load_and_its_kernels_to_the_first_token)
{
    replica_config plain = replica_of(false), with = replica_of(true);
    lora_stats st = { 0 };
    sim_histogram_init(&st.wait_hist_s);
    double base = first_token_s(&plain, NULL), cold = first_token_s(&with, &st);
    /* the prefill's 1,000 tokens: 1000 x 2 x 32 x 16 x 26,624 = 27.3 GFLOP at the fp16
     * peak's efficiency, against 27.3 MB at the bandwidth's: compute bound */
    perf_profile p = with.profile;
    double compute = 1000 * with.lora_flops_per_token
                     / (device_peak_flops(h100, PREC_FP16, NULL) * p.compute_efficiency);
    double memory = with.lora_bytes / (h100->bandwidth_bytes_per_s * p.bandwidth_efficiency);
    cr_expect_gt(compute, memory);
    cr_expect_float_eq(cold, base + 0.0833 + compute, 1e-12, "%.9f vs %.9f", cold,
                       base + 0.0833 + compute);
    cr_expect_eq(st.admitted, 1);
    cr_expect_eq(st.hits, 0);
    cr_expect_eq(st.loads, 1);
    cr_expect_float_eq(sim_stat_mean(&st.wait_s), 0.0833, 1e-15);
    sim_histogram_release(&st.wait_hist_s);
}

static serving_config chat(bool lora, const lora_popularity *pop, bool reference)
{
    serving_config c = {
        .name = "chat", .replicas = 2, .routing = ROUTE_LEAST_OUTSTANDING,
        .interarrival = sim_dist_exponential(1.0 / 12),
        .prompt_tokens = sim_dist_lognormal(600, 0.8),
        .output_tokens = sim_dist_lognormal(150, 0.7),
        .rtt_s = sim_dist_constant(0), .seed = 3,
    };
    c.replica = replica_of(lora);
    c.replica.max_batch = 128;
    c.replica.kv_capacity_tokens =
        memory_inference(llama, h100, PREC_FP16, PREC_FP16, 1).kv_capacity_tokens;
    c.replica.reference = reference;
    if (lora) {
        c.lora = pop;
        c.replica.lora_adapters = pop->adapters;
    }
    return c;
}

Test(lora, one_adapter_at_no_cost_serves_as_without_lora)
{
    lora_popularity one;
    cr_assert_eq(lora_popularity_zipf(&one, 1, 1), 0);
    serving_config plain = chat(false, NULL, false), free_lora = chat(true, &one, false);
    free_lora.replica.lora_load_s = free_lora.replica.lora_bytes = 0;
    free_lora.replica.lora_flops_per_token = 0;
    run_result a = serving_run(&plain, 600), b = serving_run(&free_lora, 600);
    cr_expect_eq(a.stats.completed, b.stats.completed);
    cr_expect_eq(a.stats.ttft_s.mean, b.stats.ttft_s.mean, "bit for bit");
    cr_expect_eq(a.stats.tpot_s.mean, b.stats.tpot_s.mean);
    cr_expect_eq(a.ttft_p99, b.ttft_p99);
    cr_expect_eq(b.stats.lora.loads, 2, "one load a replica");
    cr_expect_eq(b.stats.lora.hits + 2, b.stats.lora.admitted);
    /* with its costs, the same requests, slower by a little */
    serving_config costed = chat(true, &one, false);
    run_result c = serving_run(&costed, 600);
    cr_expect_eq(c.stats.arrived, a.stats.arrived, "the adapter's stream leaves the others alike");
    cr_expect_gt(c.stats.tpot_s.mean, a.stats.tpot_s.mean);
    cr_expect_lt(c.stats.tpot_s.mean, 1.1 * a.stats.tpot_s.mean);
    lora_popularity_release(&one);
}

static char *lora_scenario(const char *dir, const char *lora)
{
    char text[1024];
    snprintf(text, sizeof text,
             "local fs = require \"fleetsim\"\n"
             "return fs.scenario { name = \"s\", duration = \"1m\",\n"
             "  pools = { gpus = fs.dedicated { gpu = \"H100-SXM\", count = 1 } },\n"
             "  workloads = { chat = fs.inference { model = \"llama-3.1-8b\", precision = \"fp16\",\n"
             "    pool = \"gpus\", arrivals = fs.poisson { rate = 2 }, max_wait = \"1m\",\n"
             "    prompt = 500, output = 100,\n"
             "    lora = { %s } } } }\n", lora);
    return scratch_file(dir, "s.lua", text);
}

Test(lora, a_scenario_reports_its_metrics_and_bad_input_names_the_key_and_value)
{
    char *dir = scratch_dir(), *out = NULL, *err = NULL;
    char *file = lora_scenario(dir, "adapters = 50, popularity = 1.2, rank = 8, slots = 4");
    /* rank 8: 13.63 MB an adapter, 4 slots 54.5 MB; 13.63 MB over 51.2 GB/s: 0.266 ms */
    cr_assert_eq(cli_run(&out, &err, "check %s", file), 0, "%s", err);
    cr_expect(strstr(out, "lora              50 adapters of rank 8 on q, k, v, o, 13.63 MB each; "
                          "4 slots a replica (0.05453 GB out of the cache); a load 0.266 ms"),
              "%s", out);
    cr_assert_eq(cli_run(&out, &err, "run %s -q --no-plots -o %s/ok", file, dir), 0, "%s", err);
    char path[512];
    snprintf(path, sizeof path, "%s/ok/summary.csv", dir);
    char *summary = scratch_read(path);
    cr_assert_not_null(summary);
    const char *metrics[] = { "adapter_hit_rate", "adapter_loads", "adapter_wait_mean_s",
                              "adapter_wait_p99_s", "adapters_per_iteration_mean" };
    for (size_t i = 0; i < sizeof metrics / sizeof metrics[0]; i++)
        cr_expect(strstr(summary, metrics[i]), "%s missing", metrics[i]);
    free(summary);
    /* with speculative decoding (refused until 2026-12-05): both sets of metrics */
    free(file);
    file = lora_scenario(dir, "adapters = 50, slots = 4 }, speculative = { k = 4, "
                              "acceptance = 0.7, draft_cost = \"0.2ms\"");
    cr_assert_eq(cli_run(&out, &err, "run %s -q --no-plots -o %s/spec", file, dir), 0, "%s", err);
    snprintf(path, sizeof path, "%s/spec/summary.csv", dir);
    summary = scratch_read(path);
    cr_assert_not_null(summary);
    cr_expect(strstr(summary, "adapter_hit_rate"), "%s", summary);
    cr_expect(strstr(summary, "spec_acceptance"), "%s", summary);
    free(summary);
    struct { const char *lora, *message; } bad[] = {
        { "adapters = 0", "s.lua:4: workloads.chat.lora.adapters: expected a positive integer, got 0" },
        { "adapters = 10, rank = 2000", "workloads.chat.lora.rank: 2000 is over the limit of 1024" },
        { "adapters = 10, slot = 4", "unknown key 'slot' (did you mean 'slots'?)" },
        { "adapters = 10, projections = \"mlp\"", "workloads.chat.lora.projections" },
        { "adapters = 3, popularity = { 5, 1 }",
          "workloads.chat.lora.adapters: 3 adapters but popularity lists 2 weights" },
        { "popularity = { 0, 0 }", "workloads.chat.lora.popularity: expected weights >= 0, not all 0" },
        { "adapters = 10, load = \"-1s\"", "workloads.chat.lora.load" },
        { "adapters = 10, rank = 1024, slots = 100", "workloads.chat.lora.slots: 100 slots of" },
        { "popularity = 1", "workloads.chat.lora.adapters: missing" },
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        free(file);
        file = lora_scenario(dir, bad[i].lora);
        cr_expect_eq(cli_run(&out, &err, "run %s -q -o %s/out", file, dir), 2, "%s", bad[i].lora);
        cr_expect(strstr(err, bad[i].message), "%s:\n%s", bad[i].lora, err);
    }
    free(file);
    free(out);
    free(err);
    scratch_remove_dir(dir);
}

/* One request of 1,000 tokens and 21 out under speculation (a lookup, k = 4, every
 * proposal kept: 5 tokens a round), cold adapter: it ends later than without LoRA by
 * the load, the prefill's adapter kernels (1,000 tokens) and 4 rounds' (5 tokens
 * verified each: the kernels run on the target's tokens, the draft is the base
 * model's). */
static double finish_s(const replica_config *c)
{
    return run_alone(c, c->lora_stats, 21, 3).finish_s;
}

Test(lora, adapters_compose_with_speculative_decoding)
{
    replica_config plain = replica_of(false), with = replica_of(true);
    replica_config *both[] = { &plain, &with };
    for (int i = 0; i < 2; i++) {
        both[i]->spec_k = 4;
        both[i]->spec_step_s = 1e-4;
        both[i]->spec_tokens = 5;
    }
    perf_profile p = with.profile;
    double peak = device_peak_flops(h100, PREC_FP16, NULL) * p.compute_efficiency;
    double memory = with.lora_bytes / (h100->bandwidth_bytes_per_s * p.bandwidth_efficiency);
    double prefill = fmax(1000 * with.lora_flops_per_token / peak, memory);
    double round = fmax(5 * with.lora_flops_per_token / peak, memory);
    double expect = finish_s(&plain) + 0.0833 + prefill + 4 * round;
    double got = finish_s(&with);
    cr_expect_float_eq(got, expect, 1e-12, "%.9f vs %.9f", got, expect);
}

/* Disaggregated (refused until 2026-12-05): one request of 1,000 tokens and 21 out,
 * prefilled on one replica and decoded on another, its adapter cold on both.  It ends
 * later than without LoRA by two loads (one a pool), the prefill's adapter kernels
 * (1,000 tokens) and 20 decode steps' (one token each: the adapter's read). */
static serving_group decode_pool;

static serving_config split(bool lora, const lora_popularity *pop)
{
    serving_config c = {
        .name = "chat", .replicas = 1, .routing = ROUTE_ROUND_ROBIN,
        .interarrival = sim_dist_constant(1), .max_arrivals = 1,
        .prompt_tokens = sim_dist_constant(1000), .output_tokens = sim_dist_constant(21),
        .rtt_s = sim_dist_constant(0), .seed = 3,
        .link = { 50e9, 20e-6, KV_LINK_PER_REPLICA, 0 },
        .kv_bytes_per_token = model_kv_bytes_per_token(llama, PREC_FP16),
    };
    c.replica = replica_of(lora);
    if (lora) {
        c.lora = pop;
        c.replica.lora_adapters = pop->adapters;
    }
    decode_pool = (serving_group){ .role = ROLE_DECODE,
                                   .fleet = { .pool_name = "decode", .replica = c.replica,
                                              .replicas = 1, .max = 1,
                                              .rtt_s = sim_dist_constant(0) },
                                   .routing = ROUTE_ROUND_ROBIN };
    c.groups = &decode_pool;
    c.ngroups = 1;
    return c;
}

Test(lora, adapters_load_on_both_pools_of_a_disaggregated_workload)
{
    lora_popularity one;
    cr_assert_eq(lora_popularity_zipf(&one, 1, 1), 0);
    serving_config plain = split(false, NULL);
    run_result a = serving_run(&plain, 100);
    serving_config with = split(true, &one);
    run_result b = serving_run(&with, 100);
    cr_assert_eq(a.stats.completed, 1);
    cr_assert_eq(b.stats.completed, 1);
    replica_config r = replica_of(true);
    perf_profile p = r.profile;
    double peak = device_peak_flops(h100, PREC_FP16, NULL) * p.compute_efficiency;
    double memory = r.lora_bytes / (h100->bandwidth_bytes_per_s * p.bandwidth_efficiency);
    double prefill = fmax(1000 * r.lora_flops_per_token / peak, memory);
    double step = fmax(r.lora_flops_per_token / peak, memory);
    double expect = a.stats.e2e_s.mean + 2 * 0.0833 + prefill + 20 * step;
    cr_expect_float_eq(b.stats.e2e_s.mean, expect, 1e-9, "%.9f vs %.9f", b.stats.e2e_s.mean,
                       expect);
    /* TTFT: the prefill pool's load and kernels only */
    cr_expect_float_eq(b.stats.ttft_s.mean, a.stats.ttft_s.mean + 0.0833 + prefill, 1e-9);
    /* admitted twice (prefill, decode), loaded twice, never resident */
    cr_expect_eq(b.stats.lora.admitted, 2);
    cr_expect_eq(b.stats.lora.loads, 2);
    cr_expect_eq(b.stats.lora.hits, 0);
    lora_popularity_release(&one);
    /* through the loader: a scenario with lora and decode runs */
    char *dir = scratch_dir(), *out = NULL, *err = NULL;
    char *file = scratch_file(dir, "d.lua",
        "local fs = require \"fleetsim\"\n"
        "return fs.scenario { name = \"s\", duration = \"1m\",\n"
        "  pools = { p = fs.dedicated { gpu = \"H100-SXM\", count = 1 },\n"
        "            d = fs.dedicated { gpu = \"H100-SXM\", count = 1 } },\n"
        "  workloads = { chat = fs.inference { model = \"llama-3.1-8b\", precision = \"fp16\",\n"
        "    pool = \"p\", decode = { pool = \"d\" }, arrivals = fs.poisson { rate = 2 },\n"
        "    max_wait = \"1m\", prompt = 500, output = 100, lora = { adapters = 20 } } } }\n");
    cr_assert_eq(cli_run(&out, &err, "run %s -q --no-plots -o %s/d", file, dir), 0, "%s", err);
    char path[512];
    snprintf(path, sizeof path, "%s/d/summary.csv", dir);
    char *summary = scratch_read(path);
    cr_assert_not_null(summary);
    cr_expect(strstr(summary, "adapter_hit_rate") && strstr(summary, "kv_transfer_mean_s"),
              "%s", summary);
    free(summary);
    free(file);
    free(out);
    free(err);
    scratch_remove_dir(dir);
}
