/* Experiments end to end through the binary: sweeps (order, columns, paired
 * differences), confidence intervals that cover at their stated rate, the search, the
 * same bytes for any --jobs, and mistakes located in the file or on the command line. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <dirent.h>
#include <sys/wait.h>
#include <string.h>
#include <unistd.h>

#include "sim/queueing_theory.h"
#include "support/cli.h"
#include "support/scratch.h"

static char *dir;
static char *out, *err;

static void setup(void) { dir = scratch_dir(); out = err = NULL; }
static void teardown(void)
{
    scratch_remove_dir(dir);
    free(out);
    free(err);
}

TestSuite(sweep, .init = setup, .fini = teardown);

/* M/M/c with mean service 1 s; the sweep line is added by sweep_scenario. */
#define MMC_HEAD                                                                  \
    "local fs = require \"fleetsim\"\n"                                           \
    "return fs.scenario {\n"                                                      \
    "  name = \"mmc\", duration = \"%s\", warmup = \"1h\", bucket = \"1h\",\n"    \
    "  seed = 3, replications = %d,\n"                                            \
    "  pools = { q = fs.dedicated { count = 4 } },\n"                             \
    "  workloads = {\n"                                                           \
    "    mm = fs.service { arrivals = fs.poisson { rate = 3.2 },\n"               \
    "                      service = fs.exponential { mean = \"1s\" }, pool = \"q\" },\n" \
    "  },\n"

/* Writes dir/name: the M/M/c scenario with `extra` (a sweep or search line, or ""). */
static char *mmc_file(const char *name, const char *duration, int replications,
                      const char *extra)
{
    char text[4096];
    snprintf(text, sizeof text, MMC_HEAD "%s\n}\n", duration, replications, extra);
    return scratch_file(dir, name, text);
}

static char *read_in(const char *sub, const char *name)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s/%s", dir, sub, name);
    return scratch_read(path);
}

/* The fields of the rows of a CSV text whose field `col` (from 0) is `value`: up to max
 * rows, each split into fields (the caller frees rows[i][0], which holds them all). */
static size_t rows_where(const char *csv, int col, const char *value, char ***rows, size_t max)
{
    size_t n = 0;
    const char *line = strchr(csv, '\n');
    while (line && line[1] && n < max) {
        line++;
        const char *end = strchr(line, '\n');
        size_t len = end ? (size_t)(end - line) : strlen(line);
        char *copy = strndup(line, len);
        char **fields = calloc(32, sizeof *fields);
        int k = 0;
        for (char *p = copy; k < 32; k++) {
            fields[k] = p;
            char *comma = strchr(p, ',');
            if (!comma)
                break;
            *comma = '\0';
            p = comma + 1;
        }
        if (k >= col && !strcmp(fields[col], value)) {
            rows[n++] = fields;
        } else {
            free(copy);
            free(fields);
        }
        line = end;
    }
    return n;
}

static bool starts_with(const char *text, const char *prefix)
{
    return text && !strncmp(text, prefix, strlen(prefix));
}

static void free_rows(char ***rows, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(rows[i][0]);
        free(rows[i]);
    }
}

Test(sweep, cross_product_in_key_order_with_a_column_per_key, .timeout = 60)
{
    char *file = mmc_file("mmc.lua", "3h", 3,
                          "  sweep = { [\"workloads.mm.arrivals.rate\"] = { 3, 3.2 },\n"
                          "            [\"pools.q.count\"] = { 5, 4 } },");
    cr_assert_eq(cli_run(&out, &err, "run %s -o %s/s -q --no-plots", file, dir), 0, "%s",
                 err);
    char *csv = read_in("s", "sweep.csv");
    cr_assert_not_null(csv);
    cr_expect(starts_with(csv, "pools.q.count,workloads.mm.arrivals.rate,scope,subject,metric,"
                          "value,unit,ci95_lo,ci95_hi,n\n"), "header: %.100s", csv);
    /* keys sorted by name, the last varying fastest; values in the order given */
    char **rows[8];
    size_t n = rows_where(csv, 4, "servers", rows, 8);
    cr_assert_eq(n, 4, "one servers row per point, got %zu", n);
    const char *expected[4][2] = { { "5", "3" }, { "5", "3.2" }, { "4", "3" }, { "4", "3.2" } };
    for (size_t i = 0; i < n; i++) {
        cr_expect_str_eq(rows[i][0], expected[i][0], "point %zu", i + 1);
        cr_expect_str_eq(rows[i][1], expected[i][1], "point %zu", i + 1);
        cr_expect_str_eq(rows[i][5], rows[i][0], "the pool's servers are the swept count");
        cr_expect_str_eq(rows[i][9], "3", "three replications");
    }
    free_rows(rows, n);
    /* point k's folder holds what a plain run with the same --set values writes */
    char *plain = mmc_file("plain.lua", "3h", 3, "");
    cr_assert_eq(cli_run(&out, &err, "run %s -o %s/p -q --no-plots --set pools.q.count=4 "
                         "--set workloads.mm.arrivals.rate=3", plain, dir), 0, "%s", err);
    char *point = read_in("s/points/3", "summary.csv"), *single = read_in("p", "summary.csv");
    cr_assert(point && single);
    cr_expect_str_eq(point, single, "points/3 is pools.q.count=4, rate 3");
    char *series = read_in("s/points/3", "timeseries.csv"), *series1 = read_in("p", "timeseries.csv");
    cr_assert(series && series1);
    cr_expect_str_eq(series, series1);
    cr_expect_null(read_in("s/points/5", "summary.csv"));
    cr_expect_null(read_in("s", "summary.csv"), "a sweep writes no top-level summary");
    /* --sweep replaces the file's values of its key */
    cr_assert_eq(cli_run(&out, &err, "run %s -o %s/r -q --no-plots --sweep pools.q.count=6",
                         file, dir), 0, "%s", err);
    char *replaced = read_in("r", "sweep.csv");
    n = rows_where(replaced, 4, "servers", rows, 8);
    cr_expect_eq(n, 2);
    for (size_t i = 0; i < n; i++)
        cr_expect_str_eq(rows[i][0], "6");
    free_rows(rows, n);
    free(replaced);
    free(csv), free(point), free(single), free(series), free(series1), free(plain), free(file);
}

/* value, ci95_lo, ci95_hi of a metric's row at a point of sweep.csv or sweep_diff.csv
 * with one key */
static void interval_at(const char *csv, const char *key_value, const char *metric,
                        double *value, double *half)
{
    char **rows[64];
    size_t n = rows_where(csv, 3, metric, rows, 64);
    size_t found = 0;
    for (size_t i = 0; i < n; i++)
        if (!strcmp(rows[i][0], key_value)) {
            *value = strtod(rows[i][4], NULL);
            *half = (strtod(rows[i][7], NULL) - strtod(rows[i][6], NULL)) / 2;
            found++;
        }
    free_rows(rows, n);
    cr_assert_eq(found, 1, "one %s row at %s", metric, key_value);
}

Test(sweep, common_random_numbers_make_paired_intervals_narrower, .timeout = 60)
{
    char *file = mmc_file("mmc.lua", "20h", 10, "");
    cr_assert_eq(cli_run(&out, &err, "run %s -o %s/s -q --no-plots "
                         "--sweep workloads.mm.arrivals.rate=3,3.2", file, dir), 0, "%s", err);
    char *csv = read_in("s", "sweep.csv"), *diff = read_in("s", "sweep_diff.csv");
    cr_assert(csv && diff);
    cr_expect(starts_with(diff, "workloads.mm.arrivals.rate,scope,subject,metric,diff,unit,"
                          "ci95_lo,ci95_hi,n\n"), "%.90s", diff);
    double base, base_half, other, other_half, d, d_half;
    interval_at(csv, "3", "queue_wait_mean_s", &base, &base_half);
    interval_at(csv, "3.2", "queue_wait_mean_s", &other, &other_half);
    interval_at(diff, "3.2", "queue_wait_mean_s", &d, &d_half);
    /* with every replication present, the mean difference is the difference of means */
    cr_expect_float_eq(d, other - base, 1e-9 * fabs(other), "%g vs %g", d, other - base);
    /* unpaired (independent runs, Welch): each half-width is t(0.975, 9) s / sqrt(n), so
     * the difference's is t(0.975, df) sqrt(s1^2/n + s2^2/n) >= sqrt(h1^2 + h2^2), with
     * df <= 18 < 9 + 9; the paired interval must beat even that lower bound, by a lot */
    double unpaired = sqrt(base_half * base_half + other_half * other_half);
    cr_expect_lt(d_half, 0.7 * unpaired, "paired half-width %g, unpaired at least %g", d_half,
                 unpaired);
    cr_expect_gt(d - d_half, 0, "the increase in waiting is significant when paired");
    /* no row for the first point, which is the baseline */
    char **rows[4];
    size_t n = rows_where(diff, 0, "3", rows, 4);
    cr_expect_eq(n, 0);
    free_rows(rows, n);
    free(csv), free(diff), free(file);
}

/* 200 sweep points that differ only in their seed are 200 independent experiments of
 * 10 replications each.  M/M/1 at rho 0.5 has mean wait 1 s (Erlang C).  If the 95%
 * intervals cover at their stated rate, the count covering is Binomial(200, 0.95):
 * P(count <= 176) = 7.2e-5 and P(count = 200) = 3.5e-5, so accepting 177..199 fails a
 * correct program about once in 10,000 seed changes, while intervals that really cover
 * 85% (too narrow) fail with probability 0.94 and intervals twice too wide (coverage
 * 99.95%) with probability 0.90. */
Test(sweep, intervals_cover_the_erlang_c_mean_at_the_stated_rate, .timeout = 120)
{
    char text[2048];
    snprintf(text, sizeof text,
             "local fs = require \"fleetsim\"\n"
             "return fs.scenario {\n"
             "  name = \"mm1\", duration = 4000, warmup = 200, bucket = 400, replications = 10,\n"
             "  pools = { q = fs.dedicated { count = 1 } },\n"
             "  workloads = { mm = fs.service { arrivals = fs.poisson { rate = 0.5 },\n"
             "    service = fs.exponential { mean = 1 }, pool = \"q\" } },\n"
             "}\n");
    char *file = scratch_file(dir, "mm1.lua", text);
    char seeds[2048] = "";
    for (int s = 1; s <= 200; s++)
        snprintf(seeds + strlen(seeds), sizeof seeds - strlen(seeds), "%s%d", s > 1 ? "," : "", s);
    cr_assert_eq(cli_run(&out, &err, "run %s -o %s/c -q --no-plots --jobs 2 --sweep seed=%s",
                         file, dir, seeds), 0, "%s", err);
    char *csv = read_in("c", "sweep.csv");
    cr_assert_not_null(csv);
    double theory = queueing_mmc_wait_mean_s(1, 0.5, 1);
    cr_assert_float_eq(theory, 1, 1e-12);
    char **rows[256];
    size_t n = rows_where(csv, 3, "queue_wait_mean_s", rows, 256), covered = 0;
    cr_assert_eq(n, 200);
    for (size_t i = 0; i < n; i++) {
        cr_expect_str_eq(rows[i][8], "10");
        covered += strtod(rows[i][6], NULL) <= theory && theory <= strtod(rows[i][7], NULL);
    }
    free_rows(rows, n);
    cr_expect(covered >= 177 && covered <= 199, "%zu of 200 intervals cover %g", covered, theory);
    free(csv), free(file);
}

Test(sweep, jobs_1_and_2_write_the_same_bytes, .timeout = 120)
{
    char *file = mmc_file("mmc.lua", "4h", 5,
                          "  sweep = { [\"workloads.mm.arrivals.rate\"] = { 3, 3.2 },\n"
                          "            [\"pools.q.count\"] = { 5, 4 } },");
    char *plain = mmc_file("plain.lua", "4h", 5, "");
    const char *runs[][2] = { { "run %s -o %s/%s -q --jobs %d", "sweep" },
                              { "run %s -o %s/%s -q --no-plots --jobs %d", "plain" } };
    for (int r = 0; r < 2; r++) {
        const char *f = r == 0 ? file : plain;
        cr_assert_eq(cli_run(&out, &err, runs[r][0], f, dir, "one", 1), 0, "%s", err);
        cr_assert_eq(cli_run(&out, &err, runs[r][0], f, dir, "two", 2), 0, "%s", err);
        /* every file, charts included; report.html names its own folder */
        char command[2048];
        snprintf(command, sizeof command, "diff -r -x report.html %s/one %s/two", dir, dir);
        free(out);
        free(err);
        cr_expect_eq(scratch_run(command, &out, &err), 0, "%s: %s", runs[r][1], out);
        char *summary = read_in("one", r == 0 ? "sweep.csv" : "summary.csv");
        cr_expect_not_null(summary, "%s", runs[r][1]);
        free(summary);
        snprintf(command, sizeof command, "rm -rf %s/one %s/two", dir, dir);
        cr_assert_eq(system(command), 0);
    }
    free(file), free(plain);
}

/* M/M/c at 3.2 Erlangs: the smallest c whose Erlang C mean wait is at most 0.1 s. */
Test(sweep, search_finds_the_erlang_c_server_count, .timeout = 120)
{
    double target = 0.1;
    unsigned answer = 4;
    while (queueing_mmc_wait_mean_s(answer, 3.2, 1) > target)
        answer++;
    cr_assert_eq(answer, 6, "Erlang C: 5 servers wait %g s, 6 wait %g s",
                 queueing_mmc_wait_mean_s(5, 3.2, 1), queueing_mmc_wait_mean_s(6, 3.2, 1));
    char *file = mmc_file("mmc.lua", "20h", 10,
                          "  search = fs.search { key = \"pools.q.count\", low = 1, high = 16,\n"
                          "                       target = \"queue_wait_mean_s <= 0.1\" },");
    cr_assert_eq(cli_run(&out, &err, "run %s -o %s/s -q --no-plots --jobs 2", file, dir), 0,
                 "%s", err);
    char *csv = read_in("s", "search.csv");
    cr_assert_not_null(csv);
    cr_expect(starts_with(csv, "probe,pools.q.count,scope,subject,metric,value,unit,ci95_lo,"
                          "ci95_hi,n,target,meets\n"), "%.90s", csv);
    char **rows[16];
    size_t n = rows_where(csv, 2, "workload", rows, 16);
    /* bisection over [1, 16]: 1 and 16 first, then 8, 4, 6, 5 */
    const char *probes[] = { "1", "16", "8", "4", "6", "5" };
    cr_assert_eq(n, 7, "six probes and the answer, got %zu rows", n);
    for (size_t i = 0; i < 6; i++) {
        unsigned c = (unsigned)atoi(rows[i][1]);
        cr_expect_str_eq(rows[i][1], probes[i], "probe %zu", i + 1);
        cr_expect_str_eq(rows[i][11], c >= answer ? "true" : "false", "probe c = %u", c);
    }
    cr_expect_str_eq(rows[6][0], "answer");
    cr_expect_eq(atoi(rows[6][1]), (int)answer);
    cr_expect_str_eq(rows[6][4], "queue_wait_mean_s");
    free_rows(rows, n);
    char *point = read_in("s/points/5", "summary.csv");
    cr_expect_not_null(point, "each probe has its folder");
    cr_expect(strstr(out, "pools.q.count=6 is the smallest value") != NULL, "%s", out);
    free(point), free(csv), free(file);
}

/* Runs fleetsim, expecting exit status 2, stderr starting with `message`, and no output
 * folder. */
static void expect_refused(const char *message, const char *args)
{
    int status = cli_run(&out, &err, "run %s -o %s/never -q --no-plots", args, dir);
    cr_expect_eq(status, 2, "%s: status %d, stderr %s", args, status, err);
    cr_expect(starts_with(err, message), "%s:\n got      %s expected %s", args, err, message);
    char *none = read_in("never", "sweep.csv");
    cr_expect_null(none, "nothing written");
    free(none);
}

Test(sweep, mistakes_name_the_file_line_or_option)
{
    char *bad = mmc_file("bad.lua", "2h", 2, "  sweep = { [\"pools.q.count\"] = { 4, \"four\" } },");
    char *plain = mmc_file("plain.lua", "2h", 2, "");
    char *scalar = mmc_file("scalar.lua", "2h", 2, "  sweep = { [\"pools.q.count\"] = 4 },");
    char *unknown = mmc_file("unknown.lua", "2h", 2,
                             "  search = fs.search { key = \"pools.q.count\", low = 4, high = 8,\n"
                             "    target = \"queue_wiat_mean_s <= 0.1\" },");
    char expected[1024], args[2048];
    snprintf(expected, sizeof expected, "%s:2: sweep pools.q.count=four: pools.q.count: "
             "expected a positive integer, got \"four\"", bad);
    expect_refused(expected, bad);
    snprintf(expected, sizeof expected, "%s:2: sweep[\"pools.q.count\"]: expected a list of "
             "values", scalar);
    expect_refused(expected, scalar);
    snprintf(args, sizeof args, "%s --sweep pools.q.cuont=4,5", plain);
    expect_refused("--sweep pools.q.cuont=4: pools.q.cuont: unknown key 'cuont' (did you mean "
                   "'count'?)", args);
    snprintf(args, sizeof args, "%s --sweep pools.q.count=4,0", plain);
    expect_refused("--sweep pools.q.count=0: pools.q.count: expected a positive integer", args);
    snprintf(args, sizeof args, "%s --sweep pools.q.count", plain);
    expect_refused("--sweep pools.q.count: expected KEY=v1,v2,...", args);
    snprintf(args, sizeof args, "%s --sweep pools.q.count=4 --records", plain);
    expect_refused("fleetsim run: --records writes one stream in run order", args);
    snprintf(args, sizeof args, "%s --jobs 0", plain);
    expect_refused("fleetsim run: --jobs expects a whole number from 1 to 1024, got '0'", args);
    /* a target on an unknown metric: refused with the metric names, after the first probe */
    snprintf(expected, sizeof expected, "%s:10: search.target: unknown metric "
             "'queue_wiat_mean_s' (metrics: ", unknown);
    cr_expect_eq(cli_run(&out, &err, "run %s -o %s/u -q --no-plots", unknown, dir), 2);
    cr_expect(starts_with(err, expected), "got %s", err);
    cr_expect(strstr(err, "queue_wait_mean_s") != NULL, "the list names the right one: %s", err);
    cr_expect_null(read_in("u", "search.csv"));
    /* a subject or a scope that measured nothing is named as such (the message once read
     * "search.subject: no metrics for nobody any subject" of a scope) */
    char *nobody = mmc_file("nobody.lua", "2h", 2,
                            "  search = fs.search { key = \"pools.q.count\", low = 4, high = 8,\n"
                            "    target = \"queue_wait_mean_s <= 0.1\", scope = \"nobody\" },");
    snprintf(expected, sizeof expected, "%s:10: search.scope: no metrics in scope nobody",
             nobody);
    cr_expect_eq(cli_run(&out, &err, "run %s -o %s/n -q --no-plots", nobody, dir), 2);
    cr_expect(starts_with(err, expected), "got %s", err);
    /* a bound that is no integer says the whole range (its upper end was cut off) */
    char *half = mmc_file("half.lua", "2h", 2,
                          "  search = fs.search { key = \"pools.q.count\", low = 1.5, high = 8,\n"
                          "    target = \"queue_wait_mean_s <= 0.1\" },");
    snprintf(expected, sizeof expected, "%s:10: search.low: expected an integer from "
             "-9007199254740992 to 9007199254740992, got 1.5", half);
    expect_refused(expected, half);
    free(bad), free(plain), free(scalar), free(unknown), free(nobody), free(half);
}

/* Issue 18, 9: a grid search over two keys, the cheapest point meeting a target.  M/M/c
 * at 3.2 arrivals a second: with 1 s services Erlang C needs 6 servers for a mean wait
 * of at most 0.1 s, with 0.8 s services 5; the least `servers` meeting it is (5, 0.8 s),
 * and every point runs, so each probe's verdict is known by hand. */
Test(sweep, grid_search_finds_the_cheapest_point_meeting_the_target, .timeout = 120)
{
    const double means[] = { 1, 0.8 };
    unsigned need[2];
    for (int m = 0; m < 2; m++) {
        need[m] = 1;
        while (need[m] <= 3.2 * means[m]
               || queueing_mmc_wait_mean_s(need[m], 3.2, 1 / means[m]) > 0.1)
            need[m]++;
    }
    cr_assert_eq(need[0], 6, "Erlang C, 1 s services");
    cr_assert_eq(need[1], 5, "Erlang C, 0.8 s services: 4 wait %g s, 5 wait %g s",
                 queueing_mmc_wait_mean_s(4, 3.2, 1.25), queueing_mmc_wait_mean_s(5, 3.2, 1.25));
    char *file = mmc_file("grid.lua", "20h", 4,
                          "  search = fs.search {\n"
                          "    grid = { [\"pools.q.count\"] = { 4, 5, 6, 7 },\n"
                          "             [\"workloads.mm.service.mean\"] = { \"1s\", \"0.8s\" } },\n"
                          "    target = \"queue_wait_mean_s <= 0.1\", minimise = \"servers\" },");
    cr_assert_eq(cli_run(&out, &err, "run %s -o %s/g -q --no-plots --jobs 2", file, dir), 0,
                 "%s", err);
    char *csv = read_in("g", "search.csv");
    cr_assert_not_null(csv);
    cr_expect(starts_with(csv, "probe,pools.q.count,workloads.mm.service.mean,scope,subject,"
                          "metric,value,unit,ci95_lo,ci95_hi,n,target,meets,objective,"
                          "objective_subject,objective_value,objective_ci95_lo,"
                          "objective_ci95_hi\n"), "%.200s", csv);
    char **rows[16];
    size_t n = rows_where(csv, 3, "workload", rows, 16);
    cr_assert_eq(n, 9, "eight points in grid order and the answer, got %zu rows", n);
    for (size_t i = 0; i < 8; i++) {
        unsigned c = 4 + (unsigned)i / 2, m = (unsigned)i % 2;
        cr_expect_eq(atoi(rows[i][1]), (int)c, "point %zu", i + 1);
        cr_expect_str_eq(rows[i][2], m ? "0.8s" : "1s", "point %zu", i + 1);
        cr_expect_str_eq(rows[i][12], c >= need[m] ? "true" : "false", "point %zu", i + 1);
        cr_expect_str_eq(rows[i][13], "minimise servers");
        cr_expect_eq(atoi(rows[i][15]), (int)c, "the objective is the servers");
    }
    cr_expect_str_eq(rows[8][0], "answer");
    cr_expect_str_eq(rows[8][1], "5");
    cr_expect_str_eq(rows[8][2], "0.8s");
    cr_expect_str_eq(rows[8][14], "q", "the objective's subject");
    free_rows(rows, n);
    cr_expect(strstr(out, "pools.q.count=5, workloads.mm.service.mean=0.8s: the least servers "
                     "of q (5) of the 5 points of 8 with mm queue_wait_mean_s <= 0.1") != NULL,
              "%s", out);
    char *point = read_in("g/points/8", "summary.csv");
    cr_expect_not_null(point, "each point has its folder");
    free(point), free(csv), free(file);
}

/* Issue 37's streaming, against what a search keeps of a point once it is written: a
 * metric named twice (the objective is the target's too) is kept once, so every probe's
 * row counts its replications once (n = 3, not 6); and a "largest" search whose high end
 * meets the target (4 servers at 2/s wait 0.0087 s on average by Erlang C) answers it
 * (before, the first probe run was judged before the target's metric was known). */
Test(sweep, a_search_keeps_each_metric_once_and_judges_its_first_probe, .timeout = 120)
{
    cr_assert_lt(queueing_mmc_wait_mean_s(4, 2, 1), 0.5);
    char *file = mmc_file("twice.lua", "4h", 3,
                          "  search = fs.search {\n"
                          "    grid = { [\"pools.q.count\"] = { 4, 5, 6 } },\n"
                          "    target = \"queue_wait_mean_s <= 10\",\n"
                          "    minimise = \"queue_wait_mean_s of mm\" },");
    cr_assert_eq(cli_run(&out, &err, "run %s -o %s/t -q --no-plots", file, dir), 0, "%s", err);
    char *csv = read_in("t", "search.csv");
    cr_assert_not_null(csv);
    char **rows[8];
    size_t n = rows_where(csv, 2, "workload", rows, 8);
    cr_assert_eq(n, 4, "three points and the answer");
    for (size_t i = 0; i < n; i++)
        cr_expect_str_eq(rows[i][9], "3", "row %zu: n", i + 1);
    free_rows(rows, n);
    free(csv), free(file);
    file = mmc_file("largest.lua", "4h", 2,
                    "  search = fs.search { key = \"workloads.mm.arrivals.rate\", find = "
                    "\"largest\",\n    target = \"queue_wait_mean_s <= 0.5\", low = 1, "
                    "high = 2 },");
    cr_assert_eq(cli_run(&out, &err, "run %s -o %s/l -q --no-plots", file, dir), 0, "%s", err);
    cr_expect(strstr(out, "workloads.mm.arrivals.rate=2 is the largest value in [1, 2]")
              != NULL, "%s", out);
    free(file);
}

/* A point's folder that holds a file of the user's own stays, with the run's files
 * replaced beside it (a run moves its files in rather than the folder); and the staging
 * folder of a run whose process is gone is cleared by the next run. */
Test(sweep, a_users_file_in_a_points_folder_and_a_dead_runs_staging, .timeout = 120)
{
    char *file = mmc_file("m.lua", "2h", 2, "");
    cr_assert_eq(cli_run(&out, &err, "run %s -o %s/u -q --no-plots --sweep pools.q.count=4,5",
                         file, dir), 0, "%s", err);
    char path[1100];
    snprintf(path, sizeof path, "%s/u/points/2", dir);
    free(scratch_file(path, "notes.txt", "mine\n"));
    pid_t child = fork();
    if (child == 0)
        _exit(0);
    cr_assert_gt(child, 0);
    waitpid(child, NULL, 0); /* its pid now names no process */
    char command[2400];
    snprintf(command, sizeof command, "mkdir -p %s/u/.points.tmp-%ld-0/1 && touch "
             "%s/u/.points.tmp-%ld-0/1/summary.csv", dir, (long)child, dir, (long)child);
    cr_assert_eq(system(command), 0);
    cr_assert_eq(cli_run(&out, &err, "run %s -o %s/u -q --no-plots --sweep pools.q.count=4,5",
                         file, dir), 0, "%s", err);
    char *notes = read_in("u/points/2", "notes.txt"), *summary = read_in("u/points/2",
                                                                          "summary.csv");
    cr_expect_str_eq(notes ? notes : "", "mine\n");
    cr_expect_not_null(summary);
    free(notes), free(summary);
    snprintf(path, sizeof path, "%s/u/.points.tmp-%ld-0", dir, (long)child);
    DIR *gone = opendir(path);
    cr_expect_null(gone, "the dead run's staging folder was cleared");
    if (gone)
        closedir(gone);
    free(file);
}

/* A grid search's mistakes: exit 2, the file and line, nothing written. */
Test(sweep, grid_search_mistakes_are_refused_with_nothing_written, .timeout = 60)
{
    const char *cases[][2] = {
        { "    grid = { [\"pools.q.count\"] = { 4, 5 } }, target = \"queue_wait_mean_s <= 0.1\" },",
          "search.minimise: a grid search picks the point meeting the target with the least" },
        { "    grid = { [\"pools.q.count\"] = { 4, 5 } }, low = 1, minimise = \"servers\",\n"
          "    target = \"queue_wait_mean_s <= 0.1\" },",
          "search.grid: a grid search runs every point of its grid: low belongs to a search "
          "along one key" },
        { "    grid = { [\"pools.q.count\"] = 4 }, minimise = \"servers\",\n"
          "    target = \"queue_wait_mean_s <= 0.1\" },",
          "search.grid[\"pools.q.count\"]: expected a list of values" },
        { "    grid = { [\"pools.q.count\"] = { 4, 5 } }, minimise = \"servers\",\n"
          "    maximise = \"servers\", target = \"queue_wait_mean_s <= 0.1\" },",
          "search.maximise: a search minimises or maximises one metric" },
        { "    key = \"pools.q.count\", low = 4, high = 5, minimise = \"servers\",\n"
          "    target = \"queue_wait_mean_s <= 0.1\" },",
          "search.minimise: an objective needs a grid of points to choose among" },
        { "    grid = { [\"pools.q.count\"] = { 4, 5 } }, minimise = \"servers of\",\n"
          "    target = \"queue_wait_mean_s <= 0.1\" },",
          "search.minimise: expected a metric such as \"cost_usd\"" },
        { "    grid = { [\"pools.q.count\"] = { 4, \"x\" } }, minimise = \"servers\",\n"
          "    target = \"queue_wait_mean_s <= 0.1\" },",
          "search pools.q.count=x: pools.q.count: expected a positive integer" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char extra[1024], name[32], expected[1024];
        snprintf(extra, sizeof extra, "  search = fs.search {\n%s", cases[i][0]);
        snprintf(name, sizeof name, "bad%zu.lua", i);
        char *file = mmc_file(name, "2h", 1, extra);
        snprintf(expected, sizeof expected, "%s:10: %s", file, cases[i][1]);
        expect_refused(expected, file);
        free(file);
    }
    /* an unknown objective: refused once the grid ran, with the metric names */
    char *file = mmc_file("unknown.lua", "2h", 1,
                          "  search = fs.search {\n"
                          "    grid = { [\"pools.q.count\"] = { 4, 5 } }, minimise = \"sevrers\",\n"
                          "    target = \"queue_wait_mean_s <= 0.1\" },");
    char expected[1024];
    snprintf(expected, sizeof expected, "%s:10: search.minimise: unknown metric 'sevrers' "
             "(metrics: ", file);
    cr_expect_eq(cli_run(&out, &err, "run %s -o %s/u -q --no-plots", file, dir), 2);
    cr_expect(starts_with(err, expected), "got %s", err);
    cr_expect(strstr(err, "servers") != NULL, "the list names the right one: %s", err);
    cr_expect_null(read_in("u", "search.csv"));
    free(file);
}

/* Issue 18, 6: a sweep's chart of a latency with an SLO draws the SLO as a line, from
 * the scenario's slo table (ttft on ttft_p99_s's chart; tpot has none here). */
Test(sweep, a_sweep_chart_draws_the_workloads_slo, .timeout = 60)
{
    char *file = scratch_file(dir, "slo.lua",
        "local fs = require \"fleetsim\"\n"
        "return fs.scenario {\n"
        "  name = \"slo\", duration = \"5m\", warmup = \"30s\", bucket = \"1m\",\n"
        "  pools = { gpus = fs.dedicated { gpu = \"H100-SXM\", count = 1 } },\n"
        "  workloads = { chat = fs.inference { model = \"llama-3-8b\", pool = \"gpus\",\n"
        "    arrivals = fs.poisson { rate = 2 }, prompt = 500, output = 50,\n"
        "    slo = { ttft = \"150ms\" } } },\n"
        "  sweep = { [\"workloads.chat.arrivals.rate\"] = { 2, 20, 40 } },\n"
        "}\n");
    cr_assert_eq(cli_run(&out, &err, "run %s -o %s/p -q", file, dir), 0, "%s", err);
    char *script = read_in("p", "plots/sweep_workload_chat_ttft_p99_s.gp");
    cr_assert_not_null(script);
    cr_expect(strstr(script, "set arrow from graph 0, first 0.15 to graph 1, first 0.15") != NULL,
              "the SLO as a line: %s", script);
    cr_expect(strstr(script, "set label 'SLO 0.15'") != NULL);
    free(script);
    script = read_in("p", "plots/sweep_workload_chat_tpot_p99_s.gp");
    cr_expect(script == NULL || strstr(script, "set arrow") == NULL, "no tpot SLO, no line");
    free(script);
    free(file);
}

Test(sweep, a_worker_that_dies_fails_the_run_without_files, .timeout = 60)
{
    /* a trusted (--unsafe) rate function that ends its process half-way */
    char *file = scratch_file(dir, "die.lua",
        "local fs = require \"fleetsim\"\n"
        "return fs.scenario {\n"
        "  name = \"die\", duration = \"10m\", bucket = \"1m\", replications = 4,\n"
        "  pools = { gpus = fs.dedicated { gpu = \"H100-SXM\", count = 1 } },\n"
        "  workloads = { chat = fs.inference { model = \"llama-3-8b\", pool = \"gpus\",\n"
        "    arrivals = fs.profile { peak = 1, rate = function(t)\n"
        "      if t > 60 then os.exit(7) end return 1 end },\n"
        "    prompt = 100, output = 10 } },\n"
        "  sweep = { [\"workloads.chat.output\"] = { 10, 20 } },\n"
        "}\n");
    /* the worker leaves by exit(): no leak check there (tests/support/scratch.h) */
    cr_expect_eq(cli_run_env(&out, &err, SCRATCH_NO_LEAK_CHECK, "run %s --unsafe -o %s/d -q "
                             "--no-plots --jobs 2", file, dir), 1, "stderr: %s", err);
    cr_expect(starts_with(err, "fleetsim: a worker process exited with status 7 while running "
                          "replication "), "%s", err);
    const char *files[] = { "sweep.csv", "summary.csv", "timeseries.csv",
                            "points/1/summary.csv" };
    for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
        char *none = read_in("d", files[i]);
        cr_expect_null(none, "%s was written", files[i]);
        free(none);
    }
    /* the points are written as they complete (issue 37), under a hidden name that the
     * failure removes: nothing is left of them, nor of the folder the run made for them */
    char path[1100];
    snprintf(path, sizeof path, "%s/d", dir);
    DIR *d = opendir(path);
    cr_expect_null(d, "the run's own folder is left");
    for (struct dirent *e; d && (e = readdir(d));)
        cr_expect(!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."), "left: %s", e->d_name);
    if (d)
        closedir(d);
    free(file);
}

/* Issue 37, item 3: a scenario file whose table is plain data runs once for a whole
 * sweep (each point converts that table with its own values), and a point's results
 * are written as it completes.  The same sweep from the same file made to load afresh
 * at every point (a metatable on one of its tables: only plain data is reused) writes
 * the same bytes. */
Test(sweep, a_plain_file_runs_once_and_its_points_match_fresh_loads, .timeout = 120)
{
    const char *body =
        "local fs = require \"fleetsim\"\n"
        "local x = 0\n"
        "for i = 1, 3000000 do x = x + i end\n"
        "return fs.scenario {\n"
        "  name = \"mmc\", duration = \"2h\", warmup = \"1h\", bucket = \"1h\",\n"
        "  seed = 3, replications = 3,\n"
        "  pools = %s,\n"
        "  workloads = { mm = fs.service { arrivals = fs.poisson { rate = 3.2 },\n"
        "    service = fs.exponential { mean = \"1s\" }, pool = \"q\" } },\n"
        "  sweep = { [\"pools.q.count\"] = { 4, 5, 6, 7 },\n"
        "            [\"workloads.mm.arrivals.rate\"] = { 2.5, 3.2, \"3.5/s\" } },\n"
        "}\n";
    char text[2048];
    snprintf(text, sizeof text, body, "{ q = fs.dedicated { count = 4 } }");
    char *plain = scratch_file(dir, "plain.lua", text);
    snprintf(text, sizeof text, body, "setmetatable({ q = fs.dedicated { count = 4 } }, {})");
    char *fresh = scratch_file(dir, "fresh.lua", text);
    /* 3 million loop steps are some 12 million instructions: twelve loads would be 144 */
    cr_assert_eq(cli_run(&out, &err, "check %s", plain), 0, "%s", err);
    double plain_millions = NAN, fresh_millions = NAN;
    const char *ran = strstr(out, "loading them ran ");
    cr_assert_not_null(ran, "%s", out);
    cr_assert_eq(sscanf(ran, "loading them ran %lf million", &plain_millions), 1);
    cr_assert_eq(cli_run(&out, &err, "check %s", fresh), 0, "%s", err);
    cr_assert_not_null(ran = strstr(out, "loading them ran "), "%s", out);
    cr_assert_eq(sscanf(ran, "loading them ran %lf million", &fresh_millions), 1);
    cr_expect(fresh_millions > 11 * plain_millions, "fresh %g, plain %g million",
              fresh_millions, plain_millions);
    cr_expect(plain_millions < 24, "the file ran once, not at each of 12 points: %g million",
              plain_millions);
    cr_assert_eq(cli_run(&out, &err, "run %s -q --no-plots -o %s/p", plain, dir), 0, "%s", err);
    cr_assert_eq(cli_run(&out, &err, "run %s -q --no-plots -o %s/f", fresh, dir), 0, "%s", err);
    const char *files[] = { "sweep.csv", "sweep_diff.csv", "points/1/summary.csv",
                            "points/12/summary.csv", "points/7/timeseries.csv" };
    for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
        char *a = read_in("p", files[i]), *b = read_in("f", files[i]);
        cr_expect(a && b && !strcmp(a, b), "%s differs", files[i]);
        free(a), free(b);
    }
    free(plain), free(fresh);
}

/* Issue 17, finding 12: a run owns its folder.  A sweep into a folder that held a plain
 * run leaves no summary.csv of the old run (report.html showed it above the sweep's
 * charts), and a plain run after a sweep leaves no sweep.csv, points/ or sweep charts;
 * files the run does not write (the user's own) stay. */
/* None of the n files is left in the scratch folder `sub` (an earlier run's). */
static void expect_gone(const char *sub, const char *const *names, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        char *left = read_in(sub, names[i]);
        cr_expect_null(left, "%s/%s is left from the run before", sub, names[i]);
        free(left);
    }
}

Test(sweep, a_run_removes_what_an_earlier_run_wrote_in_its_folder, .timeout = 120)
{
    char *file = mmc_file("m.lua", "2h", 2, "");
    free(scratch_file(dir, "notes.txt", "mine\n"));
    char own[1024];
    snprintf(own, sizeof own, "%s/f", dir);
    cr_assert_eq(cli_run(&out, &err, "run %s -o %s -q", file, own), 0, "%s", err);
    char *kept = read_in("f", "summary.csv");
    cr_assert_not_null(kept, "the plain run wrote its summary");
    free(kept);
    free(scratch_file(own, "notes.txt", "mine\n"));
    cr_assert_eq(cli_run(&out, &err, "run %s -o %s -q --sweep pools.q.count=4,5", file, own), 0,
                 "%s", err);
    char *old = read_in("f", "summary.csv"), *sweep = read_in("f", "sweep.csv");
    cr_expect_null(old, "the plain run's summary.csv is left beside the sweep");
    cr_expect_not_null(sweep);
    free(old), free(sweep);
    /* a render folder an interrupted run left (issue 40) goes too */
    char render[1100];
    snprintf(render, sizeof render, "mkdir -p %s/plots/.render-Ab12Cd && touch "
             "%s/plots/.render-Ab12Cd/latency.svg", own, own);
    cr_assert_eq(system(render), 0);
    /* and the temporary names a killed run's files stayed under (a fuzzing run found
     * them piling up): a process that is gone, its pid from a child that exited */
    pid_t gone_pid = fork();
    if (gone_pid == 0)
        _exit(0);
    cr_assert_gt(gone_pid, 0);
    waitpid(gone_pid, NULL, 0);
    char temp[1200];
    snprintf(temp, sizeof temp, "touch %s/.sweep.csv.tmp-%ld-0 %s/plots/.x.gp.tmp-%ld-3 "
             "%s/.mine.tmp-%ld-0", own, (long)gone_pid, own, (long)gone_pid, own,
             (long)gone_pid);
    cr_assert_eq(system(temp), 0);
    cr_assert_eq(cli_run(&out, &err, "run %s -o %s -q", file, own), 0, "%s", err);
    const char *gone[] = { "sweep.csv", "sweep_diff.csv", "points/1/summary.csv",
                           "plots/sweep_pool_q_utilization_mean.gp",
                           "plots/.render-Ab12Cd/latency.svg" };
    expect_gone("f", gone, sizeof gone / sizeof *gone);
    char name[100];
    snprintf(name, sizeof name, ".sweep.csv.tmp-%ld-0", (long)gone_pid);
    const char *temps[] = { name, NULL };
    expect_gone("f", temps, 1);
    snprintf(name, sizeof name, "plots/.x.gp.tmp-%ld-3", (long)gone_pid);
    expect_gone("f", temps, 1);
    /* a hidden file that is no run's stays */
    snprintf(name, sizeof name, ".mine.tmp-%ld-0", (long)gone_pid);
    char *mine = read_in("f", name);
    cr_expect_not_null(mine, "%s: not a file a run writes", name);
    free(mine);
    char *notes = read_in("f", "notes.txt");
    cr_expect_str_eq(notes ? notes : "", "mine\n", "the user's own file stays");
    free(notes);
    free(file);
}

/* A chart script of the user's own (no "# fleetsim chart" first line) stays through a new
 * run, as docs/results.md says, and is rendered with the new run's data; fleetsim's own
 * scripts, every render and the list of constant series go with the run that wrote them. */
Test(sweep, a_users_chart_script_stays_through_a_new_run, .timeout = 120)
{
    if (system("command -v gnuplot > /dev/null 2>&1") != 0)
        cr_skip_test("gnuplot is not installed (make deps installs gnuplot-nox)");
    char *file = mmc_file("m.lua", "2h", 2, "");
    char own[1024];
    snprintf(own, sizeof own, "%s/f", dir);
    cr_assert_eq(cli_run(&out, &err, "run %s -o %s -q --no-plots", file, own), 0, "%s", err);
    cr_assert_eq(cli_run(&out, &err, "plot %s", own), 0, "%s", err);
    char *fleetsims = read_in("f", "plots/queue_wait.gp");
    cr_assert_not_null(fleetsims, "the run wrote its queue_wait chart");
    free(fleetsims);
    free(scratch_file(own, "plots/mine.gp",
                      "if (!exists(\"term\")) term = \"svg\"\n"
                      "if (!exists(\"out\")) out = \"plots/mine.svg\"\n"
                      "set terminal @term\nset output out\nplot sin(x)\n"));
    free(scratch_file(own, "plots/mine.svg", "an old render\n"));
    free(scratch_file(own, "plots/constant.txt", "an old list\n"));
    cr_assert_eq(cli_run(&out, &err, "run %s -o %s -q --no-plots", file, own), 0, "%s", err);
    const char *gone[] = { "plots/mine.svg", "plots/constant.txt", "plots/queue_wait.svg",
                           "plots/queue_wait.gp" };
    expect_gone("f", gone, sizeof gone / sizeof *gone);
    char *mine = read_in("f", "plots/mine.gp");
    cr_expect(mine && strstr(mine, "plot sin(x)"), "the user's script stays");
    free(mine);
    /* a run with charts writes its own scripts again and renders the user's too */
    cr_assert_eq(cli_run(&out, &err, "run %s -o %s -q", file, own), 0, "%s", err);
    fleetsims = read_in("f", "plots/queue_wait.gp");
    cr_expect_not_null(fleetsims, "fleetsim's script is written anew");
    free(fleetsims);
    char *render = read_in("f", "plots/mine.svg");
    cr_expect(render && strstr(render, "</svg>"), "the user's chart is rendered anew");
    free(render);
    free(file);
}

/* Links planted at the folders a run makes (issue 40, item 7): plots/ -> elsewhere made
 * a run delete elsewhere's charts and write its own there; points/ and points/<k>/
 * likewise, and `fleetsim plot`.  Each is refused before anything is cleared or written,
 * and what the link points to is left as it was. */
Test(sweep, links_planted_at_the_folders_a_run_makes_are_not_followed, .timeout = 120)
{
    char *file = mmc_file("m.lua", "2h", 2, "");
    char own[1024], elsewhere[1024], link[1100], command[4096];
    snprintf(own, sizeof own, "%s/f", dir);
    snprintf(elsewhere, sizeof elsewhere, "%s/elsewhere", dir);
    snprintf(command, sizeof command, "mkdir -p %s/points %s && touch %s/keep.svg %s/keep.gp "
             "%s/summary.csv", own, elsewhere, elsewhere, elsewhere, elsewhere);
    cr_assert_eq(system(command), 0);
    const char *planted[] = { "plots", "points/2", "points" };
    for (size_t i = 0; i < 3; i++) {
        snprintf(link, sizeof link, "%s/%s", own, planted[i]);
        if (i == 2)
            cr_assert_eq(rmdir(link), 0);
        cr_assert_eq(symlink(elsewhere, link), 0);
        const char *how = i == 1 ? "--sweep pools.q.count=4,5" : "";
        cr_expect_eq(cli_run(&out, &err, "run %s -o %s -q %s", file, own, how), 1, "%s", out);
        char expected[1200];
        snprintf(expected, sizeof expected, "fleetsim: %s is a link, not a folder of "
                 "fleetsim's", link);
        cr_expect(strstr(err, expected) == err, "%s", err);
        snprintf(command, sizeof command, "test -e %s/keep.svg && test -e %s/keep.gp && "
                 "test -e %s/summary.csv && ! test -e %s/latency.gp && ! test -e "
                 "%s/summary.csv", elsewhere, elsewhere, elsewhere, elsewhere, own);
        cr_expect_eq(system(command), 0, "%s: the link's target was cleared or written",
                     planted[i]);
        if (i == 0) { /* fleetsim plot DIR as well */
            cr_expect_eq(cli_run(&out, &err, "plot %s", own), 1);
            cr_expect(strstr(err, "is a link, not a folder of fleetsim's") != NULL, "%s", err);
            cr_expect_eq(system(command), 0, "plot followed the link");
        }
        cr_assert_eq(unlink(link), 0);
    }
    /* without the links the same folder runs */
    cr_expect_eq(cli_run(&out, &err, "run %s -o %s -q", file, own), 0, "%s", err);
    free(file);
}
