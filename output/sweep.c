#include "output/sweep.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "output/atomic_file.h"
#include "output/csv_write.h"
#include "output/results.h"

static void write_keys_header(FILE *out, const char *const *keys, size_t nkeys)
{
    for (size_t k = 0; k < nkeys; k++)
        csv_write_text(out, keys[k], k == 0);
}

static void write_row(FILE *out, const sweep_point_view *p, size_t nkeys, const sim_metric *m,
                      sim_ci ci)
{
    for (size_t k = 0; k < nkeys; k++)
        csv_write_text(out, p->values[k], k == 0);
    output_summary_fields(out, m, ci, nkeys == 0);
    fputc('\n', out);
}

int output_sweep_csv(const char *dir, const char *const *keys, size_t nkeys,
                     const sweep_point_view *points, size_t npoints, char *err,
                     size_t err_size)
{
    atomic_file *f = atomic_file_open(dir, "sweep.csv", err, err_size);
    if (!f)
        return -1;
    FILE *out = atomic_file_stream(f);
    write_keys_header(out, keys, nkeys);
    fputs(nkeys ? "," : "", out);
    fputs(OUTPUT_SUMMARY_COLUMNS "\n", out);
    for (size_t p = 0; p < npoints; p++)
        for (size_t i = 0; i < points[p].metrics->count; i++) {
            const sim_metric *m = &points[p].metrics->items[i];
            write_row(out, &points[p], nkeys, m, sim_ci_student(&m->replications, 0.95));
        }
    return atomic_file_commit(f, err, err_size);
}

static double sample(const sweep_point_view *p, size_t metric, unsigned r)
{
    return metric < p->samples_metrics && r < p->replications
               ? p->samples[metric * p->replications + r] : NAN;
}

int output_sweep_diff_csv(const char *dir, const char *const *keys, size_t nkeys,
                          const sweep_point_view *points, size_t npoints, char *err,
                          size_t err_size)
{
    atomic_file *f = atomic_file_open(dir, "sweep_diff.csv", err, err_size);
    if (!f)
        return -1;
    FILE *out = atomic_file_stream(f);
    write_keys_header(out, keys, nkeys);
    fputs(nkeys ? "," : "", out);
    fputs("scope,subject,metric,diff,unit,ci95_lo,ci95_hi,n\n", out);
    const sweep_point_view *base = npoints ? &points[0] : NULL;
    for (size_t p = 1; p < npoints; p++) {
        const sweep_point_view *pt = &points[p];
        for (size_t i = 0; i < pt->metrics->count; i++) {
            const sim_metric *m = &pt->metrics->items[i];
            const sim_metric *b = sim_metrics_find(base->metrics, m->scope, m->subject, m->name);
            if (!b)
                continue;
            size_t bi = (size_t)(b - base->metrics->items);
            sim_stat d;
            sim_stat_reset(&d);
            unsigned reps = pt->replications < base->replications ? pt->replications
                                                                  : base->replications;
            for (unsigned r = 0; r < reps; r++) {
                double x = sample(pt, i, r), y = sample(base, bi, r);
                if (!isnan(x) && !isnan(y))
                    sim_stat_add(&d, x - y);
            }
            write_row(out, pt, nkeys, m, sim_ci_student(&d, 0.95));
        }
    }
    return atomic_file_commit(f, err, err_size);
}

int output_search_csv(const char *dir, const char *const *keys, size_t nkeys,
                      const char *const *conditions, size_t nconditions, const char *objective,
                      const search_probe_view *probes, size_t nprobes, size_t answer,
                      char *err, size_t err_size)
{
    atomic_file *f = atomic_file_open(dir, "search.csv", err, err_size);
    if (!f)
        return -1;
    FILE *out = atomic_file_stream(f);
    fputs("probe", out);
    for (size_t k = 0; k < nkeys; k++)
        csv_write_text(out, keys[k], false);
    fputs("," OUTPUT_SUMMARY_COLUMNS ",target,meets", out);
    if (objective)
        fputs(",objective,objective_subject,objective_value,objective_ci95_lo,"
              "objective_ci95_hi", out);
    fputc('\n', out);
    const search_probe_view *chosen = answer < nprobes ? &probes[answer] : NULL;
    for (size_t row = 0; row < (nprobes + 1) * nconditions; row++) {
        size_t i = row / nconditions, c = row % nconditions;
        const search_probe_view *p = i < nprobes ? &probes[i] : chosen;
        if (i < nprobes)
            fprintf(out, "%zu", i + 1);
        else
            fputs("answer", out);
        for (size_t k = 0; k < nkeys; k++)
            csv_write_text(out, p ? p->values[k] : "", false);
        const sim_metric *m = p ? p->metrics[c] : NULL;
        if (m)
            output_summary_fields(out, m, sim_ci_student(&m->replications, 0.95), false);
        else
            fputs(",,,,,,,,", out); /* the summary's eight fields, empty */
        csv_write_text(out, conditions[c], false);
        csv_write_text(out, p ? (p->meets[c] ? "true" : "false") : "", false);
        if (objective) {
            const sim_metric *o = p ? p->objective : NULL;
            csv_write_text(out, objective, false);
            csv_write_text(out, o ? o->subject : "", false);
            if (o) {
                sim_ci ci = sim_ci_student(&o->replications, 0.95);
                csv_write_number(out, ci.mean, false);
                csv_write_number(out, ci.low, false);
                csv_write_number(out, ci.high, false);
            } else {
                fputs(",,,", out);
            }
        }
        fputc('\n', out);
    }
    return atomic_file_commit(f, err, err_size);
}

int output_point_dir(const char *dir, size_t k, const sim_metrics *metrics,
                     const sim_timeseries *ts, double duration_s, char *err, size_t err_size)
{
    char path[4096], rel[64];
    snprintf(path, sizeof path, "%s/points/%zu", dir, k);
    snprintf(rel, sizeof rel, "points/%zu", k);
    if (output_make_inside(dir, rel, err, err_size) != 0
        || output_summary_csv(path, metrics, err, err_size) != 0)
        return -1;
    return ts ? output_timeseries_csv(path, ts, duration_s, err, err_size) : 0;
}
