#include "output/sweep.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "output/atomic_file.h"
#include "output/csv_write.h"
#include "output/results.h"

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
