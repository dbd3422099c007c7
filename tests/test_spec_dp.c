/* Speculation beside attention data parallelism (issue 36; refused until 2026-12-06): a
 * mixture target whose tp devices each run their own share of the sequences holds its
 * draft on every device, and a dense draft runs whole on each device on that device's
 * share.  By hand: DeepSeek-V3 in fp8 on 8 H200s, attention data parallel, with
 * Llama-3.2-1B drafting 3 tokens. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/memory.h"
#include "models/perf.h"
#include "support/catalog_fixture.h"
#include "support/cli.h"
#include "support/scratch.h"

TestSuite(spec_dp, .init = test_catalog_setup, .fini = test_catalog_teardown);

/* Each device: the target's attention, dense layers and embeddings whole and 1/8 of its
 * routed experts, the whole draft, and the caches of its own sequences in both models;
 * the eight devices' tokens together. */
Test(spec_dp, each_device_holds_the_draft_and_its_own_sequences_caches)
{
    const model_spec *m = test_model("deepseek-v3"), *draft = test_model("llama-3.2-1b");
    const device_spec *d = test_device("H200-SXM");
    double routed = (double)model_moe_layers(m) * m->experts * model_expert_params(m);
    double weights = model_weight_bytes(m, PREC_FP8) - routed * (7.0 / 8) * 1
                     + model_weight_bytes(draft, PREC_FP8);
    double per_token = model_kv_bytes_per_token(m, PREC_FP8)
                       + model_kv_bytes_per_token(draft, PREC_FP8);
    double expected = 8 * floor((0.9 * d->memory_bytes - weights) / per_token);
    inference_memory got = memory_inference_with_draft_for(m, draft, d, PREC_FP8, PREC_FP8, 8,
                                                           true, NULL);
    cr_expect_float_eq(got.weights_bytes, weights, 1e-9 * weights);
    cr_expect_float_eq(got.kv_capacity_tokens, expected, 1e-9 * expected);
    cr_expect_gt(got.kv_capacity_tokens, 0);
    /* without the draft: memory_inference_dp's */
    inference_memory alone = memory_inference_dp(m, d, PREC_FP8, PREC_FP8, 8, NULL);
    cr_expect_lt(got.kv_capacity_tokens, alone.kv_capacity_tokens);
    /* tensor parallel, or a dense target: the draft split as the target, as before */
    inference_memory tp = memory_inference_with_draft_for(m, draft, d, PREC_FP8, PREC_FP8, 8,
                                                          false, NULL);
    inference_memory before = memory_inference_with_draft(m, draft, d, PREC_FP8, PREC_FP8, 8,
                                                          NULL);
    cr_expect_eq(tp.kv_capacity_tokens, before.kv_capacity_tokens);
    const model_spec *dense = test_model("llama-3.1-70b");
    cr_expect_eq(memory_inference_with_draft_for(dense, draft, d, PREC_FP8, PREC_FP8, 8, true,
                                                 NULL).kv_capacity_tokens,
                 memory_inference_with_draft(dense, draft, d, PREC_FP8, PREC_FP8, 8,
                                             NULL).kv_capacity_tokens);
}

/* A round's draft at 64 sequences: each of the 8 devices runs the whole 1B draft on its 8
 * sequences, one device's step (no all-reduce), k times; a tensor-parallel target's
 * draft stays split over the 8 devices. */
Test(spec_dp, a_dense_draft_runs_on_each_device_on_its_share)
{
    const model_spec *m = test_model("deepseek-v3"), *draft = test_model("llama-3.2-1b");
    const device_spec *d = test_device("H200-SXM");
    perf_profile profile = perf_default_profile(d);
    perf_setup target = { .model = m, .device = d, .profile = &profile, .weights = PREC_FP8,
                          .kv = PREC_FP8, .tp = 8, .attention_dp = true };
    perf_setup ds = perf_draft_setup(&target, draft);
    cr_expect(ds.attention_dp && ds.tp == 8 && ds.model == draft);
    perf_speculation sp = { &ds, 3, 0.7, 0 };
    /* the draft's steps inside the round's iteration: no host work of their own */
    perf_profile quiet = profile;
    quiet.host_s = quiet.host_per_seq_s = quiet.host_tp_s = quiet.host_tp_per_seq_s = 0;
    perf_setup one = { .model = draft, .device = d, .profile = &quiet, .weights = PREC_FP8,
                       .kv = PREC_FP8, .tp = 1 };
    double by_hand = 0;
    for (unsigned i = 0; i < 3; i++)
        by_hand += perf_decode_step(&one, 8, 2000 + i).total_s;
    cr_expect_float_eq(perf_speculative_draft_s(&sp, 64, 2000), by_hand, 1e-12 * by_hand);
    /* tensor parallel: the draft over all 8 devices and all 64 sequences, as before */
    target.attention_dp = false;
    perf_setup split = perf_draft_setup(&target, draft);
    cr_expect(!split.attention_dp);
    perf_speculation tp = { &split, 3, 0.7, 0 };
    perf_setup eight = one;
    eight.tp = 8;
    double tp_by_hand = 0;
    for (unsigned i = 0; i < 3; i++)
        tp_by_hand += perf_decode_step(&eight, 64, 2000 + i).total_s;
    cr_expect_float_eq(perf_speculative_draft_s(&tp, 64, 2000), tp_by_hand, 1e-12 * tp_by_hand);
}

/* The scenario the loader refused: it loads, runs, and speculation pays its draft's
 * share of the busy time. */
Test(spec_dp, a_scenario_with_both_runs, .timeout = 120)
{
    char *dir = scratch_dir(), *out = NULL, *err = NULL;
    char *file = scratch_file(dir, "s.lua",
        "local fs = require \"fleetsim\"\n"
        "return fs.scenario { name = \"mtp\", duration = \"2m\",\n"
        "  pools = { g = fs.dedicated { gpu = \"H200-SXM\", count = 8 } },\n"
        "  workloads = { chat = fs.inference { model = \"deepseek-v3\", pool = \"g\", tp = 8,\n"
        "    precision = \"fp8\", kv_precision = \"fp8\", attention_dp = true,\n"
        "    arrivals = fs.poisson { rate = 4 }, prompt = 1000, output = 200,\n"
        "    speculative = { k = 3, acceptance = 0.7, draft = \"llama-3.2-1b\" } } } }\n");
    cr_assert_eq(cli_run(&out, &err, "run %s -q --no-plots -o %s/o", file, dir), 0, "%s", err);
    char path[1024];
    snprintf(path, sizeof path, "%s/o/summary.csv", dir);
    char *csv = scratch_read(path);
    cr_assert_not_null(csv);
    summary_row share = scratch_summary_row(csv, "pool", "g", "draft_time_share");
    cr_expect(share.found && share.value > 0 && share.value < 0.5, "draft share %g",
              share.value);
    free(csv), free(file), free(out), free(err);
    scratch_remove_dir(dir);
}
