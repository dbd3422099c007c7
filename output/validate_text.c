/* The validation table as text and as CSV rows. */
#include "output/validate_text.h"

#include <math.h>

#include "output/csv_write.h"

enum { MAX_CATEGORIES = 16 };

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
    validate_summary s[MAX_CATEGORIES];
    size_t ns = validate_summarize(rows, n, s, MAX_CATEGORIES);
    fprintf(f, "\n%-10s %5s %9s %7s  %s\n", "category", "rows", "predicted", "MAPE", "worst");
    for (size_t k = 0; k < ns; k++) {
        fprintf(f, "%-10s %5u %9u ", s[k].category, s[k].rows, s[k].predicted);
        if (s[k].predicted)
            fprintf(f, "%6.1f%%  %s %+.1f%%\n", 100 * validate_summary_mape(&s[k]),
                    s[k].worst_id, 100 * s[k].worst_error);
        else
            fprintf(f, "%7s  -\n", "-");
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
    validate_summary s[MAX_CATEGORIES];
    size_t ns = validate_summarize(rows, n, s, MAX_CATEGORIES);
    fputs("summary,category,rows,predicted,mape_percent,worst_id,worst_error_percent\n", f);
    for (size_t k = 0; k < ns; k++) {
        fprintf(f, "summary,%s,%u,%u,", s[k].category, s[k].rows, s[k].predicted);
        if (s[k].predicted)
            fprintf(f, "%.4f,%s,%.4f\n", 100 * validate_summary_mape(&s[k]), s[k].worst_id,
                    100 * s[k].worst_error);
        else
            fputs(",,\n", f);
    }
}
