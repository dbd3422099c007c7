/* The validation table as text and as CSV rows. */
#include "output/validate_text.h"

#include <math.h>

#include "output/csv_write.h"

enum { MAX_GROUPS = 64 };

/* A summary's line: category, then `between` (the engine's column, or ""), the counts,
 * MAPE, bias and the worst row. */
static void text_summary(FILE *f, const validate_summary *s, const char *between)
{
    fprintf(f, "%-10s %s%5u %9u ", s->category, between, s->rows, s->predicted);
    if (s->predicted)
        fprintf(f, "%6.1f%% %+6.1f%%  %s %+.1f%%\n", 100 * validate_summary_mape(s),
                100 * validate_summary_bias(s), s->worst_id, 100 * s->worst_error);
    else
        fprintf(f, "%7s %7s  -\n", "-", "-");
}

/* A summary's CSV fields after its key: rows,predicted,mape,worst_id,worst_error,bias. */
static void csv_summary(FILE *f, const validate_summary *s)
{
    fprintf(f, "%u,%u,", s->rows, s->predicted);
    if (s->predicted)
        fprintf(f, "%.4f,%s,%.4f,%.4f\n", 100 * validate_summary_mape(s), s->worst_id,
                100 * s->worst_error, 100 * validate_summary_bias(s));
    else
        fputs(",,,\n", f);
}

void output_validate_text(FILE *f, const validate_result *rows, size_t n)
{
    fprintf(f, "%-4s %-10s %-44s %12s %12s %8s\n", "id", "category", "metric", "published",
            "predicted", "error");
    for (size_t i = 0; i < n; i++) {
        const validate_result *r = &rows[i];
        fprintf(f, "%-4s %-10s %-44.44s %12.6g ", r->id, r->category, r->metric, r->published);
        if (r->predicted)
            fprintf(f, "%12.6g %+7.1f%%\n", r->value, 100 * r->error);
        else
            fprintf(f, "not predicted: %s\n", r->reason);
    }
    validate_summary s[MAX_GROUPS];
    size_t ns = validate_summarize(rows, n, false, s, MAX_GROUPS);
    fprintf(f, "\n%-10s %5s %9s %7s %7s  %s\n", "category", "rows", "predicted", "MAPE", "bias",
            "worst");
    for (size_t k = 0; k < ns; k++)
        text_summary(f, &s[k], "");
    ns = validate_summarize(rows, n, true, s, MAX_GROUPS);
    fprintf(f, "\nby engine\n%-10s %-18s %5s %9s %7s %7s  %s\n", "category", "engine", "rows",
            "predicted", "MAPE", "bias", "worst");
    for (size_t k = 0; k < ns; k++) {
        char engine[40];
        snprintf(engine, sizeof engine, "%-18s ", *s[k].engine ? s[k].engine : "-");
        text_summary(f, &s[k], engine);
    }
}

void output_validate_csv(FILE *f, const validate_result *rows, size_t n)
{
    fputs("id,category,metric,unit,published,predicted,error_percent,reason\n", f);
    for (size_t i = 0; i < n; i++) {
        const validate_result *r = &rows[i];
        csv_write_text(f, r->id, true);
        csv_write_text(f, r->category, false);
        csv_write_text(f, r->metric, false);
        csv_write_text(f, r->unit, false);
        csv_write_number(f, r->published, false);
        if (r->predicted) {
            csv_write_number(f, r->value, false);
            fprintf(f, ",%.4f,\n", 100 * r->error);
        } else {
            fputs(",,", f);
            csv_write_text(f, r->reason, false);
            fputc('\n', f);
        }
    }
    validate_summary s[MAX_GROUPS];
    size_t ns = validate_summarize(rows, n, false, s, MAX_GROUPS);
    fputs("summary,category,rows,predicted,mape_percent,worst_id,worst_error_percent,"
          "bias_percent\n", f);
    for (size_t k = 0; k < ns; k++) {
        fprintf(f, "summary,");
        csv_write_text(f, s[k].category, true);
        fputc(',', f);
        csv_summary(f, &s[k]);
    }
    ns = validate_summarize(rows, n, true, s, MAX_GROUPS);
    fputs("engine_summary,category,engine,rows,predicted,mape_percent,worst_id,"
          "worst_error_percent,bias_percent\n", f);
    for (size_t k = 0; k < ns; k++) {
        fprintf(f, "engine_summary,");
        csv_write_text(f, s[k].category, true);
        csv_write_text(f, s[k].engine, false);
        fputc(',', f);
        csv_summary(f, &s[k]);
    }
}
