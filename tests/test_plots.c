/* Pictures (output/plots.h, output/report.h, `fleetsim plot`): scripts written only for
 * what the CSVs hold, renders that parse and carry every series, re-rendering an edited
 * script, the note when gnuplot is missing, and a self-contained report.html. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "output/csv_table.h"
#include "output/plot_render.h"
#include "output/pictures.h"
#include "output/plots.h"
#include "output/report.h"
#include "support/cli.h"
#include "support/scratch.h"
#include "support/xml_check.h"

static char *dir;
static char *out, *err;

static void setup(void) { dir = scratch_dir(); out = err = NULL; }
static void teardown(void)
{
    scratch_remove_dir(dir);
    free(out);
    free(err);
}

TestSuite(plots, .init = setup, .fini = teardown, .timeout = 60);

/* Five 10-minute buckets of a pool and an inference workload; e2e_p99_s is empty in one
 * bucket, cost_usd in all (a column with no values draws nothing). */
static const char TIMESERIES[] =
    "bucket_start_s,bucket_end_s,scope,subject,utilization,ttft_p99_s,e2e_p99_s,gpus_held,"
    "gpus_busy,gpus_idle,replicas,gpu_allocation,fragmentation,cost_usd\n"
    "0,600,pool,gpus,0.5,,,4,2,2,4,,,\n"
    "0,600,workload,chat,,0.21,3.1,,,,,,,\n"
    "600,1200,pool,gpus,0.6,,,4,3,1,4,,,\n"
    "600,1200,workload,chat,,0.25,,,,,,,,\n"
    "1200,1800,pool,gpus,0.7,,,6,4,2,6,,,\n"
    "1200,1800,workload,chat,,0.31,3.4,,,,,,,\n"
    "1800,2400,pool,gpus,0.65,,,6,4,2,6,,,\n"
    "1800,2400,workload,chat,,0.22,3.2,,,,,,,\n"
    "2400,3000,pool,gpus,0.55,,,4,2,2,4,,,\n"
    "2400,3000,workload,chat,,0.2,3.0,,,,,,,\n";

static const char SUMMARY[] =
    "scope,subject,metric,value,unit,ci95_lo,ci95_hi,n\n"
    "run,fixture_run,events,1000,events,,,1\n"
    "pool,gpus,utilization_mean,0.6,1,0.55,0.65,5\n"
    "workload,chat,ttft_p99_s,0.25,s,0.2,0.3,5\n";

/* One swept key, four points, two metrics (one only ever empty). */
static const char SWEEP1[] =
    "pools.gpus.count,scope,subject,metric,value,unit,ci95_lo,ci95_hi,n\n"
    "2,workload,chat,ttft_p99_s,2.5,s,2.2,2.8,5\n"
    "2,workload,chat,drop_fraction,,1,,,5\n"
    "4,workload,chat,ttft_p99_s,1.25,s,1.1,1.4,5\n"
    "4,workload,chat,drop_fraction,,1,,,5\n"
    "6,workload,chat,ttft_p99_s,0.8,s,0.7,0.9,5\n"
    "6,workload,chat,drop_fraction,,1,,,5\n"
    "8,workload,chat,ttft_p99_s,0.62,s,0.55,0.7,5\n"
    "8,workload,chat,drop_fraction,,1,,,5\n";

/* Two keys, the second a text value. */
static const char SWEEP2[] =
    "pools.gpus.count,placement,scope,subject,metric,value,unit,ci95_lo,ci95_hi,n\n"
    "2,best_fit,pool,gpus,utilization_mean,0.9,1,0.85,0.95,3\n"
    "4,best_fit,pool,gpus,utilization_mean,0.6,1,0.55,0.65,3\n"
    "8,best_fit,pool,gpus,utilization_mean,0.3,1,0.25,0.35,3\n"
    "2,first_fit,pool,gpus,utilization_mean,0.92,1,0.87,0.97,3\n"
    "4,first_fit,pool,gpus,utilization_mean,0.65,1,0.6,0.7,3\n"
    "8,first_fit,pool,gpus,utilization_mean,0.33,1,0.3,0.36,3\n";

static bool have_gnuplot(void)
{
    return system("command -v gnuplot > /dev/null 2>&1") == 0;
}

static char *path_in(const char *name)
{
    static char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    return path;
}

static bool exists(const char *name)
{
    return access(path_in(name), F_OK) == 0;
}

static char *read_in(const char *name)
{
    char *text = scratch_read(path_in(name));
    cr_assert_not_null(text, "no %s", name);
    return text;
}

static void write_in(const char *name, const char *text)
{
    free(scratch_file(dir, name, text));
}

static void expect_well_formed(const char *name)
{
    char *text = read_in(name), why[256];
    const char *bad = xml_check(text, why, sizeof why);
    cr_expect_null(bad, "%s is not well-formed: %s", name, bad ? bad : "");
    free(text);
}

/* The points of the series titled title: gnuplot writes its key text, then one path
 * with the key sample (two points) followed by the data. */
static int series_points(const char *svg, const char *title)
{
    char text[256];
    snprintf(text, sizeof text, "<text>%s</text>", title);
    const char *at = strstr(svg, text);
    if (!at)
        return -1;
    const char *path = strstr(at, "<path");
    const char *d = path ? strstr(path, " d='") : NULL;
    if (!d)
        return -1;
    int points = 0;
    for (const char *p = d + 4; *p && *p != '\''; p++)
        points += *p == 'M' || *p == 'L';
    return points - 2;
}

/* No temporary file of a render is left in plots/. */
static void expect_no_temporary_files(void)
{
    DIR *d = opendir(path_in("plots"));
    cr_assert_not_null(d);
    struct dirent *entry;
    while ((entry = readdir(d)))
        cr_expect(strstr(entry->d_name, ".tmp-") == NULL, "left behind: plots/%s",
                  entry->d_name);
    closedir(d);
}

Test(plots, csv_table_reads_quoted_fields_and_pads_short_rows)
{
    write_in("t.csv", "a,b,c\n1,\"x, \"\"y\"\"\",3\n4\n");
    csv_table t;
    char why[256];
    cr_assert_eq(csv_table_read(path_in("t.csv"), &t, why, sizeof why), 0, "%s", why);
    cr_expect_eq(t.rows, 2);
    cr_expect_str_eq(csv_table_cell(&t, 0, csv_table_column(&t, "b")), "x, \"y\"");
    cr_expect_str_eq(csv_table_cell(&t, 1, 2), "");
    cr_expect_eq(csv_table_number(&t, 1, 0), 4);
    cr_expect_eq(csv_table_column(&t, "d"), -1);
    csv_table_release(&t);
    cr_expect_eq(csv_table_read(path_in("none.csv"), &t, why, sizeof why), 1);
    csv_table_release(&t);
}

Test(plots, scripts_are_written_only_for_data_and_name_columns)
{
    write_in("timeseries.csv", TIMESERIES);
    plot_options o = { .rewrite_scripts = true, .png = false, .gnuplot = "/nonexistent/gnuplot" };
    char why[1024];
    cr_expect_eq(output_plots(dir, &o, why, sizeof why), OUTPUT_PLOTS_NO_GNUPLOT);
    cr_expect(strstr(why, "plots/*.gp written; install gnuplot-nox (make deps) and run "
                     "fleetsim plot") != NULL, "%s", why);
    cr_expect(exists("plots/latency.gp"));
    cr_expect(exists("plots/utilization.gp"));
    cr_expect(exists("plots/gpus_gpus.gp"));
    cr_expect(!exists("plots/fragmentation.gp"), "no task replay, no fragmentation chart");
    cr_expect(!exists("plots/queue_wait.gp"), "no plain service, no queue wait chart");
    cr_expect(!exists("plots/cost.gp"), "cost_usd has no value");
    cr_expect(!exists("plots/latency.svg"));
    char *script = read_in("plots/latency.gp");
    cr_expect(strstr(script, "set datafile separator ','") != NULL);
    cr_expect(strstr(script, "column(name)") != NULL, "columns are read by name");
    cr_expect(strstr(script, "'e2e_p99_s'") != NULL);
    cr_expect(strstr(script, "'timeseries.csv'") != NULL, "a path relative to the run");
    free(script);

    /* a later run with costs and no GPUs: the GPU chart an earlier run wrote goes, a
     * script of the user's stays */
    write_in("plots/mine.gp", "plot sin(x)\n");
    write_in("timeseries.csv",
             "bucket_start_s,bucket_end_s,scope,subject,utilization,cost_usd\n"
             "0,60,pool,gpus,0.5,1.5\n60,120,pool,gpus,0.5,3\n");
    cr_expect_eq(output_plots(dir, &o, why, sizeof why), OUTPUT_PLOTS_NO_GNUPLOT);
    cr_expect(exists("plots/cost.gp"));
    cr_expect(!exists("plots/gpus_gpus.gp"));
    cr_expect(!exists("plots/latency.gp"));
    cr_expect(exists("plots/mine.gp"));
}

Test(plots, a_rendered_svg_parses_and_holds_every_series)
{
    if (!have_gnuplot())
        cr_skip_test("gnuplot is not installed (make deps installs gnuplot-nox)");
    write_in("timeseries.csv", TIMESERIES);
    char why[4096];
    cr_assert_eq(output_plots(dir, NULL, why, sizeof why), 0, "%s", why);
    expect_no_temporary_files();
    cr_expect(!exists("plots/latency.png"), "a run's default is SVG only");
    expect_well_formed("plots/latency.svg");
    expect_well_formed("plots/gpus_gpus.svg");
    char *svg = read_in("plots/latency.svg");
    cr_expect_eq(series_points(svg, "chat: time to first token, p99"), 5, "one point per bucket");
    cr_expect_eq(series_points(svg, "chat: whole response, p99"), 4, "the empty cell is skipped");
    free(svg);
    svg = read_in("plots/gpus_gpus.svg");
    const char *columns[] = { "GPUs held", "GPUs busy", "GPUs idle", "replicas" };
    for (int i = 0; i < 4; i++)
        cr_expect_eq(series_points(svg, columns[i]), 5, "%s", columns[i]);
    free(svg);
}

Test(plots, sweep_charts_draw_the_mean_and_its_band_per_value_of_the_second_key)
{
    if (!have_gnuplot())
        cr_skip_test("gnuplot is not installed (make deps installs gnuplot-nox)");
    write_in("sweep.csv", SWEEP1);
    char why[4096];
    cr_assert_eq(output_plots(dir, NULL, why, sizeof why), 0, "%s", why);
    cr_expect(!exists("plots/sweep_workload_chat_drop_fraction.gp"), "no value, no chart");
    expect_well_formed("plots/sweep_workload_chat_ttft_p99_s.svg");
    char *svg = read_in("plots/sweep_workload_chat_ttft_p99_s.svg");
    cr_expect_eq(series_points(svg, "time to first token, p99 (s) (mean)"), 4);
    cr_expect(strstr(svg, "fill-opacity") != NULL || strstr(svg, "opacity") != NULL,
              "a translucent band");
    free(svg);

    write_in("sweep.csv", SWEEP2);
    cr_assert_eq(output_plots(dir, NULL, why, sizeof why), 0, "%s", why);
    cr_expect(!exists("plots/sweep_workload_chat_ttft_p99_s.gp"), "the old sweep's chart goes");
    svg = read_in("plots/sweep_pool_gpus_utilization_mean.svg");
    cr_expect_eq(series_points(svg, "placement = best_fit"), 3);
    cr_expect_eq(series_points(svg, "placement = first_fit"), 3);
    free(svg);
}

/* Two zipped keys (they move together) and two workloads: the second key splits no line,
 * and a chart puts the workloads side by side. */
static const char SWEEP_ZIPPED[] =
    "pools.a.count,pools.b.count,scope,subject,metric,value,unit,ci95_lo,ci95_hi,n\n"
    "8,16,workload,on_a,ttft_p99_s,3.0,s,,,1\n"
    "8,16,workload,on_b,ttft_p99_s,2.0,s,,,1\n"
    "16,32,workload,on_a,ttft_p99_s,1.0,s,,,1\n"
    "16,32,workload,on_b,ttft_p99_s,0.5,s,,,1\n"
    "24,48,workload,on_a,ttft_p99_s,0.4,s,,,1\n"
    "24,48,workload,on_b,ttft_p99_s,0.3,s,,,1\n";

/* Issue 39: a zipped key that sorts first but repeats (a GPU kind kept for two sizes) is
 * not the axis; the count it moves with is, and the title names both. */
static const char SWEEP_ZIPPED_REPEATS[] =
    "pools.a.gpu,pools.a.count,scope,subject,metric,value,unit,ci95_lo,ci95_hi,n\n"
    "H100-SXM,8,workload,chat,ttft_p99_s,3.0,s,,,1\n"
    "H100-SXM,16,workload,chat,ttft_p99_s,1.0,s,,,1\n"
    "H200-SXM,32,workload,chat,ttft_p99_s,0.4,s,,,1\n";

Test(plots, a_zipped_sweep_is_drawn_against_the_key_that_moves_most)
{
    if (!have_gnuplot())
        cr_skip_test("gnuplot is not installed (make deps installs gnuplot-nox)");
    write_in("sweep.csv", SWEEP_ZIPPED_REPEATS);
    char why[4096];
    cr_assert_eq(output_plots(dir, NULL, why, sizeof why), 0, "%s", why);
    char *svg = read_in("plots/sweep_workload_chat_ttft_p99_s.svg");
    cr_expect(strstr(svg, "against pools.a.count (with pools.a.gpu)") != NULL, "%s", svg);
    cr_expect_eq(series_points(svg, "time to first token, p99 (s) (mean)"), 3,
                 "one line of three points");
    cr_expect(strstr(svg, "pools.a.gpu = ") == NULL, "the kind splits no line");
    free(svg);
}

/* Issue 39: "most important first" led with the share within the SLO, which moved
 * within its intervals; a change within the noise draws no chart, one beyond it does. */
static const char SWEEP_NOISE[] =
    "pools.a.count,scope,subject,metric,value,unit,ci95_lo,ci95_hi,n\n"
    "8,workload,chat,slo_attainment,0.990,1,0.980,0.999,3\n"
    "8,workload,chat,ttft_p99_s,1.0,s,0.9,1.1,3\n"
    "16,workload,chat,slo_attainment,0.994,1,0.985,1.0,3\n"
    "16,workload,chat,ttft_p99_s,1.05,s,0.95,1.15,3\n"
    "24,workload,chat,slo_attainment,0.992,1,0.982,1.0,3\n"
    "24,workload,chat,ttft_p99_s,2.0,s,1.9,2.1,3\n";

Test(plots, a_change_within_the_intervals_draws_no_chart)
{
    if (!have_gnuplot())
        cr_skip_test("gnuplot is not installed (make deps installs gnuplot-nox)");
    write_in("sweep.csv", SWEEP_NOISE);
    char why[4096];
    cr_assert_eq(output_plots(dir, NULL, why, sizeof why), 0, "%s", why);
    cr_expect(!exists("plots/sweep_workload_chat_slo_attainment.gp"),
              "0.990 to 0.994, every interval overlapping the others");
    cr_expect(exists("plots/sweep_workload_chat_ttft_p99_s.gp"), "1.1 s below 1.9 s");
}

Test(plots, zipped_keys_split_no_line_and_workloads_are_compared_side_by_side)
{
    if (!have_gnuplot())
        cr_skip_test("gnuplot is not installed (make deps installs gnuplot-nox)");
    write_in("sweep.csv", SWEEP_ZIPPED);
    char why[4096];
    cr_assert_eq(output_plots(dir, NULL, why, sizeof why), 0, "%s", why);
    char *svg = read_in("plots/sweep_workload_on_a_ttft_p99_s.svg");
    cr_expect_eq(series_points(svg, "time to first token, p99 (s) (mean)"), 3,
                 "one line of three points, not a line per value of pools.b.count");
    cr_expect(strstr(svg, "pools.b.count = ") == NULL);
    free(svg);
    expect_well_formed("plots/sweep_compare_workload_ttft_p99_s.svg");
    svg = read_in("plots/sweep_compare_workload_ttft_p99_s.svg");
    cr_expect_eq(series_points(svg, "on_a"), 3);
    cr_expect_eq(series_points(svg, "on_b"), 3);
    cr_expect(strstr(svg, "of each workload against pools.a.count (with pools.b.count)") != NULL);
    free(svg);
    /* a crossed second key still splits lines, and then nothing is compared */
    write_in("sweep.csv", SWEEP2);
    cr_assert_eq(output_plots(dir, NULL, why, sizeof why), 0, "%s", why);
    cr_expect(!exists("plots/sweep_compare_pool_utilization_mean.gp"));
}

/* Issue 18, 6: a caption per chart, a constant series in words and not on the frame, a
 * y-range above the highest value, a sweep's results table and whole-number tics. */
Test(plots, charts_are_captioned_and_a_constant_series_is_said_in_words)
{
    write_in("timeseries.csv",
             "bucket_start_s,bucket_end_s,scope,subject,utilization,gpus_held,gpus_busy,"
             "gpus_idle,replicas\n"
             "0,60,pool,a,1,4,4,0,4\n0,60,pool,b,0.5,,,,\n"
             "60,120,pool,a,0.9996,4,4,0,4\n60,120,pool,b,0.8,,,,\n");
    plot_options o = { .rewrite_scripts = true, .png = false, .gnuplot = "/nonexistent/gnuplot" };
    char why[1024];
    cr_expect_eq(output_plots(dir, &o, why, sizeof why), OUTPUT_PLOTS_NO_GNUPLOT);
    char *script = read_in("plots/utilization.gp");
    cr_expect(strstr(script, "# caption: The share of each pool's capacity that is busy") != NULL);
    cr_expect(strstr(script, "a busy share: constant at 1") != NULL, "%s", script);
    cr_expect(strstr(script, "'pool', 'a', 'utilization'") == NULL, "a's flat line not drawn");
    cr_expect(strstr(script, "set yrange [0:0.864]") != NULL, "8%% above b's 0.8");
    free(script);
    cr_expect(!exists("plots/gpus_a.gp"), "every series of a's GPUs is constant");
    char *flat = read_in("plots/constant.txt");
    cr_expect(strstr(flat, "pool a: a GPUs held: constant at 4; a GPUs busy: constant at 4; "
                     "a GPUs idle: constant at 0; a replicas: constant at 4") != NULL, "%s", flat);
    free(flat);

    write_in("sweep.csv", SWEEP1);
    cr_expect_eq(output_plots(dir, &o, why, sizeof why), OUTPUT_PLOTS_NO_GNUPLOT);
    script = read_in("plots/sweep_workload_chat_ttft_p99_s.gp");
    cr_expect(strstr(script, "set xtics (2, 4, 6, 8)") != NULL, "whole numbers: %s", script);
    cr_expect(strstr(script, "# caption: How time to first token, p99 (s) of workload chat "
                     "changes with pools.gpus.count") != NULL);
    free(script);
    cr_assert_eq(output_report(dir, "fixture", NULL, why, sizeof why), 0, "%s", why);
    char *page = read_in("report.html");
    cr_expect(strstr(page, "<th>pools.gpus.count</th><th>chat: time to first token, p99 (s)"
                     "</th></tr>") != NULL, "the results table's header");
    cr_expect(strstr(page, "<tr><td class=\"num\">6</td><td class=\"num\">0.8 &#177; 0.1"
                     "</td></tr>") != NULL, "a row per point, the mean and its half-width");
    cr_expect(strstr(page, "<li>GPUs held, busy and idle, and replicas: pool a: ") != NULL,
              "the constant series in words");
    free(page);
}

/* A search's page: the answer, every probe in the order run, and the target as a line
 * on its metric's chart, whose probes (not in order) are points, not a zig-zag. */
Test(plots, a_search_report_shows_its_answer_and_probes)
{
    write_in("search.csv",
             "probe,pools.gpus.count,scope,subject,metric,value,unit,ci95_lo,ci95_hi,n,target,meets\n"
             "1,2,workload,chat,ttft_p99_s,2.5,s,2.2,2.8,5,ttft_p99_s <= 1,false\n"
             "2,8,workload,chat,ttft_p99_s,0.62,s,0.55,0.7,5,ttft_p99_s <= 1,true\n"
             "3,4,workload,chat,ttft_p99_s,1.25,s,1.1,1.4,5,ttft_p99_s <= 1,false\n"
             "4,6,workload,chat,ttft_p99_s,0.8,s,0.7,0.9,5,ttft_p99_s <= 1,true\n"
             "answer,6,workload,chat,ttft_p99_s,0.8,s,0.7,0.9,5,ttft_p99_s <= 1,true\n");
    write_in("sweep.csv",
             "pools.gpus.count,scope,subject,metric,value,unit,ci95_lo,ci95_hi,n\n"
             "2,workload,chat,ttft_p99_s,2.5,s,2.2,2.8,5\n8,workload,chat,ttft_p99_s,0.62,s,0.55,0.7,5\n"
             "4,workload,chat,ttft_p99_s,1.25,s,1.1,1.4,5\n6,workload,chat,ttft_p99_s,0.8,s,0.7,0.9,5\n");
    plot_options o = { .rewrite_scripts = true, .png = false, .gnuplot = "/nonexistent/gnuplot" };
    char why[1024];
    cr_expect_eq(output_plots(dir, &o, why, sizeof why), OUTPUT_PLOTS_NO_GNUPLOT);
    char *script = read_in("plots/sweep_workload_chat_ttft_p99_s.gp");
    cr_expect(strstr(script, "set arrow from graph 0, first 1 to graph 1, first 1 nohead") != NULL,
              "the target as a line: %s", script);
    cr_expect(strstr(script, "with yerrorbars") != NULL && strstr(script, "linespoints") == NULL,
              "probes out of order are points with their intervals");
    free(script);
    cr_assert_eq(output_report(dir, "fixture", NULL, why, sizeof why), 0, "%s", why);
    char *page = read_in("report.html");
    cr_expect(strstr(page, "<strong>Answer: pools.gpus.count = 6</strong>, where ttft_p99_s is "
                     "0.8 &#177; 0.1 (target ttft_p99_s &lt;= 1)") != NULL, "the answer");
    const char *probes = strstr(page, "<table class=\"probes\">");
    cr_assert_not_null(probes);
    cr_expect(strstr(probes, "<tr><td class=\"num\">3</td><td class=\"num\">4</td><td "
                     "class=\"num\">1.25 &#177; 0.15</td><td>no</td></tr>") != NULL,
              "probe 3 missed at 4");
    int rows = 0;
    for (const char *p = probes; (p = strstr(p, "<tr><td")) && p < strstr(probes, "</table>"); p++)
        rows++;
    cr_expect_eq(rows, 4, "a row per probe, the answer row not repeated");
    free(page);
}

/* Issue 18, 6: an ordinary sweep's chart of a metric with an SLO draws the SLO as a
 * dashed line (the search's target line, with its own label); other charts do not. */
Test(plots, a_sweep_chart_draws_the_slo_of_its_metric)
{
    write_in("sweep.csv", SWEEP1);
    plot_limit slos[] = { { "workload", "chat", "ttft_p99_s", 0.25, "SLO" },
                          { "workload", "other", "tpot_p99_s", 0.05, "SLO" } };
    plot_options o = { .rewrite_scripts = true, .png = false, .gnuplot = "/nonexistent/gnuplot",
                       .limits = slos, .nlimits = 2 };
    char why[1024];
    cr_expect_eq(output_plots(dir, &o, why, sizeof why), OUTPUT_PLOTS_NO_GNUPLOT);
    char *script = read_in("plots/sweep_workload_chat_ttft_p99_s.gp");
    cr_assert_not_null(script);
    cr_expect(strstr(script, "set arrow from graph 0, first 0.25 to graph 1, first 0.25 nohead")
              != NULL, "the SLO as a line: %s", script);
    cr_expect(strstr(script, "set label 'SLO 0.25'") != NULL, "labelled SLO: %s", script);
    cr_expect(strstr(script, "; the dashed line the SLO.") != NULL, "the caption says so");
    free(script);
    o.nlimits = 0;
    cr_expect_eq(output_plots(dir, &o, why, sizeof why), OUTPUT_PLOTS_NO_GNUPLOT);
    script = read_in("plots/sweep_workload_chat_ttft_p99_s.gp");
    cr_expect(strstr(script, "set arrow") == NULL, "no SLO, no line: %s", script);
    free(script);
}

/* Issue 18, 9: a grid search's page names the point found by all its keys, the
 * objective it minimised there, and a column of it per probe. */
Test(plots, a_grid_search_report_shows_its_point_and_objective)
{
    write_in("search.csv",
             "probe,pools.q.count,workloads.mm.service.mean,scope,subject,metric,value,unit,"
             "ci95_lo,ci95_hi,n,target,meets,objective,objective_subject,objective_value,"
             "objective_ci95_lo,objective_ci95_hi\n"
             "1,4,1s,workload,mm,queue_wait_mean_s,0.75,s,0.7,0.8,4,queue_wait_mean_s <= 0.1,"
             "false,minimise servers,q,4,4,4\n"
             "2,5,0.8s,workload,mm,queue_wait_mean_s,0.05,s,0.04,0.06,4,queue_wait_mean_s <= 0.1,"
             "true,minimise servers,q,5,5,5\n"
             "answer,5,0.8s,workload,mm,queue_wait_mean_s,0.05,s,0.04,0.06,4,queue_wait_mean_s <= "
             "0.1,true,minimise servers,q,5,5,5\n");
    char why[1024];
    cr_assert_eq(output_report(dir, "fixture", NULL, why, sizeof why), 0, "%s", why);
    char *page = read_in("report.html");
    cr_expect(strstr(page, "<strong>Answer: pools.q.count = 5, workloads.mm.service.mean = 0.8s"
                     "</strong>: of the points meeting the target (queue_wait_mean_s &lt;= 0.1; "
                     "here 0.05 &#177; 0.01), the one that would minimise servers (5).") != NULL,
              "the answer: %s", page);
    cr_expect(strstr(page, "<tr><td class=\"num\">1</td><td class=\"num\">4</td><td "
                     "class=\"num\">1s</td><td class=\"num\">0.75 &#177; 0.05</td><td>no</td>"
                     "<td class=\"num\">4</td></tr>") != NULL, "probe 1 with its objective");
    free(page);
}

/* Settings of 40 lines fold so a claim's verdict is on the first screen; a headline as
 * long does not (it is the answer). */
Test(plots, long_settings_fold_and_the_headline_never_does)
{
    char text[2048] = "";
    for (int i = 0; i < 40; i++)
        snprintf(text + strlen(text), sizeof text - strlen(text), "line %d\n", i);
    write_in("scenario.txt", text);
    write_in("headline.txt", text);
    char why[1024];
    cr_assert_eq(output_report(dir, "fixture", NULL, why, sizeof why), 0, "%s", why);
    char *page = read_in("report.html");
    const char *fold = strstr(page, "<details><summary>40 lines: show them</summary>");
    cr_expect_not_null(fold, "the settings fold");
    cr_expect(fold && strstr(fold + 1, "<details>") == NULL, "the headline does not");
    cr_expect(fold && fold < strstr(page, "<h2>Headline</h2>"));
    free(page);
}

Test(plots, plot_renders_an_edited_script_and_keeps_it)
{
    if (!have_gnuplot())
        cr_skip_test("gnuplot is not installed (make deps installs gnuplot-nox)");
    write_in("timeseries.csv", TIMESERIES);
    write_in("summary.csv", SUMMARY);
    char args[1024];
    snprintf(args, sizeof args, "plot %s --png", dir);
    cr_assert_eq(cli_run(&out, &err, "%s", args), 0, "%s", err);
    cr_assert(exists("plots/latency.png") && exists("plots/gpus_gpus.png"), "--png: PNG too");
    cr_assert_eq(unlink(path_in("plots/latency.png")), 0);
    /* without --png: the folder holds PNGs (gpus_gpus.png), so the renders include PNG */
    snprintf(args, sizeof args, "plot %s", dir);
    char *script = read_in("plots/latency.gp");
    char *at = strstr(script, "set title 'Latency quantiles over time'");
    cr_assert_not_null(at);
    FILE *f = fopen(path_in("plots/latency.gp"), "w");
    fprintf(f, "%.*sset title 'Tail latency, edited'%s", (int)(at - script), script,
            at + strlen("set title 'Latency quantiles over time'"));
    fclose(f);
    free(script);
    cr_assert_eq(cli_run(&out, &err, "%s", args), 0, "%s", err);
    script = read_in("plots/latency.gp");
    cr_expect(strstr(script, "Tail latency, edited") != NULL, "the edit is kept");
    char *svg = read_in("plots/latency.svg"), *png = read_in("plots/latency.png");
    cr_expect(strstr(svg, "Tail latency, edited") != NULL, "rendered with the new title");
    cr_expect(!strncmp(png, "\x89PNG", 4));
    char *report = read_in("report.html");
    cr_expect(strstr(report, "Tail latency, edited") != NULL);
    cr_expect(strstr(report, "<h1>fixture_run</h1>") != NULL, "the name from summary.csv");
    free(script);
    free(svg);
    free(png);
    free(report);
}

/* The fixture's folder plotted once (its charts rendered), for a test to add a script
 * and plot again with args; skipped without gnuplot. */
static void plotted_once(char *args, size_t size)
{
    if (!have_gnuplot())
        cr_skip_test("gnuplot is not installed (make deps installs gnuplot-nox)");
    write_in("timeseries.csv", TIMESERIES);
    snprintf(args, size, "plot %s", dir);
    cr_assert_eq(cli_run(&out, &err, "%s", args), 0, "%s", err);
}

Test(plots, a_failing_script_exits_1_with_gnuplot_message_and_the_others_render)
{
    char args[1024];
    plotted_once(args, sizeof args);
    unlink(path_in("plots/latency.svg"));
    write_in("plots/broken.gp", "set output 'plots/broken.svg'\nplot no_such_function(x)\n");
    cr_expect_eq(cli_run(&out, &err, "%s", args), 1);
    cr_expect(strstr(err, "plots/broken.gp: gnuplot failed") != NULL, "%s", err);
    cr_expect(strstr(err, "no_such_function") != NULL, "gnuplot's own words: %s", err);
    cr_expect(exists("plots/latency.svg"), "the chart after the broken one is rendered");
    cr_expect(exists("report.html"));
    expect_no_temporary_files();
}

/* A script of the user's that writes its chart elsewhere (not to the variable out) is
 * told how a chart script takes its output, not that the disk may be full. */
Test(plots, a_script_that_ignores_its_output_is_told_how_to_take_it)
{
    char args[1024];
    plotted_once(args, sizeof args);
    unlink(path_in("plots/latency.svg"));
    write_in("plots/own.gp", "set terminal svg\nset output 'own_chart.svg'\nplot sin(x)\n");
    cr_expect_eq(cli_run(&out, &err, "%s", args), 1);
    cr_expect(strstr(err, "plots/own.gp made no svg file where it was asked: a chart script "
                          "takes its terminal and output from the variables term and out")
                  != NULL, "%s", err);
    cr_expect(strstr(err, "as the scripts fleetsim writes do (or the folder refused the "
                          "file)\n") != NULL, "the message whole: %s", err);
    /* what is not a plain file among the renders is not the charts' business */
    unlink(path_in("plots/own.gp"));
    char archive[1100];
    snprintf(archive, sizeof archive, "%s/plots/archive.svg", dir);
    cr_assert_eq(mkdir(archive, 0777), 0);
    cr_expect_eq(cli_run(&out, &err, "%s", args), 0, "%s", err);
    cr_expect(exists("plots/latency.svg"), "the other charts are rendered");
    expect_no_temporary_files();
}

/* A signal while gnuplot renders a script in an endless loop (found by a fuzzing run):
 * fleetsim ended and left gnuplot spinning for ever.  Now gnuplot goes with it. */
Test(plots, an_interrupt_ends_the_render_and_its_gnuplot, .timeout = 60)
{
    char args[1024];
    plotted_once(args, sizeof args);
    write_in("plots/spin.gp", "while (1) { a = 1 }\n");
    cr_expect_eq(cli_run_env(&out, &err, "timeout --foreground -s INT 2 ", "%s", args), 124);
    /* SIGKILL is delivered at once; its exit and reaping may take a moment.  A gnuplot
     * rendering this folder works in it (its commands may come on stdin, not argv) */
    char command[1400];
    snprintf(command, sizeof command, "for i in 1 2 3 4 5 6 7 8 9 10; do left=0; "
             "for p in /proc/[0-9]*; do [ \"$(cat $p/comm 2>/dev/null)\" = gnuplot ] && "
             "[ \"$(readlink $p/cwd 2>/dev/null)\" = '%s' ] && left=1; done; "
             "[ $left = 0 ] && exit 0; sleep 0.5; done; exit 1", dir);
    cr_expect_eq(system(command), 0, "a gnuplot still renders plots/spin.gp");
}

/* Gnuplots started ahead (output_pictures_warm, as a run does) take their commands on
 * stdin, where gnuplot goes on after an error: the render must still stop at the broken
 * chart, report gnuplot's words, render the charts after it, and leave no process. */
Test(plots, charts_from_gnuplots_started_ahead_fail_and_render_as_from_fresh_ones)
{
    if (!have_gnuplot())
        cr_skip_test("gnuplot is not installed (make deps installs gnuplot-nox)");
    write_in("timeseries.csv", TIMESERIES);
    char why[4096];
    output_pictures_warm();
    size_t started = plot_render_waiting();
    cr_assert_gt(started, 0, "gnuplot is on PATH: the processes start");
    cr_assert_eq(output_plots(dir, NULL, why, sizeof why), 0, "%s", why);
    cr_expect_lt(plot_render_waiting(), started, "the render took them");
    expect_well_formed("plots/latency.svg");
    expect_well_formed("plots/gpus_gpus.svg");
    char *svg = read_in("plots/latency.svg");
    cr_expect_eq(series_points(svg, "chat: time to first token, p99"), 5);
    free(svg);

    unlink(path_in("plots/latency.svg"));
    write_in("plots/broken.gp", "set output 'plots/broken.svg'\nplot no_such_function(x)\n");
    plot_options keep = { .rewrite_scripts = false };
    output_pictures_warm();
    started = plot_render_waiting();
    cr_expect_eq(output_plots(dir, &keep, why, sizeof why), -1);
    cr_expect_lt(plot_render_waiting(), started, "the render took them");
    cr_expect(strstr(why, "plots/broken.gp: gnuplot failed") != NULL, "%s", why);
    cr_expect(strstr(why, "no_such_function") != NULL, "gnuplot's own words: %s", why);
    cr_expect(exists("plots/latency.svg"), "the chart after the broken one is rendered");
    expect_no_temporary_files();
    output_pictures_cool();
    cr_expect_eq(waitpid(-1, NULL, WNOHANG), -1, "every gnuplot was waited for");

    /* unused ones end; another program than the one started is started afresh */
    output_pictures_warm();
    output_pictures_cool();
    cr_expect_eq(waitpid(-1, NULL, WNOHANG), -1, "the unused gnuplots were waited for");
    output_pictures_warm();
    plot_options missing = { .rewrite_scripts = false, .gnuplot = "/nonexistent/gnuplot" };
    cr_expect_eq(output_plots(dir, &missing, why, sizeof why), OUTPUT_PLOTS_NO_GNUPLOT, "%s",
                 why);
    output_pictures_cool();
    cr_expect_eq(waitpid(-1, NULL, WNOHANG), -1);
}

static const char SCENARIO[] =
    "local fs = require \"fleetsim\"\n"
    "return fs.scenario {\n"
    "  name = \"tiny_desk\", description = \"Two agents & a <queue>\",\n"
    "  duration = \"2h\", bucket = \"10m\", replications = 3,\n"
    "  pools = { agents = fs.dedicated { count = 2 } },\n"
    "  workloads = {\n"
    "    calls = fs.service { arrivals = fs.poisson { rate = \"60/h\" },\n"
    "                         service = fs.exponential { mean = \"90s\" }, pool = \"agents\" },\n"
    "  },\n"
    "}\n";

Test(plots, without_gnuplot_a_run_writes_scripts_and_says_how_to_draw_them)
{
    char *file = scratch_file(dir, "tiny.lua", SCENARIO), args[2048], expected[1024];
    snprintf(args, sizeof args, "run %s -q -o %s/out", file, dir);
    cr_assert_eq(cli_run_env(&out, &err, "PATH=/nonexistent ", "%s", args), 0, "%s", err);
    snprintf(expected, sizeof expected, "fleetsim: gnuplot not found: %s/out/plots/*.gp "
             "written; install gnuplot-nox (make deps) and run fleetsim plot %s/out\n", dir, dir);
    cr_expect_str_eq(err, expected);
    cr_expect(exists("out/plots/queue_wait.gp"));
    cr_expect(!exists("out/plots/queue_wait.svg"));
    char *report = read_in("out/report.html");
    cr_expect(strstr(report, "No chart rendered") != NULL);
    free(report);
    snprintf(args, sizeof args, "run %s -q --no-plots -o %s/bare", file, dir);
    cr_expect_eq(cli_run(&out, &err, "%s", args), 0, "%s", err);
    cr_expect(exists("bare/summary.csv"));
    cr_expect(!exists("bare/plots") && !exists("bare/report.html"), "--no-plots");
    free(file);
}

/* A PNG costs four to five SVGs to encode (libpng's filters and deflate, measured in
 * gnuplot's profile) and the report needs none: a run renders SVG, and PNG on request. */
Test(plots, a_run_renders_svg_and_png_only_with_the_flag)
{
    if (!have_gnuplot())
        cr_skip_test("gnuplot is not installed (make deps installs gnuplot-nox)");
    char *file = scratch_file(dir, "tiny.lua", SCENARIO), args[2048];
    snprintf(args, sizeof args, "run %s -q -o %s/svg", file, dir);
    cr_assert_eq(cli_run(&out, &err, "%s", args), 0, "%s", err);
    cr_expect(exists("svg/plots/queue_wait.svg"));
    cr_expect(!exists("svg/plots/queue_wait.png"));
    snprintf(args, sizeof args, "run %s -q --png -o %s/both", file, dir);
    cr_assert_eq(cli_run(&out, &err, "%s", args), 0, "%s", err);
    cr_expect(exists("both/plots/queue_wait.svg"));
    char *png = read_in("both/plots/queue_wait.png");
    cr_expect(png && !strncmp(png, "\x89PNG", 4), "a PNG file");
    free(png);
    snprintf(args, sizeof args, "run %s -q -o %s/both", file, dir); /* again, without */
    cr_assert_eq(cli_run(&out, &err, "%s", args), 0, "%s", err);
    cr_expect(!exists("both/plots/queue_wait.png"), "the earlier run's PNG went with it");
    free(file);
}

Test(plots, the_report_is_one_self_contained_page)
{
    if (!have_gnuplot())
        cr_skip_test("gnuplot is not installed (make deps installs gnuplot-nox)");
    char *file = scratch_file(dir, "tiny.lua", SCENARIO), args[2048];
    snprintf(args, sizeof args, "run %s -q -o %s/out", file, dir);
    cr_assert_eq(cli_run(&out, &err, "%s", args), 0, "%s", err);
    cr_expect_str_eq(err, "");
    expect_well_formed("out/report.html");
    char *report = read_in("out/report.html"), *summary = read_in("out/summary.csv");
    cr_expect(strstr(report, "<h1>tiny_desk</h1>") != NULL);
    cr_expect(strstr(report, "Two agents &amp; a &lt;queue&gt;") != NULL, "escaped");
    /* every metric of summary.csv, as a table cell */
    int metrics = 0;
    for (char *line = strchr(summary, '\n'); line && line[1]; line = strchr(line + 1, '\n')) {
        char scope[64], subject[64], metric[128], cell[160];
        if (sscanf(line + 1, "%63[^,],%63[^,],%127[^,]", scope, subject, metric) != 3)
            continue;
        snprintf(cell, sizeof cell, "<td>%s</td>", metric);
        cr_expect(strstr(report, cell) != NULL, "metric %s", metric);
        metrics++;
    }
    cr_expect_gt(metrics, 10);
    plot_list svgs = { 0 };
    char why[256], outdir[1024];
    snprintf(outdir, sizeof outdir, "%s/out", dir);
    cr_assert_eq(output_plots_list(outdir, "svg", &svgs, why, sizeof why), 0);
    cr_expect_geq(svgs.count, 3);
    cr_expect_eq(xml_count_elements(report, "svg"), svgs.count, "every chart inline");
    plot_list_release(&svgs);
    cr_expect(strstr(report, "src=") == NULL, "nothing to fetch");
    cr_expect(strstr(report, "href=\"http") == NULL && strstr(report, "href='http") == NULL);
    cr_expect(strstr(report, "<script") == NULL);
    cr_expect(strstr(report, "id='gpPt0'") == NULL, "ids are kept apart between charts");
    cr_expect(strstr(report, "summary.csv") != NULL, "the list of files");
    if (system("command -v xmllint > /dev/null 2>&1") == 0) {
        char command[1200];
        snprintf(command, sizeof command, "xmllint --noout %s/out/report.html", dir);
        free(out);
        free(err);
        cr_expect_eq(scratch_run(command, &out, &err), 0, "xmllint: %s", err);
    }
    free(report);
    free(summary);
    free(file);
}

Test(plots, the_xml_check_finds_what_is_not_well_formed)
{
    char why[256];
    cr_expect_null(xml_check("<?xml version='1.0'?>\n<a x = '1'><b/>t &amp; &#39;</a>\n", why,
                             sizeof why));
    cr_expect_not_null(xml_check("<a><b></a>", why, sizeof why));
    cr_expect_not_null(xml_check("<a x=1></a>", why, sizeof why));
    cr_expect_not_null(xml_check("<a>&nbsp;</a>", why, sizeof why));
    cr_expect_not_null(xml_check("<a></a><b></b>", why, sizeof why));
    cr_expect_not_null(xml_check("<a>", why, sizeof why));
}

/* Issue 17, finding 6: gnuplot's renders never go through a link planted in plots/.
 * They were written to plots/.NAME.svg.tmp-PID, a name known in advance; now to a
 * fresh folder of the run's own.  In process, so the planted names use this PID. */
Test(plots, a_link_planted_in_plots_is_not_written_through)
{
    if (!have_gnuplot())
        cr_skip_test("gnuplot is not installed (make deps installs gnuplot-nox)");
    write_in("timeseries.csv", TIMESERIES);
    write_in("summary.csv", SUMMARY);
    cr_assert_eq(cli_run(&out, &err, "plot %s", dir), 0, "%s", err);
    char *victim = scratch_file(dir, "victim", "precious\n");
    const char *exts[] = { "svg", "png" };
    for (int i = 0; i < 2; i++) {
        char link_path[1024];
        snprintf(link_path, sizeof link_path, "%s/plots/.latency.%s.tmp-%ld", dir, exts[i],
                 (long)getpid());
        cr_assert_eq(symlink(victim, link_path), 0);
    }
    cr_assert_eq(output_pictures(dir, NULL, NULL, false, true, NULL, 0, stderr), 0);
    char *kept = scratch_read(victim);
    cr_expect_str_eq(kept, "precious\n", "gnuplot wrote through the planted link");
    char *svg = read_in("plots/latency.svg");
    cr_expect(svg && strstr(svg, "<svg") != NULL);
    free(kept), free(svg), free(victim);
}

/* fleetsim plot's exit codes (issue 40): a folder that does not exist, or one that holds
 * no run's results, is a mistake in the command (exit 2, nothing written); it said it
 * could not write report.html (exit 1), or wrote an empty report (exit 0). */
Test(plots, plot_refuses_a_folder_that_is_not_a_runs)
{
    cr_expect_eq(cli_run(&out, &err, "plot %s/none", dir), 2);
    char expected[1024];
    snprintf(expected, sizeof expected, "fleetsim plot: %s/none: no such folder\n", dir);
    cr_expect_str_eq(err, expected);
    cr_expect_eq(cli_run(&out, &err, "plot %s", dir), 2);
    snprintf(expected, sizeof expected, "fleetsim plot: %s holds no run's results "
             "(summary.csv, timeseries.csv, sweep.csv, search.csv or plots/*.gp): give the "
             "folder a run wrote (its -o)\n", dir);
    cr_expect_str_eq(err, expected);
    cr_expect_not(exists("report.html"), "a report of nothing was written");
}
