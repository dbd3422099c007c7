#include "output/plot_timeseries.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "output/atomic_file.h"
#include "output/csv_table.h"
#include "output/plot_script.h"

enum { MAX_COLUMNS = 4 };

/* What a chart shows; the series are every (subject, column) with data. */
typedef struct chart_kind {
    const char *name;           /* plots/NAME.gp; per subject: NAME_<subject> */
    const char *title;
    const char *ylabel;
    const char *scope;          /* the subjects it draws */
    const char *requires;       /* a subject counts only if it has this column; or NULL */
    const char *columns[MAX_COLUMNS + 1];
    bool per_subject;           /* one chart per subject, its columns as series */
    bool log_when_wide;         /* log y axis when the values span decades */
    const char *caption;        /* what to read in it, for report.html */
} chart_kind;

static const chart_kind kinds[] = {
    { "latency", "Latency quantiles over time", "seconds", "workload", NULL,
      { "ttft_p99_s", "e2e_p99_s" }, false, true,
      "The slowest 1% of requests over the run: time to first token and the whole response; a line rising to the end means a queue that grows." },
    { "queue_wait", "Queue wait and response time over time", "seconds", "workload",
      "queue_wait_p99_s", { "queue_wait_mean_s", "queue_wait_p99_s", "response_p99_s" },
      false, true,
      "How long requests wait for a server, on average and for the slowest 1%, and their whole response." },
    { "throughput", "Throughput over time", "completed per second", "workload", NULL,
      { "throughput_per_s" }, false, false,
      "Requests completed per second; below the arrival rate means work is left waiting." },
    { "throughput_by_pool", "Requests served by each pool", "completed per second", "pool",
      "throughput_per_s", { "throughput_per_s" }, false, false,
      "Where a workload has groups of replicas (serve, decode, overflow pools), the requests each pool completed per second; their sum is the workload's throughput. A decode pool completes what its prefill pools began." },
    { "utilization", "Utilization over time", "busy share", "pool", NULL,
      { "utilization" }, false, false,
      "The share of each pool's capacity that is busy: its servers, or its replicas with a request in flight." },
    { "batch_size", "Batch size over time", "requests in a batch", "pool", NULL,
      { "batch_size" }, false, false,
      "The requests in each pool's replicas' batches, on average: how full a busy replica is." },
    { "kv_cache", "Key-value cache held over time", "share of the cache", "pool", NULL,
      { "kv_cache_utilization" }, false, false,
      "The share of each pool's replicas' cache that requests hold; near 1, new requests wait for memory rather than for compute." },
    { "queue_length", "Queue length over time", "requests waiting", "pool", NULL,
      { "queue_length" }, false, false,
      "Requests waiting for a server; a line that keeps rising means the pool cannot keep up." },
    { "gpus", "GPUs held, busy and idle, and replicas", "GPUs, replicas", "pool", "gpus_held",
      { "gpus_held", "gpus_busy", "gpus_idle", "replicas" }, true, false,
      "GPUs the pool holds, how many of them work, and its replicas: the gap between held and busy is paid for and idle." },
    { "gpu_allocation", "GPU allocation over time", "share of GPU capacity allocated",
      "workload", NULL, { "gpu_allocation" }, false, false,
      "The share of the GPUs' capacity the tasks hold." },
    { "fragmentation", "GPU fragmentation over time", "share of GPU capacity stranded",
      "workload", NULL, { "fragmentation" }, false, false,
      "The share of the GPUs' capacity left idle in pieces too small for a waiting task." },
    { "tasks_pending", "Tasks waiting over time", "tasks", "workload", NULL,
      { "tasks_pending" }, false, false,
      "Tasks waiting for GPUs." },
    { "cost", "Cumulative cost per pool", "USD", "pool", NULL, { "cost_usd" }, false, false,
      "What each pool has cost so far; the slope is its rate." },
    { "power", "Power drawn per pool", "kW at the facility", "pool", NULL, { "power_kw" },
      false, false,
      "What each pool draws, its GPUs, their servers and the site's overhead (PUE), averaged over each bucket; the site's contract caps the sum." },
};

/* What the table holds for one (subject, column): cells filled, and their range. */
typedef struct cell_stats {
    size_t filled;
    double min, max;
} cell_stats;

typedef struct series_data {
    const csv_table *table;
    size_t nsubjects;
    size_t *subject_row;        /* a row of each subject: its scope and name */
    cell_stats *stats;          /* nsubjects x table columns */
} series_data;

typedef struct series {
    size_t subject;
    const char *column;
    size_t color, dash;         /* a colour per subject, a dash per column */
    char title[256];
} series;

/* One chart to write: the kind, and the series picked for it. */
typedef struct chart {
    const chart_kind *kind;
    const series_data *data;
    char name[160];
    char title[320];
    const char *xlabel;
    double unit_s;              /* seconds per unit of the x axis */
    series items[64];
    size_t count;
    bool log_y;
    char constants[1024];       /* series left out as constant, in words */
} chart;

/* A column as a reader names it, for legends. */
static const char *in_words(const char *column)
{
    static const char *const words[][2] = {
        { "ttft_p99_s", "time to first token, p99" }, { "e2e_p99_s", "whole response, p99" },
        { "queue_wait_mean_s", "queue wait, mean" }, { "queue_wait_p99_s", "queue wait, p99" },
        { "response_p99_s", "response, p99" }, { "throughput_per_s", "completed per second" },
        { "utilization", "busy share" }, { "queue_length", "requests waiting" },
        { "gpus_held", "GPUs held" }, { "gpus_busy", "GPUs busy" },
        { "gpus_idle", "GPUs idle" }, { "replicas", "replicas" },
        { "gpu_allocation", "share allocated" }, { "fragmentation", "share stranded" },
        { "tasks_pending", "tasks waiting" }, { "cost_usd", "cost (USD)" },
        { "power_kw", "power (kW)" },
    };
    for (size_t i = 0; i < sizeof words / sizeof *words; i++)
        if (!strcmp(words[i][0], column))
            return words[i][1];
    return column;
}

static const char *subject_scope(const series_data *d, size_t s)
{
    return csv_table_cell(d->table, d->subject_row[s], csv_table_column(d->table, "scope"));
}

static const char *subject_name(const series_data *d, size_t s)
{
    return csv_table_cell(d->table, d->subject_row[s], csv_table_column(d->table, "subject"));
}

static const cell_stats *stats_of(const series_data *d, size_t s, const char *column)
{
    long c = csv_table_column(d->table, column);
    return c < 0 ? NULL : &d->stats[s * d->table->columns + (size_t)c];
}

/* Finds each subject and measures what each of its columns holds.  Rows come in
 * subject order bucket after bucket, so the next subject is tried first. */
static int measure(const csv_table *t, series_data *d, char *err, size_t err_size)
{
    long scope = csv_table_column(t, "scope"), subject = csv_table_column(t, "subject");
    memset(d, 0, sizeof *d);
    d->table = t;
    d->subject_row = malloc((t->rows + 1) * sizeof *d->subject_row);
    if (!d->subject_row)
        goto oom;
    size_t *row_subject = malloc((t->rows + 1) * sizeof *row_subject);
    if (!row_subject)
        goto oom;
    size_t guess = 0;
    for (size_t r = 0; r < t->rows; r++) {
        const char *sc = csv_table_cell(t, r, scope), *su = csv_table_cell(t, r, subject);
        size_t found = d->nsubjects;
        for (size_t k = 0; k < d->nsubjects && found == d->nsubjects; k++) {
            size_t s = (guess + k) % d->nsubjects;
            size_t at = d->subject_row[s];
            if (!strcmp(csv_table_cell(t, at, scope), sc)
                && !strcmp(csv_table_cell(t, at, subject), su))
                found = s;
        }
        if (found == d->nsubjects)
            d->subject_row[d->nsubjects++] = r;
        row_subject[r] = found;
        guess = found + 1;
    }
    d->stats = calloc(d->nsubjects * t->columns + 1, sizeof *d->stats);
    if (!d->stats) {
        free(row_subject);
        goto oom;
    }
    for (size_t r = 0; r < t->rows; r++)
        for (size_t c = 0; c < t->columns; c++) {
            double x = csv_table_number(t, r, (long)c);
            cell_stats *st = &d->stats[row_subject[r] * t->columns + c];
            if (isnan(x))
                continue;
            st->min = st->filled ? fmin(st->min, x) : x;
            st->max = st->filled ? fmax(st->max, x) : x;
            st->filled++;
        }
    free(row_subject);
    return 0;
oom:
    free(d->subject_row);
    d->subject_row = NULL;
    snprintf(err, err_size, "out of memory reading timeseries.csv");
    return -1;
}

static bool subject_qualifies(const series_data *d, size_t s, const chart_kind *k)
{
    if (strcmp(subject_scope(d, s), k->scope) != 0)
        return false;
    const cell_stats *st = k->requires ? stats_of(d, s, k->requires) : NULL;
    return !k->requires || (st && st->filled > 0);
}

/* Adds the subject's columns that hold data as series of c. */
static void add_series(chart *c, size_t s)
{
    const chart_kind *k = c->kind;
    size_t ncolumns = 0, color = c->count ? c->items[c->count - 1].color + 1 : 1;
    while (k->columns[ncolumns])
        ncolumns++;
    for (size_t i = 0; i < ncolumns && c->count < sizeof c->items / sizeof *c->items; i++) {
        const cell_stats *st = stats_of(c->data, s, k->columns[i]);
        if (!st || st->filled == 0)
            continue;
        if (st->max - st->min <= 1e-3 * fabs(st->max)) {  /* flat to 4 digits */
            /* a flat line on the frame says less than the words (issue 18, 6) */
            size_t n = strlen(c->constants);
            snprintf(c->constants + n, sizeof c->constants - n, "%s%s %s: constant at %.4g",
                     n ? "; " : "", subject_name(c->data, s), in_words(k->columns[i]),
                     st->max);
            continue;
        }
        series *it = &c->items[c->count++];
        it->subject = s;
        it->column = k->columns[i];
        it->color = k->per_subject ? i + 1 : color;
        it->dash = i + 1;
        if (k->per_subject)
            snprintf(it->title, sizeof it->title, "%s", in_words(it->column));
        else if (ncolumns == 1)
            snprintf(it->title, sizeof it->title, "%s", subject_name(c->data, s));
        else
            snprintf(it->title, sizeof it->title, "%s: %s", subject_name(c->data, s),
                     in_words(it->column));
    }
}

/* A log axis when every value is positive and they span more than a factor of 20:
 * a p99 next to a mean, a time-to-first-token next to a whole response. */
static bool wants_log(const chart *c)
{
    double lo = INFINITY, hi = 0;
    for (size_t i = 0; i < c->count; i++) {
        const cell_stats *st = stats_of(c->data, c->items[i].subject, c->items[i].column);
        lo = fmin(lo, st->min);
        hi = fmax(hi, st->max);
    }
    return c->kind->log_when_wide && lo > 0 && hi > 20 * lo;
}

/* What the utilization chart cannot say of a pool of LLM replicas, from its figures: a
 * replica is busy with one request as with a full batch, so its busy share near 1 is
 * not a bottleneck unless its batches are full too ("" where no subject batches). */
static void batch_note(char *buf, size_t size, const chart *c)
{
    buf[0] = '\0';
    if (strcmp(c->kind->name, "utilization"))
        return;
    double lo = INFINITY, hi = -INFINITY;
    for (size_t s = 0; s < c->data->nsubjects; s++) {
        const cell_stats *st = stats_of(c->data, s, "batch_size");
        if (st && st->filled) {
            lo = fmin(lo, st->min);
            hi = fmax(hi, st->max);
        }
    }
    if (hi >= lo)
        snprintf(buf, size, " An LLM replica counts as busy with one request as with a full "
                 "batch; its batches held %.3g to %.3g requests on average (the batch size "
                 "chart), so a busy share near 1 is a bottleneck only where they are full.",
                 lo, hi);
}

static void write_chart(FILE *out, const void *context)
{
    const chart *c = context;
    char note[320];
    batch_note(note, sizeof note, c);
    plot_script_head(out, c->name, "timeseries.csv", c->title, c->xlabel, c->kind->ylabel);
    fprintf(out, "%s%s%s%s%s\n", PLOT_CAPTION_MARK, c->kind->caption, note,
            *c->constants ? " Constant over the run, so not drawn: " : "", c->constants);
    double lo = INFINITY, hi = -INFINITY;
    for (size_t i = 0; i < c->count; i++) {
        const cell_stats *st = stats_of(c->data, c->items[i].subject, c->items[i].column);
        lo = fmin(lo, st->min);
        hi = fmax(hi, st->max);
    }
    /* room above and below, so no line runs along the frame */
    if (c->log_y)
        fprintf(out, "set logscale y\nset yrange [%.6g:%.6g]\n", lo / 1.3, hi * 1.3);
    else
        fprintf(out, "set yrange [%.6g:%.6g]\n", lo < 0 ? lo - 0.08 * (hi - lo) : 0,
                hi > 0 ? hi + 0.08 * (hi - fmin(lo, 0)) : 1);
    fprintf(out, "unit = %.17g    # seconds per unit of the x axis\n", c->unit_s);
    fputs("mid(unit) = (column('bucket_start_s') + column('bucket_end_s')) / 2 / unit\n"
          "at(scope, subject, name) = strcol('scope') eq scope && strcol('subject') eq subject"
          " ? column(name) : NaN\n", out);
    for (size_t i = 0; i < c->count; i++) {
        const series *it = &c->items[i];
        fputs(i == 0 ? "plot 'timeseries.csv'" : ", \\\n     ''", out);
        fputs(" using (mid(unit)):(at(", out);
        plot_script_quote(out, subject_scope(c->data, it->subject));
        fputs(", ", out);
        plot_script_quote(out, subject_name(c->data, it->subject));
        fputs(", ", out);
        plot_script_quote(out, it->column);
        fprintf(out, ")) with lines lw 2 lc %zu dt %zu title ", it->color, it->dash);
        plot_script_quote(out, it->title);
    }
    fputc('\n', out);
}

/* The x axis in a unit that suits the run's length. */
static void choose_unit(const csv_table *t, chart *c)
{
    long end = csv_table_column(t, "bucket_end_s");
    double last = 0;
    for (size_t r = 0; r < t->rows; r++) {
        double x = csv_table_number(t, r, end);
        if (x > last)
            last = x;
    }
    c->unit_s = last >= 2 * 86400 ? 86400 : last >= 2 * 3600 ? 3600 : last >= 120 ? 60 : 1;
    c->xlabel = last >= 2 * 86400 ? "time (d)" : last >= 2 * 3600 ? "time (h)"
              : last >= 120 ? "time (min)" : "time (s)";
}

/* flat collects the charts whose every series is constant: no chart, a line of words. */
static int emit(const char *dir, chart *c, plot_list *written, char *flat, size_t flat_size,
                char *err, size_t err_size)
{
    if (c->count == 0 && *c->constants) {
        char note[320];
        batch_note(note, sizeof note, c);
        size_t n = strlen(flat);
        snprintf(flat + n, flat_size - n, "%s: %s.%s\n", c->title, c->constants, note);
    }
    if (c->count == 0)
        return 0;
    c->log_y = wants_log(c);
    return plot_script_emit(dir, c->name, write_chart, c, written, err, err_size);
}

/* plots/constant.txt: the series left out as constant, for report.html; none, no file. */
static int write_flat(const char *dir, const char *flat, char *err, size_t err_size)
{
    char plots[4096];
    snprintf(plots, sizeof plots, "%s/plots", dir);
    if (!*flat) {
        char path[4200];
        snprintf(path, sizeof path, "%s/" PLOT_CONSTANT_FILE, plots);
        unlink(path);
        return 0;
    }
    atomic_file *f = output_make_inside(dir, "plots", err, err_size) == 0
                     ? atomic_file_open(plots, PLOT_CONSTANT_FILE, err, err_size) : NULL;
    if (!f)
        return -1;
    fputs(flat, atomic_file_stream(f));
    return atomic_file_commit(f, err, err_size);
}

int plot_timeseries_scripts(const char *dir, plot_list *written, char *err, size_t err_size)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/timeseries.csv", dir);
    csv_table t;
    int got = csv_table_read(path, &t, err, err_size);
    if (got != 0) {
        csv_table_release(&t);
        return got > 0 ? 0 : -1;
    }
    int status = 0;
    series_data d = { 0 };
    char flat[8192] = "";
    chart *c = calloc(1, sizeof *c);
    if (!c) {
        snprintf(err, err_size, "out of memory");
        status = -1;
    } else if (csv_table_column(&t, "scope") < 0 || csv_table_column(&t, "subject") < 0
               || csv_table_column(&t, "bucket_end_s") < 0) {
        snprintf(err, err_size, "%s: no scope, subject or bucket_end_s column", path);
        status = -1;
    } else {
        status = measure(&t, &d, err, err_size);
    }
    for (size_t k = 0; status == 0 && k < sizeof kinds / sizeof *kinds; k++) {
        memset(c, 0, sizeof *c);
        c->kind = &kinds[k];
        c->data = &d;
        choose_unit(&t, c);
        snprintf(c->name, sizeof c->name, "%s", kinds[k].name);
        snprintf(c->title, sizeof c->title, "%s", kinds[k].title);
        for (size_t s = 0; status == 0 && s < d.nsubjects; s++) {
            if (!subject_qualifies(&d, s, &kinds[k]))
                continue;
            add_series(c, s);
            if (kinds[k].per_subject) {
                char safe[128];
                plot_script_name(safe, sizeof safe, subject_name(&d, s));
                snprintf(c->name, sizeof c->name, "%s_%s", kinds[k].name, safe);
                snprintf(c->title, sizeof c->title, "%s: pool %s", kinds[k].title,
                         subject_name(&d, s));
                status = emit(dir, c, written, flat, sizeof flat, err, err_size);
                c->count = 0;
                c->constants[0] = '\0';
            }
        }
        if (status == 0 && !kinds[k].per_subject)
            status = emit(dir, c, written, flat, sizeof flat, err, err_size);
    }
    if (status == 0)
        status = write_flat(dir, flat, err, err_size);
    free(c);
    free(d.subject_row);
    free(d.stats);
    csv_table_release(&t);
    return status;
}
