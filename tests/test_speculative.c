/* Speculative decoding in the analytic model (models/perf.h perf_speculative_*, estimate
 * --speculative): the expected tokens a round by hand, a round's cost from its parts,
 * and the known shape, a large gain at small batch that shrinks as the batch grows; and
 * scenarios/speculative_load.lua, whose gain falls once its batch fills. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/perf.h"
#include "support/catalog_fixture.h"
#include "support/cli.h"
#include "support/scratch.h"

TestSuite(speculative, .init = test_catalog_setup, .fini = test_catalog_teardown);

Test(speculative, tokens_a_round_follow_the_geometric_series)
{
    /* k = 4 at a = 0.7: 1 + 0.7 + 0.49 + 0.343 + 0.2401 = 2.7731 */
    cr_expect_float_eq(perf_speculative_tokens(0.7, 4), 2.7731, 1e-12);
    cr_expect_float_eq(perf_speculative_tokens(0, 5), 1, 0, "nothing kept: the target's own");
    cr_expect_float_eq(perf_speculative_tokens(1, 5), 6, 0, "everything kept: k + 1");
    cr_expect_float_eq(perf_speculative_tokens(0.5, 1), 1.5, 1e-12);
}

Test(speculative, a_round_is_the_drafts_steps_and_one_verification)
{
    const model_spec *target = test_model("llama-3.1-70b"), *small = test_model("llama-3.2-1b");
    const device_spec *d = test_device("H100-SXM");
    perf_profile p = perf_default_profile(d);
    perf_setup t = { .model = target, .device = d, .profile = &p, .weights = PREC_FP8,
                     .kv = PREC_BF16, .tp = 8 };
    perf_profile quiet = p;
    quiet.host_s = quiet.host_per_seq_s = quiet.host_tp_s = quiet.host_tp_per_seq_s = 0;
    perf_setup draft = t, draft_quiet = t;
    draft.model = draft_quiet.model = small;
    draft_quiet.profile = &quiet;
    perf_speculation sp = { &draft, 3, 0.8, 0 };
    /* verification: 8 sequences x 4 positions over 1000 cached tokens and each other */
    perf_batch verify = { .prefill_tokens = 32, .prefill_seqs = 8, .prefill_last = 32,
                          .prefill_cached_pairs = 32 * 1000.0, .prefill_new_pairs = 8 * 16 / 2.0 };
    double expect = perf_iteration(&t, &verify, NULL).total_s;
    for (int i = 0; i < 3; i++)
        expect += perf_decode_step(&draft_quiet, 8, 1000.0 + i).total_s;
    cr_expect_float_eq(perf_speculative_round_s(&t, &sp, 8, 1000), expect, 1e-12 * expect);
    /* a lookup draft: the verification alone */
    perf_speculation lookup = { NULL, 3, 0.8, 0 };
    cr_expect_float_eq(perf_speculative_round_s(&t, &lookup, 8, 1000),
                       perf_iteration(&t, &verify, NULL).total_s, 1e-15);
}

/* The speed-up at each batch of `estimate --csv` output. */
static double speedup(const char *csv, unsigned batch)
{
    char key[64];
    snprintf(key, sizeof key, "\nspec_tpot_batch_%u_s,", batch);
    const char *s = strstr(csv, key);
    snprintf(key, sizeof key, "\nplain_tpot_batch_%u_s,", batch);
    const char *p = strstr(csv, key);
    cr_assert(s && p, "batch %u in:\n%s", batch, csv);
    return strtod(strchr(p + 1, ',') + 1, NULL) / strtod(strchr(s + 1, ',') + 1, NULL);
}

Test(speculative, the_gain_is_largest_at_small_batch_and_shrinks)
{
    char *out = NULL, *err = NULL;
    cr_assert_eq(cli_run(&out, &err, "estimate --model llama-3.1-70b --gpu H100-SXM --gpus 8 "
                         "--tp 8 --precision fp8 --speculative 4 --acceptance 0.7 "
                         "--draft llama-3.2-1b --engine sglang --csv"), 0, "%s", err);
    double g1 = speedup(out, 1), g64 = speedup(out, 64), g1024 = speedup(out, 1024);
    /* at one sequence the round (four 1B steps, five positions verified) costs about two
     * plain steps for 2.77 tokens; at 1,024 the verification is compute-bound and
     * speculation loses (speculation priced per engine: tests/test_engines.c) */
    cr_expect(g1 > 1.3, "batch 1: %g", g1);
    cr_expect(g64 < g1 && g1024 < g64, "1: %g, 64: %g, 1024: %g", g1, g64, g1024);
    cr_expect(g1024 < 1, "batch 1024: %g", g1024);
    /* bad input: an acceptance outside [0, 1], or one without --speculative */
    cr_expect_eq(cli_run(&out, &err, "estimate --model llama-3-8b --gpu H100-SXM "
                         "--speculative 3 --acceptance 1.5"), 2);
    cr_expect(strstr(err, "--acceptance expects a probability in [0, 1], got '1.5'"), "%s", err);
    cr_expect_eq(cli_run(&out, &err, "estimate --model llama-3-8b --gpu H100-SXM --draft x"), 2);
    cr_expect(strstr(err, "give --speculative K too"), "%s", err);
    cr_expect_eq(cli_run(&out, &err, "estimate --model llama-3-8b --gpu H100-SXM "
                         "--speculative 2 --acceptance 0.5 --draft llama-9b"), 2);
    cr_expect(strstr(err, "--draft: unknown model 'llama-9b'"), "%s", err);
    free(out);
    free(err);
}

/* A metric of a workload at a sweep point of sweep.csv (rows "RATE,RATE,workload,NAME,
 * METRIC,VALUE,..."). */
static double sweep_value(const char *csv, double rate, const char *scope, const char *subject,
                          const char *metric)
{
    char key[160];
    snprintf(key, sizeof key, "\n%g,%g,%s,%s,%s,", rate, rate, scope, subject, metric);
    const char *p = strstr(csv, key);
    cr_assert_not_null(p, "no %s", key + 1);
    return strtod(p + strlen(key), NULL);
}

Test(speculative, the_scenarios_gain_falls_once_the_batch_fills, .timeout = 120)
{
    char *dir = scratch_dir(), *out = NULL, *err = NULL, path[512];
    cr_assert_eq(cli_run(&out, &err, "run scenarios/speculative_load.lua -q --no-plots -o %s",
                         dir), 0, "%s", err);
    snprintf(path, sizeof path, "%s/sweep.csv", dir);
    char *csv = scratch_read(path);
    cr_assert_not_null(csv);
    double gain[13] = { 0 };
    unsigned rates[] = { 1, 8, 12 };
    for (size_t i = 0; i < 3; i++) {
        unsigned r = rates[i];
        gain[r] = sweep_value(csv, r, "workload", "chat_plain", "tpot_p50_s")
                  / sweep_value(csv, r, "workload", "chat_spec", "tpot_p50_s");
    }
    /* alone, about estimate's x1.62 at a batch of 4 under SGLang (its scheduler's work
     * hidden under the GPU's, so speculation saves GPU steps alone): a round of the 1B's
     * four steps and a verification of five positions costs about 1.7 plain steps for
     * 2.77 tokens */
    cr_expect(gain[1] > 1.45 && gain[1] < 1.8, "1/s: x%g", gain[1]);
    /* at 12/s both hold a full batch (256) and the gain is the smallest */
    cr_expect_gt(sweep_value(csv, 12, "pool", "spec", "batch_size_mean"), 240);
    cr_expect_lt(gain[12], gain[8], "12/s: x%g against x%g at 8/s", gain[12], gain[8]);
    cr_expect_lt(gain[12], gain[1], "12/s: x%g against x%g at 1/s", gain[12], gain[1]);
    /* there a round takes as long for every sequence, so a request of low acceptance
     * (1.94 tokens a round at 0.5) waits longer a token than without: the p99 reverses,
     * and both servers, overloaded, make the same tokens a second within 3% (a full
     * batch's round costs about what its 2.77 tokens' plain steps do: estimate's x0.92
     * at 256) */
    cr_expect_gt(sweep_value(csv, 12, "workload", "chat_spec", "tpot_p99_s"),
                 sweep_value(csv, 12, "workload", "chat_plain", "tpot_p99_s"));
    double with = sweep_value(csv, 12, "workload", "chat_spec", "throughput_tokens_per_s");
    double without = sweep_value(csv, 12, "workload", "chat_plain", "throughput_tokens_per_s");
    cr_expect(fabs(with / without - 1) < 0.03, "12/s: %g tokens/s against %g", with, without);
    /* the metrics that say why: tokens a round, the drawn acceptance, the draft's share */
    double tokens = sweep_value(csv, 1, "workload", "chat_spec", "spec_tokens_per_round");
    cr_expect(tokens > 2.5 && tokens < 2.78, "tokens a round %g (2.77 at the mean 0.7)", tokens);
    double a = sweep_value(csv, 1, "workload", "chat_spec", "spec_acceptance_mean");
    cr_expect(fabs(a - 0.7) < 0.02, "acceptance %g", a);
    double share = sweep_value(csv, 1, "pool", "spec", "draft_time_share");
    cr_expect(share > 0.05 && share < 0.5, "draft share %g", share);
    cr_expect_null(strstr(csv, "chat_plain,spec_"), "no speculative rows without it");
    snprintf(path, sizeof path, "%s/verdict.csv", dir);
    char *verdict = scratch_read(path);
    cr_assert_not_null(verdict);
    cr_expect(strstr(verdict, ",holds,"), "%s", verdict);
    free(verdict);
    free(csv);
    free(out);
    free(err);
    scratch_remove_dir(dir);
}

/* A workload of llama-3.1-70b on 8 H100s with `speculative = { SPEC }`. */
static char *spec_scenario(const char *dir, const char *spec)
{
    char text[1024];
    snprintf(text, sizeof text,
             "local fs = require \"fleetsim\"\n"
             "return fs.scenario { name = \"s\", duration = \"1m\",\n"
             "  pools = { gpus = fs.dedicated { gpu = \"H100-SXM\", count = 8 } },\n"
             "  workloads = { chat = fs.inference { model = \"llama-3.1-70b\", precision = \"fp8\",\n"
             "    pool = \"gpus\", tp = 8, arrivals = fs.poisson { rate = 1 }, max_wait = \"1m\",\n"
             "    prompt = 1000, output = 200,\n"
             "    speculative = { %s } } } }\n", spec);
    return scratch_file(dir, "s.lua", text);
}

Test(speculative, check_prints_it_and_bad_input_names_the_key_and_value)
{
    char *dir = scratch_dir(), *out = NULL, *err = NULL;
    char *file = spec_scenario(dir, "k = 4, acceptance = 0.7, draft = \"llama-3.2-1b\"");
    cr_assert_eq(cli_run(&out, &err, "check %s", file), 0, "%s", err);
    cr_expect(strstr(out, "speculative       4 tokens proposed a round by llama-3.2-1b (on the "
                          "replica's GPUs, its weights and cache in its memory), acceptance 0.7: "
                          "2.77 tokens a round at the mean"), "%s", out);
    /* the draft's 1.24B weights and its cache (16 layers of 8 x 64 x 2 in 16 bits: 32 KiB a
     * token, beside the target's 320 KiB) leave fewer tokens of cache */
    const char *capacity = strstr(out, "cache capacity ");
    cr_assert_not_null(capacity, "%s", out);
    double with = strtod(capacity + strlen("cache capacity "), NULL);
    free(file);
    file = spec_scenario(dir, "k = 4, acceptance = 0.7, draft_cost = \"0.2ms\"");
    cr_assert_eq(cli_run(&out, &err, "check %s", file), 0, "%s", err);
    cr_expect(strstr(out, "by a lookup at 0.0002 s a step"), "%s", out);
    capacity = strstr(out, "cache capacity ");
    double without = strtod(capacity + strlen("cache capacity "), NULL);
    cr_expect(with < without && with > 0.85 * without, "%g with the draft, %g without", with,
              without);
    struct { const char *spec, *message; } bad[] = {
        { "k = 4, acceptance = 1.5, draft = \"llama-3.2-1b\"",
          "s.lua:4: workloads.chat.speculative.acceptance: 1.5 is over the limit of 1" },
        { "k = 4, acceptance = fs.uniform { low = 0.5, high = 1.2 }, draft_cost = 0",
          "workloads.chat.speculative.acceptance: expected a probability in [0, 1] a request" },
        { "k = 0, acceptance = 0.7, draft_cost = 0",
          "workloads.chat.speculative.k: expected a positive integer, got 0" },
        { "k = 4, acceptance = 0.7", "workloads.chat.speculative.draft: missing" },
        { "k = 4, acceptance = 0.7, draft = \"llama-3.2-1b\", draft_cost = 0", "not both" },
        { "k = 4, acceptance = 0.7, draft = \"llama-3.2-1c\"",
          "workloads.chat.speculative.draft: unknown model \"llama-3.2-1c\" (did you mean" },
        { "k = 4, acceptance = 0.7, drafts = \"llama-3.2-1b\"",
          "unknown key 'drafts' (did you mean 'draft'?)" },
        /* the speculative table closed early: a key beside it that needs what is absent
           (a swap policy composes with speculation since 2026-12-05: test_replica_spec.c) */
        { "k = 4, acceptance = 0.7, draft_cost = 0 }, when_full = \"swap\", "
          "host_kvv = { size = \"100GB\"",
          "unknown key 'host_kvv' (did you mean 'host_kv'?)" },
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        free(file);
        file = spec_scenario(dir, bad[i].spec);
        cr_expect_eq(cli_run(&out, &err, "run %s -q -o %s/out", file, dir), 2, "%s", bad[i].spec);
        cr_expect(strstr(err, bad[i].message), "%s:\n%s", bad[i].spec, err);
        char path[512];
        snprintf(path, sizeof path, "%s/out/summary.csv", dir);
        char *written = scratch_read(path);
        cr_expect_null(written, "nothing written for %s", bad[i].spec);
        free(written);
    }
    free(file);
    free(out);
    free(err);
    scratch_remove_dir(dir);
}

/* A model with sliding windows speculates in a scenario (the loader refused it until
 * 2026-12-06): Gemma-3-1B drafting for Gemma-3-27B on one H100, alone (a request every
 * 20 s): the rounds make E = 2.77 tokens at acceptance 0.7 but for each request's last,
 * cut at its 200th token (72 rounds for the 199 after the prefill's: 2.76 a round), and
 * a token costs about half as long as without the draft (the estimate's 1.97x at one
 * sequence, the prefill aside). */
Test(speculative, a_model_with_sliding_windows_speculates, .timeout = 120)
{
    char *dir = scratch_dir(), *out = NULL, *err = NULL;
    const char *text =
        "local fs = require \"fleetsim\"\n"
        "return fs.scenario { name = \"s\", duration = \"10m\",\n"
        "  pools = { gpus = fs.dedicated { gpu = \"H100-SXM\", count = 1 } },\n"
        "  workloads = { chat = fs.inference { model = \"gemma-3-27b\", pool = \"gpus\", tp = 1,\n"
        "    arrivals = fs.poisson { rate = 0.05 }, max_wait = \"1m\", prompt = 2000, output = 200\n"
        "    %s } } }\n";
    double tpot[2];
    for (int spec = 0; spec < 2; spec++) {
        char scenario[2048];
        snprintf(scenario, sizeof scenario, text,
                 spec ? ", speculative = { k = 4, acceptance = 0.7, draft = \"gemma-3-1b\" }" : "");
        char *file = scratch_file(dir, "w.lua", scenario);
        cr_assert_eq(cli_run(&out, &err, "run %s -q --no-plots -o %s/o%d", file, dir, spec), 0,
                     "%s", err);
        free(file);
        char path[512];
        snprintf(path, sizeof path, "%s/o%d/summary.csv", dir, spec);
        char *csv = scratch_read(path);
        cr_assert_not_null(csv);
        summary_row r = scratch_summary_row(csv, "workload", "chat", "tpot_mean_s");
        cr_assert(r.found);
        tpot[spec] = r.value;
        if (spec) {
            r = scratch_summary_row(csv, "workload", "chat", "spec_tokens_per_round");
            cr_assert(r.found);
            cr_expect_float_eq(r.value, 199.0 / 72, 1e-9, "%g tokens a round", r.value);
        }
        free(csv);
    }
    double gain = tpot[0] / tpot[1];
    cr_expect(gain > 1.8 && gain < 2.0, "tpot %g without, %g with: x%g", tpot[0], tpot[1], gain);
    free(out);
    free(err);
    scratch_remove_dir(dir);
}
