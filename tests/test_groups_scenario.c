/* groups = { ... } in a scenario (lua/scenario_load.c: convert_groups): the list states
 * what the shorthands decode = and overflow = state, to the byte; a group's Lua routing
 * function is bound through the list; every mistake is named with its key. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "output/csv_table.h"
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

TestSuite(groups_scenario, .init = setup, .fini = teardown, .timeout = 240);

/* Four pools: p the workload's own, d, c and b others; line 5 holds the workload's
 * groups. */
static const char *SCENARIO =
    "local fs = require \"fleetsim\"\n"
    "return fs.scenario { duration = \"2m\", warmup = \"20s\",\n"
    "  pools = { p = fs.dedicated { gpu = \"H100-SXM\", count = 1 }, d = fs.dedicated { gpu = \"H100-SXM\", count = 1 }, c = fs.cloud { gpu = \"H100-SXM\", count = 2, max = 2 }, b = fs.dedicated { gpu = \"A100-80GB-SXM\", count = 2 } },\n"
    "  workloads = { chat = fs.inference { model = \"llama-3-8b\", pool = \"p\", tp = 1, arrivals = fs.poisson { rate = 20 }, prompt = 3000, output = 50, max_wait = \"30s\",\n"
    "    %s } } }\n";

static char *write_scenario(const char *name, const char *line)
{
    char text[4096];
    snprintf(text, sizeof text, SCENARIO, line);
    return scratch_file(dir, name, text);
}

/* The summary.csv of a run of the whole scenario `text` into dir/<folder>, with the
 * extra options `options` (the caller frees). */
static char *run_text(const char *text, const char *options, const char *folder)
{
    char *path = scratch_file(dir, "t.lua", text);
    cr_assert_eq(cli_run(&out, &err, "run %s -q --no-plots %s -o %s/%s", path, options, dir,
                         folder), 0, "%s", err);
    free(path);
    char csv[512];
    snprintf(csv, sizeof csv, "%s/%s/summary.csv", dir, folder);
    char *summary = scratch_read(csv);
    cr_assert_not_null(summary);
    return summary;
}

/* The summary.csv of a run of `line`'s scenario into dir/<folder> (the caller frees). */
static char *summary_of(const char *line, const char *folder)
{
    char text[4096];
    snprintf(text, sizeof text, SCENARIO, line);
    return run_text(text, "", folder);
}

/* The timeseries.csv of a run into dir/<folder> (release t). */
static void read_timeseries(const char *folder, csv_table *t)
{
    char path[512], msg[256];
    snprintf(path, sizeof path, "%s/%s/timeseries.csv", dir, folder);
    cr_assert_eq(csv_table_read(path, t, msg, sizeof msg), 0, "%s", msg);
}

static double row(const char *csv, const char *scope, const char *subject, const char *metric)
{
    summary_row r = scratch_summary_row(csv, scope, subject, metric);
    cr_assert(r.found, "%s %s %s", scope, subject, metric);
    return r.value;
}

Test(groups_scenario, the_list_states_what_the_shorthands_state_to_the_byte)
{
    char *shorthand = summary_of("overflow = \"c\", overflow_threshold = 4, "
                                 "decode = { pool = \"d\", routing = \"round_robin\" }", "s");
    char *listed = summary_of("overflow_threshold = 4, groups = { { role = \"decode\", "
                              "pool = \"d\", routing = \"round_robin\" }, { role = "
                              "\"overflow\", pool = \"c\" } }", "l");
    cr_expect_str_eq(listed, shorthand);
    cr_expect_gt(row(listed, "workload", "chat", "overflow_fraction"), 0);
    free(shorthand);
    free(listed);
}

/* "prefill" names a serve pool where a decode pool takes over: the same bytes as
 * "serve", and check says the pool prefills. */
Test(groups_scenario, a_prefill_pool_is_a_serve_pool_beside_a_decode_pool)
{
    char *serve = summary_of("groups = { { role = \"serve\", pool = \"b\" }, { role = "
                             "\"decode\", pool = \"d\" } }", "s");
    char *prefill = summary_of("groups = { { role = \"prefill\", pool = \"b\" }, { role = "
                               "\"decode\", pool = \"d\" } }", "p");
    cr_expect_str_eq(prefill, serve);
    cr_expect_gt(row(prefill, "pool", "b", "busy_fraction"), 0);
    free(serve);
    free(prefill);
    char *path = write_scenario("s.lua", "groups = { { role = \"prefill\", pool = \"b\" }, "
                                "{ role = \"decode\", pool = \"d\" } }");
    cr_assert_eq(cli_run(&out, &err, "check %s", path), 0, "%s", err);
    cr_expect(strstr(out, "    also prefilled on b: 2 replicas of tp 1 (chosen)") != NULL, "%s",
              out);
    /* its own links: its GPUs' family network, 400 Gb/s a device (models/perf_constants.c), at
     * tp 1, and its latency */
    cr_expect(strstr(out, "    kv link from b per_replica, 50 GB/s, latency 1e-05 s") != NULL,
              "%s", out);
    free(path);
}

/* Two overflow pools in a cascade: the first saturates at 2 a replica, so the second
 * serves too; each pool's share is reported and they add up to the workload's. */
Test(groups_scenario, an_overflow_cascade_reports_each_pools_share)
{
    char *csv = summary_of("overflow_threshold = 2, groups = { { role = \"overflow\", pool = "
                           "\"c\", threshold = 2 }, { role = \"overflow\", pool = \"b\" } }",
                           "o");
    double first = row(csv, "pool", "c", "overflow_fraction");
    double second = row(csv, "pool", "b", "overflow_fraction");
    cr_expect_gt(first, 0);
    cr_expect_gt(second, 0);
    cr_expect_float_eq(first + second, row(csv, "workload", "chat", "overflow_fraction"), 1e-12);
    free(csv);
}

/* timeseries.csv gives each of a workload's pools its own rows: what its replicas did
 * (utilization, batch, cache, replicas) and, where there are several pools, what it
 * served.  Behind a prefill pool its decode pool completes every request, so the prefill
 * pool serves none; the decode and the overflow pool together serve what the workload
 * completed, bucket by bucket; a pool no workload uses has no such rows. */
Test(groups_scenario, each_pool_reports_over_time_what_its_replicas_did_and_served)
{
    char *csv = summary_of("overflow_threshold = 2, groups = { { role = \"decode\", pool = "
                           "\"d\" }, { role = \"overflow\", pool = \"c\" } }", "t");
    free(csv);
    csv_table t;
    read_timeseries("t", &t);
    long scope = csv_table_column(&t, "scope"), subject = csv_table_column(&t, "subject");
    long start = csv_table_column(&t, "bucket_start_s");
    long served = csv_table_column(&t, "throughput_per_s");
    long tokens = csv_table_column(&t, "throughput_tokens_per_s");
    long busy = csv_table_column(&t, "utilization"), replicas = csv_table_column(&t, "replicas");
    enum { BUCKETS = 128 };
    double starts[BUCKETS], workload[BUCKETS][2], pools[BUCKETS][2];
    size_t nbuckets = 0, decoded = 0, overflowed = 0, busy_rows[4] = { 0 };
    for (size_t r = 0; r < t.rows; r++) {
        const char *sc = csv_table_cell(&t, r, scope), *name = csv_table_cell(&t, r, subject);
        double at = csv_table_number(&t, r, start);
        size_t b = 0;
        while (b < nbuckets && starts[b] != at)
            b++;
        if (b == nbuckets) {
            cr_assert_lt(nbuckets, BUCKETS);
            starts[nbuckets++] = at;
            workload[b][0] = workload[b][1] = pools[b][0] = pools[b][1] = 0;
        }
        if (!strcmp(sc, "workload")) {
            workload[b][0] = csv_table_number(&t, r, served);
            workload[b][1] = csv_table_number(&t, r, tokens);
            continue;
        }
        if (!strcmp(sc, "pool") && strchr("pdcb", name[0]) && !name[1]) {
            double x = csv_table_number(&t, r, served);
            if (name[0] == 'b') {
                cr_expect(isnan(x) && isnan(csv_table_number(&t, r, busy)), "pool b, unused");
                continue;
            }
            cr_assert(!isnan(x), "pool %s at %g serves", name, at);
            pools[b][0] += x;
            pools[b][1] += csv_table_number(&t, r, tokens);
            if (name[0] == 'p')
                cr_expect_eq(x, 0, "the prefill pool completes nothing at %g", at);
            if (name[0] == 'd') {
                decoded += x > 0;
                cr_expect_float_eq(csv_table_number(&t, r, replicas), 1, 1e-12,
                                   "one decode replica at %g", at);
            }
            overflowed += name[0] == 'c' && x > 0;
            busy_rows[strchr("pdc", name[0]) - "pdc"] += !isnan(csv_table_number(&t, r, busy));
        }
    }
    csv_table_release(&t);
    cr_assert_gt(nbuckets, 2);
    for (size_t b = 0; b < nbuckets; b++)
        for (int k = 0; k < 2; k++)
            cr_expect_float_eq(pools[b][k], workload[b][k], 1e-9 * (1 + workload[b][k]),
                               "bucket at %g, %s: pools %g, workload %g", starts[b],
                               k ? "tokens" : "requests", pools[b][k], workload[b][k]);
    cr_expect_gt(decoded, 0);
    cr_expect_gt(overflowed, 0);
    for (int k = 0; k < 3; k++)
        cr_expect_eq(busy_rows[k], nbuckets, "pool %c's utilization in every bucket", "pdc"[k]);
}

/* A serve group routed by a Lua function equals the built-in least outstanding policy
 * to the byte: the function is bound through the list (groups.1.routing). */
Test(groups_scenario, a_serve_groups_lua_routing_equals_the_built_in_policy)
{
    char *builtin = summary_of("groups = { { role = \"serve\", pool = \"b\", routing = "
                               "\"least_outstanding\" } }", "b");
    char *lua = summary_of("groups = { { role = \"serve\", pool = \"b\", routing = "
                           "function(replicas, request) local best = 1 for i = 2, #replicas "
                           "do if replicas[i].outstanding < replicas[best].outstanding then "
                           "best = i end end return best end } }", "f");
    cr_expect_str_eq(lua, builtin);
    cr_expect_gt(row(lua, "pool", "b", "busy_fraction"), 0);
    free(builtin);
    free(lua);
    char *path = write_scenario("s.lua", "groups = { { role = \"serve\", pool = \"b\" } }");
    cr_assert_eq(cli_run(&out, &err, "check %s", path), 0, "%s", err);
    cr_expect(strstr(out, "    also served on b: 2 replicas of tp 1 (chosen), routing "
                          "least_outstanding") != NULL, "%s", out);
    free(path);
}

/* Pools that start with no GPUs order them for the demand they would have taken: an
 * overflow pool the cascade passes over (it counts as saturated while empty), and a
 * serve pool beside a busy one.  Both used to stay empty (the first only counted demand
 * for the cascade's last pool, the second never). */
Test(groups_scenario, pools_from_zero_grow_for_the_demand_passed_over)
{
    const char *cascade =
        "local fs = require \"fleetsim\"\n"
        "return fs.scenario { duration = \"10m\", warmup = \"1m\",\n"
        "  pools = { owned = fs.dedicated { gpu = \"H100-SXM\", count = 1 },\n"
        "    burst = fs.cloud { gpu = \"H100-SXM\", count = 0, min = 0, max = 4, provision = \"1m\",\n"
        "      autoscaler = fs.autoscaler { metric = \"queue\", target = 8 } },\n"
        "    last = fs.dedicated { gpu = \"H100-SXM\", count = 1 } },\n"
        "  workloads = { chat = fs.inference { model = \"llama-3.1-8b\", pool = \"owned\", tp = 1,\n"
        "    arrivals = fs.poisson { rate = 30 }, prompt = 1000, output = 250, max_wait = \"60s\",\n"
        "    overflow_threshold = 8, groups = { { role = \"overflow\", pool = \"burst\", threshold = 8 },\n"
        "      { role = \"overflow\", pool = \"last\" } } } } }\n";
    char *csv = run_text(cascade, "", "c");
    cr_expect_geq(row(csv, "pool", "burst", "replicas_max"), 1);
    cr_expect_gt(row(csv, "pool", "burst", "overflow_fraction"), 0);
    free(csv);
    const char *serve =
        "local fs = require \"fleetsim\"\n"
        "return fs.scenario { duration = \"10m\", warmup = \"1m\",\n"
        "  pools = { owned = fs.dedicated { gpu = \"H100-SXM\", count = 1 },\n"
        "    burst = fs.cloud { gpu = \"H100-SXM\", count = 0, min = 0, max = 4, provision = \"1m\",\n"
        "      autoscaler = fs.autoscaler { metric = \"queue\", target = 8 } } },\n"
        "  workloads = { chat = fs.inference { model = \"llama-3.1-8b\", pool = \"owned\", tp = 1,\n"
        "    arrivals = fs.poisson { rate = 30 }, prompt = 1000, output = 250, max_wait = \"60s\",\n"
        "    groups = { { role = \"serve\", pool = \"burst\" } } } } }\n";
    csv = run_text(serve, "", "s");
    cr_expect_geq(row(csv, "pool", "burst", "replicas_max"), 2);
    cr_expect_gt(row(csv, "pool", "burst", "busy_fraction"), 0);
    free(csv);
}

/* Two decode pools from zero, each with an autoscaler (every 30 s) and a 1-minute
 * provision: the caches that wait for a decode replica are the first pool's demand
 * alone, so it orders one at 30 s, ready at 90 s, and the second orders none while
 * nothing is ready.  Only once the first serves does the second see demand (a cache
 * would have gone to its idle first replica): ordered at 90 s at the earliest, ready
 * at 150 s.  Each pool counting the whole waiting list had both ready at 90 s. */
Test(groups_scenario, a_waiting_list_is_the_demand_of_its_first_pool_that_can_grow)
{
    const char *text =
        "local fs = require \"fleetsim\"\n"
        "return fs.scenario { duration = \"3m\", bucket = \"10s\",\n"
        "  pools = { own = fs.dedicated { gpu = \"H100-SXM\", count = 1 },\n"
        "    d1 = fs.cloud { gpu = \"H100-SXM\", count = 0, min = 0, max = 4, provision = \"1m\",\n"
        "      autoscaler = fs.autoscaler { metric = \"queue\", target = 64 } },\n"
        "    d2 = fs.cloud { gpu = \"H100-SXM\", count = 0, min = 0, max = 4, provision = \"1m\",\n"
        "      autoscaler = fs.autoscaler { metric = \"queue\", target = 64 } } },\n"
        "  workloads = { chat = fs.inference { model = \"llama-3.1-8b\", pool = \"own\", tp = 1,\n"
        "    arrivals = fs.poisson { rate = 10 }, prompt = 500, output = 100, max_wait = \"5m\",\n"
        "    groups = { { role = \"decode\", pool = \"d1\" }, { role = \"decode\", pool = \"d2\" } } } } }\n";
    free(run_text(text, "", "z"));
    csv_table t;
    read_timeseries("z", &t);
    long subject = csv_table_column(&t, "subject"), start = csv_table_column(&t, "bucket_start_s");
    long replicas = csv_table_column(&t, "replicas");
    unsigned seen[2] = { 0 };
    for (size_t r = 0; r < t.rows; r++) {
        const char *name = csv_table_cell(&t, r, subject);
        if (strcmp(name, "d1") && strcmp(name, "d2"))
            continue;
        bool first = !strcmp(name, "d1");
        double at = csv_table_number(&t, r, start), n = csv_table_number(&t, r, replicas);
        seen[!first]++;
        if (first)
            cr_expect_float_eq(n, at < 90 ? 0 : 1, 1e-12, "d1 at %g s: %g replicas", at, n);
        else if (at < 150)
            cr_expect_float_eq(n, 0, 1e-12, "d2 at %g s: %g replicas", at, n);
        else
            cr_expect_geq(n, 1, "d2 at %g s: grown for the demand it missed", at);
    }
    csv_table_release(&t);
    cr_expect_eq(seen[0], 18);
    cr_expect_eq(seen[1], 18);
}

/* Disaggregated with an overflow pool: a request that waited for a prefill replica (the
 * only one fails every 5 minutes) and then spills whole to the overflow pool makes all
 * its 300 tokens there, each a decode step (at least 1 ms on an H100).  It used to keep
 * the single token it had asked the prefill for and end after it: counted complete, with
 * 300 tokens, at a TPOT of 0. */
Test(groups_scenario, a_request_that_spills_after_waiting_makes_its_whole_answer)
{
    const char *text =
        "local fs = require \"fleetsim\"\n"
        "return fs.scenario { duration = \"20m\",\n"
        "  pools = { own = fs.dedicated { gpu = \"H100-SXM\", count = 1, mtbf = \"5m\", repair = \"1m\" },\n"
        "    dec = fs.dedicated { gpu = \"H100-SXM\", count = 2 },\n"
        "    cloud = fs.cloud { gpu = \"H100-SXM\", count = 0, min = 0, max = 2, provision = \"30s\",\n"
        "      autoscaler = fs.autoscaler { metric = \"queue\", target = 8, scale_in_delay = \"30s\" } } },\n"
        "  workloads = { chat = fs.inference { model = \"llama-3.1-8b\", pool = \"own\", tp = 1,\n"
        "    arrivals = fs.poisson { rate = 5 }, prompt = 1000, output = 300, max_wait = \"120s\",\n"
        "    overflow = \"cloud\", overflow_threshold = 4, decode = { pool = \"dec\" } } } }\n";
    char *csv = run_text(text, "--records", "r");
    cr_expect_gt(row(csv, "workload", "chat", "overflow_fraction"), 0);
    free(csv);
    char path[512];
    snprintf(path, sizeof path, "%s/r/requests.csv", dir);
    char *records = scratch_read(path);
    cr_assert_not_null(records);
    unsigned completed = 0, whole = 0;
    /* replication,workload,id,arrival,admitted,first,finish,prompt,output,ttft,tpot,e2e,
     * rtt,dropped: the 11th field and the 14th */
    for (char *line = strchr(records, '\n'); line && line[1]; line = strchr(line + 1, '\n')) {
        char copy[512];
        size_t n = strcspn(line + 1, "\n");
        cr_assert_lt(n, sizeof copy);
        memcpy(copy, line + 1, n);
        copy[n] = 0;
        char *fields[14] = { copy };
        int k = 1;
        for (char *at = copy; *at && k < 14; at++)
            if (*at == ',') {
                *at = 0;
                fields[k++] = at + 1;
            }
        cr_assert_eq(k, 14, "%s", line + 1);
        bool dropped = !strcmp(fields[13], "1");
        completed += !dropped;
        whole += !dropped && atof(fields[10]) > 1e-3;
    }
    cr_expect_gt(completed, 1000);
    cr_expect_eq(whole, completed, "%u of %u completed requests decoded their tokens", whole,
                 completed);
    free(records);
}

/* Each mistake: exit 2, file:line, the key and what was expected, nothing written. */
static void expect_mistake(const char *line, const char *message)
{
    char *path = write_scenario("m.lua", line);
    cr_expect_eq(cli_run(&out, &err, "run %s -q --no-plots -o %s/m", path, dir), 2, "%s", line);
    cr_expect(strstr(err, "m.lua:4: ") != NULL, "located: %s", err);
    cr_expect(strstr(err, message) != NULL, "expected '%s' in: %s", message, err);
    char o[512];
    snprintf(o, sizeof o, "%s/m/summary.csv", dir);
    char *written = scratch_read(o);
    cr_expect_null(written, "nothing written");
    free(written);
    free(path);
}

Test(groups_scenario, mistakes_name_the_key_and_the_value)
{
    expect_mistake("groups = { { role = \"decode\", pool = \"d\" } }, overflow = \"c\"",
                   "workloads.chat.overflow: the workload states its groups in groups = "
                   "{ ... }: give this pool there, with its role");
    expect_mistake("groups = { { pool = \"d\" } }", "workloads.chat.groups[1].role: missing");
    expect_mistake("groups = { { role = \"prefil\", pool = \"d\" } }",
                   "workloads.chat.groups[1].role");
    expect_mistake("groups = { { role = \"prefill\", pool = \"b\" } }",
                   "workloads.chat.groups[1].role: \"prefill\" makes the first token and hands "
                   "the request to a decode pool");
    expect_mistake("groups = { { role = \"overflow\", pool = \"c\" }, { role = \"decode\", "
                   "pool = \"c\" } }",
                   "workloads.chat.groups[2].pool: \"c\" is the overflow pool already; a pool "
                   "serves a workload in one role (give another pool)");
    expect_mistake("groups = { { role = \"decode\", pool = \"p\" } }",
                   "workloads.chat.groups[1].pool: \"p\" is the workload's own (prefill) pool");
    expect_mistake("groups = { { role = \"decode\", pool = \"d\", threshold = 4 } }",
                   "workloads.chat.groups[1].threshold: a decode pool takes no new requests");
    expect_mistake("groups = { { role = \"serve\", pool = \"b\", weight = 2 } }",
                   "workloads.chat.groups[1].weight");
    expect_mistake("groups = { { role = \"overflow\", pool = \"c\", threshold = 4 } }",
                   "workloads.chat.groups[1].threshold: the cascade's last pool takes whatever "
                   "reaches it, so nothing spills past it");
    expect_mistake("groups = { { role = \"serve\", pool = \"b\", threshold = 4 } }",
                   "workloads.chat.groups[1].threshold: the workload has no overflow pool");
    expect_mistake("groups = {}", "workloads.chat.groups: expected a list of 1 to 7 groups");
    expect_mistake("groups = { [1] = { role = \"serve\", pool = \"b\" }, [3] = { role = "
                   "\"overflow\", pool = \"c\" } }", "workloads.chat.groups: expected a list "
                   "of 1 to 7 groups");
    expect_mistake("groups = { { role = \"serve\", pool = \"b\" }, x = 1 }",
                   "got a table with keys beside its list of 1");
    expect_mistake("groups = { { role = \"serve\", pool = \"b\" } }, kv_link = { bandwidth = "
                   "\"50GB/s\" }", "workloads.chat.kv_link: a link for disaggregated serving; "
                   "give a decode group ({ role = \"decode\", pool = ... }) too");
    expect_mistake("groups = { { role = \"serve\", pool = \"b\", routing = "
                   "\"prefix_affinity\" } }", "workloads.chat.groups[1].routing: "
                   "\"prefix_affinity\" routes by the replicas' prefix caches");
}
