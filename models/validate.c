/* Error and mean absolute percentage error of predictions against published figures. */
#include "models/validate.h"

#include <math.h>
#include <string.h>

double validate_error(double predicted, double published)
{
    if (!isfinite(predicted) || !isfinite(published) || published == 0)
        return NAN;
    return predicted / published - 1;
}

void validate_summary_add(validate_summary *s, const validate_result *r)
{
    s->rows++;
    if (!r->predicted || !isfinite(r->error))
        return;
    s->predicted++;
    s->sum_abs_error += fabs(r->error);
    s->sum_error += r->error;
    if (!s->worst_id || fabs(r->error) > fabs(s->worst_error)) {
        s->worst_error = r->error;
        s->worst_id = r->id;
    }
}

double validate_summary_mape(const validate_summary *s)
{
    return s->predicted ? s->sum_abs_error / s->predicted : NAN;
}

double validate_summary_bias(const validate_summary *s)
{
    return s->predicted ? s->sum_error / s->predicted : NAN;
}

size_t validate_summarize(const validate_result *rows, size_t n, bool by_engine,
                          validate_summary *out, size_t max)
{
    size_t used = 0;
    for (size_t i = 0; i < n; i++) {
        const char *engine = by_engine && rows[i].engine ? rows[i].engine : "";
        size_t k = 0;
        while (k < used && (strncmp(out[k].category, rows[i].category, sizeof out[k].category - 1)
                            || strncmp(out[k].engine, engine, sizeof out[k].engine - 1)))
            k++;
        if (k == used) {
            if (used == max)
                continue;
            memset(&out[used], 0, sizeof out[used]);
            strncpy(out[used].category, rows[i].category, sizeof out[used].category - 1);
            strncpy(out[used].engine, engine, sizeof out[used].engine - 1);
            used++;
        }
        validate_summary_add(&out[k], &rows[i]);
    }
    return used;
}
