/* Sessions and prefix caching in serving: a fixed session replayed by hand (the exact
 * tokens each turn finds cached), a shared system prompt, prefix affinity against least
 * outstanding on hit rate and balance, and the fast path against one event per
 * iteration with caching on. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "lua/catalog.h"
#include "models/autoscale.h"
#include "models/gpu_pool.h"
#include "models/serving.h"
#include "models/serving_fleet.h"
#include "tests/support/scratch.h"
#include "tests/support/serving_run.h"

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

TestSuite(prefix_serving, .init = setup, .fini = teardown);

static const system_prompt SYSTEM_1000[] = { { 1000, 1, 1 } };

static serving_config chat_config(unsigned replicas, double session_rate)
{
    static session_spec spec;
    spec = (session_spec){ sim_dist_constant(3), sim_dist_constant(10), sim_dist_constant(100) };
    serving_config c = {
        .name = "chat", .replicas = replicas, .routing = ROUTE_LEAST_OUTSTANDING,
        .interarrival = sim_dist_constant(1 / session_rate),
        .prompt_tokens = sim_dist_constant(100), .output_tokens = sim_dist_constant(50),
        .rtt_s = sim_dist_constant(0), .seed = 1, .prefix_block = 16, .affinity_bound = 0.25,
        .system_prompts = SYSTEM_1000, .nsystem_prompts = 1, .sessions = &spec,
    };
    c.replica = (replica_config){
        .model = llama, .device = h100, .profile = perf_default_profile(h100),
        .prec = PREC_FP16, .kv_prec = PREC_FP16, .tp = 1, .max_batch = 128, .max_tokens = 8192,
        .kv_capacity_tokens = memory_inference(llama, h100, PREC_FP16, PREC_FP16, 1).kv_capacity_tokens,
    };
    return c;
}

Test(prefix_serving, a_replayed_session_finds_its_history_cached_block_by_block)
{
    /* Two sessions 100 s apart, each three turns of 100 new tokens and 50 out, after a
     * 1,000-token system prompt, blocks of 16.  Session 1: turn 1 (1,100 tokens) finds
     * nothing; it ends with 1,149 tokens of cache (the last output token has none):
     * 71 blocks, 1,136 tokens.  Turn 2 (1,150 + 100 = 1,250) finds those 1,136; it
     * leaves 1,299: 81 blocks, 1,296, which turn 3 (1,400) finds.  Session 2's turn 1
     * finds the system prompt's 62 whole blocks (992 tokens; block 62 straddles its
     * end and is session 1's), then 1,136 and 1,296 as session 1. */
    serving_config c = chat_config(1, 0.01);
    c.max_arrivals = 2;
    run_result o = serving_run(&c, 1000);
    cr_assert_eq(o.stats.completed, 6);
    cr_expect_eq(o.stats.prompt_tokens, 2 * (1100 + 1250 + 1400));
    cr_expect_eq(o.stats.prefix_cached_tokens, 1136 + 1296 + 992 + 1136 + 1296);
    cr_expect_eq(o.stats.prefix_hits, 5);
    cr_expect_eq(o.sessions.ended, 2);
    cr_expect_eq(o.sessions.turns, 6);
    cr_expect_eq(o.sessions.in_progress, 0);
    cr_expect_eq(o.groups[0].prefix_evictions, 0);
}

Test(prefix_serving, a_cached_prefix_shortens_the_first_token)
{
    /* the same sessions without the cache: every token prefilled, TTFT longer */
    serving_config c = chat_config(1, 0.01);
    c.max_arrivals = 2;
    run_result cached = serving_run(&c, 1000);
    c.prefix_block = 0;
    run_result plain = serving_run(&c, 1000);
    cr_assert_eq(plain.stats.completed, 6);
    cr_expect_eq(plain.stats.prefix_cached_tokens, 0);
    cr_expect_lt(cached.stats.ttft_s.mean, 0.6 * plain.stats.ttft_s.mean, "%g vs %g",
                 cached.stats.ttft_s.mean, plain.stats.ttft_s.mean);
    /* the answers decode the same tokens either way */
    cr_expect_eq(cached.stats.output_tokens, plain.stats.output_tokens);
}

Test(prefix_serving, the_cache_yields_to_running_sequences)
{
    /* Two sessions 0.1 s apart on a cache of 1,500 tokens (93 blocks), reserved.  After
     * the turns 1 (session 2's found the system prompt's 992 tokens that session 1's
     * prefill had computed) the cache holds the system prompt's 62 blocks and each
     * session's 9 more, unused.  Session 1's turn 2 finds 71 of them (1,136 tokens),
     * pins them and reserves 1,300 - 1,136 = 164 of its own.  Session 2's turn 2 would
     * pin its 9 (144 tokens) and reserve 164 more: 1,608 > 1,500, so it waits for
     * session 1's to end, which leaves session 1's history at 19 blocks; it then pins
     * 71 blocks and reserves 164, leaving 200 tokens, 12 blocks, for the unused: session
     * 1's 19 go down to 12, and its turn 3 finds 992 + 192 = 1,184 of its 1,296.  That
     * one pins 74 blocks and reserves 1,450 - 1,184 = 266, leaving 50 tokens, 3 blocks:
     * session 2's history goes down to 3, and its turn 3 finds 992 + 48 = 1,040.
     * Without the bound they would find 992 + 2 x (1,136 + 1,296). */
    serving_config c = chat_config(1, 10);
    c.max_arrivals = 2;
    c.replica.kv_capacity_tokens = 1500;
    run_result o = serving_run(&c, 1000);
    cr_assert_eq(o.stats.completed, 6);
    cr_expect_gt(o.groups[0].prefix_evictions, 0);
    cr_expect_eq(o.stats.prefix_cached_tokens, 992 + 1136 + 1136 + 1184 + 1040);
}

Test(prefix_serving, affinity_beats_least_outstanding_on_hits_and_keeps_the_balance)
{
    serving_config c = chat_config(4, 4);
    static session_spec spec;
    spec = (session_spec){ sim_dist_uniform(2, 8), sim_dist_exponential(5),
                           sim_dist_lognormal(150, 0.6) };
    c.sessions = &spec;
    c.output_tokens = sim_dist_lognormal(200, 0.6);
    c.interarrival = sim_dist_exponential(0.25);
    c.warmup_s = 60;
    run_result lo = serving_run(&c, 600);
    c.routing = ROUTE_PREFIX_AFFINITY;
    run_result aff = serving_run(&c, 600);
    double lo_rate = lo.stats.prefix_cached_tokens / lo.stats.prompt_tokens;
    double aff_rate = aff.stats.prefix_cached_tokens / aff.stats.prompt_tokens;
    cr_expect_gt(aff_rate, lo_rate + 0.1, "affinity %g, least outstanding %g", aff_rate, lo_rate);
    cr_expect_lt(aff.groups[0].load_max_over_mean, 1.25, "balance %g", aff.groups[0].load_max_over_mean);
    cr_expect_gt(aff.stats.completed, 0.98 * lo.stats.completed);
}

/* Prefix affinity takes a conversation's own holders from the directory, and otherwise
 * weighs every replica from the ranking's array; with the rankings checked (setup), each
 * routing is also decided by a look at each replica in creation order, and a different
 * answer is fatal.  Three kinds of prompts on 24 replicas with a tight bound (the own
 * holders often over it) and a small cache (evictions): one shared system prompt, two
 * of them, none (nothing cached: the session's hash decides). */
Test(prefix_serving, affinity_from_the_directory_agrees_with_a_look_at_each_replica)
{
    static const system_prompt TWO[] = { { 500, 1, 1 }, { 2000, 1, 2 } };
    const system_prompt *prompts[3] = { SYSTEM_1000, TWO, NULL };
    unsigned nprompts[3] = { 1, 2, 0 };
    for (int k = 0; k < 3; k++) {
        serving_config c = chat_config(24, 12);
        static session_spec spec;
        spec = (session_spec){ sim_dist_uniform(2, 8), sim_dist_exponential(3),
                               sim_dist_lognormal(150, 0.6) };
        c.sessions = &spec;
        c.system_prompts = prompts[k];
        c.nsystem_prompts = nprompts[k];
        c.interarrival = sim_dist_exponential(1 / 12.0);
        c.output_tokens = sim_dist_lognormal(200, 0.6);
        c.routing = ROUTE_PREFIX_AFFINITY;
        c.affinity_bound = 0.1;
        c.replica.kv_capacity_tokens = 20000;
        run_result o = serving_run(&c, 120);
        cr_expect_gt(o.stats.completed, 1000, "prompts %d: %g completed", k,
                     (double)o.stats.completed);
        cr_expect_gt(o.stats.prefix_cached_tokens, 0.2 * o.stats.prompt_tokens,
                     "prompts %d: %g of %g tokens cached", k, o.stats.prefix_cached_tokens,
                     o.stats.prompt_tokens);
        cr_expect_gt(o.groups[0].prefix_evictions, 0, "prompts %d", k);
    }
}

/* The same while the autoscaler drains replicas: a draining replica keeps its cache,
 * and so its place in the directory, but takes no request; prefix affinity must not
 * send its conversations back to it (the look at each replica, in the check, sees only
 * the active ones). */
Test(prefix_serving, affinity_skips_the_draining_holders)
{
    char err[256];
    sim_engine *e = sim_engine_create();
    pool_capacity cap = { .kind = POOL_CLOUD, .count = 8, .max = 8,
                          .provision_s = sim_dist_constant(30), .retry_s = 60 };
    gpu_pool *gp = gpu_pool_create(e, &cap, "cloud", 7, 0, err, sizeof err);
    cr_assert_not_null(gp, "%s", err);
    autoscaler_spec a = { .enabled = true, .metric = AUTOSCALE_QUEUE, .target = 4,
                          .interval_s = 10, .cooldown_s = 0, .scale_in_delay_s = 20 };
    serving_config c = chat_config(8, 3);
    static session_spec spec;
    spec = (session_spec){ sim_dist_uniform(3, 8), sim_dist_exponential(20),
                           sim_dist_lognormal(150, 0.6) };
    c.sessions = &spec;
    c.interarrival = sim_dist_exponential(1 / 3.0);
    c.routing = ROUTE_PREFIX_AFFINITY;
    c.min_replicas = 1;
    c.max_replicas = 8;
    c.pool = gp;
    c.autoscaler = &a;
    serving *s = serving_create(e, &c, err, sizeof err);
    cr_assert_not_null(s, "%s", err);
    serving_start(s);
    sim_engine_run_until(e, 600);
    serving_group_stats g = serving_group_get_stats(s, 0, 600);
    cr_expect_lt(g.replicas_mean, 7, "it drained some of its 8: %g", g.replicas_mean);
    const serving_stats *st = serving_get_stats(s);
    cr_expect_gt(st->completed, 1000, "%g", (double)st->completed);
    cr_expect_gt(st->prefix_cached_tokens, 0.3 * st->prompt_tokens, "%g of %g",
                 st->prefix_cached_tokens, st->prompt_tokens);
    serving_free(s);
    gpu_pool_free(gp);
    sim_engine_free(e);
}

Test(prefix_serving, the_fast_path_agrees_with_one_event_per_iteration)
{
    serving_config c = chat_config(2, 2);
    c.routing = ROUTE_PREFIX_AFFINITY;
    c.interarrival = sim_dist_exponential(0.5);
    run_result fast = serving_run(&c, 300);
    c.replica.reference = true;
    run_result ref = serving_run(&c, 300);
    cr_assert_gt(fast.stats.completed, 500);
    cr_expect_leq(fabs(fast.stats.ttft_s.mean / ref.stats.ttft_s.mean - 1), 0.01);
    cr_expect_leq(fabs(fast.stats.e2e_s.mean / ref.stats.e2e_s.mean - 1), 0.01);
    cr_expect_leq(fabs(fast.stats.prefix_cached_tokens / ref.stats.prefix_cached_tokens - 1), 0.01);
}

/* Preemption beside shared blocks, near saturation: the cache fills and empties all run
 * long.  A decode run ends where the cache fills, counting the blocks the sequences share
 * from the prefix cache (before 2026-12-06 it left them out and overfilled the cache,
 * preempting only at its end); and the prefix cache gives back blocks as the sequences
 * grow: one event per iteration trims it at each iteration's start, so a run of many in
 * one event must leave it as the last of those trims would before anyone leaves or joins,
 * or a readmitted request finds blocks the reference evicted (until 2026-12-07 the fast
 * path's mean response time read 8-21% under the reference's over 3,000 s, 0.8-5% over
 * these 600 s, with one seed held within 1%). */
/* One replica near saturation, four 4,000-token system prompts (16,000 of its 60,000
 * tokens of cache shared), the cache growing under `policy`. */
static serving_config shared_blocks_near_saturation(kv_policy policy)
{
    static const system_prompt four[] = { { 4000, 1, 4 } };
    serving_config c = chat_config(1, 1);
    c.system_prompts = four;
    c.sessions = NULL;
    c.interarrival = sim_dist_exponential(1 / 3.6);
    c.prompt_tokens = sim_dist_lognormal(300, 0.5);
    c.output_tokens = sim_dist_lognormal(400, 0.8);
    c.replica.kv_policy = policy;
    c.replica.kv_capacity_tokens = 60000;
    return c;
}

Test(prefix_serving, the_fast_path_agrees_under_preemption_beside_shared_blocks, .timeout = 60)
{
    expect_the_same_runs(shared_blocks_near_saturation(KV_PREEMPT), 600,
                         "preempting beside shared blocks", 1000);
}

/* Where a fast run's cache is read, or gives back blocks that change an admission,
 * between two of its events.  Each disagreed before 2026-12-07:
 * - affinity routing read what a replica's prefix cache held as of its run's start,
 *   blocks one event per iteration had given back since to the growing sequences (4
 *   replicas, sessions beside system prompts: 1% of the requests fewer completed);
 * - make_room preempted a sequence swapped back in, which held its system prompt as its
 *   own: readmitted to recompute it shares it, needs less than it freed and fits at the
 *   next boundary, which the run planned after make_room ran past (mean response time
 *   up to 60% apart near saturation);
 * - past a sliding window a found block counts whole but its tokens only in part once
 *   prefilled: the blocks a run's start or its iterations give back can let the head
 *   in at a boundary within the run (gpt-oss-20b, growing or reserving). */
Test(prefix_serving, the_fast_path_agrees_where_the_cache_changes_within_a_run, .timeout = 120)
{
    static const system_prompt many[] = { { 1000, 1, 20 }, { 2000, 1, 5 } };
    static session_spec spec;
    spec = (session_spec){ sim_dist_uniform(2, 6), sim_dist_exponential(5),
                           sim_dist_lognormal(150, 0.6) };
    serving_config c = chat_config(4, 8);
    c.interarrival = sim_dist_exponential(1 / 8.0);
    c.prompt_tokens = sim_dist_lognormal(400, 0.8);
    c.output_tokens = sim_dist_lognormal(150, 0.7);
    c.system_prompts = many;
    c.nsystem_prompts = 2;
    c.sessions = &spec;
    c.routing = ROUTE_PREFIX_AFFINITY;
    c.replica.kv_policy = KV_PREEMPT;
    c.replica.kv_capacity_tokens = 60000;
    expect_the_same_runs(c, 300, "affinity", 0);

    c = shared_blocks_near_saturation(KV_SWAP);
    c.replica.kv_bytes_per_token = model_kv_bytes_per_token(llama, PREC_FP16);
    c.replica.host_kv_bytes = 8000 * c.replica.kv_bytes_per_token;
    c.replica.host_kv_bytes_per_s = 25e9;
    c.replica.host_kv_latency_s = 10e-6;
    expect_the_same_runs(c, 600, "swap", 100);

    const model_spec *oss = catalog_model(&cat, "gpt-oss-20b");
    cr_assert_not_null(oss);
    c = chat_config(1, 1);
    c.system_prompts = many;
    c.nsystem_prompts = 2;
    c.sessions = NULL;
    c.interarrival = sim_dist_exponential(1 / 14.5);
    c.prompt_tokens = sim_dist_lognormal(100, 0.8);
    c.output_tokens = sim_dist_lognormal(150, 0.7);
    c.replica.model = oss;
    c.replica.max_tokens = 4096;
    c.replica.kv_capacity_tokens = 40000;
    c.replica.kv_policy = KV_PREEMPT;
    expect_the_same_runs(c, 300, "window, preempting", 0);
    c.replica.kv_policy = KV_RESERVE;
    expect_the_same_runs(c, 300, "window, reserving", 0);
    /* speculating too (a lookup drafting 4, acceptance in [0.5, 0.9]) under preemption
     * in 12,000 tokens: a run is cut where the head may fit only while a round's least
     * growth (floor(E) tokens a sequence) leaves room for it.  Until 2026-12-07 every run
     * was cut to a round while the head had blocks to gain: 17,010 events against one
     * event a round's 19,810 */
    c.replica.kv_policy = KV_PREEMPT;
    c.replica.spec_k = 4;
    c.replica.kv_capacity_tokens = 12000;
    c.replica.spec_step_s = 2e-4;
    c.replica.spec_tokens = perf_speculative_tokens(0.7, 4);
    c.spec_acceptance = sim_dist_uniform(0.5, 0.9);
    expect_the_same_runs(c, 300, "window, speculating", 0);
    c.seed = 1;
    c.replica.reference = false;
    run_result fast = serving_run(&c, 300);
    c.replica.reference = true;
    run_result ref = serving_run(&c, 300);
    cr_expect_gt((double)ref.events / fast.events, 2, "events: fast %g, reference %g",
                 (double)fast.events, (double)ref.events);
}

Test(prefix_serving, sessions_are_not_for_a_trace_or_disaggregated_serving)
{
    serving_config c = chat_config(1, 1);
    trace_options t = { 0 };
    c.trace = &t;
    char err[256];
    sim_engine *e = sim_engine_create();
    cr_expect_null(serving_create(e, &c, err, sizeof err));
    cr_expect(strstr(err, "not a trace"), "%s", err);
    sim_engine_free(e);
}

/* The fewest replicas (1 to 16; 17: none) whose TTFT p99 stays within slo_s, for chat sessions of
 * 4 to 8 turns after a system prompt of `system` tokens, on Llama-3.1-8B. */
static unsigned fewest_replicas(unsigned system, bool cached, double slo_s)
{
    static session_spec spec;
    spec = (session_spec){ sim_dist_uniform(4, 8), sim_dist_exponential(20),
                           sim_dist_lognormal(150, 0.5) };
    system_prompt sp[] = { { system, 1, 1 } };
    for (unsigned n = 1; n <= 16; n++) {
        serving_config c = chat_config(n, 5);
        c.sessions = &spec;
        c.system_prompts = sp;
        c.interarrival = sim_dist_exponential(1.0 / 5);
        c.output_tokens = sim_dist_lognormal(250, 0.5);
        c.replica.max_wait_s = 60;
        c.warmup_s = 60;
        c.prefix_block = cached ? 16 : 0;
        c.replica.model = catalog_model(&cat, "llama-3.1-8b"); /* 128k context */
        c.routing = cached ? ROUTE_PREFIX_AFFINITY : ROUTE_LEAST_OUTSTANDING;
        run_result o = serving_run(&c, 360);
        if (o.ttft_p99 <= slo_s && o.stats.dropped == 0)
            return n;
    }
    return 17;
}

Test(prefix_serving, the_gpus_for_one_slo_fall_as_the_shared_prefix_grows)
{
    /* without a cache the GPUs needed grow with the system prompt; with it and affinity
     * much less, so the saving grows (3 -> 10 plain, 3 -> 4 cached, at this writing) */
    unsigned plain_short = fewest_replicas(250, false, 0.5);
    unsigned plain_long = fewest_replicas(4000, false, 0.5);
    unsigned cached_short = fewest_replicas(250, true, 0.5);
    unsigned cached_long = fewest_replicas(4000, true, 0.5);
    cr_log_info("replicas for TTFT p99 <= 500 ms: plain %u -> %u, cached %u -> %u", plain_short,
                plain_long, cached_short, cached_long);
    cr_expect_leq(cached_short, plain_short);
    cr_expect_lt(cached_long, plain_long);
    cr_expect_gt(plain_long - cached_long, plain_short - cached_short);
}

Test(prefix_serving, a_session_trace_replays_its_turns_onto_their_history)
{
    /* session a's turn 2 (1,150 tokens) finds turn 1's 1,049 tokens of cache as 65
     * blocks, 1,040 tokens; session b and the row without a session find nothing (no
     * system prompt here) */
    char *dir = scratch_dir();
    char *path = scratch_file(dir, "t.csv", "TIMESTAMP,session_id,ContextTokens,GeneratedTokens\n"
                                            "0,a,1000,50\n10,a,1150,50\n20,b,1000,50\n"
                                            "30,,1000,50\n");
    trace_options t = { .path = path, .time_column = "TIMESTAMP",
                        .prompt_column = "ContextTokens", .output_column = "GeneratedTokens",
                        .session_column = "session_id", .speedup = 1 };
    serving_config c = chat_config(1, 1);
    c.sessions = NULL;
    c.system_prompts = NULL;
    c.nsystem_prompts = 0;
    c.trace = &t;
    c.lengths_from_trace = true;
    run_result o = serving_run(&c, 1000);
    cr_expect_eq(o.stats.completed, 4);
    cr_expect_eq(o.stats.prompt_tokens, 4150);
    cr_expect_eq(o.stats.prefix_cached_tokens, 1040);
    cr_expect_eq(o.stats.prefix_hits, 1);
    /* without the column every row is a request of its own */
    t.session_column = NULL;
    run_result apart = serving_run(&c, 1000);
    cr_expect_eq(apart.stats.prefix_cached_tokens, 0);
    free(path);
    scratch_remove_dir(dir);
}

/* Replays the first `rows` rows of a trace with block ids (Mooncake's hash_ids). */
static run_result replay_hashed_on(const char *path, uint64_t rows, routing_policy routing,
                                   unsigned replicas, double kv_tokens)
{
    trace_options t = { .path = path, .time_column = "TIMESTAMP",
                        .prompt_column = "ContextTokens", .output_column = "GeneratedTokens",
                        .speedup = 1, .blocks_column = "hash_ids", .block_tokens = 100 };
    serving_config c = chat_config(replicas, 1);
    c.sessions = NULL;
    c.system_prompts = NULL;
    c.nsystem_prompts = 0;
    c.trace = &t;
    c.lengths_from_trace = true;
    c.prefix_block = 100;
    c.routing = routing;
    c.max_arrivals = rows;
    if (kv_tokens > 0)
        c.replica.kv_capacity_tokens = kv_tokens;
    return serving_run(&c, 1000);
}

static run_result replay_hashed(const char *path, uint64_t rows, routing_policy routing,
                                unsigned replicas)
{
    return replay_hashed_on(path, rows, routing, replicas, 0);
}

Test(prefix_serving, a_trace_of_block_ids_finds_each_turns_leading_ids_cached)
{
    /* Blocks of 100 tokens, one replica, each row done before the next.  A request may
     * skip whole blocks of its prompt but its last token, and caches the ids of its
     * prompt's whole blocks:
     *   250 tokens, ids 1 2 3: nothing held; caches 1 2 (3 is a partial block)
     *   420, 1 2 4 5 6: 1 2 held, 4 not: 200; caches 1 2 4 5
     *   300, 1 7 8: of the 2 blocks of its first 299 tokens, 1: 100
     *   400, 1 2 4 5: 3 blocks of its first 399, all held: 300
     *   500, no ids: nothing
     *   200, 9 10: nothing
     *   401, 1 2 3 11 12: 1 2, then 3, never cached whole: 200 */
    char *dir = scratch_dir();
    char *path = scratch_file(dir, "t.csv", "TIMESTAMP,ContextTokens,GeneratedTokens,hash_ids\n"
                                            "0,250,20,1 2 3\n10,420,20,\"[1, 2, 4, 5, 6]\"\n"
                                            "20,300,20,\"1,7,8\"\n30,400,20,1 2 4 5\n"
                                            "40,500,20,\n50,200,20,9 10\n"
                                            "60,401,20,1 2 3 11 12\n");
    static const double cumulative[] = { 0, 200, 300, 600, 600, 600, 800 };
    static const uint64_t hits[] = { 0, 1, 2, 3, 3, 3, 4 };
    for (unsigned rows = 1; rows <= 7; rows++) {
        run_result o = replay_hashed(path, rows, ROUTE_LEAST_OUTSTANDING, 1);
        cr_expect_eq(o.stats.completed, rows);
        cr_expect_eq(o.stats.prefix_cached_tokens, cumulative[rows - 1], "%u rows: %g tokens",
                     rows, o.stats.prefix_cached_tokens);
        cr_expect_eq(o.stats.prefix_hits, hits[rows - 1], "%u rows", rows);
        cr_expect_eq(o.groups[0].prefix_evictions, 0);
    }
    /* prefix affinity on four replicas sends each row where its ids are: the same */
    run_result aff = replay_hashed(path, 7, ROUTE_PREFIX_AFFINITY, 4);
    cr_expect_eq(aff.stats.prefix_cached_tokens, 800);
    free(path);
    scratch_remove_dir(dir);
}

Test(prefix_serving, block_ids_want_their_own_block_size_and_no_system_prompt)
{
    char *dir = scratch_dir();
    char *path = scratch_file(dir, "t.csv", "TIMESTAMP,ContextTokens,GeneratedTokens,hash_ids\n"
                                            "0,250,20,1 2 3\n");
    trace_options t = { .path = path, .time_column = "TIMESTAMP",
                        .prompt_column = "ContextTokens", .output_column = "GeneratedTokens",
                        .speedup = 1, .blocks_column = "hash_ids", .block_tokens = 100 };
    serving_config c = chat_config(1, 1);
    c.sessions = NULL;
    c.trace = &t;
    c.lengths_from_trace = true;
    char err[512];
    sim_engine *e = sim_engine_create();
    c.prefix_block = 100; /* with the system prompt */
    cr_expect_null(serving_create(e, &c, err, sizeof err));
    c.nsystem_prompts = 0;
    c.prefix_block = 16;
    cr_expect_null(serving_create(e, &c, err, sizeof err));
    cr_expect_str_eq(err, "a trace's block ids name whole prompts in blocks of their "
                          "block_tokens: no system prompt, and a prefix cache of those blocks");
    c.prefix_block = 100;
    serving *s = serving_create(e, &c, err, sizeof err);
    cr_expect_not_null(s, "%s", err);
    serving_free(s);
    sim_engine_free(e);
    free(path);
    scratch_remove_dir(dir);
}

Test(prefix_serving, block_ids_are_evicted_when_the_cache_is_short)
{
    /* a (450 tokens: 4 whole blocks of 100), then b (4 others), then a again, on a
     * replica of 600 tokens of cache: once b is cached at most 6 blocks stay, so a's
     * last ones go (its first are newer) and a finds less than its 400 tokens again,
     * which it finds with room for both */
    char *dir = scratch_dir();
    char *path = scratch_file(dir, "t.csv", "TIMESTAMP,ContextTokens,GeneratedTokens,hash_ids\n"
                                            "0,450,20,1 2 3 4 5\n10,450,20,11 12 13 14 15\n"
                                            "20,450,20,1 2 3 4 6\n");
    run_result roomy = replay_hashed(path, 3, ROUTE_LEAST_OUTSTANDING, 1);
    cr_expect_eq(roomy.stats.prefix_cached_tokens, 400);
    cr_expect_eq(roomy.groups[0].prefix_evictions, 0);
    run_result short_of_room = replay_hashed_on(path, 3, ROUTE_LEAST_OUTSTANDING, 1, 600);
    cr_expect_eq(short_of_room.stats.completed, 3);
    cr_expect_gt(short_of_room.groups[0].prefix_evictions, 0);
    cr_expect_lt(short_of_room.stats.prefix_cached_tokens, 400);
    free(path);
    scratch_remove_dir(dir);
}

/* A burst: 16 requests a microsecond apart, each a 2,048-token system prompt and 64
 * tokens of its own, 100 out, on one replica, blocks of 16, reserved. */
static const system_prompt SYSTEM_2048[] = { { 2048, 1, 1 } };

static serving_config burst_config(double kv_capacity_tokens)
{
    serving_config c = chat_config(1, 1e6);
    c.sessions = NULL;
    c.system_prompts = SYSTEM_2048;
    c.prompt_tokens = sim_dist_constant(64);
    c.output_tokens = sim_dist_constant(100);
    c.max_arrivals = 16;
    c.replica.kv_capacity_tokens = kv_capacity_tokens;
    return c;
}

Test(prefix_serving, a_burst_finds_the_prefix_its_first_wave_computed)
{
    /* The first request starts a prefill alone (the replica was idle); the other 15
     * arrive during it and wait for its end, when the blocks it computed (131 whole
     * ones of its first 2,111 tokens) are in the cache: each finds the system prompt's
     * 128 blocks, 2,048 tokens (its block 128 is its own).  Decided when routed, and
     * cached only when a request ends, they would find nothing. */
    serving_config c = burst_config(1e6);
    run_result o = serving_run(&c, 100);
    cr_assert_eq(o.stats.completed, 16);
    cr_expect_eq(o.stats.prompt_tokens, 16 * 2112);
    cr_expect_eq(o.stats.prefix_hits, 15);
    cr_expect_eq(o.stats.prefix_cached_tokens, 15 * 2048);
}

Test(prefix_serving, running_sequences_hold_their_shared_prefix_once)
{
    /* 5,000 tokens of cache.  Apart, each request reserves 2,112 + 100 = 2,212: two at a
     * time.  Shared, the first pins 131 blocks (2,096 tokens) and keeps 116 of its own;
     * each other reserves 2,212 - 2,048 = 164: 2,096 + 116 + 15 x 164 = 4,672 <= 5,000,
     * all 16 in one batch. */
    serving_config c = burst_config(5000);
    run_result shared = serving_run(&c, 100);
    cr_assert_eq(shared.stats.completed, 16);
    cr_expect_eq(shared.batch_max, 16);
    c.prefix_block = 0;
    run_result apart = serving_run(&c, 100);
    cr_assert_eq(apart.stats.completed, 16);
    cr_expect_eq(apart.batch_max, 2);
    cr_expect_lt(shared.stats.e2e_s.mean, 0.5 * apart.stats.e2e_s.mean, "%g vs %g",
                 shared.stats.e2e_s.mean, apart.stats.e2e_s.mean);
}

/* Che's approximation of an LRU cache under independent requests (Che, Tung and Wang,
 * 2002; Fricker, Robert and Roberts, 2012, for items of several sizes): an item stays
 * cached for the characteristic time T after its last request, T solving
 *     sum over items of size_i x (1 - exp(-rate_i T)) = capacity,
 * and is found with probability 1 - exp(-rate_i T).  Here the items are G group
 * prefixes of `prefix` tokens requested at rate / G each, and every request's own
 * blocks (own_tokens), inserted when it ends and never asked for again, which hold the
 * cache for T each: rate x own_tokens x T.  Returns the chance a prefix is found. */
static double che_hit(double capacity, double groups, double prefix, double rate,
                      double own_tokens)
{
    double lo = 0, hi = 1e6;
    for (int i = 0; i < 200; i++) {
        double t = (lo + hi) / 2;
        double held = groups * prefix * -expm1(-rate / groups * t) + rate * own_tokens * t;
        *(held > capacity ? &hi : &lo) = t;
    }
    return -expm1(-rate / groups * lo);
}

Test(prefix_serving, lru_over_many_prefix_groups_hits_as_ches_approximation_says)
{
    /* One replica, 100,000 tokens of cache, 2 requests a second, each one of 64 groups'
     * 6,000-token prefixes (384,000 tokens in all) and 200 tokens of its own, 100 out:
     * each request leaves 18 blocks of its own (its 299 tokens of cache, whole blocks),
     * 288 tokens.  The running sequences' own memory (a few hundred tokens each) is
     * left out of the approximation: the measured rate may be a little under it. */
    static const system_prompt groups[] = { { 6000, 1, 64 } };
    serving_config c = chat_config(1, 2);
    c.sessions = NULL;
    c.system_prompts = groups;
    c.interarrival = sim_dist_exponential(0.5);
    c.prompt_tokens = sim_dist_constant(200);
    c.output_tokens = sim_dist_constant(100);
    c.replica.kv_capacity_tokens = 100000;
    c.warmup_s = 500;
    run_result o = serving_run(&c, 5500);
    double expect = che_hit(100000, 64, 6000, 2, 288);
    double found = o.stats.prefix_cached_tokens / 6000 / o.stats.completed;
    cr_log_info("prefix found %.4f, Che %.4f", found, expect);
    cr_expect_gt(o.stats.completed, 9000);
    cr_expect_leq(fabs(found / expect - 1), 0.05, "found %g, Che's approximation %g", found,
                  expect);
}

/* Disaggregated: the burst prefilled on one replica with a cache, decoded on another
 * with 5,000 tokens of cache, over a link of 50 GB/s. */
static serving_group decode_pool;

static serving_config disaggregated_burst(unsigned prefix_block)
{
    serving_config c = burst_config(1e6);
    c.prefix_block = prefix_block;
    c.link = (kv_link_spec){ 50e9, 20e-6, KV_LINK_PER_REPLICA, 0 };
    c.kv_bytes_per_token = model_kv_bytes_per_token(llama, PREC_FP16);
    decode_pool = (serving_group){
        .role = ROLE_DECODE,
        .fleet = { .pool_name = "decode", .replica = c.replica, .replicas = 1, .max = 1,
                   .rtt_s = sim_dist_constant(0) },
        .routing = ROUTE_ROUND_ROBIN,
    };
    decode_pool.fleet.replica.kv_capacity_tokens = 5000;
    c.groups = &decode_pool;
    c.ngroups = 1;
    return c;
}

Test(prefix_serving, a_disaggregated_burst_skips_the_prefix_and_shares_it_where_it_decodes)
{
    /* The prefill side finds the prefix as the colocated burst does (15 x 2,048).  Each
     * cache is bound to the decode replica when its prefill ends and crosses the link
     * without the blocks that replica holds: the first's whole (2,112 tokens, 270 MB in
     * 5.4 ms), admitted at once; the other 15 end their prefill together after it (960
     * new tokens beside 2,048 cached each: tens of milliseconds), when the decode replica
     * holds the system prompt's 128 blocks, so each sends its 64 own tokens.  Each
     * joins the decode replica's cache: the first brings 131 whole blocks and reserves
     * 2,212 - 2,096 = 116 of its own beside them; each later one finds 128 of its blocks
     * there (2,048 tokens), adds its 3 own (48) and reserves 116: 2,212 + 15 x 164 =
     * 4,672 <= 5,000, all 16 decode at once (waiting only for an iteration's end), where
     * apart (2,212 each) two at a time would. */
    serving_config c = disaggregated_burst(16);
    run_result shared = serving_run(&c, 100);
    cr_assert_eq(shared.stats.completed, 16);
    cr_expect_eq(shared.stats.transfers, 16);
    cr_expect_eq(shared.stats.prefix_cached_tokens, 15 * 2048, "%g", shared.stats.prefix_cached_tokens);
    cr_expect_eq(shared.stats.prefix_hits, 15, "%llu", (unsigned long long)shared.stats.prefix_hits);
    /* the link carried the first's 2,112 tokens and the others' 64 own each */
    cr_expect_float_eq(shared.stats.transfer_bytes,
                       (2112 + 15 * 64) * model_kv_bytes_per_token(llama, PREC_FP16), 1e-6,
                       "%g tokens", shared.stats.transfer_bytes
                                        / model_kv_bytes_per_token(llama, PREC_FP16));
    c = disaggregated_burst(0);
    run_result apart = serving_run(&c, 100);
    cr_assert_eq(apart.stats.completed, 16);
    cr_expect_eq(apart.stats.prefix_cached_tokens, 0);
    cr_expect_lt(shared.stats.decode_queue_s.mean, 0.25 * apart.stats.decode_queue_s.mean,
                 "decode queue: shared %g s, apart %g s", shared.stats.decode_queue_s.mean,
                 apart.stats.decode_queue_s.mean);
    cr_expect_lt(shared.stats.e2e_s.mean, 0.5 * apart.stats.e2e_s.mean, "%g vs %g",
                 shared.stats.e2e_s.mean, apart.stats.e2e_s.mean);
}

/* Caches bound together count in the decode replicas' load at once: with two decode
 * replicas by least outstanding, the first cache goes to the first (both idle, the
 * earlier on a tie) and is decoding there when the other 15 end their prefill together;
 * bound one after another, each counted where it goes, they alternate from the second
 * replica: 8 there, 7 on the first.  The first replica holds the system prompt, so its 7
 * send their 64 own tokens; the second holds nothing yet, so its 8 send 2,112.  Counted
 * only on arrival, all 15 would have gone to the second. */
Test(prefix_serving, caches_on_their_way_count_in_the_decode_replicas_load)
{
    serving_config c = disaggregated_burst(16);
    decode_pool.fleet.replicas = decode_pool.fleet.max = 2;
    decode_pool.routing = ROUTE_LEAST_OUTSTANDING;
    run_result r = serving_run(&c, 100);
    cr_assert_eq(r.stats.completed, 16);
    double tokens = r.stats.transfer_bytes / model_kv_bytes_per_token(llama, PREC_FP16);
    cr_expect_float_eq(tokens, 2112 + 7 * 64 + 8 * 2112, 1e-6, "%g tokens sent", tokens);
}

/* ---- a brought cache's blocks evicted before its admission --------------------------- */

static const prefix_chain *system_chain(void *context, llm_request *q)
{
    static prefix_chain chain;
    (void)context;
    chain = (prefix_chain){ .shared = 7, .shared_tokens = 2048, .own = q->id + 100 };
    return &chain;
}

static void finished(void *context, llm_request *q, bool dropped)
{
    cr_assert(!dropped);
    *(double *)context = q->finish_s;
}

/* One cache brought to a decode replica that held its 2,048-token system prompt when it
 * was bound there (so it came without it): kept, nothing is pulled; evicted before the
 * admission (the cache trimmed to nothing), the 2,048 tokens are pulled over the 50 GB/s
 * link first (20 us + 2,048 x 131,072 bytes / 50 GB/s = 5.389 ms), and the answer ends
 * that much later. */
Test(prefix_serving, a_brought_cache_pulls_the_blocks_evicted_since_it_was_bound)
{
    double end[2];
    unsigned pulled[2];
    for (int evicted = 0; evicted < 2; evicted++) {
        prefix_cache *pc = prefix_cache_create(16);
        replica_config c = {
            .model = llama, .device = h100, .profile = perf_default_profile(h100),
            .prec = PREC_FP16, .kv_prec = PREC_FP16, .tp = 1, .max_batch = 8,
            .max_tokens = 4096, .kv_capacity_tokens = 100000, .prefix = pc,
            .prefix_chain = system_chain, .kv_bytes_per_token = 131072,
            .pull_bytes_per_s = 50e9, .pull_latency_s = 20e-6,
        };
        llm_request q = { .prompt = 2112, .output = 11, .id = 1 };
        prefix_cache_insert(pc, system_chain(NULL, &q), 2048, 1000);
        if (evicted)
            prefix_cache_trim(pc, 0);
        q.prefilled = q.target = q.cached = 2112;
        q.generated = 1;
        q.brought_held = 2048;
        sim_engine *e = sim_engine_create();
        replica *r = replica_create(e, &c, finished, &end[evicted]);
        replica_enqueue_prefilled(r, &q);
        sim_engine_run(e);
        pulled[evicted] = q.pulled;
        replica_free(r);
        sim_engine_free(e);
        prefix_cache_free(pc);
    }
    cr_expect_eq(pulled[0], 0);
    cr_expect_eq(pulled[1], 2048);
    cr_expect_float_eq(end[1] - end[0], 20e-6 + 2048 * 131072 / 50e9, 1e-12, "%g s later",
                       end[1] - end[0]);
}
