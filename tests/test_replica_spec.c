/* Speculative decoding on a replica (models/replica_spec.h, replica_config's spec_k): a
 * request's tokens by rounds by hand, a round's closed form against
 * perf_speculative_round_s, a fixed batch's time per token against the model's rounds,
 * the gain falling as the batch grows, and the fast path against one event a round. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>

#include "models/replica.h"
#include "models/replica_spec.h"
#include "support/catalog_fixture.h"

TestSuite(replica_spec, .init = test_catalog_setup, .fini = test_catalog_teardown);

Test(replica_spec, tokens_advance_by_the_floor_of_the_expected_progress)
{
    /* E = 2.5: floor(2.5 j) is 0, 2, 5, 7, 10, so the rounds make 2, 3, 2, 3 */
    cr_expect_eq(replica_spec_tokens(0, 2.5, 1), 2);
    cr_expect_eq(replica_spec_tokens(1, 2.5, 1), 3);
    cr_expect_eq(replica_spec_tokens(0, 2.5, 4), 10);
    cr_expect_eq(replica_spec_tokens(1, 2.5, 3), 8, "rounds 1..3: 10 - 2");
    /* 7 tokens from round 0 take 3 rounds (7 after three, 5 after two) */
    cr_expect_eq(replica_spec_rounds_for(0, 2.5, 7), 3);
    cr_expect_eq(replica_spec_rounds_for(0, 2.5, 8), 4);
    cr_expect_eq(replica_spec_rounds_for(1, 2.5, 3), 1, "round 1 alone makes 3");
    cr_expect_eq(replica_spec_rounds_for(5, 1, 9), 9, "nothing accepted: a token a round");
    /* k = 4 at a = 0.5: E = 1.9375; 60 tokens take 31 rounds (floor(60.0625); 58 after 30) */
    double e = perf_speculative_tokens(0.5, 4);
    cr_expect_float_eq(e, 1.9375, 1e-15);
    cr_expect_eq(replica_spec_rounds_for(0, e, 60), 31);
    cr_expect_eq(replica_spec_tokens(0, e, 31), 60);
}

/* Llama-3.1-70B in fp8 on 8 H100s with Llama-3.2-1B drafting 4 tokens. */
typedef struct bench {
    const model_spec *target, *draft;
    const device_spec *gpu;
    perf_profile profile;
    perf_setup setup, draft_setup;
} bench;

static void bench_init(bench *b)
{
    *b = (bench){ .target = test_model("llama-3.1-70b"), .draft = test_model("llama-3.2-1b"),
                  .gpu = test_device("H100-SXM") };
    b->profile = perf_default_profile(b->gpu);
    b->setup = (perf_setup){ .model = b->target, .device = b->gpu, .profile = &b->profile,
                             .weights = PREC_FP8, .kv = PREC_BF16, .tp = 8 };
    b->draft_setup = b->setup;
    b->draft_setup.model = b->draft;
}

Test(replica_spec, a_rounds_shape_is_the_model_round_linear_in_the_context)
{
    bench b;
    bench_init(&b);
    perf_speculation sp = { &b.draft_setup, 4, 0.7, 0 };
    for (unsigned n = 1; n <= 256; n *= 4) {
        perf_decode_shape shape = perf_speculative_shape_of(&b.setup, &sp, n);
        perf_decode_shape draft = perf_speculative_draft_shape_of(&sp, n);
        for (double c = 100; c <= 10000; c *= 10) {
            double want = perf_speculative_round_s(&b.setup, &sp, n, c);
            double got = shape.fixed_s + shape.attention_s_per_token * n * c;
            cr_expect_float_eq(got, want, 1e-9 * want, "batch %u, context %g", n, c);
            double d = perf_speculative_draft_s(&sp, n, c);
            cr_expect_float_eq(draft.fixed_s + draft.attention_s_per_token * n * c, d, 1e-9 * d);
        }
    }
    /* a lookup draft: k x its step beside the verification */
    perf_speculation lookup = { NULL, 4, 0.7, 2e-4 };
    cr_expect_float_eq(perf_speculative_draft_s(&lookup, 8, 500), 8e-4, 1e-15);
}

typedef struct batch_result {
    unsigned done;
    double tpot_sum, first_token_s;
} batch_result;

static void on_done(void *context, llm_request *q, bool dropped)
{
    batch_result *r = context;
    cr_assert(!dropped);
    if (q->output == 1)
        return; /* the one that kept the replica busy */
    r->done++;
    r->tpot_sum += (q->finish_s - q->first_token_s) / (q->output - 1);
    r->first_token_s = q->first_token_s;
}

/* n requests of a 512-token prompt and 61 tokens out, all at time 0 (one prefill, then
 * decoding together): the mean time per output token after the first. */
static double batch_tpot_with(const bench *b, unsigned n, unsigned k, double acceptance,
                              bool reference, const model_spec *draft, double step_s)
{
    replica_config c = {
        .model = b->target, .device = b->gpu, .profile = b->profile, .prec = PREC_FP8,
        .kv_prec = PREC_BF16, .tp = 8, .max_batch = 256, .max_tokens = 1000000,
        .kv_capacity_tokens = 1e9, .reference = reference, .spec_k = k,
        .draft = draft, .spec_step_s = step_s,
        .spec_tokens = perf_speculative_tokens(acceptance, k),
    };
    sim_engine *e = sim_engine_create();
    batch_result r = { 0 };
    replica *rep = replica_create(e, &c, on_done, &r);
    llm_request *qs = calloc(n, sizeof *qs), first = { .prompt = 1, .output = 1 };
    replica_enqueue(rep, &first); /* a one-token iteration, so the n join in one prefill */
    for (unsigned i = 0; i < n; i++) {
        qs[i] = (llm_request){ .prompt = 512, .output = 61, .id = i };
        replica_enqueue(rep, &qs[i]);
    }
    sim_engine_run(e);
    cr_assert_eq(r.done, n);
    if (k) { /* every sequence made its 60 tokens in the rounds they take */
        const replica_stats *st = replica_get_stats(rep);
        cr_expect_float_eq(st->spec_rounds, n * replica_spec_rounds_for(0, c.spec_tokens, 60), 0);
        cr_expect_float_eq(st->spec_tokens, 60.0 * n, 0);
    }
    replica_free(rep);
    sim_engine_free(e);
    free(qs);
    return r.tpot_sum / n;
}

/* The same with the bench's draft model (when k > 0). */
static double batch_tpot(const bench *b, unsigned n, unsigned k, double acceptance,
                         bool reference)
{
    return batch_tpot_with(b, n, k, acceptance, reference, k ? b->draft : NULL, 0);
}

Test(replica_spec, a_fixed_batch_decodes_at_the_models_rounds)
{
    bench b;
    bench_init(&b);
    perf_speculation sp = { &b.draft_setup, 4, 0.5, 0 };
    double e = 1.9375; /* tokens a round at a = 0.5, k = 4 */
    for (unsigned n = 1; n <= 64; n *= 8) {
        /* 31 rounds from context 513 (prompt and first token), growing e a round in the
         * closed form: by linearity 31 rounds at the mean context 513 + 15 e, for 60
         * tokens */
        double want = 31 * perf_speculative_round_s(&b.setup, &sp, n, 513 + 15 * e) / 60;
        double fast = batch_tpot(&b, n, 4, 0.5, false);
        cr_expect_float_eq(fast, want, 1e-9 * want, "batch %u: %g against %g", n, fast, want);
        /* one event a round reads the same expected context, its whole tokens and the
         * fraction beyond them: the same */
        double ref = batch_tpot(&b, n, 4, 0.5, true);
        cr_expect_float_eq(ref, want, 1e-9 * want, "batch %u: reference %g against %g", n, ref, want);
        /* plain decoding: 60 steps from 513, at their mean context 542.5 */
        double plain = batch_tpot(&b, n, 0, 0, false);
        double step = perf_decode_step(&b.setup, n, 542.5).total_s;
        cr_expect_float_eq(plain, step, 1e-9 * step, "batch %u plain: %g against %g", n, plain, step);
    }
    /* an n-gram lookup at 0.2 ms a step: the verification and 4 x 0.2 ms a round */
    perf_speculation lookup = { NULL, 4, 0.5, 2e-4 };
    double want = 31 * perf_speculative_round_s(&b.setup, &lookup, 8, 513 + 15 * e) / 60;
    double got = batch_tpot_with(&b, 8, 4, 0.5, false, NULL, 2e-4);
    cr_expect_float_eq(got, want, 1e-9 * want, "lookup: %g against %g", got, want);
    cr_expect_float_eq(perf_speculative_round_s(&b.setup, &lookup, 8, 600)
                           - perf_speculative_round_s(&b.setup, &(perf_speculation){ NULL, 4, 0.5, 0 },
                                                      8, 600), 8e-4, 1e-12);
}

Test(replica_spec, the_gain_falls_as_the_batch_grows, .timeout = 60)
{
    /* a = 0.7, k = 4: 2.7731 tokens a round, 60 tokens in 22 rounds (61.0 after 22, 58.2
     * after 21), so by hand the gain is a plain step at 542.5 over 22 / 60 of a round at
     * 513 + 10.5 x 2.7731 */
    bench b;
    bench_init(&b);
    perf_speculation sp = { &b.draft_setup, 4, 0.7, 0 };
    double e = perf_speculative_tokens(0.7, 4), last = INFINITY;
    cr_expect_eq(replica_spec_rounds_for(0, e, 60), 22);
    unsigned batches[] = { 1, 16, 64, 256 };
    for (size_t i = 0; i < sizeof batches / sizeof batches[0]; i++) {
        unsigned n = batches[i];
        double gain = batch_tpot(&b, n, 0, 0, false) / batch_tpot(&b, n, 4, 0.7, false);
        double hand = perf_decode_step(&b.setup, n, 542.5).total_s
                      / (22 * perf_speculative_round_s(&b.setup, &sp, n, 513 + 10.5 * e) / 60);
        cr_expect_float_eq(gain, hand, 1e-9 * hand, "batch %u: %g against %g", n, gain, hand);
        cr_expect_lt(gain, last, "batch %u: gain %g after %g", n, gain, last);
        if (n == 1)
            cr_expect_gt(gain, 1.5, "a large gain alone: %g", gain);
        last = gain;
        cr_log_info("batch %u: gain %.3f", n, gain);
    }
}

/* n requests as batch_tpot_with's, speculating with the bench's draft (k 4, acceptance
 * 0.7) under cache policy `policy` in `capacity` tokens: the mean TPOT, and the
 * replica's preemptions and swaps. */
typedef struct policy_run {
    double tpot;
    uint64_t preemptions, swaps_out, recomputes;
    double spec_tokens;
} policy_run;

static policy_run run_under(const bench *b, unsigned n, kv_policy policy, double capacity,
                            bool reference)
{
    replica_config c = {
        .model = b->target, .device = b->gpu, .profile = b->profile, .prec = PREC_FP8,
        .kv_prec = PREC_BF16, .tp = 8, .max_batch = 256, .max_tokens = 1000000,
        .kv_capacity_tokens = capacity, .reference = reference, .spec_k = 4,
        .draft = b->draft, .spec_tokens = perf_speculative_tokens(0.7, 4),
        .kv_policy = policy, .kv_bytes_per_token = model_kv_bytes_per_token(b->target, PREC_BF16),
        .host_kv_bytes = policy == KV_SWAP ? 1e12 : 0, .host_kv_bytes_per_s = 50e9,
        .host_kv_latency_s = 10e-6,
    };
    sim_engine *e = sim_engine_create();
    batch_result r = { 0 };
    replica *rep = replica_create(e, &c, on_done, &r);
    llm_request *qs = calloc(n, sizeof *qs), first = { .prompt = 1, .output = 1 };
    replica_enqueue(rep, &first);
    for (unsigned i = 0; i < n; i++) {
        qs[i] = (llm_request){ .prompt = 512, .output = 61, .id = i };
        replica_enqueue(rep, &qs[i]);
    }
    sim_engine_run(e);
    cr_assert_eq(r.done, n);
    const replica_stats *st = replica_get_stats(rep);
    policy_run out = { r.tpot_sum / n, st->preemptions, st->swap.swaps_out,
                       st->swap.recomputes, st->spec_tokens };
    replica_free(rep);
    sim_engine_free(e);
    free(qs);
    return out;
}

Test(replica_spec, speculation_grows_a_cache_that_preempts_or_swaps)
{
    /* Refused until 2026-12-05: a round writes k + 1 positions, so a growing cache
     * must hold each sequence's next round, and grows by the tokens the rounds make.
     * With room for all, preempting or swapping decodes exactly as reserving does. */
    bench b;
    bench_init(&b);
    policy_run reserve = run_under(&b, 16, KV_RESERVE, 1e9, false);
    policy_run preempt = run_under(&b, 16, KV_PREEMPT, 1e9, false);
    cr_expect_eq(preempt.tpot, reserve.tpot);
    cr_expect_eq(preempt.preemptions, 0);
    /* 16 x (512 + 60) = 9,152 tokens at the end, 6,000 of room: the latest sequences are
     * preempted and recompute their prompt and tokens, and every token is still made once:
     * by the rounds, but for the one each recompute's prefill makes (its last position
     * gives the next token) */
    policy_run tight = run_under(&b, 16, KV_PREEMPT, 6000, false);
    cr_expect_gt(tight.preemptions, 0);
    cr_expect_eq(tight.recomputes, tight.preemptions);
    cr_expect_float_eq(tight.spec_tokens, 60.0 * 16 - tight.recomputes, 0);
    /* one event per iteration agrees */
    policy_run ref = run_under(&b, 16, KV_PREEMPT, 6000, true);
    cr_expect_eq(tight.preemptions, ref.preemptions);
    cr_expect_float_eq(tight.tpot, ref.tpot, 1e-9 * ref.tpot, "%g vs %g", tight.tpot, ref.tpot);
    /* swapped instead, the caches come back rather than being recomputed */
    policy_run swapped = run_under(&b, 16, KV_SWAP, 6000, false);
    cr_expect_gt(swapped.swaps_out, 0);
    cr_expect_eq(swapped.recomputes, 0);
    cr_expect_float_eq(swapped.spec_tokens, 60.0 * 16, 0);
}

/* 16 sequences of different lengths speculating (k 4, acceptance 0.7) under a growing
 * cache, over capacities from 6,000 to 12,000 tokens: the fast path preempts the same
 * sequences at the same rounds as one event a round.  Before 2026-12-07 its run ran
 * until the rounds' expected tokens (E a round) filled the cache, while a round makes
 * floor((j + 1) E) - floor(j E): a run could pass the round where make_room preempts,
 * and at 18 of 124 of these capacities the sequences ended 0.03% early. */
typedef struct spec_ends {
    unsigned n;
    double finish_sum;
} spec_ends;

static void add_end(void *context, llm_request *q, bool dropped)
{
    spec_ends *d = context;
    d->n += !dropped;
    d->finish_sum += dropped ? 0 : q->finish_s;
}

static spec_ends speculate_in(const bench *b, bool draft, double capacity, bool reference,
                              uint64_t *preemptions)
{
    replica_config c = {
        .model = b->target, .device = b->gpu, .profile = b->profile, .prec = PREC_FP8,
        .kv_prec = PREC_BF16, .tp = 8, .max_batch = 256, .max_tokens = 8192,
        .kv_capacity_tokens = capacity, .reference = reference, .spec_k = 4,
        .draft = draft ? b->draft : NULL, .spec_step_s = draft ? 0 : 0.0002,
        .spec_tokens = perf_speculative_tokens(0.7, 4), .kv_policy = KV_PREEMPT,
    };
    sim_engine *e = sim_engine_create();
    spec_ends d = { 0 };
    replica *rep = replica_create(e, &c, add_end, &d);
    llm_request qs[16];
    for (unsigned i = 0; i < 16; i++) {
        qs[i] = (llm_request){ .prompt = 500 + 7 * i, .output = 200 + 13 * i, .id = i };
        replica_enqueue(rep, &qs[i]);
    }
    sim_engine_run(e);
    *preemptions = replica_get_stats(rep)->preemptions;
    replica_free(rep);
    sim_engine_free(e);
    return d;
}

Test(replica_spec, a_run_of_rounds_preempts_where_one_event_a_round_does)
{
    bench b;
    bench_init(&b);
    uint64_t preempted = 0;
    for (int draft = 0; draft < 2; draft++)
        for (double capacity = 6000; capacity <= 12000; capacity += 97) {
            uint64_t pf, pr;
            spec_ends fast = speculate_in(&b, draft, capacity, false, &pf);
            spec_ends ref = speculate_in(&b, draft, capacity, true, &pr);
            cr_assert_eq(fast.n, 16);
            cr_assert_eq(ref.n, 16);
            cr_expect_eq(pf, pr, "%s, %g tokens: %g / %g preemptions",
                         draft ? "draft" : "lookup", capacity, (double)pf, (double)pr);
            /* both read the context growing E a round: the same ends */
            cr_expect_leq(fabs(fast.finish_sum / ref.finish_sum - 1), 1e-9,
                          "%s, %g tokens: ends %.12g / %.12g", draft ? "draft" : "lookup",
                          capacity, fast.finish_sum, ref.finish_sum);
            preempted += pr;
        }
    cr_expect_gt(preempted, 100, "the cache was short: %g preemptions", (double)preempted);
}

static void count_drop(void *context, llm_request *q, bool dropped)
{
    (void)q;
    *(unsigned *)context += dropped;
}

Test(replica_spec, a_request_whose_round_can_never_fit_is_dropped_not_kept_waiting)
{
    /* 1,000 tokens of cache, k 4: a 996-token prompt with 4 tokens out fits whole (1,000)
     * but not beside its first round's 5 positions (996 + 5): under a growing cache it
     * could never be admitted, so it is dropped at once instead of holding the queue */
    bench b;
    bench_init(&b);
    replica_config c = {
        .model = b.target, .device = b.gpu, .profile = b.profile, .prec = PREC_FP8,
        .kv_prec = PREC_BF16, .tp = 8, .max_batch = 8, .max_tokens = 4096,
        .kv_capacity_tokens = 1000, .spec_k = 4, .draft = b.draft,
        .spec_tokens = perf_speculative_tokens(0.7, 4), .kv_policy = KV_PREEMPT,
    };
    sim_engine *e = sim_engine_create();
    unsigned drops = 0;
    replica *rep = replica_create(e, &c, count_drop, &drops);
    llm_request q = { .prompt = 996, .output = 4 }, fits = { .prompt = 995, .output = 4 };
    replica_enqueue(rep, &q);
    replica_enqueue(rep, &fits); /* 995 + 5 = 1,000: it fits, and is served */
    sim_engine_run(e);
    cr_expect_eq(drops, 1);
    cr_expect_gt(fits.finish_s, 0);
    cr_expect_eq(replica_outstanding(rep), 0);
    replica_free(rep);
    sim_engine_free(e);
}
