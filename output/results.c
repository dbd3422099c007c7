#include "output/results.h"

#include <math.h>
#include <string.h>

#include "output/atomic_file.h"
#include "output/csv_write.h"
#include "output/number_text.h"

void output_summary_fields(FILE *out, const sim_metric *m, sim_ci ci, bool first)
{
    csv_write_text(out, m->scope, first);
    csv_write_text(out, m->subject, false);
    csv_write_text(out, m->name, false);
    csv_write_number(out, ci.mean, false);
    csv_write_text(out, m->unit, false);
    csv_write_number(out, ci.low, false);
    csv_write_number(out, ci.high, false);
    csv_write_number(out, (double)ci.n, false);
}

int output_summary_csv(const char *dir, const sim_metrics *metrics, char *err, size_t err_size)
{
    atomic_file *f = atomic_file_open(dir, "summary.csv", err, err_size);
    if (!f)
        return -1;
    FILE *out = atomic_file_stream(f);
    fputs(OUTPUT_SUMMARY_COLUMNS "\n", out);
    for (size_t i = 0; i < metrics->count; i++) {
        const sim_metric *m = &metrics->items[i];
        output_summary_fields(out, m, sim_ci_student(&m->replications, 0.95), true);
        fputc('\n', out);
    }
    return atomic_file_commit(f, err, err_size);
}

int output_timeseries_csv(const char *dir, const sim_timeseries *ts, double duration_s,
                          char *err, size_t err_size)
{
    atomic_file *f = atomic_file_open(dir, "timeseries.csv", err, err_size);
    if (!f)
        return -1;
    FILE *out = atomic_file_stream(f);
    size_t ncols = sim_timeseries_columns(ts);
    fputs("bucket_start_s,bucket_end_s,scope,subject", out);
    for (size_t c = 0; c < ncols; c++)
        csv_write_text(out, sim_timeseries_column(ts, c), false);
    fputc('\n', out);
    double bucket_s = sim_timeseries_bucket_s(ts);
    for (size_t b = 0; b < sim_timeseries_buckets(ts); b++) {
        double start = (double)b * bucket_s, end = fmin(start + bucket_s, duration_s);
        for (size_t s = 0; s < sim_timeseries_subjects(ts); s++) {
            csv_write_number(out, start, true);
            csv_write_number(out, end, false);
            csv_write_text(out, sim_timeseries_subject_scope(ts, s), false);
            csv_write_text(out, sim_timeseries_subject_name(ts, s), false);
            for (size_t c = 0; c < ncols; c++)
                csv_write_number(out, sim_timeseries_value(ts, b, s, c), false);
            fputc('\n', out);
        }
    }
    return atomic_file_commit(f, err, err_size);
}

/* Column widths of the table. */
static int width(const sim_metrics *metrics, int which)
{
    int w = 0;
    for (size_t i = 0; i < metrics->count; i++) {
        const sim_metric *m = &metrics->items[i];
        const char *s = which == 0 ? m->scope : which == 1 ? m->subject : m->name;
        int n = (int)strlen(s);
        if (n > w)
            w = n;
    }
    return w;
}

void output_summary_table(FILE *out, const sim_metrics *metrics)
{
    int w0 = width(metrics, 0), w1 = width(metrics, 1), w2 = width(metrics, 2);
    for (size_t i = 0; i < metrics->count; i++) {
        const sim_metric *m = &metrics->items[i];
        sim_ci ci = sim_ci_student(&m->replications, 0.95);
        char value[48], half[48];
        double factor; /* seconds read in ms, s or h; the CSV keeps seconds */
        const char *unit = readable_unit(m->unit, ci.mean, &factor);
        number_text(value, sizeof value, ci.mean * factor);
        fprintf(out, "%-*s  %-*s  %-*s  %10s", w0, m->scope, w1, m->subject, w2, m->name, value);
        if (!isnan(ci.half_width))
            fprintf(out, " +- %-7s", half_width_text(half, sizeof half, ci.half_width * factor,
                                                     ci.mean * factor));
        fprintf(out, "  %s\n", isnan(ci.mean) ? "" : unit);
    }
}
