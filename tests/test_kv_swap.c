/* when_full = "swap": a preempted sequence's cache to the host tier and back, against a
 * round trip computed by hand, the fall-back to recomputing when the host tier is full,
 * and the copy times of models/kv_swap.h. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "lua/catalog.h"
#include "models/kv_swap.h"
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

TestSuite(kv_swap, .init = setup, .fini = teardown);

static void on_done(void *context, llm_request *q, bool dropped)
{
    (void)q;
    cr_assert(!dropped);
    (*(unsigned *)context)++;
}

static void enqueue(sim_engine *e, void *data)
{
    (void)e;
    llm_request **pair = data;
    replica_enqueue((replica *)pair[0], pair[1]);
}

typedef struct swap_run {
    double finish_s[2];
    replica_stats stats;
    uint64_t events;
} swap_run;

/* Two requests of 1,000 prompt and 500 output tokens at t = 0, in a cache of 2,100
 * tokens: a's prefill puts its 1,000 tokens in the cache (its first token comes out of
 * it), b's prefill its 1,000 while a decodes one (1,001), then a decode run of
 * floor((2,100 - 2,001) / 2) = 49 iterations fills the cache to 2,099, and the next step
 * needs 2 more: the later request (b) is preempted with 1,000 + 49 = 1,049 tokens
 * cached.  a finishes alone (b, needing 1,049 and a token for each of the two, cannot
 * come back while a holds over 1,049 and a holds 1,050), then b comes back and
 * finishes. */
static swap_run run_pair(kv_policy policy, double host_bytes, double bytes_per_s,
                         double latency_s, bool reference)
{
    replica_config c = {
        .model = llama, .device = h100, .profile = perf_default_profile(h100),
        .prec = PREC_FP16, .kv_prec = PREC_FP16, .tp = 1, .max_batch = 8, .max_tokens = 8192,
        .kv_capacity_tokens = 2100, .kv_policy = policy, .reference = reference,
        .host_kv_bytes = host_bytes, .host_kv_bytes_per_s = bytes_per_s,
        .host_kv_latency_s = latency_s,
        .kv_bytes_per_token = model_kv_bytes_per_token(llama, PREC_FP16),
    };
    unsigned done = 0;
    sim_engine *e = sim_engine_create();
    replica *r = replica_create(e, &c, on_done, &done);
    llm_request q[2] = { { .prompt = 1000, .output = 500, .id = 0 },
                         { .prompt = 1000, .output = 500, .id = 1 } };
    void *pairs[2][2] = { { r, &q[0] }, { r, &q[1] } };
    sim_event_schedule(e, 0, 0, enqueue, pairs[0]);
    sim_event_schedule(e, 0, 1, enqueue, pairs[1]);
    sim_engine_run(e);
    cr_assert_eq(done, 2);
    swap_run out = { { q[0].finish_s, q[1].finish_s }, *replica_get_stats(r),
                     sim_engine_events_run(e) };
    replica_free(r);
    sim_engine_free(e);
    return out;
}

Test(kv_swap, a_round_trip_moves_the_cached_bytes_and_stalls_for_both_copies)
{
    double bpt = model_kv_bytes_per_token(llama, PREC_FP16);
    /* Llama-3-8B: 32 layers x 8 KV heads x 128 x (key + value) x 2 bytes */
    cr_assert_float_eq(bpt, 32.0 * 8 * 128 * 2 * 2, 1e-9);
    double bw = 50e9, lat = 10e-6, bytes = 1049 * bpt;
    double copy = lat + bytes / bw; /* one way: 2.76 ms */
    cr_assert_float_eq(kv_swap_copy_s(bytes, bw, lat), copy, 1e-15);
    swap_run swap = run_pair(KV_SWAP, 1e12, bw, lat, false);
    cr_expect_eq(swap.stats.swap.swaps_out, 1);
    cr_expect_eq(swap.stats.swap.swaps_in, 1);
    cr_expect_eq(swap.stats.swap.recomputes, 0);
    cr_expect_eq(swap.stats.preemptions, 1);
    cr_expect_float_eq(swap.stats.swap.bytes, 2 * bytes, 1e-3, "out and back: %g bytes",
                       swap.stats.swap.bytes);
    cr_expect_float_eq(swap.stats.swap.stall_s, 2 * bytes / bw + 2 * lat, 1e-12,
                       "stalled %g s", swap.stats.swap.stall_s);
    /* the same run with copies that take no time: a waits once (b's swap-out), b twice
     * (a's later finish, then its own swap-in) */
    swap_run free_copies = run_pair(KV_SWAP, 1e12, 1e30, 0, false);
    cr_expect_float_eq(swap.finish_s[0] - free_copies.finish_s[0], copy, 1e-9, "a: %g s later",
                       swap.finish_s[0] - free_copies.finish_s[0]);
    cr_expect_float_eq(swap.finish_s[1] - free_copies.finish_s[1], 2 * copy, 1e-9,
                       "b: %g s later", swap.finish_s[1] - free_copies.finish_s[1]);
    /* one event per iteration sees the same times */
    swap_run ref = run_pair(KV_SWAP, 1e12, bw, lat, true);
    for (int i = 0; i < 2; i++)
        cr_expect_float_eq(ref.finish_s[i], swap.finish_s[i], 1e-9 * swap.finish_s[i],
                           "request %d: reference %.9g, fast %.9g", i, ref.finish_s[i],
                           swap.finish_s[i]);
    cr_expect_gt(ref.events, 5 * swap.events, "the fast path skips the decode steps");
}

Test(kv_swap, swapping_beats_recomputing_a_long_prefix_and_a_full_host_tier_recomputes)
{
    double bw = 50e9;
    swap_run swap = run_pair(KV_SWAP, 1e12, bw, 10e-6, false);
    swap_run recompute = run_pair(KV_PREEMPT, 0, 0, 0, false);
    /* a host tier smaller than b's cache (137.5 MB): recompute, as "preempt" does */
    swap_run full = run_pair(KV_SWAP, 100e6, bw, 10e-6, false);
    cr_expect_eq(recompute.stats.swap.recomputes, 1);
    cr_expect_eq(full.stats.swap.swaps_out, 0);
    cr_expect_eq(full.stats.swap.recomputes, 1);
    cr_expect_eq(full.stats.swap.bytes, 0);
    cr_expect_float_eq(full.finish_s[1], recompute.finish_s[1], 1e-12, "the same as preempt");
    /* b recomputes 1,049 tokens of prefill (tens of ms on an H100) against 5.5 ms of
     * copies */
    cr_expect_lt(swap.finish_s[1], recompute.finish_s[1], "swap %g s, recompute %g s",
                 swap.finish_s[1], recompute.finish_s[1]);
}

Test(kv_swap, the_default_bandwidth_is_the_pcie_links_at_their_achieved_share)
{
    host_kv_spec h = { .size_bytes = 1e12, .bandwidth_bytes_per_s = 0, .latency_s = -1 };
    /* H100-SXM: PCIe gen 5 x16, 64 GB/s a direction, 80% achieved: 51.2 GB/s a link */
    cr_expect_float_eq(kv_swap_bandwidth(&h, h100, 1), 51.2e9, 1e-3);
    cr_expect_float_eq(kv_swap_bandwidth(&h, h100, 4), 4 * 51.2e9, 1e-3, "tp 4: four links");
    cr_expect_float_eq(kv_swap_latency(&h), 10e-6, 1e-18);
    h.bandwidth_bytes_per_s = 25e9;
    h.latency_s = 0;
    cr_expect_float_eq(kv_swap_bandwidth(&h, h100, 4), 25e9, 1e-3, "given: as given");
    cr_expect_float_eq(kv_swap_latency(&h), 0, 0);
}

/* The offload tier: a sequence's cache beyond the device's share (2,000 tokens here)
 * stays in host memory, and every iteration reads that part over PCIe. */
static double offload_finish(unsigned prompt, unsigned output, bool offload, bool reference,
                             replica_stats *stats)
{
    replica_config c = {
        .model = llama, .device = h100, .profile = perf_default_profile(h100),
        .prec = PREC_FP16, .kv_prec = PREC_FP16, .tp = 1, .max_batch = 8, .max_tokens = 8192,
        .kv_capacity_tokens = 12000, .kv_device_tokens = offload ? 2000 : 0,
        .kv_policy = KV_PREEMPT, .reference = reference, .host_kv_bytes_per_s = 50e9,
        .kv_bytes_per_token = model_kv_bytes_per_token(llama, PREC_FP16),
    };
    unsigned done = 0;
    sim_engine *e = sim_engine_create();
    replica *r = replica_create(e, &c, on_done, &done);
    llm_request q = { .prompt = prompt, .output = output };
    void *pair[2] = { r, &q };
    sim_event_schedule(e, 0, 0, enqueue, pair);
    sim_engine_run(e);
    cr_assert_eq(done, 1);
    if (stats)
        *stats = *replica_get_stats(r);
    replica_free(r);
    sim_engine_free(e);
    return q.finish_s;
}

Test(kv_swap, the_offload_tier_reads_the_cache_beyond_the_device_every_step)
{
    double bpt = model_kv_bytes_per_token(llama, PREC_FP16), bw = 50e9;
    /* 3,000 prompt tokens, 10 out: the prefill caches 3,000 (reading nothing back), then 9
     * decode steps read 3,000 + k cached tokens, k = 0..8, of which 1,000 + k are beyond
     * the device's 2,000: 9 x 1,000 + 36 = 9,036 tokens over PCIe */
    replica_stats st;
    double slow = offload_finish(3000, 10, true, false, &st);
    double fast = offload_finish(3000, 10, false, false, NULL);
    double extra = 9036 * bpt / bw; /* 23.7 ms */
    cr_expect_float_eq(slow - fast, extra, 1e-9, "%g s more, expected %g", slow - fast, extra);
    cr_expect_float_eq(st.swap.offload_bytes, 9036 * bpt, 1e-3);
    cr_expect_float_eq(st.swap.offload_s, extra, 1e-12);
    cr_expect_float_eq(offload_finish(3000, 10, true, true, NULL), slow, 1e-9 * slow,
                       "one event per iteration agrees");
    /* a run that crosses the device's share: 1,990 cached, 19 steps; from step 10 on,
     * 0, 1, ..., 8 tokens are beyond it: 36 tokens over PCIe; the fast path ends its
     * run at the crossing, so both modes see the same */
    double cross = offload_finish(1990, 20, true, false, &st);
    double under = offload_finish(1990, 20, false, false, NULL);
    cr_expect_float_eq(cross - under, 36 * bpt / bw, 1e-9, "%g s more", cross - under);
    cr_expect_float_eq(offload_finish(1990, 20, true, true, NULL), cross, 1e-9 * cross);
}
