/* The prefix-caching scenario through the binary (TTFT, hit rates and balance each way,
 * and the gain growing with the shared prefix), `check`'s lines, and the mistakes. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/support/cli.h"
#include "tests/support/scratch.h"

static char *dir, *out, *err;

static void setup(void)
{
    dir = scratch_dir();
    out = err = NULL;
}

static void teardown(void)
{
    scratch_remove_dir(dir);
    free(out);
    free(err);
}

TestSuite(prefix_scenario, .init = setup, .fini = teardown, .timeout = 240);

/* "NAME TTFT p99 X ms[, hit rate Y% of prompt tokens], balance Z" from the verdict. */
static void read_way(const char *line, const char *name, double *ttft_ms, double *hit,
                     double *balance)
{
    char key[64];
    snprintf(key, sizeof key, "%s TTFT p99 ", name);
    const char *at = strstr(line, key);
    cr_assert_not_null(at, "%s in %s", name, line);
    cr_assert_eq(sscanf(at + strlen(key), "%lf ms", ttft_ms), 1, "%s", at);
    *hit = 0;
    const char *h = strstr(at, "hit rate ");
    const char *b = strstr(at, "balance ");
    cr_assert_not_null(b);
    if (h && h < b)
        cr_assert_eq(sscanf(h, "hit rate %lf%%", hit), 1, "%s", h);
    cr_assert_eq(sscanf(b, "balance %lf", balance), 1, "%s", b);
}

static double row(const char *csv, const char *scope, const char *subject, const char *metric)
{
    summary_row r = scratch_summary_row(csv, scope, subject, metric);
    cr_assert(r.found, "%s %s %s", scope, subject, metric);
    return r.value;
}

/* Runs a python3 tool's command line; skips the test where python3 cannot run it. */
static void run_tool(const char *command)
{
    char *tool_out = NULL, *tool_err = NULL;
    if (scratch_run(command, &tool_out, &tool_err) != 0)
        cr_skip_test("python3 did not run the tool: %s", tool_err ? tool_err : "");
    free(tool_out);
    free(tool_err);
}

/* The summary.csv of `fleetsim run <scenario> -q --no-plots -o <dir>/o` (the caller
 * frees it). */
static char *run_summary(const char *scenario)
{
    cr_assert_eq(cli_run(&out, &err, "run %s -q --no-plots -o %s/o", scenario, dir), 0, "%s", err);
    char csvpath[512];
    snprintf(csvpath, sizeof csvpath, "%s/o/summary.csv", dir);
    char *csv = scratch_read(csvpath);
    cr_assert_not_null(csv);
    return csv;
}

Test(prefix_scenario, caching_and_affinity_cut_ttft_more_as_the_system_prompt_grows)
{
    cr_assert_eq(cli_run(&out, &err, "run scenarios/prefix_chat.lua -q --no-plots -o %s/p", dir),
                 0, "%s", err);
    const char *line = strstr(out, "verdict: ");
    cr_assert_not_null(line, "%s", out);
    double plain, cached, aff, plain_hit, cached_hit, aff_hit, plain_bal, cached_bal, aff_bal;
    read_way(line, "plain", &plain, &plain_hit, &plain_bal);
    read_way(line, "cached", &cached, &cached_hit, &cached_bal);
    read_way(line, "affinity", &aff, &aff_hit, &aff_bal);
    /* at a 4,000-token system prompt: the cache cuts TTFT p99 by most of it, affinity
     * finds more of each prompt cached than least outstanding, and loses little on
     * balance (the busiest replica's mean batch over the mean) */
    cr_expect_lt(cached, 0.25 * plain, "cached %g ms, plain %g ms", cached, plain);
    cr_expect_lt(aff, cached, "affinity %g ms, cached %g ms", aff, cached);
    cr_expect_gt(aff_hit, cached_hit + 10, "affinity %g%%, cached %g%%", aff_hit, cached_hit);
    cr_expect_lt(aff_bal, cached_bal + 0.05, "affinity %g, cached %g", aff_bal, cached_bal);
    cr_expect_lt(aff_bal, 1.1);
    cr_expect(strstr(line, "-- holds") != NULL, "%s", line);
    /* the gain grows with the shared prefix: plain's TTFT p99 over affinity's at 250
     * tokens (point 1) and at 4,000 (point 4) */
    double ratio[2];
    int points[2] = { 1, 4 };
    for (int k = 0; k < 2; k++) {
        char path[512];
        snprintf(path, sizeof path, "%s/p/points/%d/summary.csv", dir, points[k]);
        char *csv = scratch_read(path);
        cr_assert_not_null(csv, "%s", path);
        ratio[k] = row(csv, "workload", "plain", "ttft_p99_s")
                   / row(csv, "workload", "affinity", "ttft_p99_s");
        double saved = row(csv, "workload", "affinity", "prefill_tokens_saved");
        double prompt = row(csv, "workload", "affinity", "prompt_tokens");
        cr_expect_float_eq(row(csv, "workload", "affinity", "prefix_hit_rate_tokens"),
                           saved / prompt, 1e-12);
        /* sessions of 4 to 8 turns: 6 on average */
        double turns = row(csv, "workload", "affinity", "turns_per_session_mean");
        cr_expect(turns > 5.5 && turns < 6.5, "turns %g", turns);
        cr_expect_gt(row(csv, "pool", "p_affinity", "prefix_evictions"), 0);
        free(csv);
    }
    cr_expect_gt(ratio[1], 3 * ratio[0], "plain / affinity TTFT p99: %g at 250, %g at 4000",
                 ratio[0], ratio[1]);
}

static const char *SCENARIO =
    "local fs = require \"fleetsim\"\n"
    "return fs.scenario { duration = \"2m\",\n"
    "  pools = { p = fs.dedicated { gpu = \"H100-SXM\", count = 2 } },\n"
    "  workloads = { chat = fs.inference { model = \"llama-3-8b\", pool = \"p\", tp = 1,\n"
    "    arrivals = fs.poisson { rate = 1 }, prompt = 100, output = 50,\n"
    "    %s } } }\n";

static char *write_scenario(const char *line)
{
    char text[2048];
    snprintf(text, sizeof text, SCENARIO, line);
    return scratch_file(dir, "s.lua", text);
}

Test(prefix_scenario, check_prints_the_sessions_and_the_cache)
{
    char *path = write_scenario("prefix_cache = { block = 32 }, routing = \"prefix_affinity\", "
                                "affinity_bound = 0.5, system_prompt = { { tokens = 500, weight = 3 }, "
                                "{ tokens = 2000 } }, sessions = { turns = 5, think = \"10s\" }");
    cr_assert_eq(cli_run(&out, &err, "check %s", path), 0, "%s", err);
    cr_expect(strstr(out, "routing prefix_affinity") != NULL, "%s", out);
    cr_expect(strstr(out, "system prompt 500 tokens (weight 3), 2000 tokens (weight 1) before "
                          "each session") != NULL, "%s", out);
    cr_expect(strstr(out, "arrivals are sessions: turns constant { value = 5 }") != NULL, "%s", out);
    cr_expect(strstr(out, "prefix cache per replica in blocks of 32 tokens") != NULL, "%s", out);
    cr_expect(strstr(out, "prefix affinity within a load bound of 0.5") != NULL, "%s", out);
    free(path);
}

Test(prefix_scenario, groups_of_one_length_are_distinct_prompts)
{
    char *path = write_scenario("prefix_cache = true, system_prompt = { tokens = 600, groups = 64 }");
    cr_assert_eq(cli_run(&out, &err, "check %s", path), 0, "%s", err);
    cr_expect(strstr(out, "system prompt 600 tokens (weight 1, 64 distinct prompts of that "
                          "length) before each prompt") != NULL, "%s", out);
    /* a request holds its 150 tokens of its own; the system prompt, shared, once */
    double capacity, fit;
    const char *line = strstr(out, "cache capacity ");
    cr_assert_not_null(line, "%s", out);
    cr_assert_eq(sscanf(line, "cache capacity %lf tokens per replica: %lf requests of 150 tokens "
                              "(mean prompt + output; a mean system prompt of 600 tokens held "
                              "once, shared)", &capacity, &fit), 2, "%s", line);
    cr_expect(strstr(line, "requests of 150 tokens (mean prompt + output; a mean system prompt "
                           "of 600 tokens held once, shared)") != NULL, "%s", line);
    cr_expect_eq(fit, floor((capacity - 600) / 150));
    free(path);
    /* without a cache every request holds it: 750 tokens a request */
    path = write_scenario("system_prompt = 600");
    cr_assert_eq(cli_run(&out, &err, "check %s", path), 0, "%s", err);
    line = strstr(out, "cache capacity ");
    cr_assert_not_null(line, "%s", out);
    cr_assert_eq(sscanf(line, "cache capacity %lf tokens per replica: %lf requests of 750 tokens "
                              "(mean system prompt + prompt + output)", &capacity, &fit), 2,
                 "%s", line);
    cr_expect(strstr(line, "requests of 750 tokens (mean system prompt + prompt + output)")
              != NULL, "%s", line);
    cr_expect_eq(fit, floor(capacity / 750));
    free(path);
}

/* Past one replica's cache: round robin finds a group's prefix about as often as its
 * cache's share of the groups (Che's approximation is checked in
 * tests/test_prefix_serving.c), affinity keeps finding them. */
Test(prefix_scenario, prefix_aware_routing_keeps_the_groups_round_robin_loses)
{
    cr_assert_eq(cli_run(&out, &err, "run scenarios/prefix_groups.lua -q --no-plots -o %s/g", dir),
                 0, "%s", err);
    const char *line = strstr(out, "verdict: ");
    cr_assert_not_null(line, "%s", out);
    cr_expect(strstr(line, "-- holds") != NULL, "%s", line);
    double hit[3][2]; /* points 1 and 3: round robin, affinity */
    const char *names[2] = { "round_robin", "affinity" };
    for (int p = 0; p < 3; p += 2) {
        char csvpath[512];
        snprintf(csvpath, sizeof csvpath, "%s/g/points/%d/summary.csv", dir, p + 1);
        char *csv = scratch_read(csvpath);
        cr_assert_not_null(csv, "%s", csvpath);
        for (int k = 0; k < 2; k++)
            hit[p][k] = row(csv, "workload", names[k], "prefix_hit_rate_tokens");
        free(csv);
    }
    /* 16 groups, 96,000 tokens, fit every replica: both find nearly every prefix (each
     * group's first requests miss) */
    cr_expect_gt(hit[0][0], 0.9, "%g", hit[0][0]);
    cr_expect_gt(hit[0][1], 0.9, "%g", hit[0][1]);
    /* 256 groups, 1.5 million tokens, against about 436,000 of cache a replica: round
     * robin holds at most 436,556 / 1,536,000 = 28% of them, of prompts whose 6,000 of
     * about 6,227 tokens are the prefix; affinity spreads them over eight caches */
    cr_expect_lt(hit[2][0], 0.284 * 6000 / 6227, "%g", hit[2][0]);
    cr_expect_gt(hit[2][1], 3 * hit[2][0], "affinity %g, round robin %g", hit[2][1], hit[2][0]);
}

/* Prefix caching and sessions on a disaggregated workload (refused until 2026-12-05):
 * the prefill pool skips what its replica holds, the decode pool shares the prefixes of
 * the caches it is sent and routes them by affinity. */
Test(prefix_scenario, a_disaggregated_workload_caches_prefixes_on_both_sides)
{
    char *path = scratch_file(dir, "d.lua",
        "local fs = require \"fleetsim\"\n"
        "return fs.scenario { duration = \"3m\", warmup = \"30s\",\n"
        "  pools = { p = fs.dedicated { gpu = \"H100-SXM\", count = 2 },\n"
        "            d = fs.dedicated { gpu = \"H100-SXM\", count = 2 } },\n"
        "  workloads = { chat = fs.inference { model = \"llama-3-8b\", pool = \"p\", tp = 1,\n"
        "    arrivals = fs.poisson { rate = 1 }, prompt = 100, output = 50,\n"
        "    system_prompt = 2000, sessions = { turns = 3, think = \"5s\" },\n"
        "    prefix_cache = true, routing = \"prefix_affinity\",\n"
        "    decode = { pool = \"d\", routing = \"prefix_affinity\" } } } }\n");
    cr_assert_eq(cli_run(&out, &err, "run %s -q --no-plots -o %s/d", path, dir), 0, "%s", err);
    char csvpath[512];
    snprintf(csvpath, sizeof csvpath, "%s/d/summary.csv", dir);
    char *csv = scratch_read(csvpath);
    cr_assert_not_null(csv);
    /* every turn finds at least the system prompt's 125 blocks but the first: most of
     * each prompt */
    double hit = row(csv, "workload", "chat", "prefix_hit_rate_tokens");
    cr_expect_gt(hit, 0.8, "%g", hit);
    cr_expect_gt(row(csv, "workload", "chat", "requests_completed"), 300);
    cr_expect_gt(row(csv, "workload", "chat", "kv_transfer_bytes_mean"), 0);
    cr_expect_eq(row(csv, "workload", "chat", "turns_per_session_mean"), 3);
    free(csv);
    free(path);
    /* and overflowing to a cloud pool (refused with decode until 2026-12-05): long
     * prompts at a rate one prefill replica cannot take spill whole to the cloud */
    path = scratch_file(dir, "d.lua",
        "local fs = require \"fleetsim\"\n"
        "return fs.scenario { duration = \"2m\", warmup = \"20s\",\n"
        "  pools = { p = fs.dedicated { gpu = \"H100-SXM\", count = 1 },\n"
        "            d = fs.dedicated { gpu = \"H100-SXM\", count = 1 },\n"
        "            c = fs.cloud { gpu = \"H100-SXM\", count = 2, max = 2 } },\n"
        "  workloads = { chat = fs.inference { model = \"llama-3-8b\", pool = \"p\", tp = 1,\n"
        "    arrivals = fs.poisson { rate = 20 }, prompt = 3000, output = 50,\n"
        "    system_prompt = 2000, prefix_cache = true, overflow = \"c\",\n"
        "    overflow_threshold = 4, max_wait = \"30s\", decode = { pool = \"d\" } } } }\n");
    cr_assert_eq(cli_run(&out, &err, "run %s -q --no-plots -o %s/o3", path, dir), 0, "%s", err);
    snprintf(csvpath, sizeof csvpath, "%s/o3/summary.csv", dir);
    csv = scratch_read(csvpath);
    cr_assert_not_null(csv);
    cr_expect_gt(row(csv, "pool", "c", "busy_fraction"), 0);
    cr_expect_gt(row(csv, "pool", "d", "busy_fraction"), 0);
    cr_expect_gt(row(csv, "workload", "chat", "prefix_hit_rate_tokens"), 0.3);
    free(csv);
    free(path);
    path = scratch_file(dir, "d.lua",
        "local fs = require \"fleetsim\"\n"
        "return fs.scenario { duration = \"3m\",\n"
        "  pools = { p = fs.dedicated { gpu = \"H100-SXM\", count = 2 },\n"
        "            d = fs.dedicated { gpu = \"H100-SXM\", count = 2 } },\n"
        "  workloads = { chat = fs.inference { model = \"llama-3-8b\", pool = \"p\", tp = 1,\n"
        "    arrivals = fs.poisson { rate = 1 }, prompt = 100, output = 50,\n"
        "    decode = { pool = \"d\", routing = \"prefix_affinity\" } } } }\n");
    cr_expect_eq(cli_run(&out, &err, "check %s", path), 2);
    cr_expect(strstr(err, "workloads.chat.decode.routing: \"prefix_affinity\" routes by the "
                          "replicas' prefix caches") != NULL, "%s", err);
    free(path);
}

/* Each mistake: exit 2, file:line, the key and the value, nothing written. */
static void expect_mistake(const char *line, const char *message)
{
    char *path = write_scenario(line);
    cr_expect_eq(cli_run(&out, &err, "run %s -q --no-plots -o %s/o", path, dir), 2, "%s", line);
    cr_expect(strstr(err, "s.lua:4: ") != NULL, "located: %s", err);
    cr_expect(strstr(err, message) != NULL, "expected '%s' in: %s", message, err);
    char o[512];
    snprintf(o, sizeof o, "%s/o/summary.csv", dir);
    char *written = scratch_read(o);
    cr_expect_null(written, "nothing written");
    free(written);
    free(path);
}

Test(prefix_scenario, tiers_below_the_gpu_recover_what_round_robin_loses)
{
    /* scenarios/prefix_tiers.lua: 256 groups' 6,000-token prefixes, round robin over
     * eight H100s.  The shared store holds every group any replica prefilled: after a
     * minute's warm-up (about 1,800 arrivals) a group is unseen with chance e^(-1800 /
     * 256) < 0.001, so almost every request hits.  Host memory is each replica's own;
     * it still holds every group its replica saw (256 GB, 325 prefixes of 786 MB).  The
     * host's fetches take latency + bytes / bandwidth each: 10 us, and 131,072 bytes a
     * token (Llama-3.1-8B's fp16 cache: 32 layers x 8 KV heads x 128 x 2 x 2) over gen
     * 5's 64 GB/s at its 0.8 achieved.  The disk's 3 GB/s is slower than a prefill: it
     * declines every time. */
    char *csv = run_summary("scenarios/prefix_tiers.lua");
    double gpu = row(csv, "workload", "gpu_only", "prefix_hit_rate_tokens");
    double host = row(csv, "workload", "host", "prefix_hit_rate_tokens");
    double shared = row(csv, "workload", "shared", "prefix_hit_rate_tokens");
    cr_expect_gt(row(csv, "workload", "shared", "prefix_hit_rate_requests"), 0.99);
    cr_expect_gt(host, 2 * gpu, "%g vs %g", host, gpu);
    cr_expect_gt(shared, host);
    cr_expect_lt(row(csv, "workload", "shared", "ttft_mean_s"),
                 0.5 * row(csv, "workload", "gpu_only", "ttft_mean_s"));
    double fetches = row(csv, "pool", "p_host", "prefix_host_fetches");
    double tokens = row(csv, "pool", "p_host", "prefix_host_fetched_tokens");
    double stall = row(csv, "pool", "p_host", "prefix_host_fetch_stall_s");
    cr_expect_gt(fetches, 1000);
    cr_expect_float_eq(stall, fetches * 10e-6 + tokens * 131072 / (64e9 * 0.8), 1e-9 * stall);
    cr_expect_eq(row(csv, "pool", "p_disk", "prefix_disk_fetches"), 0);
    cr_expect_gt(row(csv, "pool", "p_disk", "prefix_disk_declined"), 1000);
    /* passed over, the disk leaves its workload as the GPU alone (the same requests) */
    cr_expect_eq(row(csv, "workload", "disk", "ttft_mean_s"),
                 row(csv, "workload", "gpu_only", "ttft_mean_s"));
    free(csv);
}

Test(prefix_scenario, mistakes_name_the_key_and_the_value)
{
    expect_mistake("prefix_cache = { block = 0 }", "workloads.chat.prefix_cache.block");
    expect_mistake("prefix_cache = { blok = 16 }", "did you mean 'block'");
    expect_mistake("routing = \"prefix_affinity\"",
                   "workloads.chat.routing: \"prefix_affinity\" routes by the replicas' prefix "
                   "caches: give prefix_cache = { block = 16 } too");
    expect_mistake("system_prompt = \"long\"",
                   "workloads.chat.system_prompt: expected a token count, { tokens = ..., "
                   "weight = ..., groups = ... } or a list of 1 to 16 of those, got \"long\"");
    expect_mistake("system_prompt = { tokens = 100, groups = 0 }",
                   "workloads.chat.system_prompt.groups");
    expect_mistake("system_prompt = { tokens = 100, groups = 2.5 }",
                   "workloads.chat.system_prompt.groups");
    expect_mistake("system_prompt = { { tokens = 100, group = 4 } }", "did you mean 'groups'");
    expect_mistake("system_prompt = { tokens = 100, weight = 1, extra = 1 }",
                   "workloads.chat.system_prompt.extra: unknown key 'extra'");
    expect_mistake("system_prompt = { { tokens = 100, weight = -1 } }",
                   "workloads.chat.system_prompt[1].weight");
    expect_mistake("sessions = { think = \"5s\" }", "workloads.chat.sessions.turns: missing");
    expect_mistake("sessions = { turns = 3, thinks = \"5s\" }", "did you mean 'think'");
    expect_mistake("affinity_bound = -1", "workloads.chat.affinity_bound");
    expect_mistake("prefix_cache = { host = 5 }", "workloads.chat.prefix_cache.host");
    expect_mistake("prefix_cache = { host = { size = \"1TB\", bandwith = \"5GB/s\" } }",
                   "did you mean 'bandwidth'");
    expect_mistake("prefix_cache = { host = { bandwidth = \"5GB/s\" } }",
                   "workloads.chat.prefix_cache.host.size");
    expect_mistake("prefix_cache = { disk = { size = \"2TB\", latency = \"100us\" } }",
                   "workloads.chat.prefix_cache.disk.bandwidth: missing");
    expect_mistake("prefix_cache = { disk = { size = \"2TB\", bandwidth = \"3GB/s\" } }",
                   "workloads.chat.prefix_cache.disk.latency: missing");
    expect_mistake("prefix_cache = { shared = { size = \"2TB\", latency = \"20s\" } }",
                   "workloads.chat.prefix_cache.shared.latency");
}

/* A session trace by hand through the loader: session a's turn 2 finds turn 1's 65
 * blocks (1,040 tokens), b and the row without a session nothing. */
Test(prefix_scenario, a_session_trace_replays_through_the_loader)
{
    char *trace = scratch_file(dir, "t.csv", "TIMESTAMP,session_id,ContextTokens,GeneratedTokens\n"
                                             "0,a,1000,50\n10,a,1150,50\n20,b,1000,50\n30,,1000,50\n");
    char *path = scratch_file(dir, "s.lua",
        "local fs = require \"fleetsim\"\n"
        "return fs.scenario { duration = \"2m\",\n"
        "  pools = { p = fs.dedicated { gpu = \"H100-SXM\", count = 1 } },\n"
        "  workloads = { chat = fs.inference { model = \"llama-3-8b\", pool = \"p\", tp = 1,\n"
        "    arrivals = fs.trace { file = \"t.csv\", session = \"session_id\" },\n"
        "    prefix_cache = { block = 16 } } } }\n");
    cr_assert_eq(cli_run(&out, &err, "check %s", path), 0, "%s", err);
    cr_expect(strstr(out, "4 rows over 30 s, 0.133333/s on average, sessions in column "
                          "session_id)") != NULL, "%s", out);
    free(out);
    free(err);
    out = err = NULL;
    char *csv = run_summary(path);
    cr_expect_float_eq(row(csv, "workload", "chat", "prefill_tokens_saved"), 1040, 0);
    cr_expect_float_eq(row(csv, "workload", "chat", "prefix_hit_rate_requests"), 0.25, 1e-12);
    free(csv);
    free(trace);
    free(path);
}

/* tools/session_trace.py writes what the loader reads, each session's turns extending
 * the last turn's prompt and answer, the same file for the same seed. */
Test(prefix_scenario, the_generator_writes_a_trace_the_loader_replays)
{
    char command[1024], *gen_out = NULL, *gen_err = NULL;
    snprintf(command, sizeof command, "python3 tools/session_trace.py --sessions 20 --rate 2 "
             "--system 500 --seed 3 -o %s/g.csv && python3 tools/session_trace.py --sessions 20 "
             "--rate 2 --system 500 --seed 3 -o %s/h.csv", dir, dir);
    if (scratch_run(command, &gen_out, &gen_err) != 0)
        cr_skip_test("python3 did not run the generator: %s", gen_err ? gen_err : "");
    char g[512], h[512];
    snprintf(g, sizeof g, "%s/g.csv", dir);
    snprintf(h, sizeof h, "%s/h.csv", dir);
    char *first = scratch_read(g), *second = scratch_read(h);
    cr_assert(first && second);
    cr_expect_str_eq(first, second);
    /* s1's turns: each prompt is the last prompt and answer plus new tokens */
    unsigned last_prompt = 0, last_output = 0, turns = 0;
    for (const char *line = strchr(first, '\n'); line && line[1]; line = strchr(line + 1, '\n')) {
        double t;
        char name[32];
        unsigned prompt, output;
        cr_assert_eq(sscanf(line + 1, "%lf,%31[^,],%u,%u", &t, name, &prompt, &output), 4);
        if (strcmp(name, "s1"))
            continue;
        if (turns++ == 0)
            cr_expect_gt(prompt, 500);
        else
            cr_expect_gt(prompt, last_prompt + last_output);
        last_prompt = prompt;
        last_output = output;
    }
    cr_expect(turns >= 4 && turns <= 8, "%u turns", turns);
    char *path = scratch_file(dir, "s.lua",
        "local fs = require \"fleetsim\"\n"
        "return fs.scenario { duration = \"10m\",\n"
        "  pools = { p = fs.dedicated { gpu = \"H100-SXM\", count = 2 } },\n"
        "  workloads = { chat = fs.inference { model = \"llama-3.1-8b\", pool = \"p\", tp = 1,\n"
        "    arrivals = fs.trace { file = \"g.csv\", session = \"session_id\" },\n"
        "    prefix_cache = { block = 16 }, routing = \"prefix_affinity\" } } }\n");
    char *csv = run_summary(path);
    /* every turn but each session's first finds its history */
    cr_expect_gt(row(csv, "workload", "chat", "prefix_hit_rate_requests"), 0.7);
    free(csv);
    free(path);
    free(first);
    free(second);
    free(gen_out);
    free(gen_err);
}

/* tools/mooncake_to_csv.py by hand: three Mooncake requests (blocks of 512) become
 * three rows the loader replays, each finding its leading ids cached: the second
 * (1,600 tokens, ids 0 1 3 4) the first's whole blocks 0 and 1, 1,024 tokens; the third
 * (600 tokens: one whole block of its first 599) block 0, 512 tokens. */
Test(prefix_scenario, a_mooncake_trace_converts_and_replays_its_hashed_blocks)
{
    char *jsonl = scratch_file(dir, "m.jsonl",
        "{\"timestamp\": 0, \"input_length\": 1100, \"output_length\": 10, \"hash_ids\": [0, 1, 2]}\n"
        "{\"timestamp\": 5000, \"input_length\": 1600, \"output_length\": 10, \"hash_ids\": [0, 1, 3, 4]}\n"
        "\n"
        "{\"timestamp\": 9000, \"input_length\": 600, \"output_length\": 10, \"hash_ids\": [0, 5]}\n");
    char command[1024], *conv_out = NULL, *conv_err = NULL;
    snprintf(command, sizeof command, "python3 tools/mooncake_to_csv.py %s -o %s/m.csv", jsonl, dir);
    run_tool(command);
    char csvpath[512];
    snprintf(csvpath, sizeof csvpath, "%s/m.csv", dir);
    char *converted = scratch_read(csvpath);
    cr_assert_not_null(converted);
    cr_expect_str_eq(converted, "TIMESTAMP,ContextTokens,GeneratedTokens,hash_ids\n"
                                "0.000,1100,10,0 1 2\n5.000,1600,10,0 1 3 4\n9.000,600,10,0 5\n");
    free(converted);
    char *path = scratch_file(dir, "s.lua",
        "local fs = require \"fleetsim\"\n"
        "return fs.scenario { duration = \"1m\",\n"
        "  pools = { p = fs.dedicated { gpu = \"H100-SXM\", count = 1 } },\n"
        "  workloads = { chat = fs.inference { model = \"llama-3-8b\", pool = \"p\", tp = 1,\n"
        "    arrivals = fs.trace { file = \"m.csv\", blocks = \"hash_ids\" },\n"
        "    prefix_cache = true } } }\n");
    cr_assert_eq(cli_run(&out, &err, "check %s", path), 0, "%s", err);
    cr_expect(strstr(out, "3 rows over 9 s, 0.333333/s on average, block ids of 512 tokens in "
                          "column hash_ids)") != NULL, "%s", out);
    free(out);
    free(err);
    out = err = NULL;
    char *csv = run_summary(path);
    cr_expect_float_eq(row(csv, "workload", "chat", "prefill_tokens_saved"), 1536, 0);
    cr_expect_float_eq(row(csv, "workload", "chat", "prefix_hit_rate_requests"), 2.0 / 3, 1e-12);
    free(csv);
    /* a line that is not a request stops the converter with its line */
    char *bad = scratch_file(dir, "bad.jsonl", "{\"timestamp\": 0, \"input_length\": 10, "
                             "\"output_length\": 1, \"hash_ids\": [0]}\n{\"timestamp\": 1}\n");
    snprintf(command, sizeof command, "python3 tools/mooncake_to_csv.py %s -o %s/bad.csv", bad, dir);
    conv_out = conv_err = NULL;
    cr_expect_neq(scratch_run(command, &conv_out, &conv_err), 0);
    char expected[1024];
    snprintf(expected, sizeof expected, "%s:2: no \"input_length\"\n", bad);
    cr_expect_str_eq(conv_err ? conv_err : "", expected);
    snprintf(csvpath, sizeof csvpath, "%s/bad.csv", dir);
    cr_expect_eq(access(csvpath, F_OK), -1, "no half-written CSV under its final name");
    /* bytes that are not UTF-8 and a number past a double: refused at their line, as the
     * binary refuses its input, not a Python traceback */
    static const struct { const char *line, *why; } cases[] = {
        { "{\"timestamp\": 0, \"input_length\": 10, \"output_length\": 1, \"hash_ids\": [0], "
          "\"x\": \"\xff\"}\n", "not UTF-8 (byte 81)" },
        { "{\"timestamp\": 0, \"input_length\": 1e400, \"output_length\": 1, \"hash_ids\": [0]}\n",
          "input_length: expected a whole number from 0 to 2^53, got a number past the range "
          "of a double" },
        { "{\"timestamp\": NaN, \"input_length\": 1, \"output_length\": 1, \"hash_ids\": [0]}\n",
          "not JSON: NaN is not a JSON number" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *worse = scratch_file(dir, "worse.jsonl", cases[i].line);
        free(conv_out);
        free(conv_err);
        snprintf(command, sizeof command, "python3 tools/mooncake_to_csv.py %s -o %s/bad.csv",
                 worse, dir);
        cr_expect_eq(scratch_run(command, &conv_out, &conv_err), 2, "%s", conv_err);
        snprintf(expected, sizeof expected, "%s:1: %s\n", worse, cases[i].why);
        cr_expect_str_eq(conv_err ? conv_err : "", expected);
        cr_expect_eq(access(csvpath, F_OK), -1);
        free(worse);
    }
    free(conv_out);
    free(conv_err);
    free(bad);
    free(jsonl);
    free(path);
}

/* The shipped trace is the generator's, byte for byte, with the arguments its README
 * gives, and the scenario replaying it holds its claim. */
Test(prefix_scenario, the_hash_ids_trace_is_the_generators_and_its_scenario_holds)
{
    char command[1024];
    snprintf(command, sizeof command, "python3 tools/session_trace.py --sessions 60 --rate 0.5 "
             "--system 2000 --systems 3 --hash-ids --seed 7 -o %s/g.csv", dir);
    run_tool(command);
    char g[512];
    snprintf(g, sizeof g, "%s/g.csv", dir);
    char *made = scratch_read(g), *shipped = scratch_read("scenarios/traces/session_hash_ids.csv");
    cr_assert(made && shipped);
    cr_expect_str_eq(made, shipped);
    free(made);
    free(shipped);
    cr_assert_eq(cli_run(&out, &err, "run scenarios/prefix_hash_ids.lua -q --no-plots -o %s/o",
                         dir), 0, "%s", err);
    cr_expect(strstr(out, "-- holds") != NULL, "%s", out);
}
