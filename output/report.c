#include "output/report.h"

#include <dirent.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "output/atomic_file.h"
#include "output/csv_table.h"
#include "output/html_text.h"
#include "output/plot_script.h"
#include "output/plots.h"
#include "output/verdict.h"
#include "sim/version.h"

static const char style[] =
    "body{font-family:system-ui,-apple-system,'Segoe UI',Arial,sans-serif;margin:2em auto;"
    "max-width:1000px;padding:0 1em;color:#222;background:#fff}\n"
    "h1{margin-bottom:.2em}h2{margin-top:1.6em;border-bottom:1px solid #ddd}\n"
    "table{border-collapse:collapse;font-size:90%}\n"
    "th,td{padding:.2em .6em;border-bottom:1px solid #eee;text-align:left}\n"
    "td.num{text-align:right;font-variant-numeric:tabular-nums}\n"
    "figure{margin:1.2em 0}svg{width:100%;height:auto;display:block}\n"
    "figcaption,.note{color:#666;font-size:85%}code{font-size:95%}\n"
    "pre{font-size:85%;overflow-x:auto;background:#f7f7f7;padding:.6em;white-space:pre}\n";

/* Charts in reading order: latency first, cost last, other names after, by name. */
static int rank(const char *name)
{
    static const char *const order[] = {
        "latency", "queue_wait", "throughput", "utilization", "queue_length", "gpus",
        "gpu_allocation", "fragmentation", "tasks_pending", "cost",
    };
    for (int i = 0; i < (int)(sizeof order / sizeof *order); i++) {
        size_t n = strlen(order[i]);
        if (!strncmp(name, order[i], n) && (name[n] == '\0' || name[n] == '_'))
            return i;
    }
    return 100;
}

static int by_rank(const void *a, const void *b)
{
    const char *x = *(char *const *)a, *y = *(char *const *)b;
    int rx = rank(x), ry = rank(y);
    return rx != ry ? (rx < ry ? -1 : 1) : strcmp(x, y);
}

static void write_number(FILE *out, double x)
{
    if (isnan(x))
        fputs("-", out);
    else
        fprintf(out, "%.4g", x);
}

static void write_summary(FILE *out, const char *dir)
{
    char path[4096], err[512];
    snprintf(path, sizeof path, "%s/summary.csv", dir);
    csv_table t;
    int got = csv_table_read(path, &t, err, sizeof err);
    if (got != 0) {
        fputs("<p class=\"note\">", out);
        html_escape(out, got > 0 ? "No summary.csv in this folder." : err);
        fputs("</p>\n", out);
        csv_table_release(&t);
        return;
    }
    long scope = csv_table_column(&t, "scope"), subject = csv_table_column(&t, "subject");
    long metric = csv_table_column(&t, "metric"), value = csv_table_column(&t, "value");
    long unit = csv_table_column(&t, "unit"), lo = csv_table_column(&t, "ci95_lo");
    long hi = csv_table_column(&t, "ci95_hi"), n = csv_table_column(&t, "n");
    fputs("<table>\n<thead><tr><th>scope</th><th>subject</th><th>metric</th>"
          "<th>value &#177; 95% interval</th><th>unit</th><th>n</th></tr></thead>\n<tbody>\n",
          out);
    for (size_t r = 0; r < t.rows; r++) {
        const char *cells[] = { csv_table_cell(&t, r, scope), csv_table_cell(&t, r, subject),
                                csv_table_cell(&t, r, metric) };
        fputs("<tr>", out);
        for (int i = 0; i < 3; i++) {
            fputs("<td>", out);
            html_escape(out, cells[i]);
            fputs("</td>", out);
        }
        fputs("<td class=\"num\">", out);
        write_number(out, csv_table_number(&t, r, value));
        double half = (csv_table_number(&t, r, hi) - csv_table_number(&t, r, lo)) / 2;
        if (!isnan(half)) {
            fputs(" &#177; ", out);
            fprintf(out, "%.2g", half);
        }
        fputs("</td><td>", out);
        const char *u = csv_table_cell(&t, r, unit);
        html_escape(out, strcmp(u, "1") ? u : "");
        fputs("</td><td class=\"num\">", out);
        html_escape(out, csv_table_cell(&t, r, n));
        fputs("</td></tr>\n", out);
    }
    fputs("</tbody>\n</table>\n", out);
    csv_table_release(&t);
}

/* The rendered charts whose names do (sweep) or do not start with "sweep_". */
static void write_charts(FILE *out, const char *dir, const plot_list *svgs, bool sweep)
{
    for (size_t i = 0; i < svgs->count; i++) {
        const char *name = svgs->names[i];
        bool is_sweep = strncmp(name, "sweep_", 6) == 0;
        if (is_sweep != sweep)
            continue;
        char path[4096], safe[256], prefix[300];
        snprintf(path, sizeof path, "%s/plots/%s.svg", dir, name);
        plot_script_name(safe, sizeof safe, name);
        snprintf(prefix, sizeof prefix, "c-%s-", safe);
        fputs("<figure>\n", out);
        if (html_inline_svg(out, path, prefix) != 0) {
            fputs("<p class=\"note\">", out);
            html_escape(out, path);
            fputs(" holds no SVG.</p>\n", out);
        }
        fputs("<figcaption>plots/", out);
        html_escape(out, name);
        fputs(".svg, drawn by <code>plots/", out);
        html_escape(out, name);
        fputs(".gp</code></figcaption>\n</figure>\n", out);
    }
}

static void write_file_item(FILE *out, const char *dir, const char *relative)
{
    char path[4096];
    struct stat st;
    snprintf(path, sizeof path, "%s/%s", dir, relative);
    if (stat(path, &st) != 0 || !S_ISREG(st.st_mode))
        return;
    fputs("<li><a href=\"", out);
    html_escape(out, relative);
    fputs("\">", out);
    html_escape(out, relative);
    fprintf(out, "</a> (%lld bytes)</li>\n", (long long)st.st_size);
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void write_files(FILE *out, const char *dir)
{
    plot_list files = { 0 };
    DIR *d = opendir(dir);
    struct dirent *entry;
    while (d && (entry = readdir(d)))
        if (entry->d_name[0] != '.' && strcmp(entry->d_name, "report.html") != 0)
            plot_list_add(&files, entry->d_name);
    if (d)
        closedir(d);
    if (files.count > 1)
        qsort(files.names, files.count, sizeof *files.names, by_name);
    fputs("<ul>\n", out);
    for (size_t i = 0; i < files.count; i++)
        write_file_item(out, dir, files.names[i]);
    plot_list_release(&files);
    char plots[4096];
    snprintf(plots, sizeof plots, "%s/plots", dir);
    d = opendir(plots);
    while (d && (entry = readdir(d)))
        if (entry->d_name[0] != '.')
            plot_list_add(&files, entry->d_name);
    if (d)
        closedir(d);
    if (files.count > 1)
        qsort(files.names, files.count, sizeof *files.names, by_name);
    for (size_t i = 0; i < files.count; i++) {
        char relative[600];
        snprintf(relative, sizeof relative, "plots/%s", files.names[i]);
        write_file_item(out, dir, relative);
    }
    plot_list_release(&files);
    fputs("</ul>\n", out);
}

/* The scenario's name when none is given: the last report's, summary.csv's run row, or
 * the folder's name. */
static void find_name(const char *dir, const char *page, char *name, size_t size)
{
    if (html_meta_content(page, "fleetsim-scenario", name, size))
        return;
    char path[4096], err[256];
    snprintf(path, sizeof path, "%s/summary.csv", dir);
    csv_table t;
    if (csv_table_read(path, &t, err, sizeof err) == 0) {
        long scope = csv_table_column(&t, "scope"), subject = csv_table_column(&t, "subject");
        for (size_t r = 0; r < t.rows; r++)
            if (!strcmp(csv_table_cell(&t, r, scope), "run")) {
                snprintf(name, size, "%s", csv_table_cell(&t, r, subject));
                csv_table_release(&t);
                return;
            }
    }
    csv_table_release(&t);
    const char *slash = strrchr(dir, '/');
    snprintf(name, size, "%s", slash && slash[1] ? slash + 1 : dir);
}

/* A text file of the folder (scenario.txt, headline.txt: what check and the run
 * printed) as a section, when there is one. */
static void write_text_section(FILE *out, const char *dir, const char *file, const char *title,
                               const char *note)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    char *text = html_read_file(path);
    if (!text)
        return;
    fprintf(out, "<h2>%s</h2>\n<p class=\"note\">%s</p>\n<pre>", title, note);
    html_escape(out, text);
    fputs("</pre>\n", out);
    free(text);
}

static void write_page(FILE *out, const char *dir, const char *name, const char *description,
                       const plot_list *svgs)
{
    fputs("<!DOCTYPE html>\n<html xmlns=\"http://www.w3.org/1999/xhtml\" lang=\"en\">\n"
          "<head>\n<meta charset=\"utf-8\"/>\n<meta name=\"generator\" content=\"fleetsim "
          FLEETSIM_VERSION "\"/>\n<meta name=\"fleetsim-scenario\" content=\"", out);
    html_escape(out, name);
    fputs("\"/>\n", out);
    if (description) {
        fputs("<meta name=\"description\" content=\"", out);
        html_escape(out, description);
        fputs("\"/>\n", out);
    }
    fputs("<title>", out);
    html_escape(out, name);
    fprintf(out, " - fleetsim report</title>\n<style>\n%s</style>\n</head>\n<body>\n<h1>", style);
    html_escape(out, name);
    fputs("</h1>\n", out);
    if (description) {
        fputs("<p class=\"description\">", out);
        html_escape(out, description);
        fputs("</p>\n", out);
    }
    /* a reader's order (issue 18, 6): what was simulated, the verdict, the answer, the
     * charts, then every number */
    write_text_section(out, dir, "scenario.txt", "Scenario",
                       "Every value the run used, as <code>fleetsim check</code> prints it.");
    output_verdict_html(out, dir); /* the claim first: it is what the run is for */
    write_text_section(out, dir, "headline.txt", "Headline",
                       "The figures that answer the scenario: the mean over the replications "
                       "&#177; the half-width of its 95% interval.");
    size_t nsweep = 0;
    for (size_t i = 0; i < svgs->count; i++)
        nsweep += !strncmp(svgs->names[i], "sweep_", 6);
    if (svgs->count == 0)
        fputs("<h2>Charts</h2>\n<p class=\"note\">No chart rendered: with gnuplot installed "
              "(make deps), <code>fleetsim plot DIR</code> draws them.</p>\n", out);
    if (svgs->count > nsweep) {
        fputs("<h2>Charts</h2>\n", out);
        write_charts(out, dir, svgs, false);
    }
    if (nsweep > 0) {
        fputs("<h2>Sweep</h2>\n", out);
        write_charts(out, dir, svgs, true);
    }
    fputs("<h2>Summary</h2>\n", out);
    write_summary(out, dir);
    fputs("<h2>Files</h2>\n", out);
    write_files(out, dir);
    fputs("<p class=\"note\">Made by fleetsim " FLEETSIM_VERSION ".  To change a chart, edit "
          "its script in plots/ and run <code>fleetsim plot ", out);
    html_escape(out, dir);
    fputs("</code>: it renders the scripts as they are and writes this page again.</p>\n"
          "</body>\n</html>\n", out);
}

int output_report(const char *dir, const char *scenario_name, const char *description,
                  char *err, size_t err_size)
{
    char path[4096], name[1024], kept[4096];
    snprintf(path, sizeof path, "%s/report.html", dir);
    if (!scenario_name) {  /* `fleetsim plot`: keep what the run's report said */
        char *page = html_read_file(path);
        find_name(dir, page, name, sizeof name);
        description = html_meta_content(page, "description", kept, sizeof kept);
        free(page);
        scenario_name = name;
    }
    plot_list svgs = { 0 };
    if (output_plots_list(dir, "svg", &svgs, err, err_size) != 0)
        return -1;
    if (svgs.count > 1)
        qsort(svgs.names, svgs.count, sizeof *svgs.names, by_rank);
    atomic_file *f = atomic_file_open(dir, "report.html", err, err_size);
    if (!f) {
        plot_list_release(&svgs);
        return -1;
    }
    write_page(atomic_file_stream(f), dir, scenario_name, description, &svgs);
    plot_list_release(&svgs);
    return atomic_file_commit(f, err, err_size);
}
