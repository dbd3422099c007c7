/* A replica slowed down (replica_set_speed), told it is busy (on_busy), and evicted from
 * its GPU (replica_evict): against the performance model, and the fast path against one
 * event per iteration with speed changes in the middle of decode runs. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "lua/catalog.h"
#include "models/memory.h"
#include "models/replica.h"

static catalog cat;
static const model_spec *llama;
static const device_spec *h100;

static void setup(void)
{
    char err[512];
    cr_assert_eq(catalog_load(&cat, err, sizeof err), 0, "%s", err);
    llama = catalog_model(&cat, "llama-3-8b");
    h100 = catalog_device(&cat, "H100-SXM");
    cr_assert(llama && h100);
}
static void teardown(void) { catalog_release(&cat); }

TestSuite(replica_speed, .init = setup, .fini = teardown);

static replica_config base_config(void)
{
    return (replica_config){
        .model = llama, .device = h100, .profile = perf_default_profile(h100),
        .prec = PREC_FP16, .kv_prec = PREC_FP16, .tp = 1, .max_batch = 64, .max_tokens = 8192,
        .kv_capacity_tokens = memory_inference(llama, h100, PREC_FP16, PREC_FP16, 1).kv_capacity_tokens,
    };
}

typedef struct counts {
    unsigned completed, dropped, busy_on, busy_off;
} counts;

static void on_done(void *context, llm_request *q, bool dropped)
{
    counts *c = context;
    (void)q;
    if (dropped)
        c->dropped++;
    else
        c->completed++;
}

static void on_busy(void *context, bool busy)
{
    counts *c = context;
    if (busy)
        c->busy_on++;
    else
        c->busy_off++;
}

/* Things that happen to the replica at set times: an arrival or a new speed. */
typedef struct action {
    double at_s;
    llm_request *request;           /* an arrival, or NULL for a speed change */
    double compute_factor, memory_factor;
    replica *r;
} action;

static void run_action(sim_engine *e, void *data)
{
    action *a = data;
    (void)e;
    if (a->request)
        replica_enqueue(a->r, a->request);
    else
        replica_set_speed(a->r, a->compute_factor, a->memory_factor);
}

typedef struct outcome {
    double finish_s[64], first_token_s[64];
    counts counts;
    uint64_t replica_events, engine_events;
} outcome;

/* Runs requests (arriving every `gap_s`, with prompt and output lengths cycling through
 * a few values) and speed changes on one replica until all is done. */
static outcome run(replica_config config, unsigned n, double gap_s, const action *changes,
                   size_t nchanges)
{
    static const unsigned prompts[] = { 300, 1200, 80, 600, 2500 };
    static const unsigned outputs[] = { 150, 40, 400, 220, 90, 310 };
    outcome out;
    memset(&out, 0, sizeof out);
    cr_assert_leq(n, 64);
    sim_engine *e = sim_engine_create();
    config.on_busy = on_busy;
    config.busy_context = &out.counts;
    replica *r = replica_create(e, &config, on_done, &out.counts);
    llm_request requests[64];
    action arrivals[64], speeds[16];
    memset(requests, 0, sizeof requests);
    for (unsigned i = 0; i < n; i++) {
        requests[i] = (llm_request){ .arrival_s = i * gap_s, .prompt = prompts[i % 5],
                                     .output = outputs[i % 6], .id = i };
        arrivals[i] = (action){ .at_s = i * gap_s, .request = &requests[i], .r = r };
        sim_event_schedule(e, arrivals[i].at_s, 0, run_action, &arrivals[i]);
    }
    cr_assert_leq(nchanges, 16);
    for (size_t i = 0; i < nchanges; i++) {
        speeds[i] = changes[i];
        speeds[i].r = r;
        sim_event_schedule(e, speeds[i].at_s, 0, run_action, &speeds[i]);
    }
    sim_engine_run(e);
    for (unsigned i = 0; i < n; i++) {
        out.finish_s[i] = requests[i].finish_s;
        out.first_token_s[i] = requests[i].first_token_s;
    }
    out.replica_events = replica_get_stats(r)->iterations_events;
    out.engine_events = sim_engine_events_run(e);
    replica_free(r);
    sim_engine_free(e);
    return out;
}

Test(replica_speed, factor_one_changes_nothing_bit_for_bit)
{
    action ones[] = {
        { .at_s = 0.013, .compute_factor = 1, .memory_factor = 1 },
        { .at_s = 0.5, .compute_factor = 1, .memory_factor = 1 },
        { .at_s = 1.7, .compute_factor = 1, .memory_factor = 1 },
    };
    outcome plain = run(base_config(), 20, 0.1, NULL, 0);
    outcome same = run(base_config(), 20, 0.1, ones, 3);
    cr_assert_eq(plain.counts.completed, 20);
    cr_expect(memcmp(plain.finish_s, same.finish_s, sizeof plain.finish_s) == 0);
    cr_expect(memcmp(plain.first_token_s, same.first_token_s, sizeof plain.first_token_s) == 0);
    cr_expect_eq(plain.replica_events, same.replica_events, "no run was cut");
}

Test(replica_speed, memory_factor_slows_decode_not_a_long_prefill)
{
    /* one request: a 4096-token prompt (compute-bound: ~0.1 s of products; the memory
     * passes and the exposed share of the weight reads are under a fifth) then 300
     * decode steps, each reading 16 GB of weights (memory-bound) */
    replica_config c = base_config();
    action slow[] = { { .at_s = 0, .compute_factor = 1, .memory_factor = 2 } };
    double ttft[2], decode[2];
    for (int k = 0; k < 2; k++) {
        sim_engine *e = sim_engine_create();
        counts n = { 0 };
        replica *r = replica_create(e, &c, on_done, &n);
        if (k)
            replica_set_speed(r, slow[0].compute_factor, slow[0].memory_factor);
        llm_request q = { .prompt = 4096, .output = 301 };
        replica_enqueue(r, &q);
        sim_engine_run(e);
        cr_assert_eq(n.completed, 1);
        ttft[k] = q.first_token_s;
        decode[k] = q.finish_s - q.first_token_s;
        replica_free(r);
        sim_engine_free(e);
    }
    /* the prefill slows by exactly its memory-bound part, a small one */
    perf_profile p = perf_default_profile(h100);
    perf_setup full = { .model = llama, .device = h100, .profile = &p, .weights = PREC_FP16, .kv = PREC_FP16, .tp = 1 };
    perf_time prefill = perf_prefill(&full, 1, 4096);
    cr_expect_lt(prefill.memory_s, 0.25 * prefill.total_s, "memory %g of %g s", prefill.memory_s,
                 prefill.total_s);
    cr_expect_leq(fabs(ttft[1] - (ttft[0] + prefill.memory_s)), 1e-9 * ttft[0],
                  "prefill %g vs %g + %g", ttft[1], ttft[0], prefill.memory_s);
    /* kernel floors and the engine's host work (~3 ms a step) keep their time: well
     * under 2x */
    double ratio = decode[1] / decode[0];
    cr_expect(ratio > 1.4 && ratio < 2.0, "decode %g s vs %g s: ratio %g", decode[1],
              decode[0], ratio);
    /* and exactly the model's steps at half the bandwidth efficiency */
    perf_profile half = perf_default_profile(h100);
    half.bandwidth_efficiency /= 2;
    perf_setup setup = { .model = llama, .device = h100, .profile = &half, .weights = PREC_FP16, .kv = PREC_FP16, .tp = 1 };
    decode_cost dc = perf_decode_cost(&setup, 1, 4097);
    double model = decode_cost_sum(&dc, 300);
    cr_expect_leq(fabs(decode[1] / model - 1), 1e-9, "decode %g, model %g", decode[1], model);
}

Test(replica_speed, compute_factor_slows_a_long_prefill)
{
    replica_config c = base_config();
    double ttft[2];
    for (int k = 0; k < 2; k++) {
        sim_engine *e = sim_engine_create();
        counts n = { 0 };
        replica *r = replica_create(e, &c, on_done, &n);
        replica_set_speed(r, k ? 3 : 1, 1);
        llm_request q = { .prompt = 4096, .output = 2 };
        replica_enqueue(r, &q);
        sim_engine_run(e);
        ttft[k] = q.first_token_s;
        replica_free(r);
        sim_engine_free(e);
    }
    /* its compute-bound part three times as long; the memory passes, kernel floors and
     * the host's work keep their time */
    perf_profile p = perf_default_profile(h100);
    perf_setup setup = { .model = llama, .device = h100, .profile = &p, .weights = PREC_FP16, .kv = PREC_FP16, .tp = 1 };
    perf_time t = perf_prefill(&setup, 1, 4096);
    double ratio = ttft[1] / ttft[0];
    cr_expect_leq(fabs(ttft[1] - (ttft[0] + 2 * t.compute_s)), 1e-9 * ttft[1],
                  "prefill %g s vs %g s + 2 x %g", ttft[1], ttft[0], t.compute_s);
    cr_expect(ratio > 2.4 && ratio < 3.0, "prefill %g s vs %g s: ratio %g", ttft[1], ttft[0],
              ratio);
}

static void expect_same_outcome(const outcome *fast, const outcome *ref, unsigned n)
{
    cr_expect_eq(fast->counts.completed, ref->counts.completed);
    for (unsigned i = 0; i < n; i++) {
        cr_expect_leq(fabs(fast->finish_s[i] / ref->finish_s[i] - 1), 1e-9,
                      "request %u finishes at %.12g (fast) vs %.12g (reference)", i,
                      fast->finish_s[i], ref->finish_s[i]);
        cr_expect_leq(fabs(fast->first_token_s[i] / ref->first_token_s[i] - 1), 1e-9,
                      "request %u first token %.12g vs %.12g", i, fast->first_token_s[i],
                      ref->first_token_s[i]);
    }
}

Test(replica_speed, fast_path_agrees_with_reference_across_speed_changes)
{
    action changes[] = {
        { .at_s = 0.3731, .compute_factor = 1, .memory_factor = 2 },
        { .at_s = 0.9127, .compute_factor = 1.5, .memory_factor = 1.2 },
        { .at_s = 1.4419, .compute_factor = 1, .memory_factor = 1 },
        { .at_s = 2.0533, .compute_factor = 4, .memory_factor = 4 },
        { .at_s = 2.6011, .compute_factor = 1.1, .memory_factor = 3.3 },
        { .at_s = 4.3001, .compute_factor = 1, .memory_factor = 1 },
    };
    replica_config c = base_config();
    outcome fast = run(c, 12, 0.25, changes, 6);
    c.reference = true;
    outcome ref = run(c, 12, 0.25, changes, 6);
    cr_assert_eq(ref.counts.completed, 12);
    expect_same_outcome(&fast, &ref, 12);
    cr_expect_lt(fast.replica_events * 5, ref.replica_events, "fast %llu, reference %llu",
                 (unsigned long long)fast.replica_events, (unsigned long long)ref.replica_events);
    /* and the changes mattered */
    outcome plain = run(base_config(), 12, 0.25, NULL, 0);
    cr_expect_gt(fast.finish_s[11], plain.finish_s[11] * 1.05);
}

Test(replica_speed, fast_path_agrees_with_reference_during_one_long_run)
{
    /* one request decoding alone: each change cuts the single run it is in */
    action changes[] = {
        { .at_s = 0.1013, .compute_factor = 1, .memory_factor = 1.7 },
        { .at_s = 0.2507, .compute_factor = 2, .memory_factor = 1 },
        { .at_s = 0.3999, .compute_factor = 1, .memory_factor = 1.25 },
    };
    replica_config c = base_config();
    outcome fast = run(c, 1, 1, changes, 3);
    c.reference = true;
    outcome ref = run(c, 1, 1, changes, 3);
    expect_same_outcome(&fast, &ref, 1);
    cr_expect_eq(fast.replica_events, 1 + 4, "a prefill, then a run cut three times");
}

Test(replica_speed, on_busy_reports_spells_not_iterations)
{
    /* two bursts of requests far apart: two busy spells of many iterations */
    replica_config c = base_config();
    sim_engine *e = sim_engine_create();
    counts n = { 0 };
    c.on_busy = on_busy;
    c.busy_context = &n;
    replica *r = replica_create(e, &c, on_done, &n);
    llm_request q[4] = { { .prompt = 100, .output = 50 }, { .prompt = 200, .output = 80 },
                         { .prompt = 100, .output = 50 }, { .prompt = 200, .output = 80 } };
    action a[4];
    for (int i = 0; i < 4; i++) {
        a[i] = (action){ .request = &q[i], .r = r };
        sim_event_schedule(e, i < 2 ? 0.01 * i : 100 + 0.01 * i, 0, run_action, &a[i]);
    }
    sim_engine_run(e);
    cr_expect_eq(n.completed, 4);
    cr_expect_gt(replica_get_stats(r)->iterations_events, 4);
    cr_expect_eq(n.busy_on, 2);
    cr_expect_eq(n.busy_off, 2);
    replica_free(r);
    sim_engine_free(e);
}

/* A hook that slows its own replica while it works, as a time-sliced GPU shared with a
 * busy tenant would. */
typedef struct self_slowing {
    replica *r;
} self_slowing;

static void slow_when_busy(void *context, bool busy)
{
    self_slowing *s = context;
    replica_set_speed(s->r, busy ? 2 : 1, busy ? 2 : 1);
}

Test(replica_speed, a_speed_set_by_on_busy_applies_from_the_first_iteration)
{
    replica_config c = base_config();
    double e2e[2];
    for (int k = 0; k < 2; k++) {
        sim_engine *e = sim_engine_create();
        counts n = { 0 };
        self_slowing s;
        c.on_busy = k ? slow_when_busy : NULL;
        c.busy_context = &s;
        s.r = replica_create(e, &c, on_done, &n);
        llm_request q = { .prompt = 500, .output = 100 };
        replica_enqueue(s.r, &q);
        sim_engine_run(e);
        e2e[k] = q.finish_s;
        double cf, mf;
        replica_get_speed(s.r, &cf, &mf);
        cr_expect_eq(mf, 1, "back to full speed when idle");
        replica_free(s.r);
        sim_engine_free(e);
    }
    /* both sides of every iteration take twice as long; kernel floors and the host's work
     * do not (a third of a batch-1 step) */
    perf_profile p = perf_default_profile(h100);
    perf_setup setup = { .model = llama, .device = h100, .profile = &p, .weights = PREC_FP16, .kv = PREC_FP16, .tp = 1 };
    perf_time t = perf_prefill(&setup, 1, 500);
    double slowed_prefill = 2 * (t.compute_s + t.memory_s) + t.launch_s + t.comm_s + t.host_s;
    cr_expect_gt(e2e[1], 1.5 * e2e[0]);
    cr_expect_gt(e2e[1] - e2e[0], slowed_prefill - t.total_s);
}

static void evict_at(sim_engine *e, void *data)
{
    (void)e;
    llm_request **out = data;
    replica *r = (replica *)out[0];
    out[1] = replica_evict(r);
}

Test(replica_speed, evict_returns_every_request_reset)
{
    replica_config c = base_config();
    c.max_batch = 4; /* 4 running, 6 waiting */
    c.kv_policy = KV_PREEMPT;
    c.kv_capacity_tokens = 20000;
    sim_engine *e = sim_engine_create();
    counts n = { 0 };
    c.on_busy = on_busy;
    c.busy_context = &n;
    replica *r = replica_create(e, &c, on_done, &n);
    llm_request q[10];
    for (int i = 0; i < 10; i++) {
        q[i] = (llm_request){ .arrival_s = 0, .prompt = 300 + 10 * i, .output = 500, .id = i };
        replica_enqueue(r, &q[i]);
    }
    llm_request *slot[2] = { (llm_request *)r, NULL };
    sim_event_schedule(e, 0.5, 0, evict_at, slot);
    sim_engine_run_until(e, 0.4);
    cr_assert_gt(q[0].generated, 0, "decoding before the eviction");
    sim_engine_run(e);
    cr_expect_eq(n.completed, 0);
    cr_expect_eq(sim_engine_pending(e), 0, "the iteration in progress was cancelled");
    cr_expect_eq(replica_outstanding(r), 0);
    cr_expect_float_eq(replica_outstanding_tokens(r), 0, 1e-9);
    cr_expect_eq(n.busy_on, 1);
    cr_expect_eq(n.busy_off, 1);
    const replica_stats *st = replica_get_stats(r);
    cr_expect_eq(st->busy.value, 0);
    cr_expect_eq(st->kv.value, 0);
    cr_expect_float_eq(sim_timeavg_mean(&st->busy, 1.0), 0.5, 1e-12, "busy until the eviction");
    /* all ten, running ones first in admission order, then the queue in order */
    unsigned seen = 0;
    for (llm_request *p = slot[1]; p; p = p->next) {
        cr_expect_eq(p->id, seen, "request %u in place %u", (unsigned)p->id, seen);
        cr_expect(p->generated == 0 && p->prefilled == 0 && p->cached == 0 && p->target == p->prompt
                  && p->first_token_s == 0 && p->preemptions == 0);
        seen++;
    }
    cr_expect_eq(seen, 10);
    /* they run to completion elsewhere */
    replica *other = replica_create(e, &c, on_done, &n);
    for (llm_request *p = slot[1], *next; p; p = next) {
        next = p->next;
        replica_enqueue(other, p);
    }
    sim_engine_run(e);
    cr_expect_eq(n.completed, 10);
    cr_expect_eq(replica_evict(other), NULL, "an idle replica has nothing to give back");
    replica_free(other);
    replica_free(r);
    sim_engine_free(e);
}
