/* Speculative decoding in the analytic model (models/perf.h perf_speculative_*, estimate
 * --speculative): the expected tokens a round by hand, a round's cost from its parts,
 * and the known shape, a large gain at small batch that shrinks as the batch grows. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/perf.h"
#include "support/catalog_fixture.h"
#include "support/cli.h"

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
                         "--draft llama-3.2-1b --csv"), 0, "%s", err);
    double g1 = speedup(out, 1), g64 = speedup(out, 64), g1024 = speedup(out, 1024);
    cr_expect(g1 > 1.5, "batch 1: %g", g1);
    cr_expect(g64 < g1 && g1024 < g64, "1: %g, 64: %g, 1024: %g", g1, g64, g1024);
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
