/* Loading scenario files: resolved values, and one exact message per kind of mistake,
 * with the file and the line. */
#include <criterion/criterion.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lua/scenario_load.h"
#include "models/engine.h"
#include "models/memory.h"
#include "models/run.h"
#include "support/scratch.h"

static char *dir;
static char err[2048];

static void setup(void) { dir = scratch_dir(); }
static void teardown(void) { scratch_remove_dir(dir); }

TestSuite(loader, .init = setup, .fini = teardown);

/* A valid M/M/c file; tests replace one line of it to make one mistake. */
static const char *const GOOD =
    "local fs = require \"fleetsim\"\n"                               /* 1 */
    "return fs.scenario {\n"                                           /* 2 */
    "  name = \"queue\", duration = \"2h\", warmup = \"10m\",\n"      /* 3 */
    "  seed = 7, replications = 3, bucket = \"5m\",\n"                 /* 4 */
    "  pools = {\n"                                                    /* 5 */
    "    q = fs.dedicated { count = 4 },\n"                            /* 6 */
    "  },\n"                                                           /* 7 */
    "  workloads = {\n"                                                /* 8 */
    "    mm = fs.service {\n"                                          /* 9 */
    "      arrivals = fs.poisson { rate = \"180/min\" },\n"            /* 10 */
    "      service = fs.exponential { mean = \"1s\" },\n"              /* 11 */
    "      pool = \"q\",\n"                                            /* 12 */
    "    },\n"                                                         /* 13 */
    "  },\n"                                                           /* 14 */
    "}\n";                                                             /* 15 */

/* base with line `line` (1-based) replaced by `text`. */
static char *replace_line(const char *base, int line, const char *text)
{
    static char buf[4096];
    const char *p = base;
    buf[0] = '\0';
    for (int n = 1; *p; n++) {
        const char *end = strchr(p, '\n');
        if (n == line)
            strcat(strcat(buf, text), "\n");
        else
            strncat(buf, p, (size_t)(end - p + 1));
        p = end + 1;
    }
    return buf;
}

static char *with_line(int line, const char *text) { return replace_line(GOOD, line, text); }

static int load_text(const char *text, const char *const *sets, size_t nsets, scenario *sc,
                     char **path)
{
    *path = scratch_file(dir, "s.lua", text);
    scenario_load_options options = { .sets = sets, .nsets = nsets };
    return scenario_load(*path, &options, sc, err, sizeof err);
}

/* Loads text, expects failure with exactly "<path>:<line>: <message>" (line 0: no line). */
static void expect_error(const char *text, int line, const char *message)
{
    scenario sc;
    char *path, expected[1024];
    cr_assert_eq(load_text(text, NULL, 0, &sc, &path), -1, "accepted:\n%s", text);
    if (line > 0)
        snprintf(expected, sizeof expected, "%s:%d: %s", path, line, message);
    else
        snprintf(expected, sizeof expected, "%s: %s", path, message);
    cr_expect_str_eq(err, expected);
    free(path);
}

Test(loader, a_good_file_resolves_units_and_defaults)
{
    scenario sc;
    char *path;
    cr_assert_eq(load_text(GOOD, NULL, 0, &sc, &path), 0, "%s", err);
    cr_expect_str_eq(sc.name, "queue");
    cr_expect_float_eq(sc.duration_s, 7200, 0);
    cr_expect_float_eq(sc.warmup_s, 600, 0);
    cr_expect_float_eq(sc.bucket_s, 300, 0);
    cr_expect_eq(sc.seed, 7);
    cr_expect_eq(sc.replications, 3);
    cr_assert_eq(sc.npools, 1);
    cr_expect_str_eq(sc.pools[0].name, "q");
    cr_expect_eq(sc.pools[0].count, 4);
    cr_expect_null(sc.pools[0].gpu);
    cr_assert_eq(sc.nservices, 1);
    cr_expect_eq(sc.services[0].arrivals.kind, ARRIVALS_POISSON);
    cr_expect_float_eq(sc.services[0].arrivals.rate_per_s, 3, 1e-12);
    cr_expect_eq(sc.services[0].service.kind, SIM_DIST_EXPONENTIAL);
    cr_expect_float_eq(sim_dist_mean(&sc.services[0].service), 1, 0);
    cr_expect_eq(sc.services[0].pool, 0);
    cr_expect_eq(sc.services[0].queue_limit, 0);
    scenario_release(&sc);
    free(path);
}

Test(loader, distributions_and_constants_of_durations)
{
    const char *cases[][2] = {
        { "service = \"250ms\",", "0.25" },
        { "service = 2,", "2" },
        { "service = fs.uniform { low = \"1s\", high = \"3s\" },", "2" },
        { "service = fs.gamma { mean = \"2s\", cv = 0.5 },", "2" },
        { "service = fs.lognormal { median = 1, p99 = 3 },", "1.117963" },
        { "service = fs.empirical { values = { 1, \"2s\", 3000 / 1000 } },", "2" },
        { "service = fs.weibull { scale = 2, shape = 1 },", "2" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        scenario sc;
        char *path;
        cr_assert_eq(load_text(with_line(11, cases[i][0]), NULL, 0, &sc, &path), 0,
                     "%s: %s", cases[i][0], err);
        double mean = sim_dist_mean(&sc.services[0].service);
        cr_expect_float_eq(mean, atof(cases[i][1]), 1e-5, "%s: mean %g", cases[i][0], mean);
        scenario_release(&sc);
        free(path);
    }
}

Test(loader, syntax_error) { expect_error(with_line(6, "    q = fs.dedicated { count = 4 ,,},"), 6, "unexpected symbol near ','"); }

Test(loader, wrong_type)
{
    expect_error(with_line(6, "    q = fs.dedicated { count = \"eight\" },"), 6,
                 "pools.q.count: expected a positive integer, got \"eight\"");
}

Test(loader, fractional_count)
{
    expect_error(with_line(6, "    q = fs.dedicated { count = 2.5 },"), 6,
                 "pools.q.count: expected a positive integer, got 2.5");
}

Test(loader, zero_servers)
{
    expect_error(with_line(6, "    q = fs.dedicated { count = 0 },"), 6,
                 "pools.q.count: expected a positive integer, got 0");
}

Test(loader, absurd_number_of_servers)
{
    expect_error(with_line(6, "    q = fs.dedicated { count = 1e15 },"), 6,
                 "pools.q.count: 1000000000000000 is over the limit of 1000000");
}

Test(loader, negative_rate)
{
    expect_error(with_line(10, "      arrivals = fs.poisson { rate = -2 },"), 10,
                 "workloads.mm.arrivals.rate: expected a rate >= 1e-9 /s, got -2 /s");
}

Test(loader, nan_value)
{
    expect_error(with_line(11, "      service = fs.exponential { mean = 0/0 },"), 11,
                 "workloads.mm.service.mean: expected a finite duration, got NaN");
}

/* The smaller messages of issue 40: a NaN where an integer goes was "got -nan"; a value
 * just past its limit was printed so that it looked within it ("1 is over the limit of
 * 1"); error() with a table had no file:line. */
Test(loader, messages_show_nan_the_value_past_its_limit_and_where_error_was_raised)
{
    expect_error(with_line(6, "    q = fs.dedicated { count = 0/0 },"), 6,
                 "pools.q.count: expected a positive integer, got NaN");
    expect_error(with_line(3, "  name = \"queue\", duration = \"2h\", warmup = 7200.0001,"), 2,
                 "warmup: 7200.0001 s is over the limit of 7200 s");
    scenario sc;
    char *path;
    cr_assert_eq(load_text(with_line(1, "local fs = require \"fleetsim\" error({})"), NULL, 0,
                           &sc, &path), -1);
    char expected[1024];
    snprintf(expected, sizeof expected, "%s:1: error raised with a table, not a message (give "
             "error a string)\nstack traceback:", path);
    cr_expect(strncmp(err, expected, strlen(expected)) == 0, "%s", err);
    free(path);
}

Test(loader, infinite_duration)
{
    expect_error(with_line(3, "  name = \"queue\", duration = math.huge, warmup = 0,"), 2,
                 "duration: expected a finite duration, got inf");
}

Test(loader, unknown_unit)
{
    expect_error(with_line(3, "  name = \"queue\", duration = \"2 fortnights\", warmup = 0,"),
                 2, "duration: unknown duration unit \"fortnights\" in \"2 fortnights\" "
                 "(known: d, h, m, min, ms, ns, s, us, w, y)");
}

Test(loader, unknown_key_suggests_the_closest)
{
    expect_error(with_line(12, "      pool = \"q\", queue_limt = 5,"), 9,
                 "workloads.mm.queue_limt: unknown key 'queue_limt' (did you mean 'queue_limit'?)");
}

Test(loader, unknown_key_far_from_all_lists_them)
{
    expect_error(with_line(6, "    q = fs.dedicated { count = 4, colour = \"red\" },"), 6,
                 "pools.q.colour: unknown key 'colour' (known keys: count, gpu, site, mtbf, repair, noisy, mig, bandwidth_interference, time_slicing, scheduler, cost, profile, power)");
}

Test(loader, unknown_pool)
{
    expect_error(with_line(12, "      pool = \"qq\","), 9,
                 "workloads.mm.pool: no pool named \"qq\" (did you mean \"q\"?)");
}

Test(loader, a_file_that_returns_no_scenario)
{
    expect_error("local fs = require \"fleetsim\"\nreturn { duration = 5 }\n", 0,
                 "the file returns no scenario (it should end with return fs.scenario { ... })");
}

Test(loader, a_binary_chunk)
{
    expect_error("\x1bLua\x54\x00garbage", 0,
                 "is a compiled Lua chunk; scenario files must be Lua source text");
}

Test(loader, a_missing_file)
{
    scenario sc;
    scenario_load_options options = { 0 };
    cr_assert_eq(scenario_load("/nonexistent/fleet.lua", &options, &sc, err, sizeof err), -1);
    cr_expect_str_eq(err, "/nonexistent/fleet.lua: cannot read the scenario file: No such "
                     "file or directory");
}

Test(loader, warmup_longer_than_the_run)
{
    expect_error(with_line(3, "  name = \"queue\", duration = \"2h\", warmup = \"3h\","), 2,
                 "warmup: 10800 s is over the limit of 7200 s");
}

Test(loader, a_normal_distribution_of_durations)
{
    expect_error(with_line(11, "      service = fs.normal { mean = 1, sd = 1 },"), 11,
                 "workloads.mm.service: a normal distribution can draw negative values, and "
                 "durations cannot be negative: use fs.lognormal or fs.gamma");
}

Test(loader, a_distribution_with_a_bad_parameter)
{
    expect_error(with_line(11, "      service = fs.lognormal { median = 1, p99 = 0.5 },"), 11,
                 "workloads.mm.service.p99: expected a duration > 1 s, got 0.5 s");
}

Test(loader, an_overloaded_pool_without_a_queue_limit)
{
    expect_error(with_line(10, "      arrivals = fs.poisson { rate = 100000 },"), 6,
                 "pools.q: its offered load of 1e+05 Erlangs is not below its 4 servers, so "
                 "its queue grows without bound: about 7.2e+08 requests over the run; add "
                 "servers, shorten the run, or set queue_limit on its workloads");
}

Test(loader, a_lua_error_keeps_its_traceback)
{
    scenario sc;
    char *path;
    cr_assert_eq(load_text("local fs = require \"fleetsim\"\nlocal function f() return nil + 1 end\n"
                           "f()\n", NULL, 0, &sc, &path), -1);
    char expected[512];
    snprintf(expected, sizeof expected, "%s:2: attempt to perform arithmetic on a nil value", path);
    cr_expect(strstr(err, expected) == err, "message: %s", err);
    cr_expect(strstr(err, "stack traceback:") != NULL, "no traceback: %s", err);
    snprintf(expected, sizeof expected, "%s:3: in main chunk", path);
    cr_expect(strstr(err, expected) != NULL, "traceback lacks the calling line: %s", err);
    free(path);
}

Test(loader, a_constructor_given_no_table)
{
    scenario sc;
    char *path;
    cr_assert_eq(load_text(with_line(6, "    q = fs.dedicated(4),"), NULL, 0, &sc, &path), -1);
    char expected[512];
    snprintf(expected, sizeof expected, "%s:6: fs.dedicated expects a table of fields, as in "
             "fs.dedicated { ... }, got number", path);
    cr_expect(strstr(err, expected) == err, "message: %s", err);
    free(path);
}

/* ---- --set ---- */

Test(loader, set_overrides_values_with_units)
{
    const char *sets[] = { "pools.q.count=6", "workloads.mm.arrivals.rate=5.5",
                           "duration=3h", "workloads.mm.queue_limit=10", "name=other" };
    scenario sc;
    char *path;
    cr_assert_eq(load_text(GOOD, sets, 5, &sc, &path), 0, "%s", err);
    cr_expect_eq(sc.pools[0].count, 6);
    cr_expect_float_eq(sc.services[0].arrivals.rate_per_s, 5.5, 0);
    cr_expect_float_eq(sc.duration_s, 10800, 0);
    cr_expect_eq(sc.services[0].queue_limit, 10);
    cr_expect_str_eq(sc.name, "other");
    scenario_release(&sc);
    free(path);
}

Test(loader, set_errors_name_the_override)
{
    const char *cases[][2] = {
        { "pools.q.count=eight",
          "--set pools.q.count=eight: pools.q.count: expected a positive integer, got \"eight\"" },
        { "pools.x.count=3", "--set pools.x.count=3: the scenario has no table pools.x" },
        { "pools.q=3", "--set pools.q=3: pools.q is a table; --set changes single values inside it" },
        { "count", "--set count: expected KEY=VALUE, as in --set pools.q.count=6" },
        { "pools.q.cuont=3",
          "--set pools.q.cuont=3: pools.q.cuont: unknown key 'cuont' (did you mean 'count'?)" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        scenario sc;
        char *path;
        const char *sets[] = { cases[i][0] };
        cr_expect_eq(load_text(GOOD, sets, 1, &sc, &path), -1, "%s accepted", cases[i][0]);
        cr_expect_str_eq(err, cases[i][1]);
        free(path);
    }
}

/* ---- fs.inference ---- */

static const char *const INFERENCE =
    "local fs = require \"fleetsim\"\n"                                        /* 1 */
    "return fs.scenario {\n"                                                    /* 2 */
    "  duration = \"10m\",\n"                                                   /* 3 */
    "  pools = { gpus = fs.dedicated { gpu = \"H100-SXM\", count = 8 } },\n"    /* 4 */
    "  workloads = {\n"                                                         /* 5 */
    "    chat = fs.inference {\n"                                               /* 6 */
    "      model = \"llama-2-70b\", pool = \"gpus\",\n"                         /* 7 */
    "      arrivals = fs.poisson { rate = 5 },\n"                               /* 8 */
    "      prompt = fs.lognormal { median = 500, sigma = 1 },\n"                /* 9 */
    "      output = 200,\n"                                                     /* 10 */
    "      slo = { ttft = \"500ms\" }, rtt = \"20ms\",\n"                       /* 11 */
    "    },\n"                                                                  /* 12 */
    "  },\n"                                                                    /* 13 */
    "}\n";                                                                      /* 14 */

static char *inference_with_line(int line, const char *text)
{
    return replace_line(INFERENCE, line, text);
}

Test(loader, an_inference_workload_resolves_its_model_device_and_replicas)
{
    scenario sc;
    char *path;
    cr_assert_eq(load_text(INFERENCE, NULL, 0, &sc, &path), 0, "%s", err);
    cr_assert_eq(sc.ninferences, 1);
    const inference_spec *w = &sc.inferences[0];
    cr_expect_str_eq(sc.catalog.models[w->model].name, "llama-2-70b");
    cr_expect_str_eq(sc.catalog.devices[w->device].name, "H100-SXM");
    /* 138 GB of fp16 weights need two 80 GB GPUs, whose cache would hold about 14 of
     * these requests; the default is the tp with the most tokens/s per GPU (issue 18) */
    cr_expect_eq(memory_min_tp(&sc.catalog.models[w->model], &sc.catalog.devices[w->device],
                               PREC_FP16, PREC_FP16, 1000, 8, NULL), 2);
    cr_expect_eq(w->tp, 4);
    cr_expect(w->tp_chosen);
    cr_expect_eq(w->replicas, 2);
    cr_expect_eq(w->prec, PREC_FP16);
    cr_expect_eq(w->routing, ROUTE_LEAST_OUTSTANDING);
    cr_expect_float_eq(w->slo_ttft_s, 0.5, 0);
    cr_expect_float_eq(sim_dist_mean(&w->rtt_s), 0.02, 0);
    cr_expect_float_eq(sim_dist_mean(&w->output_tokens), 200, 0);
    cr_expect(w->chunked_prefill);
    scenario_release(&sc);
    free(path);
}

static void expect_inference_error(int line, const char *text, int at, const char *message)
{
    expect_error(inference_with_line(line, text), at, message);
}

/* C reads a string to its first NUL: a name or text with one was checked and looked up
 * cut ("no pool named gp" for a pool that exists); any control byte is refused where
 * names and texts are read, with its place (issue 40, item 12). */
Test(loader, names_and_texts_with_control_bytes_are_refused)
{
    expect_inference_error(4, "  pools = { [\"gp\\0us\"] = fs.dedicated { gpu = \"H100-SXM\", count = 8 } },",
                           2, "pools.gp\\x00us: bad name \"gp\\x00us\": a name is text without "
                           "control characters, quotes, commas or backslashes");
    expect_inference_error(7, "      model = \"llama-2-70b\", pool = \"gpus\\0x\",", 6,
                           "workloads.chat.pool: expected text, got a string with a control "
                           "byte \\x00 at byte 5");
    expect_inference_error(7, "      model = \"llama-2-70b\\27[31m\", pool = \"gpus\",", 6,
                           "workloads.chat.model: expected text, got a string with a control "
                           "byte \\x1b at byte 12");
    expect_inference_error(7, "      model = \"llama-2-70b\", pool = \"gpus\", [\"tp\\0\"] = 3,", 6,
                           "workloads.chat.tp: a key with a control byte \\x00 at byte 3 (keys are "
                           "names, as in key = value)");
}

Test(loader, inference_mistakes)
{
    expect_inference_error(7, "      model = \"llama-2-71b\", pool = \"gpus\",", 6,
                           "workloads.chat.model: unknown model \"llama-2-71b\" (did you mean \"llama-2-70b\"?)");
    expect_inference_error(4, "  pools = { gpus = fs.dedicated { gpu = \"H100-SMX\", count = 8 } },", 4,
                           "pools.gpus.gpu: unknown device \"H100-SMX\" (did you mean \"H100-SXM\"?)");
    expect_inference_error(4, "  pools = { gpus = fs.dedicated { count = 8 } },", 6,
                           "workloads.chat.pool: pool \"gpus\" names no gpu; an inference workload "
                           "runs on a pool such as fs.dedicated { gpu = \"H100-SXM\", count = 8 }");
    expect_inference_error(7, "      model = \"llama-2-70b\", pool = \"gpus\", tp = 3,", 6,
                           "workloads.chat.tp: 3 does not divide the 8 GPUs of pool \"gpus\"");
    expect_inference_error(7, "      model = \"llama-2-70b\", pool = \"gpus\", tp = 1,", 6,
                           "workloads.chat.tp: llama-2-70b in fp16 does not fit on 1 x H100-SXM: "
                           "138.0 GB of weights per GPU and 1024 tokens of cache for a mean request, "
                           "with 73.0 GB usable; a smaller tp is not enough either");
    expect_inference_error(7, "      model = \"llama-2-70b\", pool = \"gpus\", routing = \"random\",", 6,
                           "workloads.chat.routing: expected one of \"round_robin\", \"least_outstanding\", "
                           "\"shortest_tokens\", \"power_of_two\", \"prefix_affinity\", "
                           "got \"random\"");
    expect_inference_error(10, "      output = -5,", 6,
                           "workloads.chat.output: expected a number >= 0, got -5");
    expect_inference_error(11, "      slo = { ttft = \"500ms\", p99 = 1 },", 6,
                           "workloads.chat.slo.p99: unknown key 'p99' (known keys: ttft, tpot, e2e)");
    expect_inference_error(9, "      prompt = fs.normal { mean = 500, sd = 100 },", 9,
                           "workloads.chat.prompt: a normal distribution can draw negative values, "
                           "and token counts cannot be negative: use fs.lognormal or fs.gamma");
}

/* when_full = "swap" and its host tier (issue 19, 2): values with units, the default
 * bandwidth left for the run (0), and the mistakes at the workload's line. */
Test(loader, a_swap_host_tier_reads_its_units_and_refuses_mistakes)
{
    scenario sc;
    char *path;
    char *text = inference_with_line(10, "      output = 200, when_full = \"swap\",\n"
                                     "      host_kv = { size = \"512GB\", bandwidth = \"25GB/s\", "
                                     "latency = \"20us\" },");
    cr_assert_eq(load_text(text, NULL, 0, &sc, &path), 0, "%s", err);
    const inference_spec *w = &sc.inferences[0];
    cr_expect_eq(w->kv_policy, KV_SWAP);
    cr_expect_float_eq(w->host_kv.size_bytes, 512e9, 0);
    cr_expect_float_eq(w->host_kv.bandwidth_bytes_per_s, 25e9, 0);
    cr_expect_float_eq(w->host_kv.latency_s, 20e-6, 1e-18);
    scenario_release(&sc);
    free(path);
    expect_inference_error(10, "      output = 200, when_full = \"swap\",", 6,
                           "workloads.chat.when_full: \"swap\" moves a preempted sequence's "
                           "cache to host memory: give its size, as in host_kv = { size = "
                           "\"512GB\" } (bandwidth: the GPUs' PCIe unless given)");
    expect_inference_error(10, "      output = 200, when_full = \"swap\", host_kv = { sise = 1 },",
                           6, "workloads.chat.host_kv.sise: unknown key 'sise' (did you mean "
                           "'size'?)");
    expect_inference_error(10, "      output = 200, when_full = \"swap\", host_kv = { size = "
                           "\"1TB\", bandwidth = \"25GB\" },", 6,
                           "workloads.chat.host_kv.bandwidth: expected a bandwidth such as "
                           "\"50GB/s\", got \"25GB\"");
    expect_inference_error(10, "      output = 200, when_full = \"swap\", host_kv = { size = "
                           "\"1TB\", offload = true },", 6,
                           "workloads.chat.host_kv.offload: the host tier is swap's (when_full "
                           "= \"swap\") or an offload tier that extends the cache (offload = "
                           "true), not both");
    expect_inference_error(10, "      output = 200, when_full = \"spill\",", 6,
                           "workloads.chat.when_full: expected one of \"queue\", \"preempt\", "
                           "\"swap\", got \"spill\"");
}

Test(loader, a_pool_site_gives_its_workloads_their_round_trip)
{
    scenario sc;
    char *path;
    char *text = inference_with_line(4, "  pools = { gpus = fs.dedicated { gpu = \"H100-SXM\", count = 8,\n"
                                       "    site = fs.site { rtt = \"80ms\", spike_probability = 0.01, spike = \"2s\" } } },");
    char *line11 = strstr(text, "      slo = { ttft = \"500ms\" }, rtt = \"20ms\",");
    cr_assert_not_null(line11);
    memcpy(strstr(line11, "rtt = \"20ms\""), "        ", 8); /* the workload names none */
    memmove(line11 + 30, line11 + 46, strlen(line11 + 46) + 1);
    cr_assert_eq(load_text(text, NULL, 0, &sc, &path), 0, "%s\n%s", err, text);
    cr_expect_not(sc.inferences[0].has_rtt);
    cr_expect_float_eq(sim_dist_mean(&sc.pools[0].site.rtt_s), 0.08, 0);
    cr_expect_float_eq(sc.pools[0].site.spike_probability, 0.01, 0);
    cr_expect_float_eq(sim_dist_mean(&sc.pools[0].site.spike_s), 2, 0);
    scenario_release(&sc);
    free(path);
}

Test(loader, mistakes_found_by_review_end_in_messages_not_crashes)
{
    /* an MMPP with no dwell times once read past its arrays */
    expect_inference_error(8, "      arrivals = fs.mmpp { rates = { 1, 2 } },", 8,
                           "workloads.chat.arrivals.dwell: expected a list such as { 1, 2, 3 }, got nothing");
    expect_inference_error(8, "      arrivals = fs.mmpp { rates = { 1, 2 }, dwell = { 5 } },", 8,
                           "workloads.chat.arrivals: has 1 dwell times for 2 rates");
    /* dwell times of a nanosecond against 1.5 requests/s: 1e9 state changes a second,
     * drawn between two arrivals inside one event, stalled the run and a SIGTERM for
     * seconds (a fuzzing run, 2026-12-07); 2 / (1 x 1e-9 + 2 x 1e-9) changes an arrival */
    expect_inference_error(8, "      arrivals = fs.mmpp { rates = { 1, 2 }, dwell = { 1e-9, 1e-9 } },",
                           8, "workloads.chat.arrivals: its states change about 6.67e+08 times an "
                           "arrival (at most 10000): a process that switches far faster than it "
                           "sends requests is a Poisson process at its mean rate, fs.poisson "
                           "{ rate = 1.5 }");
    /* a queueing service's arrivals are a renewal process: the message says which kinds,
     * and where the others go (it once only said "such as fs.poisson") */
    expect_error(replace_line(GOOD, 10, "      arrivals = fs.profile { rates = { 1, 2 }, step = \"1h\" },"),
                 10, "workloads.mm.arrivals: expected fs.poisson or fs.constant_rate (fs.profile, "
                 "fs.diurnal, fs.mmpp, fs.trace and fs.closed_loop drive fs.inference workloads), "
                 "got fs.profile { ... }");
    /* a priced pool of a queueing service: its run printed no cost, energy or horizon
     * at all, with nothing said (a fuzzing run) */
    expect_error(replace_line(GOOD, 6, "    q = fs.dedicated { gpu = \"H100-SXM\", count = 4, "
                              "cost = fs.owned { residual = 0.1 } },"),
                 6, "pools.q.cost: a queueing service (fs.service) counts its servers busy, not "
                 "GPU-hours: cost, power and a horizon are priced for pools of GPUs that serve "
                 "models or run jobs (fs.inference, fs.training, fs.job_stream)");
    /* a millisecond's bursts at 10 requests/s: 100 changes an arrival, accepted */
    {
        scenario bursts;
        char *at;
        const char *text = inference_with_line(
            8, "      arrivals = fs.mmpp { rates = { 10, 10 }, dwell = { 1e-3, 1e-3 } },");
        cr_expect_eq(load_text(text, NULL, 0, &bursts, &at), 0, "%s", err);
        scenario_release(&bursts);
        free(at);
    }
    /* a Weibull whose mean overflows Gamma once made GSL abort */
    scenario sc;
    char *path;
    const char *text = "local fs = require \"fleetsim\"\nreturn fs.scenario { duration = \"1h\",\n"
                       "  pools = { q = fs.dedicated { count = 2 } },\n"
                       "  workloads = { w = fs.service { arrivals = fs.poisson { rate = 1 },\n"
                       "    service = fs.weibull { scale = 1, shape = 0.005 }, pool = \"q\" } } }\n";
    /* now refused before its mean is asked: its largest draw, 36.74^200 = 1e313, overflows */
    cr_expect_eq(load_text(text, NULL, 0, &sc, &path), -1);
    cr_expect(strstr(err, "s.lua:5: workloads.w.service: weibull with these parameters draws "
                          "values past the largest number") != NULL, "%s", err);
    free(path);
}

Test(loader, a_link_out_of_the_scenario_folder_is_refused)
{
    char link[512];
    snprintf(link, sizeof link, "%s/t.csv", dir);
    cr_assert_eq(symlink("/etc/passwd", link), 0);
    const char *text = "local fs = require \"fleetsim\"\nreturn fs.scenario { duration = \"1h\",\n"
                       "  pools = { g = fs.dedicated { gpu = \"H100-SXM\", count = 1 } },\n"
                       "  workloads = { w = fs.inference { model = \"llama-3-8b\", pool = \"g\",\n"
                       "    arrivals = fs.trace { file = \"t.csv\" } } } }\n";
    expect_error(text, 5, "workloads.w.arrivals.file: \"t.csv\" leads outside the scenario's "
                 "folder (a link?); a trusted file can use --unsafe");
}

/* Rates, sizes and bandwidths below anything physical (issue 40, item 11): 1e-300 B/s
 * printed a fraction of inf in summary.csv, a rate of 1e-300/s waits of 2.7e307 s. */
Test(loader, absurdly_small_rates_sizes_and_bandwidths_are_refused)
{
    expect_inference_error(8, "      arrivals = fs.poisson { rate = 1e-300 },", 8,
                           "workloads.chat.arrivals.rate: expected a rate >= 1e-9 /s, got 1e-300 /s");
    expect_inference_error(10, "      output = 200, when_full = \"swap\", host_kv = { size = "
                           "\"1TB\", bandwidth = 1e-300 },", 6,
                           "workloads.chat.host_kv.bandwidth: expected a bandwidth >= 1000 bytes/s, "
                           "got 1e-300 bytes/s");
    expect_inference_error(10, "      output = 200, when_full = \"swap\", host_kv = { size = "
                           "0.5 },", 6,
                           "workloads.chat.host_kv.size: expected a size >= 1 bytes, got 0.5 bytes");
}

/* A looped trace whose rows share one instant (issue 40, item 13): refused for a false
 * memory estimate of 288 GB, and with --memory-limit none replayed once. */
Test(loader, a_looped_trace_of_one_instant_is_refused_for_that)
{
    free(scratch_file(dir, "t.csv", "TIMESTAMP,ContextTokens,GeneratedTokens\n"
                                       "7,100,10\n7,200,20\n7,300,30\n"));
    const char *text = "local fs = require \"fleetsim\"\nreturn fs.scenario { duration = \"1h\",\n"
                       "  pools = { g = fs.dedicated { gpu = \"H100-SXM\", count = 1 } },\n"
                       "  workloads = { w = fs.inference { model = \"llama-3-8b\", pool = \"g\",\n"
                       "    arrivals = fs.trace { file = \"t.csv\", loop = true } } } }\n";
    expect_error(text, 5, "workloads.w.arrivals.loop: the trace's 3 rows all arrive at one "
                 "instant: a loop would replay them at that instant without end; a looped trace "
                 "needs rows over a span of time (or leave out loop = true)");
}

/* ---- pools: cloud, spot, sharing; training and overflow ---- */

Test(loader, cloud_spot_and_mig_pools_resolve)
{
    scenario sc;
    char *path;
    const char *text =
        "local fs = require \"fleetsim\"\n"
        "return fs.scenario { duration = \"1h\",\n"
        "  pools = {\n"
        "    cloud = fs.cloud { gpu = \"H100-SXM\", count = 2, min = 1, max = 8, provision = \"90s\",\n"
        "      unavailable = 0.1, ceiling = 6,\n"
        "      autoscaler = fs.autoscaler { metric = \"queue\", target = 12, interval = \"15s\" } },\n"
        "    spot = fs.spot { gpu = \"H100-SXM\", max = 4, preemption_rate = \"0.01/h\", notice = \"30s\" },\n"
        "    sliced = fs.dedicated { gpu = \"A100-80GB-SXM\", count = 2, mig = \"1g.10gb\" },\n"
        "  },\n"
        "  workloads = {\n"
        "    chat = fs.inference { model = \"llama-3-8b\", precision = \"int4\", pool = \"sliced\",\n"
        "      arrivals = fs.poisson { rate = 1 }, prompt = 200, output = 50, overflow = \"cloud\" },\n"
        "    tune = fs.training { steps = 100, step = \"1s\", gpus = 4, pool = \"spot\" },\n"
        "  } }\n";
    cr_assert_eq(load_text(text, NULL, 0, &sc, &path), 0, "%s", err);
    const pool_spec *cloud = &sc.pools[0], *sliced = &sc.pools[1], *spot = &sc.pools[2];
    cr_expect_eq(cloud->capacity.kind, POOL_CLOUD);
    cr_expect_eq(cloud->count, 2);
    cr_expect_eq(cloud->min, 1);
    cr_expect_eq(cloud->capacity.max, 8);
    cr_expect_eq(cloud->capacity.ceiling, 6);
    cr_expect_float_eq(cloud->capacity.unavailable_probability, 0.1, 0);
    cr_expect_float_eq(sim_dist_mean(&cloud->provision_s), 90, 0);
    cr_expect(cloud->autoscaler.enabled);
    cr_expect_eq(cloud->autoscaler.metric, AUTOSCALE_QUEUE);
    cr_expect_float_eq(cloud->autoscaler.target, 12, 0);
    cr_expect_float_eq(cloud->autoscaler.interval_s, 15, 0);
    cr_expect_float_eq(cloud->autoscaler.cooldown_s, 180, 0, "the default cooldown");
    cr_expect_eq(spot->capacity.kind, POOL_SPOT);
    cr_expect_float_eq(spot->capacity.preemption_rate_per_s, 0.01 / 3600, 1e-18);
    cr_expect_float_eq(spot->capacity.notice_s, 30, 0);
    cr_expect_eq(spot->count, 0, "a cloud pool starts at its min");
    /* the MIG user guide: seven 1g.10gb slices on an A100-80GB */
    cr_expect_eq(sliced->units_per_gpu, 7);
    cr_expect_eq(sliced->count, 14);
    cr_expect_str_eq(sliced->unit_device, "A100-80GB-SXM MIG 1g.10gb");
    const inference_spec *chat = &sc.inferences[0];
    cr_expect_eq(chat->replicas, 14, "one replica per slice");
    cr_expect_str_eq(sc.catalog.devices[chat->device].name, "A100-80GB-SXM MIG 1g.10gb");
    /* "10gb" read as the catalog reads a datasheet: 10 GiB less the driver's 0.975% */
    cr_expect_float_eq(sc.catalog.devices[chat->device].memory_bytes,
                       10 * 1073741824.0 * 79.22 / 80, 1);
    cr_assert_eq(chat->ngroups, 1);
    cr_expect_eq(chat->groups[0].role, ROLE_OVERFLOW);
    cr_expect_str_eq(sc.pools[chat->groups[0].pool].name, "cloud");
    cr_expect_eq(chat->groups[0].tp, 1);
    cr_expect_eq(sc.ntrainings, 1);
    cr_expect_str_eq(sc.pools[sc.trainings[0].pool].name, "spot");
    scenario_release(&sc);
    free(path);
}

/* A scenario around one pool line (line 4) and one workload line (line 6). */
static char *pool_case(const char *pool, const char *workload)
{
    static char buf[2048];
    snprintf(buf, sizeof buf,
             "local fs = require \"fleetsim\"\n"
             "return fs.scenario { duration = \"1h\",\n"
             "  pools = {\n"
             "    %s\n"
             "    other = fs.dedicated { gpu = \"H100-SXM\", count = 2 } },\n"
             "  workloads = { %s } }\n", pool, workload);
    return buf;
}

#define CHAT(pool) "chat = fs.inference { model = \"llama-3-8b\", pool = \"" pool "\", " \
    "arrivals = fs.poisson { rate = 1 }, prompt = 200, output = 50"

Test(loader, pool_mistakes)
{
    expect_error(pool_case("p = fs.spot { gpu = \"H100-SXM\", max = 4, preemption_times = { \"2h\", \"1h\" } },",
                           CHAT("p") " }"), 4,
                 "pools.p.preemption_times: entry 2 (3600 s) comes before entry 1 (7200 s); "
                 "expected times in order");
    expect_error(pool_case("p = fs.cloud { gpu = \"H100-SXM\", max = 4 },", CHAT("p") " }"), 4,
                 "pools.p: starts with no GPUs and has no autoscaler, so its workload would "
                 "never be served: set count or autoscaler");
    expect_error(pool_case("p = fs.cloud { gpu = \"H100-SXM\", max = 4, count = 5 },", CHAT("p") " }"), 4,
                 "pools.p.count: 5 is over the limit of 4");
    expect_error(pool_case("p = fs.cloud { gpu = \"H100-SXM\", min = 5, max = 1 },", CHAT("p") " }"), 4,
                 "pools.p.min: 5 is over max, 1");
    expect_error(pool_case("p = fs.cloud { gpu = \"H100-SXM\", max = 4, unavailable = 1 },", CHAT("p") " }"), 4,
                 "pools.p.unavailable: a probability of 1 means no GPU is ever provisioned; "
                 "expected less than 1");
    expect_error(pool_case("p = fs.cloud { max = 4, count = 1 },", CHAT("p") " }"), 4,
                 "pools.p: a cloud pool rents GPUs: name one (gpu = \"H100-SXM\")");
    expect_error(pool_case("p = fs.cloud { gpu = \"H100-SXM\", max = 4, count = 1 },",
                           "q = fs.service { arrivals = fs.poisson { rate = 1 }, service = \"1s\", pool = \"p\" }"), 4,
                 "pools.p: a queueing service (fs.service) runs on fixed servers: use "
                 "fs.dedicated for it");
    expect_error(pool_case("p = fs.dedicated { gpu = \"H100-SXM\", count = 2 },",
                           CHAT("p") ", overflow = \"p\" }"), 6,
                 "workloads.chat.overflow: \"p\" is the workload's own pool; name another");
    expect_error(pool_case("p = fs.dedicated { gpu = \"H100-SXM\", count = 2 },",
                           CHAT("p") " }, tune = fs.training { steps = 10, step = 1, gpus = 1, pool = \"p\" }"), 4,
                 "pools.p: runs training jobs and an inference workload; give the jobs a pool "
                 "of their own");
    expect_error(pool_case("p = fs.dedicated { gpu = \"H100-SXM\", count = 2, autoscaler = 1 },", CHAT("p") " }"), 4,
                 "pools.p.autoscaler: a dedicated pool has a fixed count; GPUs that come and go "
                 "are fs.cloud { min, max, provision, autoscaler } or fs.spot");
}

Test(loader, costs_resolve_with_catalog_prices_and_egress_tiers)
{
    scenario sc;
    char *path;
    const char *text =
        "local fs = require \"fleetsim\"\n"
        "return fs.scenario { duration = \"1h\",\n"
        "  pools = {\n"
        "    a = fs.cloud { gpu = \"H100-SXM\", count = 1, max = 2, cost = fs.on_demand { billing = \"per_hour\" } },\n"
        "    b = fs.spot { gpu = \"H100-SXM\", max = 2, cost = fs.spot { usd_per_hour = 2.1, egress = 0.05 } },\n"
        "    c = fs.dedicated { gpu = \"H100-SXM\", count = 8, cost = fs.owned { purchase_usd = 30000 } },\n"
        "  },\n"
        "  workloads = { t = fs.training { steps = 10, step = 1, gpus = 1, pool = \"c\" } } }\n";
    cr_assert_eq(load_text(text, NULL, 0, &sc, &path), 0, "%s", err);
    const cost_spec *a = &sc.pools[0].cost, *b = &sc.pools[1].cost, *c = &sc.pools[2].cost;
    cr_expect_eq(a->kind, COST_ON_DEMAND);
    cr_expect(a->per_hour);
    cr_expect_float_eq(a->usd_per_hour, catalog_device(&sc.catalog, "H100-SXM")->usd_per_hour, 0,
                       "the catalog's price when none is given");
    cr_expect_eq(a->negress, 5, "AWS's tiers by default");
    cr_expect_float_eq(a->egress[1].usd_per_gb, 0.09, 0);
    cr_expect_eq(b->kind, COST_SPOT);
    cr_expect_eq(b->negress, 1);
    cr_expect_float_eq(b->egress[0].usd_per_gb, 0.05, 0);
    cr_expect_eq(c->kind, COST_OWNED);
    cr_expect(c->pays_power);
    cr_expect_float_eq(c->pue, 1.58, 0);
    cr_expect_float_eq(c->years, 4, 0);
    cr_expect_eq(c->negress, 0, "owned hardware pays no egress unless told");
    scenario_release(&sc);
    free(path);
}

Test(loader, cost_mistakes)
{
    expect_error(pool_case("p = fs.cloud { gpu = \"H100-SXM\", max = 4, count = 1, cost = fs.on_demand { egress = \"OVH\" } },",
                           CHAT("p") " }"), 4,
                 "pools.p.cost.egress: no egress prices for \"OVH\" in fs.egress (known: AWS, "
                 "GCP premium, GCP standard, Azure)");
    expect_error(pool_case("p = fs.dedicated { gpu = \"H100-SXM\", count = 2, cost = fs.monthly { usd_per_gpu = 1, usd_per_server = 8 } },",
                           CHAT("p") " }"), 4,
                 "pools.p.cost: give one of usd_per_gpu and usd_per_server");
    expect_error(pool_case("p = fs.spot { gpu = \"H100-SXM\", max = 4, count = 1, cost = fs.spot { } },",
                           CHAT("p") " }"), 4,
                 "pools.p.cost.usd_per_hour: a spot price has no catalog default: give it");
    expect_error(pool_case("p = fs.dedicated { gpu = \"H100-SXM\", count = 2, cost = fs.poisson { rate = 1 } },",
                           CHAT("p") " }"), 4,
                 "pools.p.cost: expected a price such as fs.on_demand { usd_per_hour = 3.99 }, got fs.poisson { ... }");
}

/* Issue 17, finding 7: the trace is opened once, at load, and every replication reads
 * that file: swapped for a link to another file after the check, it is not read (it
 * once was, each replication opening the name again). */
Test(loader, a_trace_swapped_after_loading_is_not_read)
{
    char *trace = scratch_file(dir, "t.csv", "TIMESTAMP,ContextTokens,GeneratedTokens\n"
                                             "0,100,10\n1,100,10\n2,100,10\n");
    char *other = scratch_file(dir, "other.csv", "not,a,trace\n1,2,3\n");
    scenario sc;
    char *path;
    cr_assert_eq(load_text("local fs = require \"fleetsim\"\n"
                           "return fs.scenario { name = \"t\", duration = \"1m\",\n"
                           "  pools = { g = fs.dedicated { gpu = \"H100-SXM\", count = 1 } },\n"
                           "  workloads = { chat = fs.inference { model = \"llama-3-8b\",\n"
                           "    pool = \"g\", arrivals = fs.trace { file = \"t.csv\" } } } }\n",
                           NULL, 0, &sc, &path), 0, "%s", err);
    cr_assert_eq(unlink(trace), 0);
    cr_assert_eq(symlink(other, trace), 0);
    run_results r;
    cr_assert_eq(scenario_run(&sc, NULL, &r, err, sizeof err), 0, "%s", err);
    const sim_metric *arrived = sim_metrics_find(&r.metrics, "workload", "chat",
                                                 "requests_arrived");
    cr_assert_not_null(arrived);
    cr_expect_float_eq(sim_stat_mean(&arrived->replications), 3, 0, "the rows read at load");
    run_results_release(&r);
    scenario_release(&sc);
    free(trace), free(other), free(path);
}

/* Issue 17, finding 13: a prompt that fills the model's context is refused at load when
 * it surely comes (a trace row, named; a distribution with a finite largest value); it
 * was served (100,000-token prompts on an 8,192-token model completed). */
Test(loader, a_prompt_that_fills_the_models_context_is_refused)
{
    char *trace = scratch_file(dir, "long.csv", "TIMESTAMP,ContextTokens,GeneratedTokens\n"
                                                "0,100,10\n1,100000,10\n2,100,10\n");
    scenario sc;
    char *path;
    cr_expect_eq(load_text("local fs = require \"fleetsim\"\n"
                           "return fs.scenario { name = \"t\", duration = \"1m\",\n"
                           "  pools = { g = fs.dedicated { gpu = \"H100-SXM\", count = 1 } },\n"
                           "  workloads = { chat = fs.inference { model = \"llama-3-8b\",\n"
                           "    pool = \"g\", arrivals = fs.trace { file = \"long.csv\" } } } }\n",
                           NULL, 0, &sc, &path), -1);
    char expected[1024];
    snprintf(expected, sizeof expected, "%s:row 3: a prompt of 100000 tokens fills the "
             "8192-token context of llama-3-8b (workload chat)", trace);
    cr_expect_str_eq(err, expected);
    free(path);
    cr_expect_eq(load_text("local fs = require \"fleetsim\"\n"
                           "return fs.scenario { name = \"t\", duration = \"1m\",\n"
                           "  pools = { g = fs.dedicated { gpu = \"H100-SXM\", count = 1 } },\n"
                           "  workloads = { chat = fs.inference { model = \"llama-3-8b\",\n"
                           "    pool = \"g\", arrivals = fs.poisson { rate = 1 },\n"
                           "    prompt = fs.uniform { low = 100, high = 9000 }, output = 10 } } }\n",
                           NULL, 0, &sc, &path), -1);
    snprintf(expected, sizeof expected, "%s:4: workloads.chat.prompt: prompts reach 9000 tokens, "
             "which fills the 8192-token context of llama-3-8b", path);
    cr_expect_str_eq(err, expected);
    free(path), free(trace);
}

/* Issue 17, findings 14 and 15: names that would collide as chart files ("x/y" and
 * "x_y": the first chart was silently lost), names holding a newline or `,"` (they
 * passed check, broke the CSVs, then gnuplot), and an empty name (it wrote into out/
 * itself) are refused at load with the name shown. */
Test(loader, names_that_break_files_or_collide_are_refused)
{
    expect_error(with_line(6, "    [\"x/y\"] = fs.dedicated { count = 4 }, "
                              "x_y = fs.dedicated { count = 1 }, q = fs.dedicated { count = 4 },"),
                 2, "pools: \"x/y\" and \"x_y\" would have the same file name, \"x_y\", for "
                    "their charts: rename one");
    expect_error(with_line(9, "    [\"m\\nm\"] = fs.service {"), 2,
                 "workloads.m\nm: bad name \"m\\x0am\": a name is text without control "
                 "characters, quotes, commas or backslashes");
    expect_error(with_line(9, "    [\"a,\\\"b\"] = fs.service {"), 2,
                 "workloads.a,\"b: bad name \"a,\"b\": a name is text without control "
                 "characters, quotes, commas or backslashes");
    expect_error(with_line(3, "  name = \"\", duration = \"2h\", warmup = \"10m\","), 2,
                 "name: bad name \"\": a name is text without control characters, quotes, "
                 "commas or backslashes");
}

/* fs.trace's blocks and block_tokens: the prefix cache's block follows block_tokens,
 * and a different one, a system prompt or a bad block_tokens is refused by key. */
Test(loader, a_trace_of_block_ids_sets_the_prefix_caches_block)
{
    char *trace = scratch_file(dir, "h.csv", "TIMESTAMP,ContextTokens,GeneratedTokens,hash_ids\n"
                                             "0,1300,10,1 2 3\n1,1300,10,1 2 4\n");
    static const char *const head = "local fs = require \"fleetsim\"\n"
        "return fs.scenario { name = \"t\", duration = \"1m\",\n"
        "  pools = { g = fs.dedicated { gpu = \"H100-SXM\", count = 1 } },\n"
        "  workloads = { chat = fs.inference { model = \"llama-3-8b\", pool = \"g\",\n";
    char text[2048];
    scenario sc;
    char *path;
    snprintf(text, sizeof text, "%s    arrivals = fs.trace { file = \"h.csv\", blocks = \"hash_ids\","
             " block_tokens = 128 },\n    prefix_cache = true } } }\n", head);
    cr_assert_eq(load_text(text, NULL, 0, &sc, &path), 0, "%s", err);
    cr_expect_str_eq(sc.inferences[0].trace.blocks_column, "hash_ids");
    cr_expect_eq(sc.inferences[0].trace.block_tokens, 128);
    cr_expect_eq(sc.inferences[0].prefix_block, 128);
    scenario_release(&sc);
    free(path);
    snprintf(text, sizeof text, "%s    arrivals = fs.trace { file = \"h.csv\", blocks = \"hash_ids\" },\n"
             "    prefix_cache = true } } }\n", head);
    cr_assert_eq(load_text(text, NULL, 0, &sc, &path), 0, "%s", err);
    cr_expect_eq(sc.inferences[0].prefix_block, 512, "Mooncake's block by default");
    scenario_release(&sc);
    free(path);
    snprintf(text, sizeof text, "%s    arrivals = fs.trace { file = \"h.csv\", blocks = \"hash_ids\" },\n"
             "    prefix_cache = { block = 16 } } } }\n", head);
    expect_error(text, 4, "workloads.chat.prefix_cache.block: 16 tokens, but the trace's block "
                 "ids stand for 512 (fs.trace's block_tokens): leave block out or give 512");
    snprintf(text, sizeof text, "%s    arrivals = fs.trace { file = \"h.csv\", blocks = \"hash_ids\" },\n"
             "    system_prompt = 100, prefix_cache = true } } }\n", head);
    expect_error(text, 4, "workloads.chat.system_prompt: not with a trace's block ids (fs.trace's "
                 "blocks): they name the whole prompt, a shared system prompt too");
    snprintf(text, sizeof text, "%s    arrivals = fs.trace { file = \"h.csv\", blocks = \"hash_ids\","
             " block_tokens = 0 } } } }\n", head);
    expect_error(text, 5, "workloads.chat.arrivals.block_tokens: expected a positive integer, got 0");
    free(trace);
}

/* The job training_job_from_model makes of `model` on gpus H100s of sc's catalog, as the
 * loader calls it: the default training engine's state and kernels (deepspeed), bf16,
 * 4096-token sequences, 512 a step, 1e8 tokens. */
static int job_as_loaded(const scenario *sc, const char *model, unsigned gpus,
                         training_constraints c, training_schedule schedule, training_spec *out,
                         char *why, size_t why_size)
{
    const engine_spec *e = catalog_engine(&sc->catalog, "deepspeed");
    const device_spec *d = catalog_device(&sc->catalog, "H100-SXM");
    cr_assert(e && d);
    engine_training_state(e, &c);
    perf_profile base = perf_default_profile(d);
    perf_profile p = engine_apply_profile(e, &base, d);
    *out = (training_spec){ 0 };
    return training_job_from_model(out, catalog_model(&sc->catalog, model), d, &p, PREC_BF16,
                                   gpus, c, schedule, 4096, 512, 1e8, 0, why, why_size);
}

Test(loader, training_jobs_take_lora_and_dualpipe)
{
    /* Llama-3-70B on 8 H100s: training every weight does not fit, adapters on the frozen
     * model do (training_job_from_model with lora); DualPipe needs an even pp */
    scenario sc;
    char *path;
    const char *text =
        "local fs = require \"fleetsim\"\n"
        "return fs.scenario { duration = \"1h\",\n"
        "  pools = { p = fs.dedicated { gpu = \"H100-SXM\", count = 8 } },\n"
        "  workloads = { tune = fs.training { model = \"llama-3-70b\", gpus = 8, pool = \"p\",\n"
        "                                     tokens = 1e8, lora = true } } }\n";
    cr_assert_eq(load_text(text, NULL, 0, &sc, &path), 0, "%s", err);
    cr_assert_eq(sc.ntrainings, 1);
    training_spec expect = { 0 };
    char why[600];
    training_constraints c = TRAINING_FREE;
    c.lora = true;
    cr_assert_eq(job_as_loaded(&sc, "llama-3-70b", 8, c, TRAINING_SCHEDULE_PLANNED, &expect, why,
                               sizeof why), 0, "%s", why);
    cr_expect_float_eq(sc.trainings[0].step_s, expect.step_s, 1e-12 * expect.step_s);
    scenario_release(&sc);
    free(path);
    /* DualPipe at pp 2 on 16 GPUs: the job's step is training_job_from_model's with the
     * schedule, not 1F1B's; pp alone leaves tp to the planner, a schedule alone tp and pp,
     * "planned" is the default */
    const char *const schedules[] = { "parallelism = { pp = 2, schedule = \"dualpipe\" }",
                                      "parallelism = { schedule = \"dualpipe\" }",
                                      "parallelism = { schedule = \"planned\" }" };
    for (int k = 0; k < 3; k++) {
        char scenario_text[1024];
        snprintf(scenario_text, sizeof scenario_text,
                 "local fs = require \"fleetsim\"\n"
                 "return fs.scenario { duration = \"1h\",\n"
                 "  pools = { p = fs.dedicated { gpu = \"H100-SXM\", count = 16 } },\n"
                 "  workloads = { tune = fs.training { model = \"qwen3-30b-a3b\", gpus = 16,\n"
                 "    pool = \"p\", tokens = 1e8, %s } } }\n", schedules[k]);
        cr_assert_eq(load_text(scenario_text, NULL, 0, &sc, &path), 0, "%s", err);
        training_constraints want = TRAINING_FREE;
        want.pp = k == 0 ? 2 : 0;
        want.dualpipe = k < 2;
        cr_assert_eq(job_as_loaded(&sc, "qwen3-30b-a3b", 16, want, TRAINING_SCHEDULE_PLANNED,
                                   &expect, why, sizeof why), 0, "%s", why);
        cr_expect_float_eq(sc.trainings[0].step_s, expect.step_s, 1e-12 * expect.step_s,
                           "%s", schedules[k]);
        if (k == 0) {
            training_spec planned = { 0 };
            want.dualpipe = false;
            cr_assert_eq(job_as_loaded(&sc, "qwen3-30b-a3b", 16, want,
                                       TRAINING_SCHEDULE_PLANNED, &planned, why, sizeof why),
                         0, "%s", why);
            cr_expect_neq(planned.step_s, expect.step_s, "DualPipe's step is its own");
        }
        scenario_release(&sc);
        free(path);
    }
    expect_error(pool_case("p = fs.dedicated { gpu = \"H100-SXM\", count = 8 },",
                           "tune = fs.training { model = \"llama-3-70b\", gpus = 8, pool = \"p\", "
                           "tokens = 1e8 }"), 6,
                 "workloads.tune.gpus: llama-3-70b on 8 H100-SXM: needs 146.5 GB per GPU "
                 "(weights 17.6, gradients 17.6, optimizer 105.8, activations 5.4) with 76.6 GB "
                 "usable; the smallest that fits is 16 GPUs");
    expect_error(pool_case("p = fs.dedicated { gpu = \"H100-SXM\", count = 8 },",
                           "tune = fs.training { model = \"llama-3-8b\", gpus = 8, pool = \"p\", "
                           "tokens = 1e8, parallelism = { pp = 3, schedule = \"dualpipe\" } }"), 6,
                 "workloads.tune.parallelism.pp: DualPipe pairs the pipeline's stages: give an "
                 "even pp, got 3");
    expect_error(pool_case("p = fs.dedicated { gpu = \"H100-SXM\", count = 8 },",
                           "tune = fs.training { model = \"llama-3-8b\", gpus = 8, pool = \"p\", "
                           "tokens = 1e8, lora = 1 }"), 6,
                 "workloads.tune.lora: expected true or false");
}

/* A training job of `model` on 16 H100s whose parallelism is `plan` (line 6). */
static char *plan_case(const char *model, const char *plan)
{
    static char buf[1024];
    char workload[512];
    snprintf(workload, sizeof workload, "tune = fs.training { model = \"%s\", gpus = 16, pool = "
             "\"p\", tokens = 1e8, parallelism = { %s } }", model, plan);
    return strcpy(buf, pool_case("p = fs.dedicated { gpu = \"H100-SXM\", count = 16 },",
                                 workload));
}

/* The scenario's first job (llama-3-8b on 16 H100s, 512 sequences a step, DeepSpeed) steps
 * as perf_training_step prices setup s, which fits, in the scenario's own catalog. */
static void expect_deepspeed_step(const scenario *sc, training_setup s)
{
    const engine_spec *e = catalog_engine(&sc->catalog, "deepspeed");
    const device_spec *d = catalog_device(&sc->catalog, "H100-SXM");
    perf_profile base = perf_default_profile(d);
    perf_profile p = engine_apply_profile(e, &base, d);
    training_estimate by_hand = perf_training_step(catalog_model(&sc->catalog, "llama-3-8b"), d,
                                                   &p, PREC_BF16, s, 16, 512);
    cr_expect(by_hand.memory.fits);
    cr_expect_float_eq(sc->trainings[0].step_s, by_hand.step_s, 1e-12 * by_hand.step_s);
}

Test(loader, training_parallelism_states_every_dimension)
{
    /* Llama-3-8B with every dimension stated leaves the planner one setup: the job's step
     * is perf_training_step's for it, with the framework's bytes and kernels */
    scenario sc;
    char *path, why[600];
    cr_assert_eq(load_text(plan_case("llama-3-8b", "tp = 2, pp = 2, cp = 2, dp = 2, vpp = 2, "
                                     "micro_batch = 1, zero = 1, recompute = 4, schedule = "
                                     "\"interleaved\""), NULL, 0, &sc, &path), 0, "%s", err);
    const training_setup *got = &sc.trainings[0].setup;
    cr_expect_eq(got->tp, 2);
    cr_expect_eq(got->pp, 2);
    cr_expect_eq(got->cp, 2);
    cr_expect_eq(got->dp, 2);
    cr_expect_eq(got->virtual_stages, 2);
    cr_expect_eq(got->micro_batch, 1);
    cr_expect_eq(got->zero_stage, 1);
    cr_expect_eq(got->recompute_layers, 4);
    cr_expect_eq(got->microbatches, 256, "512 sequences over dp 2, one a micro-batch");
    cr_expect(got->no_sequence_parallel, "DeepSpeed's tensor parallelism: no SP unless stated");
    const engine_spec *e = catalog_engine(&sc.catalog, "deepspeed");
    training_setup s = { .tp = 2, .pp = 2, .cp = 2, .virtual_stages = 2, .micro_batch = 1,
                         .zero_stage = 1, .recompute_layers = 4, .seq_len = 4096, .ep = 1,
                         .etp = 2, .no_sequence_parallel = true,
                         .weight_bytes = e->train_weight_bytes,
                         .gradient_bytes = e->train_gradient_bytes,
                         .optimizer_bytes = e->train_optimizer_bytes };
    expect_deepspeed_step(&sc, s);
    scenario_release(&sc);
    free(path);
    /* sp = true: the same plan with sequence parallelism, as stated */
    cr_assert_eq(load_text(plan_case("llama-3-8b", "tp = 2, pp = 2, cp = 2, dp = 2, vpp = 2, "
                                     "micro_batch = 1, zero = 1, recompute = 4, schedule = "
                                     "\"interleaved\", sp = true"),
                           NULL, 0, &sc, &path), 0, "%s", err);
    cr_expect_not(sc.trainings[0].setup.no_sequence_parallel);
    cr_expect_eq(sc.trainings[0].setup.recompute_layers, 4);
    s.no_sequence_parallel = false;
    expect_deepspeed_step(&sc, s); /* the new scenario's catalog */
    scenario_release(&sc);
    free(path);
    expect_error(plan_case("llama-3-8b", "tp = 2, sp = \"yes\""), 6,
                 "workloads.tune.parallelism.sp: expected true or false");
    /* dp_overlap = false: the same plan with its data-parallel collectives in series */
    cr_assert_eq(load_text(plan_case("llama-3-8b", "tp = 2, pp = 2, cp = 2, dp = 2, vpp = 2, "
                                     "micro_batch = 1, zero = 1, recompute = 4, schedule = "
                                     "\"interleaved\", sp = true, dp_overlap = false"),
                           NULL, 0, &sc, &path), 0, "%s", err);
    cr_expect(sc.trainings[0].setup.no_dp_overlap);
    s.no_dp_overlap = true;
    expect_deepspeed_step(&sc, s);
    scenario_release(&sc);
    free(path);
    expect_error(plan_case("llama-3-8b", "tp = 2, dp_overlap = 1"), 6,
                 "workloads.tune.parallelism.dp_overlap: expected true or false");
    /* the mixture's token dispatcher and its overlap, as stated */
    cr_assert_eq(load_text(plan_case("qwen3-30b-a3b", "ep = 8, dispatcher = \"deepep\", "
                                     "ep_overlap = true"), NULL, 0, &sc, &path), 0, "%s", err);
    cr_expect_eq(sc.trainings[0].setup.dispatcher, TRAINING_DISPATCH_DEEPEP);
    cr_expect(sc.trainings[0].setup.ep_overlap);
    scenario_release(&sc);
    free(path);
    expect_error(plan_case("qwen3-30b-a3b", "ep = 8, dispatcher = \"nccl\""), 6,
                 "workloads.tune.parallelism.dispatcher: expected one of \"alltoall\", "
                 "\"deepep\", \"hybridep\", got \"nccl\"");
    expect_error(plan_case("qwen3-30b-a3b", "ep = 8, ep_overlap = \"yes\""), 6,
                 "workloads.tune.parallelism.ep_overlap: expected true or false");
    /* the mixture's: ep and etp, HSDP (ZeRO-3 implied), selective recomputation, 1F1B */
    cr_assert_eq(load_text(plan_case("qwen3-30b-a3b", "tp = 2, ep = 4, etp = 1, hsdp = 4, "
                                     "recompute = \"selective\", micro_batch = 1, schedule = "
                                     "\"1f1b\""), NULL, 0, &sc, &path), 0, "%s", err);
    got = &sc.trainings[0].setup;
    cr_expect_eq(got->tp, 2);
    cr_expect_eq(got->ep, 4);
    cr_expect_eq(got->etp, 1);
    cr_expect_eq(got->zero_stage, 3);
    cr_expect_eq(got->shard_ranks, 4);
    cr_expect(got->selective);
    cr_expect_eq(got->recompute_layers, 0);
    cr_expect_eq(got->virtual_stages, 1);
    cr_expect_eq(got->micro_batch, 1);
    scenario_release(&sc);
    free(path);
    /* ZB-H1, and "full" recomputation: every layer of a stage; pp alone leaves tp free and
     * the job the same as training_job_from_model's with the same constraints */
    cr_assert_eq(load_text(plan_case("qwen3-30b-a3b", "pp = 2, recompute = \"full\", schedule = "
                                     "\"zero_bubble\""), NULL, 0, &sc, &path), 0, "%s", err);
    got = &sc.trainings[0].setup;
    cr_expect(got->zero_bubble);
    cr_expect_eq(got->pp, 2);
    cr_expect_eq(got->recompute_layers, 24, "qwen3-30b-a3b's 48 layers over 2 stages");
    training_constraints c = TRAINING_FREE;
    c.pp = 2;
    c.recompute_layers = INT_MAX;
    training_spec expect;
    cr_assert_eq(job_as_loaded(&sc, "qwen3-30b-a3b", 16, c, TRAINING_SCHEDULE_ZERO_BUBBLE,
                               &expect, why, sizeof why), 0, "%s", why);
    cr_expect_eq(expect.setup.tp, got->tp);
    cr_expect_float_eq(sc.trainings[0].step_s, expect.step_s, 1e-12 * expect.step_s);
    scenario_release(&sc);
    free(path);
}

Test(loader, training_parallelism_refuses_a_bad_value_naming_its_key)
{
    static const struct { const char *plan, *message; } cases[] = {
        { "cp = 0", "cp: expected a positive integer, got 0" },
        { "ep = \"4\"", "ep: expected a positive integer, got \"4\"" },
        { "etp = 1.5", "etp: expected a positive integer, got 1.5" },
        { "vpp = 65", "vpp: 65 is over the limit of 64" },
        { "dp = -2", "dp: expected a positive integer, got -2" },
        { "micro_batch = 0", "micro_batch: expected a positive integer, got 0" },
        { "zero = 4", "zero: 4 is over the limit of 3" },
        { "hsdp = true", "hsdp: expected a positive integer, got true" },
        { "recompute = \"most\"", "recompute: expected \"none\", \"selective\", \"full\" or a "
          "whole number of layers a stage recomputed in full, got \"most\"" },
        { "recompute = 2.5", "recompute: expected \"none\", \"selective\", \"full\" or a whole "
          "number of layers a stage recomputed in full, got 2.5" },
        { "schedule = \"gpipe\"", "schedule: expected one of \"planned\", \"1f1b\", "
          "\"interleaved\", \"zero_bubble\", \"dualpipe\", got \"gpipe\"" },
        { "pp = 2, vpp = 2, schedule = \"1f1b\"", "vpp: the \"1f1b\" schedule runs one model "
          "chunk a stage: leave vpp out (or 1), got 2" },
        { "pp = 2, vpp = 2, schedule = \"zero_bubble\"", "vpp: the \"zero_bubble\" schedule runs "
          "one model chunk a stage: leave vpp out (or 1), got 2" },
        { "pp = 2, vpp = 1, schedule = \"interleaved\"", "vpp: the \"interleaved\" schedule runs "
          "2 or more model chunks a stage, got 1" },
        { "pp = 1, schedule = \"zero_bubble\"", "pp: the \"zero_bubble\" schedule needs a "
          "pipeline of 2 or more stages, got 1" },
        { "pp = 1, vpp = 4", "pp: the \"interleaved\" schedule needs a pipeline of 2 or more "
          "stages, got 1" },
        { "hsdp = 4, zero = 2", "hsdp: HSDP shards ZeRO-3's states within groups of ranks: "
          "zero must be 3 with it, got 2" },
        /* stated plans the model cannot take: the planner's cause */
        { "tp = 3", "tp 3 does not divide the 32 attention heads of llama-3-8b" },
        { "ep = 2", "ep 2: llama-3-8b has no experts" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char message[512];
        bool planner = i + 2 >= sizeof cases / sizeof cases[0];
        snprintf(message, sizeof message, "workloads.tune.parallelism%s%s", planner ? ": " : ".",
                 cases[i].message);
        expect_error(plan_case("llama-3-8b", cases[i].plan), 6, message);
    }
}
