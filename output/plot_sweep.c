#include "output/plot_sweep.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "output/csv_table.h"

static const char *const ranked[][2] = {
    { "slo_attainment", "share of requests within the SLO" },
    { "ttft_p99_s", "time to first token, p99 (s)" },
    { "tpot_p99_s", "time per output token, p99 (s)" },
    { "e2e_p99_s", "whole response, p99 (s)" },
    { "response_p99_s", "response, p99 (s)" },
    { "queue_wait_p99_s", "queue wait, p99 (s)" },
    { "queue_wait_mean_s", "queue wait, mean (s)" },
    { "wait_probability", "share of requests that wait" },
    { "throughput_per_s", "completed per second" },
    { "throughput_tokens_per_s", "output tokens per second" },
    { "drop_fraction", "share of requests dropped" },
    { "utilization_mean", "busy share" },
    { "batch_occupancy", "batch full (share)" },
    { "gpus_mean", "GPUs held, mean" },
    { "gpus_held_mean", "a model's GPUs held, mean" },
    { "cold_start_wait_mean_s", "wait for a cold start, mean (s)" },
    { "cost_per_mtok_usd", "cost per million output tokens (USD)" },
    { "cost_usd", "cost (USD)" },
    { "energy_per_mtok_kwh", "energy per million output tokens (kWh)" },
    { "carbon_per_mtok_kg", "carbon per million output tokens (kg CO2e)" },
    { "power_peak_kw", "peak power (kW)" },
};

int plot_sweep_rank(const char *metric)
{
    for (size_t i = 0; i < sizeof ranked / sizeof *ranked; i++)
        if (!strcmp(ranked[i][0], metric))
            return (int)i;
    return -1;
}

const char *plot_sweep_words(const char *metric)
{
    int r = plot_sweep_rank(metric);
    return r < 0 ? metric : ranked[r][1];
}

/* The columns of sweep.csv, and the chart being written. */
typedef struct sweep_chart {
    const csv_table *t;
    long scope, subject, metric, unit, value;
    long key1, key2;            /* key2 -1 with one swept key */
    bool key1_numeric;
    bool key1_integral;         /* every value a whole number: tics at the values */
    bool key1_in_order;         /* rising or falling in the file; a search's probes are not: points
                                   and error bars, not lines that zig-zag */
    double target;              /* a search's threshold on this chart's metric, an SLO, or NaN */
    const char *target_label;   /* "target", "SLO" */
    double ylo, yhi;            /* the metric's values and intervals, and the target */
    bool has_ci;                /* some point has an interval (none with one replication):
                                   gnuplot skips a point whose bar ends are missing, and
                                   fails on a chart with none left */
    plot_list key1_values;      /* distinct, in order: category positions */
    long zipped[4];             /* keys that move with key1 (sweep.zip), named in the title */
    size_t nzipped;
    plot_list lines;            /* key2 values (or subjects) with data for this metric */
    bool by_subject;            /* one line per subject of the scope: a comparison */
    size_t row;                 /* the metric's first row */
    char name[200];
} sweep_chart;

static bool same_metric(const sweep_chart *c, size_t a, size_t b)
{
    return !strcmp(csv_table_cell(c->t, a, c->scope), csv_table_cell(c->t, b, c->scope))
        && (c->by_subject
            || !strcmp(csv_table_cell(c->t, a, c->subject), csv_table_cell(c->t, b, c->subject)))
        && !strcmp(csv_table_cell(c->t, a, c->metric), csv_table_cell(c->t, b, c->metric));
}

static void write_quoted_cell(FILE *out, const sweep_chart *c, long column)
{
    plot_script_quote(out, csv_table_cell(c->t, c->row, column));
}

static void write_chart(FILE *out, const void *context)
{
    const sweep_chart *c = context;
    const csv_table *t = c->t;
    const char *key1 = t->header[c->key1];
    const char *metric = csv_table_cell(t, c->row, c->metric);
    const char *words = plot_sweep_words(metric);
    char title[512], whose[300];
    if (c->by_subject)
        snprintf(whose, sizeof whose, "each %s", csv_table_cell(t, c->row, c->scope));
    else
        snprintf(whose, sizeof whose, "%s %s", csv_table_cell(t, c->row, c->scope),
                 csv_table_cell(t, c->row, c->subject));
    char with[300] = "";
    for (size_t i = 0, n = 0; i < c->nzipped; i++)
        n += (size_t)snprintf(with + n, n < sizeof with ? sizeof with - n : 0, "%s%s",
                              i ? ", " : " (with ", t->header[c->zipped[i]]);
    if (c->nzipped && strlen(with) + 2 < sizeof with)
        strcat(with, ")");
    snprintf(title, sizeof title, "%s of %s against %s%s (%s: 95%% interval)", words, whose,
             key1, with, c->key1_numeric && !c->key1_in_order ? "bars" : "band");
    plot_script_head(out, c->name, "sweep.csv", title, key1, words);
    bool bars = c->key1_numeric && !c->key1_in_order;
    fprintf(out, "%sHow %s of %s changes with %s%s%s: the mean over the replications, the "
            "%s its 95%% interval%s%s.\n", PLOT_CAPTION_MARK, words, whose, key1, with,
            c->by_subject ? ", side by side" : "", bars ? "bars" : "band",
            isnan(c->target) ? "" : "; the dashed line the ",
            isnan(c->target) ? "" : c->target_label);
    /* room around the values and intervals, so no line runs along the frame; a range of
     * values that are never negative starts at 0 at the lowest; values all positive and
     * more than 20x apart on a log axis (an overloaded point's 100 s would flatten the
     * others' 40 ms to a line along the floor) */
    double pad = 0.08 * (c->yhi > c->ylo ? c->yhi - c->ylo : fmax(fabs(c->yhi), 1));
    double bottom = c->ylo - pad;
    if (c->ylo >= 0 && bottom < 0)
        bottom = 0;
    fputs("set offsets graph 0.03, graph 0.03, 0, 0\n", out);
    if (c->ylo > 0 && c->yhi > 20 * c->ylo)
        fprintf(out, "set logscale y\nset yrange [%.6g:%.6g]\n", c->ylo / 1.3, c->yhi * 1.3);
    else
        fprintf(out, "set yrange [%.6g:%.6g]\n", bottom, c->yhi + pad);
    fputs("set style fill transparent solid 0.25 noborder\n", out);
    fputs("scope = ", out);
    write_quoted_cell(out, c, c->scope);
    fputs("; subject = ", out);
    write_quoted_cell(out, c, c->subject);
    fputs("; metric = ", out);
    write_quoted_cell(out, c, c->metric);
    if (c->by_subject)
        fputs("\nat(name) = strcol('scope') eq scope && strcol('metric') eq metric"
              " ? column(name) : NaN\n", out);
    else
        fputs("\nat(name) = strcol('scope') eq scope && strcol('subject') eq subject"
              " && strcol('metric') eq metric ? column(name) : NaN\n", out);
    if (c->by_subject) {
        fputs("by(value, name) = strcol('subject') eq value ? at(name) : NaN\n", out);
    } else if (c->key2 >= 0) {
        fputs("by(value, name) = strcol(", out);
        plot_script_quote(out, t->header[c->key2]);
        fputs(") eq value ? at(name) : NaN\n", out);
    }
    if (!isnan(c->target)) {
        fprintf(out, "set arrow from graph 0, first %.6g to graph 1, first %.6g nohead lw 2 "
                "dt 2 lc rgb '#c00000' front\n", c->target, c->target);
        fprintf(out, "set label '%s %.4g' at graph 0.01, first %.6g offset 0, 0.6 "
                "textcolor rgb '#c00000' front\n", c->target_label, c->target, c->target);
    }
    if (c->key1_numeric && c->key1_integral && c->key1_values.count <= 16) {
        fputs("set xtics (", out);  /* whole numbers, at the swept values */
        for (size_t i = 0; i < c->key1_values.count; i++)
            fprintf(out, "%s%s", i ? ", " : "", c->key1_values.names[i]);
        fputs(")\n", out);
    } else if (c->key1_numeric && c->key1_integral) {
        fputs("set format x '%.0f'\n", out);
    }
    if (c->key1_numeric) {
        fputs("x(row) = column(", out);
        plot_script_quote(out, key1);
        fputs(")\n", out);
    } else {  /* text values: evenly spaced, in the order of the file */
        fputs("set xtics (", out);
        for (size_t i = 0; i < c->key1_values.count; i++) {
            fputs(i ? ", " : "", out);
            plot_script_quote(out, c->key1_values.names[i]);
            fprintf(out, " %zu", i);
        }
        fputs(")\nx(row) = ", out);
        for (size_t i = 0; i < c->key1_values.count; i++) {
            fputs("strcol(", out);
            plot_script_quote(out, key1);
            fputs(") eq ", out);
            plot_script_quote(out, c->key1_values.names[i]);
            fprintf(out, " ? %zu : ", i);
        }
        fputs("NaN\n", out);
    }
    bool split = c->by_subject || c->key2 >= 0;
    size_t nlines = split ? c->lines.count : 1;
    for (size_t i = 0; i < nlines; i++) {
        char lo[600], hi[600], mean[600];
        if (split) {
            char q[520];
            size_t n = 0;
            q[n++] = '\'';
            for (const char *p = c->lines.names[i]; *p && n + 3 < sizeof q; p++) {
                if (*p == '\'')
                    q[n++] = '\'';
                q[n++] = *p;
            }
            q[n++] = '\'';
            q[n] = '\0';
            snprintf(lo, sizeof lo, "by(%s, 'ci95_lo')", q);
            snprintf(hi, sizeof hi, "by(%s, 'ci95_hi')", q);
            snprintf(mean, sizeof mean, "by(%s, 'value')", q);
        } else {
            snprintf(lo, sizeof lo, "at('ci95_lo')");
            snprintf(hi, sizeof hi, "at('ci95_hi')");
            snprintf(mean, sizeof mean, "at('value')");
        }
        const char *lead = i == 0 ? "plot 'sweep.csv' using" : "     '' using";
        if ((!c->key1_numeric || c->key1_in_order) && !c->has_ci) {
            fprintf(out, "%s (x(0)):(%s) with linespoints lw 2 pt 7 lc %zu title ", lead, mean,
                    i + 1);
        } else if (!c->key1_numeric || c->key1_in_order) {
            fprintf(out, "%s (x(0)):(%s):(%s) with filledcurves lc %zu notitle, \\\n", lead,
                    lo, hi, i + 1);
            fprintf(out, "     '' using (x(0)):(%s) with linespoints lw 2 pt 7 lc %zu title ",
                    mean, i + 1);
        } else if (!c->has_ci) {
            fprintf(out, "%s (x(0)):(%s) with points pt 7 ps 1.5 lc %zu title ", lead, mean,
                    i + 1);
        } else {
            fprintf(out, "%s (x(0)):(%s):(%s):(%s) with yerrorbars lw 2 pt 7 lc %zu title ",
                    i == 0 ? "plot 'sweep.csv' using" : "     '' using", mean, lo, hi, i + 1);
        }
        if (c->by_subject) {
            plot_script_quote(out, c->lines.names[i]);
        } else if (c->key2 >= 0) {
            char line_title[600];
            snprintf(line_title, sizeof line_title, "%s = %s", t->header[c->key2],
                     c->lines.names[i]);
            plot_script_quote(out, line_title);
        } else {
            char line_title[300];
            snprintf(line_title, sizeof line_title, "%s (mean)", words);
            plot_script_quote(out, line_title);
        }
        fputs(i + 1 < nlines ? ", \\\n" : "\n", out);
    }
}

/* Distinct texts of a column, in order; only rows of the chart's metric when metric. */
static int distinct(sweep_chart *c, long column, bool metric_only, plot_list *out)
{
    for (size_t r = 0; r < c->t->rows; r++) {
        if (metric_only && (!same_metric(c, r, c->row)
                            || isnan(csv_table_number(c->t, r, c->value))))
            continue;
        const char *v = csv_table_cell(c->t, r, column);
        if (*v && !plot_list_has(out, v) && plot_list_add(out, v) != 0)
            return -1;
    }
    return 0;
}

/* Whether column k takes two values at one value of column `of` (crossed with it), not
 * one each (zipped with it, or constant); `values` the distinct values of `of`. */
static bool varies_at(const csv_table *t, long of, const plot_list *values, long k)
{
    size_t n = values->count;
    const char **seen = calloc(n ? n : 1, sizeof *seen);
    bool varies = false;
    for (size_t r = 0; seen && !varies && r < t->rows; r++) {
        const char *x = csv_table_cell(t, r, of), *v = csv_table_cell(t, r, k);
        for (size_t i = 0; i < n; i++) {
            if (strcmp(values->names[i], x))
                continue;
            if (!seen[i])
                seen[i] = v;
            else if (strcmp(seen[i], v))
                varies = true;
            break;
        }
    }
    free(seen);
    return varies;
}

static bool varies_within(const sweep_chart *c, long k)
{
    return varies_at(c->t, c->key1, &c->key1_values, k);
}

/* How well column k serves as the x axis, higher better: its distinct values (a key
 * zipped with a constant or a repeated list says less), then numbers over text, then
 * values that rise or fall in the file's order over ones that jump about. */
static double axis_score(const plot_list *values)
{
    bool numeric = true, rising = true, falling = true;
    for (size_t i = 0; i < values->count; i++) {
        char *end;
        double x = strtod(values->names[i], &end);
        numeric &= end != values->names[i] && !*end && !isnan(x);
        if (i && numeric) {
            double before = strtod(values->names[i - 1], NULL);
            rising &= x > before;
            falling &= x < before;
        }
    }
    return 4.0 * (double)values->count + 2.0 * numeric + (numeric && (rising || falling));
}

/* The x axis: the first swept key, or a key zipped with it (one of them a function of
 * the other) that reads better (axis_score); the others zipped with it go in *zipped.
 * A zipped sweep of { pools.gpus.count = { 8, 16, 32 }, pools.gpus.gpu = { "H100",
 * "H100", "H200" } } is drawn against the count, whichever name sorts first. */
static int choose_x(sweep_chart *c)
{
    long *zipped = c->zipped;
    size_t *nzipped = &c->nzipped, max = sizeof c->zipped / sizeof c->zipped[0];
    const csv_table *t = c->t;
    plot_list first = { 0 };
    if (distinct(c, 0, false, &first) != 0)
        return -1;
    long best = 0;
    double best_score = axis_score(&first);
    *nzipped = 0;
    for (long k = 1; k < c->scope; k++) {
        plot_list values = { 0 };
        if (distinct(c, k, false, &values) != 0) {
            plot_list_release(&first);
            return -1;
        }
        /* one a function of the other: zipped (crossed keys each vary at the other's) */
        bool together = !varies_at(t, 0, &first, k) || !varies_at(t, k, &values, 0);
        double score = axis_score(&values);
        plot_list_release(&values);
        if (!together)
            continue;
        if (*nzipped < max)
            zipped[(*nzipped)++] = k;
        if (score > best_score) {
            best = k;
            best_score = score;
        }
    }
    plot_list_release(&first);
    for (size_t i = 0; i < *nzipped; i++) /* the partners of the one chosen */
        if (zipped[i] == best)
            zipped[i] = 0;
    c->key1 = best;
    return 0;
}

static int chart_metric(const char *dir, sweep_chart *c, plot_list *written, char *err,
                        size_t err_size)
{
    plot_list_release(&c->lines);
    if ((c->by_subject || c->key2 >= 0)
        && distinct(c, c->by_subject ? c->subject : c->key2, true, &c->lines) != 0) {
        snprintf(err, err_size, "out of memory");
        return -1;
    }
    c->ylo = isnan(c->target) ? INFINITY : c->target;
    c->yhi = isnan(c->target) ? -INFINITY : c->target;
    long lo = csv_table_column(c->t, "ci95_lo"), hi = csv_table_column(c->t, "ci95_hi");
    c->has_ci = false;
    for (size_t r = 0; r < c->t->rows; r++) {
        if (!same_metric(c, r, c->row))
            continue;
        double v[] = { csv_table_number(c->t, r, c->value), csv_table_number(c->t, r, lo),
                       csv_table_number(c->t, r, hi) };
        c->has_ci |= !isnan(v[1]) && !isnan(v[2]);
        for (int i = 0; i < 3; i++)
            if (!isnan(v[i])) {
                c->ylo = fmin(c->ylo, v[i]);
                c->yhi = fmax(c->yhi, v[i]);
            }
    }
    char joined[400], safe[190];
    if (c->by_subject)
        snprintf(joined, sizeof joined, "sweep_compare_%s_%s",
                 csv_table_cell(c->t, c->row, c->scope), csv_table_cell(c->t, c->row, c->metric));
    else
        snprintf(joined, sizeof joined, "sweep_%s_%s_%s", csv_table_cell(c->t, c->row, c->scope),
                 csv_table_cell(c->t, c->row, c->subject), csv_table_cell(c->t, c->row, c->metric));
    plot_script_name(safe, sizeof safe, joined);
    snprintf(c->name, sizeof c->name, "%s", safe);
    for (int k = 2; plot_list_has(written, c->name); k++)  /* names that cleaned alike */
        snprintf(c->name, sizeof c->name, "%s_%d", safe, k);
    return plot_script_emit(dir, c->name, write_chart, c, written, err, err_size);
}

/* The conditions of a search's target, from search.csv's first probe's rows: each
 * "METRIC OP NUMBER" and its subject. */
enum { SWEEP_MAX_TARGETS = 8 };
typedef struct sweep_target {
    char metric[128], subject[256];
    double value;
} sweep_target;

static size_t search_targets(const char *dir, sweep_target *out, size_t max)
{
    char path[4096], err[256];
    snprintf(path, sizeof path, "%s/search.csv", dir);
    csv_table t;
    size_t n = 0;
    long target = -1, sub = -1, probe = -1;
    if (csv_table_read(path, &t, err, sizeof err) == 0 && t.rows > 0
        && (target = csv_table_column(&t, "target")) >= 0
        && (sub = csv_table_column(&t, "subject")) >= 0
        && (probe = csv_table_column(&t, "probe")) >= 0) {
        const char *first = csv_table_cell(&t, 0, probe);
        for (size_t r = 0; r < t.rows && n < max && !strcmp(csv_table_cell(&t, r, probe), first);
             r++) {
            char op[4];
            if (sscanf(csv_table_cell(&t, r, target), "%127s %3s %lf", out[n].metric, op,
                       &out[n].value) != 3)
                continue;
            snprintf(out[n].subject, sizeof out[n].subject, "%s", csv_table_cell(&t, r, sub));
            n++;
        }
    }
    csv_table_release(&t);
    return n;
}

int plot_sweep_scripts(const char *dir, const plot_limit *limits, size_t nlimits,
                       plot_list *written, char *err, size_t err_size)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/sweep.csv", dir);
    csv_table t;
    int got = csv_table_read(path, &t, err, err_size);
    if (got != 0) {
        csv_table_release(&t);
        return got > 0 ? 0 : -1;
    }
    sweep_chart c = {
        .t = &t, .scope = csv_table_column(&t, "scope"),
        .subject = csv_table_column(&t, "subject"), .metric = csv_table_column(&t, "metric"),
        .unit = csv_table_column(&t, "unit"), .value = csv_table_column(&t, "value"),
        .key1 = 0, .key2 = -1, .key1_numeric = true, .key1_integral = true,
        .key1_in_order = true,
    };
    int status = 0;
    if (c.scope < 1 || c.subject < 0 || c.metric < 0 || c.value < 0
        || csv_table_column(&t, "ci95_lo") < 0 || csv_table_column(&t, "ci95_hi") < 0) {
        snprintf(err, err_size, "%s: expected the swept keys, then scope,subject,metric,value,"
                 "unit,ci95_lo,ci95_hi,n", path);
        status = -1;
    }
    if (status == 0 && choose_x(&c) != 0) {
        snprintf(err, err_size, "out of memory");
        status = -1;
    }
    for (size_t r = 0; status == 0 && r < t.rows; r++) {
        const char *v = csv_table_cell(&t, r, c.key1);
        double x = csv_table_number(&t, r, c.key1);
        if (*v && isnan(x))
            c.key1_numeric = false;
        if (*v && x != floor(x))
            c.key1_integral = false;
    }
    if (status == 0 && distinct(&c, c.key1, false, &c.key1_values) != 0) {
        snprintf(err, err_size, "out of memory");
        status = -1;
    }
    /* lines by the first other key that varies at one value of the first: keys zipped
     * with the first move with it and split nothing */
    for (long k = 0; status == 0 && k < c.scope && c.key2 < 0; k++)
        if (k != c.key1 && varies_within(&c, k))
            c.key2 = k;
    /* in order either way (a sweep may list its values falling): lines; a search's probes
     * jump about: points */
    bool rising = true, falling = true;
    for (size_t i = 1; status == 0 && c.key1_numeric && i < c.key1_values.count; i++) {
        double now = strtod(c.key1_values.names[i], NULL);
        double before = strtod(c.key1_values.names[i - 1], NULL);
        rising &= now > before;
        falling &= now < before;
    }
    c.key1_in_order = rising || falling;
    sweep_target targets[SWEEP_MAX_TARGETS];
    size_t ntargets = search_targets(dir, targets, SWEEP_MAX_TARGETS);
    /* the metrics, each by its first row, and whether any point has its value */
    size_t *first = malloc((t.rows + 1) * sizeof *first), nmetrics = 0;
    bool *valued = calloc(t.rows + 1, sizeof *valued), *moves = calloc(t.rows + 1, 1);
    /* the highest low end and the lowest high end of the points' 95% intervals (the
     * values where a point has none): apart, some two points differ beyond chance */
    double *top_lo = malloc((t.rows + 1) * sizeof *top_lo);
    double *bottom_hi = malloc((t.rows + 1) * sizeof *bottom_hi);
    long lo_col = csv_table_column(&t, "ci95_lo"), hi_col = csv_table_column(&t, "ci95_hi");
    if (status == 0 && (!first || !valued || !moves || !top_lo || !bottom_hi)) {
        snprintf(err, err_size, "out of memory");
        status = -1;
    }
    for (size_t r = 0; status == 0 && r < t.rows; r++) {
        size_t m = 0;
        while (m < nmetrics && !same_metric(&c, first[m], r))
            m++;
        if (m == nmetrics) {
            first[nmetrics++] = r;
            top_lo[m] = -INFINITY;
            bottom_hi[m] = INFINITY;
        }
        double x = csv_table_number(&t, r, c.value), x0 = csv_table_number(&t, first[m], c.value);
        valued[m] |= !isnan(x);
        moves[m] |= !isnan(x) && isnan(x0); /* a value where the first point had none */
        if (isnan(x))
            continue;
        double lo = csv_table_number(&t, r, lo_col), hi = csv_table_number(&t, r, hi_col);
        top_lo[m] = fmax(top_lo[m], isnan(lo) ? x : lo);
        bottom_hi[m] = fmin(bottom_hi[m], isnan(hi) ? x : hi);
    }
    /* a change within the points' intervals is chance: it leads no chart (issue 39) */
    for (size_t m = 0; status == 0 && m < nmetrics; m++)
        moves[m] |= top_lo[m] > bottom_hi[m] + 1e-9 * fmax(1, fabs(bottom_hi[m]));
    free(top_lo);
    free(bottom_hi);
    /* the ranked metrics that move beyond chance: a flat line, or one within the noise,
     * is in the results table, not a chart */
    for (size_t m = 0; status == 0 && m < nmetrics; m++) {
        c.row = first[m];
        const char *scope = csv_table_cell(&t, c.row, c.scope);
        const char *subject = csv_table_cell(&t, c.row, c.subject);
        const char *metric = csv_table_cell(&t, c.row, c.metric);
        c.target = NAN;
        c.target_label = "target";
        for (size_t k = 0; k < ntargets && isnan(c.target); k++)
            if (!strcmp(metric, targets[k].metric) && !strcmp(subject, targets[k].subject))
                c.target = targets[k].value;
        for (size_t k = 0; k < nlimits && isnan(c.target); k++)
            if (!strcmp(limits[k].scope, scope) && !strcmp(limits[k].subject, subject)
                && !strcmp(limits[k].metric, metric)) {
                c.target = limits[k].value;
                c.target_label = limits[k].label;
            }
        if (valued[m] && moves[m] && plot_sweep_rank(csv_table_cell(&t, c.row, c.metric)) >= 0)
            status = chart_metric(dir, &c, written, err, err_size);
    }
    /* a one-dimensional sweep of several workloads (or pools) with a metric that moves for
     * at least two of them: that metric side by side, one line a subject */
    for (size_t m = 0; status == 0 && c.key2 < 0 && m < nmetrics; m++) {
        if (!valued[m] || !moves[m] || plot_sweep_rank(csv_table_cell(&t, first[m], c.metric)) < 0)
            continue;
        size_t earlier = 0, moving = 0;
        for (size_t o = 0; o < nmetrics; o++) {
            bool alike = !strcmp(csv_table_cell(&t, first[o], c.scope),
                                 csv_table_cell(&t, first[m], c.scope))
                         && !strcmp(csv_table_cell(&t, first[o], c.metric),
                                    csv_table_cell(&t, first[m], c.metric));
            earlier += alike && o < m;
            moving += alike && valued[o] && moves[o];
        }
        if (earlier || moving < 2)
            continue; /* drawn at its first subject, or nothing to compare */
        c.row = first[m];
        c.by_subject = true;
        c.target = NAN;
        status = chart_metric(dir, &c, written, err, err_size);
        c.by_subject = false;
    }
    free(first);
    free(valued);
    free(moves);
    plot_list_release(&c.key1_values);
    plot_list_release(&c.lines);
    csv_table_release(&t);
    return status;
}
