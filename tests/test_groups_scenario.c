/* groups = { ... } in a scenario (lua/scenario_load.c: convert_groups): the list states
 * what the shorthands decode = and overflow = state, to the byte; a group's Lua routing
 * function is bound through the list; every mistake is named with its key. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* The summary.csv of a run of `line`'s scenario into dir/<folder> (the caller frees). */
static char *summary_of(const char *line, const char *folder)
{
    char *path = write_scenario("s.lua", line);
    cr_assert_eq(cli_run(&out, &err, "run %s -q --no-plots -o %s/%s", path, dir, folder), 0,
                 "%s: %s", line, err);
    free(path);
    char csv[512];
    snprintf(csv, sizeof csv, "%s/%s/summary.csv", dir, folder);
    char *text = scratch_read(csv);
    cr_assert_not_null(text);
    return text;
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
    expect_mistake("groups = { { role = \"prefill\", pool = \"d\" } }",
                   "workloads.chat.groups[1].role: expected one of \"serve\", \"decode\", "
                   "\"overflow\"");
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
    expect_mistake("groups = {}", "workloads.chat.groups: expected a list of 1 to 7 groups");
    expect_mistake("groups = { { role = \"serve\", pool = \"b\" } }, kv_link = { bandwidth = "
                   "\"50GB/s\" }", "workloads.chat.kv_link: a link for disaggregated serving");
    expect_mistake("groups = { { role = \"serve\", pool = \"b\", routing = "
                   "\"prefix_affinity\" } }", "workloads.chat.groups[1].routing: "
                   "\"prefix_affinity\" routes by the replicas' prefix caches");
}
