/* The decode clock (models/replica_internal.h): a replica advances its decoding
 * sequences by a count of its own, not request by request, so what it says of them must
 * be what one token a step makes.  Each value is counted by hand: the tokens left,
 * step by step; a request's counters when it is done and when it is preempted; a
 * preempted request's recomputation and a late arrival that prefills beside decoders. */
#include <criterion/criterion.h>

#include "models/memory.h"
#include "models/replica.h"
#include "support/catalog_fixture.h"

static const model_spec *llama;
static const device_spec *h100;

static void setup(void)
{
    test_catalog_setup();
    llama = test_model("llama-3-8b");
    h100 = test_device("H100-SXM");
}

TestSuite(replica_clock, .init = setup, .fini = test_catalog_teardown);

static replica_config base_config(bool reference)
{
    return (replica_config){
        .model = llama, .device = h100, .profile = perf_default_profile(h100),
        .prec = PREC_FP16, .kv_prec = PREC_FP16, .tp = 1, .max_batch = 64, .max_tokens = 8192,
        .kv_capacity_tokens = memory_inference(llama, h100, PREC_FP16, PREC_FP16, 1).kv_capacity_tokens,
        .reference = reference,
    };
}

/* What the replica told: its tokens left after every change (or, counting requests, its
 * requests outstanding), and its requests as they
 * ended (their counters then). */
typedef struct seen {
    replica *r;
    bool count_requests; /* on_load without on_load_tokens: what it says is the count */
    double left[512];
    unsigned nleft;
    unsigned done_generated[8], done_cached[8], ndone;
} seen;

static void on_load(void *context)
{
    seen *s = context;
    if (s->r && s->nleft < 512)
        s->left[s->nleft++] = s->count_requests ? replica_outstanding(s->r)
                                                : replica_outstanding_tokens(s->r);
}

static void on_done(void *context, llm_request *q, bool dropped)
{
    seen *s = context;
    cr_assert(!dropped);
    s->done_generated[s->ndone] = q->generated;
    s->done_cached[s->ndone] = q->cached;
    s->ndone++;
}

/* Prompts of 100 tokens with outputs of 20 and 30, the second queued behind the first's
 * prefill, run to the end: what the replica told is in *s. */
static void run_two(bool reference, seen *s)
{
    replica_config c = base_config(reference);
    c.on_load = on_load;
    c.on_load_tokens = !s->count_requests;
    c.load_context = s;
    sim_engine *e = sim_engine_create();
    replica *r = replica_create(e, &c, on_done, s);
    llm_request q[2] = {
        { .prompt = 100, .output = 20, .id = 1 },
        { .prompt = 100, .output = 30, .id = 2 },
    };
    replica_enqueue(r, &q[0]);
    replica_enqueue(r, &q[1]);
    s->r = r; /* from here on */
    sim_engine_run(e);
    replica_free(r);
    sim_engine_free(e);
}

/* Two prompts of 100 tokens, outputs of 20 and 30, one event per iteration: the first
 * prefills alone (19 left, and the second's 130 queued), the second beside the first's
 * step (18 + 29), then every step makes two until the first has its 20 (11 left of the
 * second), then one a step to 0. */
Test(replica_clock, tokens_left_fall_by_one_a_decoding_sequence_a_step)
{
    seen s = { 0 };
    run_two(true, &s);
    double expect[64];
    unsigned n = 0;
    expect[n++] = 19 + 100 + 30; /* the first prefilled alone (it arrived alone) */
    expect[n++] = 18 + 29;       /* the second prefilled, the first decoded a step */
    for (int k = 1; k <= 18; k++)
        expect[n++] = 18 + 29 - 2 * k; /* both decode, until the first has made its 20 */
    for (int left = 10; left >= 0; left--)
        expect[n++] = left;            /* the second alone, its last 11 */
    cr_assert_eq(s.nleft, n, "%u changes seen, %u expected", s.nleft, n);
    for (unsigned i = 0; i < n; i++)
        cr_expect_float_eq(s.left[i], expect[i], 1e-9, "change %u: %g left, %g expected", i,
                           s.left[i], expect[i]);
    /* a request's counters when done: its output, and its prompt and output less the
     * last token (it is never fed back) */
    cr_assert_eq(s.ndone, 2);
    cr_expect_eq(s.done_generated[0], 20);
    cr_expect_eq(s.done_generated[1], 30);
    cr_expect_eq(s.done_cached[0], 100 + 20 - 1);
    cr_expect_eq(s.done_cached[1], 100 + 30 - 1);
}

/* The fast path takes the same steps in runs: what it reports at each run's end is one
 * of the values above, in order, ending at 0, and the requests end the same. */
Test(replica_clock, the_fast_path_reports_a_subsequence_of_the_steps)
{
    seen ref = { 0 }, fast = { 0 };
    run_two(true, &ref);
    run_two(false, &fast);
    cr_assert_lt(fast.nleft, ref.nleft, "runs of several steps");
    unsigned k = 0;
    for (unsigned i = 0; i < fast.nleft; i++) {
        while (k < ref.nleft && ref.left[k] != fast.left[i])
            k++;
        cr_assert_lt(k, ref.nleft, "change %u (%g left) is not a step's", i, fast.left[i]);
    }
    cr_expect_float_eq(fast.left[fast.nleft - 1], 0, 1e-9);
    cr_expect_eq(fast.ndone, 2);
    for (unsigned i = 0; i < 2; i++) {
        cr_expect_eq(fast.done_generated[i], ref.done_generated[i]);
        cr_expect_eq(fast.done_cached[i], ref.done_cached[i]);
    }
}

/* Asked for changes of its count alone, the replica tells it when a request comes or
 * goes, not at every step: here the first finished (one left), then the second (none). */
Test(replica_clock, a_count_is_told_only_when_it_changes)
{
    for (int reference = 0; reference <= 1; reference++) {
        seen s = { .count_requests = true };
        run_two(reference, &s);
        cr_assert_eq(s.nleft, 2, "%s: %u changes told", reference ? "reference" : "fast",
                     s.nleft);
        cr_expect_float_eq(s.left[0], 1, 0);
        cr_expect_float_eq(s.left[1], 0, 0);
        cr_expect_eq(s.ndone, 2);
    }
}

/* Preempted in the middle of decoding (KV_PREEMPT, a cache too small for both), a
 * request keeps the tokens it made and recomputes its prompt and them: its target is
 * its prompt plus what it had generated, which it can know only if the clock was
 * brought to it when it left the batch. */
Test(replica_clock, a_preempted_sequence_keeps_the_tokens_it_made)
{
    seen s = { 0 };
    replica_config c = base_config(true);
    c.kv_policy = KV_PREEMPT;
    c.kv_capacity_tokens = 330; /* two prompts of 100 fit, with 130 tokens of output */
    sim_engine *e = sim_engine_create();
    replica *r = replica_create(e, &c, on_done, &s);
    llm_request q[2] = {
        { .prompt = 100, .output = 100, .id = 1 },
        { .prompt = 100, .output = 100, .id = 2 },
    };
    replica_enqueue(r, &q[0]);
    replica_enqueue(r, &q[1]);
    sim_engine_run(e);
    /* By hand: both prefilled, 201 tokens are committed (the first's 100 and a step, the
     * second's 100); each step adds 2, and the next needs a token a sequence, so after
     * step k the cache holds 201 + 2k and wants 2 more: 64 steps fit (329 + 2 > 330), and
     * the second, the latest admitted, is preempted with 1 + 64 tokens made.  It waits
     * for the first to finish, recomputes its prompt and those 65 (target 165), and makes
     * its last 35 alone. */
    cr_assert_eq(s.ndone, 2);
    cr_expect_eq(q[0].preemptions, 0);
    cr_expect_eq(q[1].preemptions, 1);
    cr_expect_eq(q[1].target, 165);
    cr_expect_eq(q[0].generated, 100);
    cr_expect_eq(q[1].generated, 100);
    cr_expect_eq(q[0].cached, 100 + 100 - 1);
    cr_expect_eq(q[1].cached, 165 + 34); /* the recomputation's last position made the 66th */
    replica_free(r);
    sim_engine_free(e);
}

static void on_finish_time(void *context, llm_request *q, bool dropped)
{
    cr_assert(!dropped);
    double *finish = context;
    finish[q->id] = q->finish_s;
}

/* A batch that outgrows the arrays a replica holds in itself (REPLICA_INLINE_BATCH, 16)
 * twice over: 40 prompts of 100 at once, outputs of 10 to 49, all admitted.  Each ends
 * with its counters by hand, the longer outputs later, and at the very times the
 * reference path (an event an iteration) gives them. */
Test(replica_clock, a_batch_larger_than_the_replica_holds_in_itself_runs_the_same)
{
    double finish[2][40];
    for (int reference = 0; reference <= 1; reference++) {
        sim_engine *e = sim_engine_create();
        replica_config c = base_config(reference);
        replica *r = replica_create(e, &c, on_finish_time, finish[reference]);
        llm_request q[40];
        for (unsigned i = 0; i < 40; i++) {
            q[i] = (llm_request){ .prompt = 100, .output = 10 + i, .id = i };
            replica_enqueue(r, &q[i]);
        }
        sim_engine_run(e);
        for (unsigned i = 0; i < 40; i++) {
            cr_expect_eq(q[i].generated, 10 + i, "request %u", i);
            cr_expect_eq(q[i].cached, 100 + 10 + i - 1, "request %u", i);
            if (i > 0)
                cr_expect_gt(finish[reference][i], finish[reference][i - 1], "request %u", i);
        }
        replica_free(r);
        sim_engine_free(e);
    }
    for (unsigned i = 0; i < 40; i++)
        cr_expect_float_eq(finish[0][i], finish[1][i], 1e-9 * finish[1][i], "request %u", i);
}
