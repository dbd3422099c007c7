#include "output/report.h"

#include <dirent.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "output/answer.h"
#include "output/atomic_file.h"
#include "output/csv_table.h"
#include "output/html_text.h"
#include "output/plot_script.h"
#include "output/plot_sweep.h"
#include "output/plots.h"
#include "output/verdict.h"
#include "sim/plain_file.h"
#include "sim/version.h"

static const char style[] =
    "body{font-family:system-ui,-apple-system,'Segoe UI',Arial,sans-serif;margin:2em auto;"
    "max-width:1000px;padding:0 1em;color:#222;background:#fff}\n"
    "h1{margin-bottom:.2em}h2{margin-top:1.6em;border-bottom:1px solid #ddd}\n"
    "table{border-collapse:collapse;font-size:90%}\n"
    "th,td{padding:.2em .6em;border-bottom:1px solid #eee;text-align:left}\n"
    "td.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}\n"
    "figure{margin:1.2em 0}svg{width:100%;height:auto;display:block}\n"
    "figcaption,.note{color:#666;font-size:85%}code{font-size:95%}\n"
    ".caption{color:#222;font-size:110%}.wide{overflow-x:auto}\n"
    /* a wide table scrolls under its first column, which stays (issue 39) */
    ".wide td:first-child,.wide th:first-child{position:sticky;left:0;background:#fff}\n"
    ".wide tr.best td:first-child{background:#f2faf5}\n"
    "tr.best td{font-weight:600;background:#f2faf5}\n"
    "pre{font-size:85%;overflow-x:auto;background:#f7f7f7;padding:.6em;white-space:pre}\n";

/* Charts in reading order: latency first, cost last, other names after, by name; a
 * sweep's by its metric's importance (the longest suffix that is a ranked metric). */
static int rank(const char *name)
{
    if (!strncmp(name, "sweep_", 6)) {
        /* a metric side by side leads that metric's own charts */
        int single = strncmp(name, "sweep_compare_", 14) != 0;
        for (const char *p = name + 6; (p = strchr(p, '_')); p++)
            if (plot_sweep_rank(p + 1) >= 0)
                return 200 + 2 * plot_sweep_rank(p + 1) + single;
        return 400;
    }
    static const char *const order[] = {
        "latency", "queue_wait", "throughput", "utilization", "queue_length", "gpus",
        "gpu_allocation", "fragmentation", "tasks_pending", "cost", "power",
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
    fputs("<div class=\"wide\"><table>\n<thead><tr><th>scope</th><th>subject</th><th>metric</th>"
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
    fputs("</tbody>\n</table></div>\n", out);
    csv_table_release(&t);
}

static void write_interval(FILE *out, const csv_table *t, size_t r, long value, long lo, long hi)
{
    write_number(out, csv_table_number(t, r, value));
    double half = (csv_table_number(t, r, hi) - csv_table_number(t, r, lo)) / 2;
    if (!isnan(half) && half > 0)
        fprintf(out, " &#177; %.2g", half);
}

/* "k1 = v1, k2 = v2": the key columns (1 .. keys - 1) of row r. */
static void write_keys_of(FILE *out, const csv_table *t, size_t r, long keys)
{
    for (long k = 1; k < keys; k++) {
        fputs(k > 1 ? ", " : "", out);
        html_escape(out, t->header[k]);
        fputs(" = ", out);
        html_escape(out, csv_table_cell(t, r, k));
    }
}

/* The target's conditions a probe has rows for in search.csv: the rows of its first. */
static size_t search_conditions(const csv_table *t)
{
    size_t n = 1;
    while (n < t->rows && !strcmp(csv_table_cell(t, n, 0), csv_table_cell(t, 0, 0)))
        n++;
    return n;
}

/* "ttft_p99_s <= 1 and tpot_p99_s <= 0.05": the target of conditions rows from r. */
static void write_target(FILE *out, const csv_table *t, size_t r, size_t conditions, long target)
{
    for (size_t c = 0; c < conditions; c++) {
        fputs(c ? " and " : "", out);
        html_escape(out, csv_table_cell(t, r + c, target));
    }
}

/* "ttft_p99_s is 0.8 &#177; 0.01 and ...": the measured values of conditions rows from r. */
static void write_measured(FILE *out, const csv_table *t, size_t r, size_t conditions,
                           long metric, long value, long lo, long hi)
{
    for (size_t c = 0; c < conditions; c++) {
        fputs(c ? (c + 1 == conditions ? " and " : ", ") : "", out);
        html_escape(out, csv_table_cell(t, r + c, metric));
        fputs(" is ", out);
        write_interval(out, t, r + c, value, lo, hi);
    }
}

/* A search's answer and its probes, in the order run, from search.csv: the key columns
 * come between probe and scope; a grid search's objective after meets; a row for each
 * condition of the target, the answer's last. */
static void write_search(FILE *out, const char *dir)
{
    char path[4096], err[512];
    snprintf(path, sizeof path, "%s/search.csv", dir);
    csv_table t;
    long keys = -1;
    if (csv_table_read(path, &t, err, sizeof err) != 0 || t.columns < 12 || t.rows == 0
        || (keys = csv_table_column(&t, "scope")) < 2) {
        csv_table_release(&t);
        return;
    }
    long metric = csv_table_column(&t, "metric"), value = csv_table_column(&t, "value");
    long lo = csv_table_column(&t, "ci95_lo"), hi = csv_table_column(&t, "ci95_hi");
    long target = csv_table_column(&t, "target"), meets = csv_table_column(&t, "meets");
    long objective = csv_table_column(&t, "objective");
    long ovalue = csv_table_column(&t, "objective_value");
    long osubject = csv_table_column(&t, "objective_subject");
    long olo = csv_table_column(&t, "objective_ci95_lo");
    long ohi = csv_table_column(&t, "objective_ci95_hi");
    bool grid = objective >= 0 && ovalue >= 0 && osubject >= 0 && olo >= 0 && ohi >= 0;
    size_t n = search_conditions(&t);
    if (t.rows % n) {
        csv_table_release(&t);
        return;
    }
    size_t answer = t.rows - n;  /* the answer's rows */
    fputs("<h2>Search</h2>\n<p class=\"answer\"><strong>", out);
    if (*csv_table_cell(&t, answer, 1) && grid) { /* objective: "minimise cost_usd" */
        fputs("Answer: ", out);
        write_keys_of(out, &t, answer, keys);
        fputs("</strong>: of the points meeting the target (", out);
        write_target(out, &t, answer, n, target);
        fputs("; here ", out);
        if (n == 1)
            write_interval(out, &t, answer, value, lo, hi);
        else
            write_measured(out, &t, answer, n, metric, value, lo, hi);
        fputs("), the one that would ", out);
        html_escape(out, csv_table_cell(&t, answer, objective));
        fputs(" (", out);
        write_interval(out, &t, answer, ovalue, olo, ohi);
        fputs(").</p>\n", out);
    } else if (*csv_table_cell(&t, answer, 1)) {
        fputs("Answer: ", out);
        write_keys_of(out, &t, answer, keys);
        fputs("</strong>, where ", out);
        write_measured(out, &t, answer, n, metric, value, lo, hi);
        fputs(" (target ", out);
        write_target(out, &t, answer, n, target);
        fputs(").</p>\n", out);
    } else {
        fputs(grid ? "No point of the grid" : "No value of ", out);
        if (!grid)
            html_escape(out, t.header[1]);
        fputs(" probed meets the target</strong> (", out);
        write_target(out, &t, answer, n, target);
        fputs(").</p>\n", out);
    }
    fputs("<div class=\"wide\"><table class=\"probes\">\n<thead><tr><th>probe</th>", out);
    for (long k = 1; k < keys; k++) {
        fputs("<th>", out);
        html_escape(out, t.header[k]);
        fputs("</th>", out);
    }
    for (size_t c = 0; c < n; c++) {
        fputs("<th>", out);
        html_escape(out, csv_table_cell(&t, c, metric));
        fputs(" &#177; 95% interval</th>", out);
    }
    fputs("<th>meets the target</th>", out);
    if (grid) {
        fputs("<th>", out);
        html_escape(out, csv_table_cell(&t, 0, objective));
        fputs(" &#177; 95% interval</th>", out);
    }
    fputs("</tr></thead>\n<tbody>\n", out);
    for (size_t r = 0; r < answer; r += n) {
        fputs("<tr><td class=\"num\">", out);
        html_escape(out, csv_table_cell(&t, r, 0));
        for (long k = 1; k < keys; k++) {
            fputs("</td><td class=\"num\">", out);
            html_escape(out, csv_table_cell(&t, r, k));
        }
        bool all = true;
        for (size_t c = 0; c < n; c++) {
            fputs("</td><td class=\"num\">", out);
            write_interval(out, &t, r + c, value, lo, hi);
            all &= !strcmp(csv_table_cell(&t, r + c, meets), "true");
        }
        fprintf(out, "</td><td>%s</td>", all ? "yes" : "no");
        if (grid) {
            fputs("<td class=\"num\">", out);
            write_interval(out, &t, r, ovalue, olo, ohi);
            fputs("</td>", out);
        }
        fputs("</tr>\n", out);
    }
    fputs("</tbody>\n</table></div>\n", out);
    csv_table_release(&t);
}

/* A sweep's results: one row per point (its keys), a column per ranked metric of each
 * subject that has a value, most important first, each the mean &#177; its interval. */
static void write_sweep_table(FILE *out, const char *dir)
{
    char path[4096], err[512];
    snprintf(path, sizeof path, "%s/sweep.csv", dir);
    csv_table t;
    if (csv_table_read(path, &t, err, sizeof err) != 0) {
        csv_table_release(&t);
        return;
    }
    long scope = csv_table_column(&t, "scope"), subject = csv_table_column(&t, "subject");
    long metric = csv_table_column(&t, "metric"), value = csv_table_column(&t, "value");
    long lo = csv_table_column(&t, "ci95_lo"), hi = csv_table_column(&t, "ci95_hi");
    if (scope < 1 || subject < 0 || metric < 0 || value < 0 || lo < 0 || hi < 0) {
        csv_table_release(&t);
        return;
    }
    enum { MAX_METRICS = 10 };
    size_t cols[MAX_METRICS], ncols = 0;  /* a row of each metric shown */
    for (int want = 0; want < 64 && ncols < MAX_METRICS; want++)
        for (size_t r = 0; r < t.rows && ncols < MAX_METRICS; r++) {
            if (plot_sweep_rank(csv_table_cell(&t, r, metric)) != want
                || isnan(csv_table_number(&t, r, value)))
                continue;
            bool seen = false;
            for (size_t k = 0; k < ncols && !seen; k++)
                seen = !strcmp(csv_table_cell(&t, cols[k], subject), csv_table_cell(&t, r, subject))
                    && !strcmp(csv_table_cell(&t, cols[k], metric), csv_table_cell(&t, r, metric));
            if (!seen)
                cols[ncols++] = r;
        }
    fputs("<h2>Results</h2>\n<p class=\"note\">One row per point: the mean over the "
          "replications &#177; the half-width of its 95% interval. Every metric is in "
          "<code>sweep.csv</code>.</p>\n<div class=\"wide\"><table class=\"results\">\n<thead><tr>", out);
    for (long k = 0; k < scope; k++) {
        fputs("<th>", out);
        html_escape(out, t.header[k]);
        fputs("</th>", out);
    }
    for (size_t k = 0; k < ncols; k++) {
        fputs("<th>", out);
        html_escape(out, csv_table_cell(&t, cols[k], subject));
        fputs(": ", out);
        html_escape(out, plot_sweep_words(csv_table_cell(&t, cols[k], metric)));
        fputs("</th>", out);
    }
    fputs("</tr></thead>\n<tbody>\n", out);
    for (size_t r = 0; r < t.rows; r++) {
        bool first = true;  /* a point's first row: its keys differ from the row before */
        if (r > 0) {
            first = false;
            for (long k = 0; k < scope && !first; k++)
                first = strcmp(csv_table_cell(&t, r, k), csv_table_cell(&t, r - 1, k)) != 0;
        }
        if (!first)
            continue;
        fputs("<tr>", out);
        for (long k = 0; k < scope; k++) {
            fputs("<td class=\"num\">", out);
            html_escape(out, csv_table_cell(&t, r, k));
            fputs("</td>", out);
        }
        for (size_t k = 0; k < ncols; k++) {
            fputs("<td class=\"num\">", out);
            size_t at = r;  /* this point's row of the metric */
            for (; at < t.rows; at++) {
                bool same_point = true;
                for (long j = 0; j < scope && same_point; j++)
                    same_point = !strcmp(csv_table_cell(&t, at, j), csv_table_cell(&t, r, j));
                if (!same_point) {
                    at = t.rows;
                    break;
                }
                if (!strcmp(csv_table_cell(&t, at, subject), csv_table_cell(&t, cols[k], subject))
                    && !strcmp(csv_table_cell(&t, at, metric),
                               csv_table_cell(&t, cols[k], metric)))
                    break;
            }
            if (at < t.rows)
                write_interval(out, &t, at, value, lo, hi);
            else
                fputs("-", out);
            fputs("</td>", out);
        }
        fputs("</tr>\n", out);
    }
    fputs("</tbody>\n</table></div>\n", out);
    csv_table_release(&t);
}

/* The chart's "# caption: " line (what to read in it) as a sentence of its caption. */
static void write_caption(FILE *out, const char *script)
{
    FILE *f = sim_open_plain(script, "r");
    char line[2048];
    size_t n = strlen(PLOT_CAPTION_MARK);
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, PLOT_CAPTION_MARK, n)) {
            line[strcspn(line, "\n")] = '\0';
            fputs("<span class=\"caption\">", out);
            html_escape(out, line + n);
            fputs("</span><br/>", out);
            break;
        }
    if (f)
        fclose(f);
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
        fputs("<figcaption>", out);
        snprintf(path, sizeof path, "%s/plots/%s.gp", dir, name);
        write_caption(out, path);
        fputs("<span class=\"file\">plots/", out);
        html_escape(out, name);
        fputs(".svg, drawn by <code>plots/", out);
        html_escape(out, name);
        fputs(".gp</code></span></figcaption>\n</figure>\n", out);
    }
}

/* plots/constant.txt, the series not drawn because they hold one value, as a list. */
static void write_constants(FILE *out, const char *dir)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/plots/" PLOT_CONSTANT_FILE, dir);
    char *text = html_read_file(path);
    if (!text)
        return;
    fputs("<p class=\"note\">Not drawn, because they hold one value over the whole run:</p>\n"
          "<ul class=\"constant\">\n", out);
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
        fputs("<li>", out);
        html_escape(out, line);
        fputs("</li>\n", out);
    }
    fputs("</ul>\n", out);
    free(text);
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
    size_t lines = 0;
    for (const char *p = text; *p; p++)
        lines += *p == '\n';
    /* long settings folded, so what follows (a claim's verdict, the headline) is on the
     * first screen; the headline is the answer, never folded */
    bool fold = lines > 30 && strcmp(file, "headline.txt") != 0;
    fprintf(out, "<h2>%s</h2>\n<p class=\"note\">%s</p>\n", title, note);
    if (fold)
        fprintf(out, "<details><summary>%zu lines: show them</summary>\n", lines);
    fputs("<pre>", out);
    html_escape(out, text);
    fputs(fold ? "</pre>\n</details>\n" : "</pre>\n", out);
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
    /* a reader's order (issue 18, 6; issue 39, 1): the options ranked where the run
     * compares some, or a search's answer; what was simulated, the verdict, the answer,
     * the charts, then every number */
    output_answer_html(out, dir);
    write_search(out, dir); /* a search's answer before the scenario it varied */
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
    write_constants(out, dir);
    write_sweep_table(out, dir);
    if (nsweep > 0) {
        fputs("<h2>Sweep</h2>\n<p class=\"note\">The metrics that move from point to point, "
              "most important first.</p>\n", out);
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
