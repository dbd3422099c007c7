/* Several models on one pool: cold starts, scaling to zero, the least recently used
 * idle model giving way (models/pool_tenants.h), through the binary with requests at
 * constant rates (fs.constant_rate: the k-th at k / rate), so every figure is
 * hand-computable; the arbiter alone; and the mistakes. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lua/catalog.h"
#include "lua/cold_start_load.h"
#include "models/memory.h"
#include "models/pool_tenants.h"
#include "models/serving_fleet.h"
#include "tests/support/cli.h"
#include "tests/support/scratch.h"

static char *dir, *out, *err;

static void setup(void)
{
    serving_fleet_check_rankings(true); /* every routing also against a look at each replica */
    dir = scratch_dir();
    out = err = NULL;
}

static void teardown(void)
{
    scratch_remove_dir(dir);
    free(out);
    free(err);
}

TestSuite(shared_pool, .init = setup, .fini = teardown, .timeout = 120);

/* Runs the scenario text (written to s.lua) with --records; its summary. */
static char *run(const char *text)
{
    char *file = scratch_file(dir, "s.lua", text);
    int rc = cli_run(&out, &err, "run %s -q --no-plots --records -o %s/out", file, dir);
    free(file);
    cr_assert_eq(rc, 0, "%s", err);
    char path[512];
    snprintf(path, sizeof path, "%s/out/summary.csv", dir);
    char *csv = scratch_read(path);
    cr_assert_not_null(csv);
    return csv;
}

static double row(const char *csv, const char *subject, const char *metric)
{
    summary_row r = scratch_summary_row(csv, "workload", subject, metric);
    cr_assert(r.found, "%s %s", subject, metric);
    return r.value;
}

/* The finish time of request id of workload w in requests.csv. */
static double finish_of(const char *w, int id)
{
    char path[512];
    snprintf(path, sizeof path, "%s/out/requests.csv", dir);
    char *csv = scratch_read(path);
    cr_assert_not_null(csv);
    char key[64];
    snprintf(key, sizeof key, "\n0,%s,%d,", w, id);
    const char *at = strstr(csv, key);
    cr_assert_not_null(at, "%s in requests.csv", key);
    double arrival, admitted, first, finish;
    cr_assert_eq(sscanf(at + strlen(key), "%lf,%lf,%lf,%lf", &arrival, &admitted, &first,
                        &finish), 4);
    free(csv);
    return finish;
}

#define HEAD "local fs = require \"fleetsim\"\nreturn fs.scenario { warmup = 0, bucket = \"5s\",\n"
#define EVERY(s) "arrivals = fs.constant_rate { rate = 1 / " #s " }, prompt = 500, output = 50"

Test(shared_pool, a_cold_start_adds_its_load_to_the_first_token)
{
    /* one request, at 40 s */
    char *csv = run(HEAD "  duration = \"70s\",\n"
        "  pools = { cold = fs.dedicated { gpu = \"H100-SXM\", count = 1 },\n"
        "            warm = fs.dedicated { gpu = \"H100-SXM\", count = 1 } },\n"
        "  workloads = {\n"
        "    cold = fs.inference { model = \"llama-3.1-8b\", pool = \"cold\", tp = 1, replicas = 1,\n"
        "      scale_to_zero = \"1m\", cold_start = \"20s\", max_wait = \"1m\", " EVERY(40) " },\n"
        "    warm = fs.inference { model = \"llama-3.1-8b\", pool = \"warm\", tp = 1, " EVERY(40) " } } }\n");
    /* the same request, waiting 20 s for the weights first */
    cr_expect_float_eq(row(csv, "cold", "ttft_mean_s") - row(csv, "warm", "ttft_mean_s"), 20,
                       1e-9);
    cr_expect_eq(row(csv, "cold", "cold_starts"), 1);
    cr_expect_eq(row(csv, "cold", "cold_start_waits"), 1);
    cr_expect_float_eq(row(csv, "cold", "cold_start_wait_mean_s"), 20, 1e-9);
    free(csv);
}

Test(shared_pool, scaling_to_zero_gives_the_gpu_back_after_the_idle_time)
{
    /* requests at 50, 100, 150, 200 s; a load takes 20 s and the replica goes 45 s
     * after its last request ends.  50: cold (loaded at 70, done at about 70.4); 100:
     * still loaded (idle 29.6 s); given back 45 s after it ends; 150: cold again; 200:
     * loaded; held to the end (240 s) */
    char *csv = run(HEAD "  duration = \"240s\",\n"
        "  pools = { p = fs.dedicated { gpu = \"H100-SXM\", count = 1 } },\n"
        "  workloads = {\n"
        "    w = fs.inference { model = \"llama-3.1-8b\", pool = \"p\", tp = 1, replicas = 1,\n"
        "      scale_to_zero = \"45s\", cold_start = \"20s\", " EVERY(50) " } } }\n");
    cr_expect_eq(row(csv, "w", "cold_starts"), 2);
    cr_expect_eq(row(csv, "w", "cold_start_waits"), 2);
    double held_s = (finish_of("w", 1) + 45 - 50) + (240 - 150);
    cr_expect_float_eq(row(csv, "w", "gpus_held_mean"), held_s / 240, 1e-9,
                       "held %g s over 240", held_s);
    free(csv);
}

Test(shared_pool, the_least_recently_used_idle_model_gives_way)
{
    /* two GPUs, three models loaded on demand, a load 5 s: a every 100 s, b every 160 s,
     * c every 250 s.  100: a loads; 160: b loads; 200: a is loaded; 250: c finds both
     * idle and takes b's GPU (b used last at 160, a at 200); 300: a is loaded; 320: b
     * takes c's (c used at 255, a at 300) */
    const char *model = "fs.inference { model = \"llama-3.1-8b\", pool = \"p\", tp = 1, "
                        "replicas = 1, scale_to_zero = \"1h\", cold_start = \"5s\", ";
    char text[2048];
    snprintf(text, sizeof text, HEAD "  duration = \"330s\",\n"
             "  pools = { p = fs.dedicated { gpu = \"H100-SXM\", count = 2 } },\n"
             "  workloads = {\n"
             "    a = %s " EVERY(100) " },\n"
             "    b = %s " EVERY(160) " },\n"
             "    c = %s " EVERY(250) " } } }\n", model, model, model);
    char *csv = run(text);
    cr_expect_eq(row(csv, "a", "cold_starts"), 1);
    cr_expect_eq(row(csv, "b", "cold_starts"), 2);
    cr_expect_eq(row(csv, "c", "cold_starts"), 1);
    cr_expect_eq(row(csv, "a", "cold_start_waits"), 1);
    /* every wait is one load: the GPU it took was idle */
    const char *all[] = { "a", "b", "c" };
    for (int i = 0; i < 3; i++)
        cr_expect_float_eq(row(csv, all[i], "cold_start_wait_max_s"), 5, 1e-9, "%s", all[i]);
    free(csv);
}

Test(shared_pool, the_default_cold_start_is_the_weights_over_the_measured_load_rate)
{
    char *csv = run(HEAD "  duration = \"30s\",\n"
        "  pools = { p = fs.dedicated { gpu = \"H100-SXM\", count = 2 } },\n"
        "  workloads = {\n"
        "    a = fs.inference { model = \"llama-3.1-8b\", pool = \"p\", tp = 1, replicas = 1, "
        EVERY(10) " },\n"
        "    b = fs.inference { model = \"llama-3.1-8b\", pool = \"p\", tp = 1, replicas = 1,\n"
        "      cold_start = { bandwidth = \"4GB/s\", fixed = \"3s\" }, " EVERY(10) " } } }\n");
    catalog cat;
    char why[256];
    cr_assert_eq(catalog_load(&cat, why, sizeof why), 0, "%s", why);
    const model_spec *m = catalog_model(&cat, "llama-3.1-8b");
    double weights = memory_inference_for(m, catalog_device(&cat, "H100-SXM"), PREC_FP16,
                                          PREC_FP16, 1, false, NULL).weights_bytes;
    catalog_release(&cat);
    cr_expect_float_eq(row(csv, "a", "cold_start_s"), weights / COLD_START_BANDWIDTH, 1e-12);
    cr_expect_float_eq(row(csv, "b", "cold_start_s"), 3 + weights / 4e9, 1e-12);
    /* 16 GB of weights over ServerlessLLM's 1.67 GB/s: about 9.6 s */
    cr_expect(row(csv, "a", "cold_start_s") > 9 && row(csv, "a", "cold_start_s") < 10.5);
    /* both were loaded at the start: no cold start, no wait */
    cr_expect_eq(row(csv, "a", "cold_starts"), 0);
    cr_expect_eq(row(csv, "b", "cold_start_waits"), 0);
    free(csv);
}

/* Packing: two models on the units of one time-sliced GPU share it as two replicas of
 * one model do, and the same model with the other unit idle runs alone at full speed.
 * Hand-derived equivalences: (1) a and b, one request each at 40 s on a GPU of two
 * tenants, busy together, take what two requests at once take on two replicas of one
 * model on such a GPU (trace rows at 0 s; the same model, lengths and sharing); (2) a's request alone (b's comes once a has finished) takes what
 * one request takes alone on a GPU of its own, and is faster than when b is busy. */
Test(shared_pool, models_packed_on_one_gpu_share_it_as_its_replicas_would)
{
    char *trace = scratch_file(dir, "t.csv", "TIMESTAMP,ContextTokens,GeneratedTokens\n"
                               "0,500,50\n0,500,50\n");
    char text[4096];
    snprintf(text, sizeof text, HEAD "  duration = \"70s\",\n"
        "  pools = { packed = fs.dedicated { gpu = \"H100-SXM\", count = 1,\n"
        "              time_slicing = fs.time_slicing { tenants = 2 } },\n"
        "            sliced = fs.dedicated { gpu = \"H100-SXM\", count = 1,\n"
        "              time_slicing = fs.time_slicing { tenants = 2 } },\n"
        "            apart = fs.dedicated { gpu = \"H100-SXM\", count = 1,\n"
        "              time_slicing = fs.time_slicing { tenants = 2 } },\n"
        "            alone = fs.dedicated { gpu = \"H100-SXM\", count = 1,\n"
        "              time_slicing = fs.time_slicing { tenants = 2 } } },\n"
        "  workloads = {\n"
        "    a = fs.inference { model = \"llama-3.1-8b\", pool = \"packed\", tp = 1, "
        "replicas = 1, " EVERY(40) " },\n"
        "    b = fs.inference { model = \"llama-3.1-8b\", pool = \"packed\", tp = 1, "
        "replicas = 1, " EVERY(40) " },\n"
        "    two = fs.inference { model = \"llama-3.1-8b\", pool = \"sliced\", tp = 1, "
        "replicas = 2, arrivals = fs.trace { file = \"t.csv\" } },\n"
        "    first = fs.inference { model = \"llama-3.1-8b\", pool = \"apart\", tp = 1, "
        "replicas = 1, " EVERY(40) " },\n"
        "    later = fs.inference { model = \"llama-3.1-8b\", pool = \"apart\", tp = 1, "
        "replicas = 1, arrivals = fs.constant_rate { rate = 1 / 60 }, prompt = 500, output = 50 },\n"
        "    solo = fs.inference { model = \"llama-3.1-8b\", pool = \"alone\", tp = 1, "
        "replicas = 1, " EVERY(40) " } } }\n");
    char *csv = run(text);
    /* the first to arrive plans its first iteration before the second is busy, in both
     * pools alike: the pairs match one to one, so their means do */
    double both = (row(csv, "a", "e2e_mean_s") + row(csv, "b", "e2e_mean_s")) / 2;
    cr_expect_float_eq(row(csv, "two", "e2e_mean_s"), both, 1e-9,
                       "two models on a GPU as two replicas of one: %.12g against %.12g",
                       row(csv, "two", "e2e_mean_s"), both);
    cr_expect_float_eq(row(csv, "first", "e2e_mean_s"), row(csv, "solo", "e2e_mean_s"), 1e-12,
                       "the other unit idle: full speed");
    cr_expect(both > 1.5 * row(csv, "solo", "e2e_mean_s"), "turns on the GPU: %g against %g",
              both, row(csv, "solo", "e2e_mean_s"));
    free(csv);
    free(trace);
}

static void expect_refused(const char *pools, const char *workloads, const char *message)
{
    char text[2048];
    snprintf(text, sizeof text, HEAD "  duration = \"1h\",\n  pools = { %s },\n  workloads = { %s } }\n", pools,
             workloads);
    char *file = scratch_file(dir, "s.lua", text);
    cr_expect_eq(cli_run(&out, &err, "check %s", file), 2, "%s", out);
    cr_expect(strstr(err, message) != NULL, "wanted \"%s\" in: %s", message, err);
    cr_expect(strstr(err, file) == err, "names the file: %s", err);
    free(file);
}

#define W(name, extra) name " = fs.inference { model = \"llama-3.1-8b\", pool = \"p\", tp = 1, " \
                       "arrivals = fs.poisson { rate = 1 }, prompt = 100, output = 10, "      \
                       "max_wait = \"1m\", " extra " }, "

Test(shared_pool, the_mistakes_are_named)
{
    expect_refused("p = fs.dedicated { gpu = \"H100-SXM\", count = 2 }",
                   W("a", "replicas = 1") W("b", ""),
                   "pools.p: is shared by several models: workload \"b\" must say how many "
                   "replicas it has (replicas = N)");
    expect_refused("p = fs.dedicated { gpu = \"H100-SXM\", count = 2 }",
                   W("a", "replicas = 2") W("b", "replicas = 1"),
                   "pools.p: its models' replicas that do not scale to zero need 3 GPUs; it has 2");
    expect_refused("p = fs.dedicated { gpu = \"H100-SXM\", count = 1, "
                   "time_slicing = fs.time_slicing { tenants = 2 } }",
                   W("a", "replicas = 2") W("b", "replicas = 1"),
                   "pools.p: its models' replicas that do not scale to zero need 3 units (MIG "
                   "slices or time-slicing shares); it has 2");
    expect_refused("p = fs.dedicated { gpu = \"H100-SXM\", count = 2 }",
                   W("a", "replicas = 3"),
                   "workloads.a.replicas: 3 is over the limit of 2");
    expect_refused("p = fs.dedicated { gpu = \"H100-SXM\", count = 2 }",
                   W("a", "replicas = 1, cold_start = { bandwith = \"1GB/s\" }"),
                   "workloads.a.cold_start.bandwith: unknown key 'bandwith' (did you mean 'bandwidth'?)");
    expect_refused("p = fs.cloud { gpu = \"H100-SXM\", count = 1, max = 4, "
                   "autoscaler = fs.autoscaler { metric = \"queue\", target = 4 } }",
                   W("a", "scale_to_zero = \"1m\""),
                   "workload \"a\" scales to zero here, which is not with an autoscaler on the pool");
}

/* ---- the arbiter alone ------------------------------------------------------------- */

typedef struct fake {
    double used;      /* last used; INFINITY: busy */
    bool can_give;
    int gave, retried;
} fake;

static double fake_used(void *t) { return ((fake *)t)->used; }
static bool fake_give(void *t)
{
    fake *f = t;
    if (!f->can_give)
        return false;
    f->gave++;
    return true;
}
static void fake_retry(void *t) { ((fake *)t)->retried++; }
static const pool_tenant_ops FAKE = { fake_used, fake_give, fake_retry };

Test(shared_pool, the_arbiter_asks_the_least_recently_used_first_and_skips_the_busy)
{
    sim_engine *e = sim_engine_create();
    pool_capacity cap = { .kind = POOL_DEDICATED, .count = 1 };
    char why[256];
    gpu_pool *pool = gpu_pool_create(e, &cap, "p", 1, 0, why, sizeof why);
    cr_assert_not_null(pool, "%s", why);
    pool_tenants *t = pool_tenants_create(e, pool);
    fake busy = { INFINITY, true, 0, 0 }, floor = { 2, false, 0, 0 }, old = { 5, true, 0, 0 },
         newer = { 9, true, 0, 0 }, asker = { 1, true, 0, 0 };
    fake *all[] = { &busy, &floor, &old, &newer, &asker };
    for (int i = 0; i < 5; i++)
        pool_tenants_add(t, &FAKE, all[i]);
    /* floor (2) is the least recently used but at its floor; old (5) gives; the asker
     * itself (1) is never asked; busy never */
    cr_expect(pool_tenants_short(t, &asker));
    cr_expect_eq(floor.gave + old.gave + newer.gave + busy.gave + asker.gave, 1);
    cr_expect_eq(old.gave, 1);
    cr_expect_eq(pool_tenants_evictions(t), 1);
    /* the asker waits: when a tenant goes idle it is asked to try again, at this instant */
    pool_tenants_idle(t);
    cr_expect_eq(asker.retried, 0, "not inside the caller");
    sim_engine_run_until(e, 1);
    cr_expect_eq(asker.retried, 1);
    /* nobody can give: false, nothing taken */
    old.can_give = newer.can_give = false;
    cr_expect(!pool_tenants_short(t, &asker));
    cr_expect_eq(pool_tenants_evictions(t), 1);
    pool_tenants_free(t);
    gpu_pool_free(pool);
    sim_engine_free(e);
}

/* ---- the consolidation scenario ---------------------------------------------------- */

Test(shared_pool, one_pool_serves_five_models_on_three_fifths_of_the_gpus)
{
    cr_assert_eq(cli_run(&out, &err, "run scenarios/consolidation.lua -q --no-plots -o %s/c", dir),
                 0, "%s", err);
    const char *line = strstr(out, "verdict: ");
    cr_assert_not_null(line, "%s", out);
    cr_expect(strstr(line, "-- holds") != NULL, "%s", line);
    const char *tools[] = { "tool_a", "tool_b", "tool_c" };
    double waited[3];
    for (int k = 1; k <= 3; k++) {
        char path[512];
        snprintf(path, sizeof path, "%s/c/points/%d/summary.csv", dir, k);
        char *csv = scratch_read(path);
        cr_assert_not_null(csv, "%s", path);
        /* the same hourly price: three GPUs cost three fifths of five */
        double five = 0;
        const char *own[] = { "own_chat_a", "own_chat_b", "own_tool_a", "own_tool_b", "own_tool_c" };
        for (int i = 0; i < 5; i++)
            five += scratch_summary_row(csv, "pool", own[i], "cost_usd").value;
        cr_expect_float_eq(scratch_summary_row(csv, "pool", "shared", "cost_usd").value / five, 0.6,
                           1e-9);
        /* packed: two whole GPUs and one time-sliced three ways, the same three GPUs */
        cr_expect_float_eq((scratch_summary_row(csv, "pool", "pair", "cost_usd").value
                            + scratch_summary_row(csv, "pool", "packed", "cost_usd").value) / five,
                           0.6, 1e-9);
        double waits = 0, served = 0;
        for (int i = 0; i < 3; i++) {
            char name[32];
            snprintf(name, sizeof name, "one_%s", tools[i]);
            waits += row(csv, name, "cold_start_waits");
            served += row(csv, name, "requests_completed");
            /* a model on its own GPU, or packed and always loaded, never waits for a load */
            snprintf(name, sizeof name, "own_%s", tools[i]);
            cr_expect(!scratch_summary_row(csv, "workload", name, "cold_starts").found);
            snprintf(name, sizeof name, "pk_%s", tools[i]);
            cr_expect_eq(row(csv, name, "cold_starts"), 0);
        }
        waited[k - 1] = waits / served;
        free(csv);
    }
    /* a longer idle time keeps models loaded: fewer requests wait for a load */
    cr_expect_gt(waited[0], waited[1]);
    cr_expect_gt(waited[1], waited[2]);
}
