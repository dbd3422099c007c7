#include "sim/results_wire.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/fatal.h"

enum { NAME_MAX_BYTES = 1024 };

int sim_metrics_pack(sim_wire *w, const sim_metrics *m, char *err, size_t err_size)
{
    sim_wire_put_u64(w, m->count);
    for (size_t i = 0; i < m->count; i++) {
        const sim_metric *x = &m->items[i];
        if (x->replications.n > 1) {
            snprintf(err, err_size, "metric %s,%s,%s has %llu values in one replication",
                     x->scope, x->subject, x->name, (unsigned long long)x->replications.n);
            return -1;
        }
        sim_wire_put_string(w, x->scope);
        sim_wire_put_string(w, x->subject);
        sim_wire_put_string(w, x->name);
        sim_wire_put_string(w, x->unit);
        sim_wire_put_double(w, x->replications.n ? x->replications.mean : NAN);
    }
    return 0;
}

int sim_metrics_unpack_add(sim_wire_reader *r, sim_metrics *into, sim_metric_value_fn each,
                           void *context)
{
    char scope[NAME_MAX_BYTES], subject[NAME_MAX_BYTES], name[NAME_MAX_BYTES],
        unit[NAME_MAX_BYTES];
    uint64_t count = sim_wire_get_u64(r);
    for (uint64_t i = 0; i < count && !r->bad; i++) {
        sim_wire_get_string(r, scope, sizeof scope);
        sim_wire_get_string(r, subject, sizeof subject);
        sim_wire_get_string(r, name, sizeof name);
        sim_wire_get_string(r, unit, sizeof unit);
        double value = sim_wire_get_double(r);
        if (r->bad)
            break;
        sim_metrics_add(into, scope, subject, name, unit, value);
        if (each) {
            const sim_metric *x = sim_metrics_find(into, scope, subject, name);
            each(context, (size_t)(x - into->items), value);
        }
    }
    return r->bad ? -1 : 0;
}

void sim_timeseries_pack(sim_wire *w, const sim_timeseries *ts)
{
    size_t nb = sim_timeseries_buckets(ts), ns = sim_timeseries_subjects(ts),
           nc = sim_timeseries_columns(ts);
    sim_wire_put_u64(w, nb);
    sim_wire_put_double(w, sim_timeseries_bucket_s(ts));
    sim_wire_put_u64(w, nc);
    for (size_t c = 0; c < nc; c++)
        sim_wire_put_string(w, sim_timeseries_column(ts, c));
    sim_wire_put_u64(w, ns);
    for (size_t s = 0; s < ns; s++) {
        sim_wire_put_string(w, sim_timeseries_subject_scope(ts, s));
        sim_wire_put_string(w, sim_timeseries_subject_name(ts, s));
    }
    /* Most cells of a row are empty (a pool has no latency columns): only filled cells
     * travel, each as its position and value, ended by a position past the table. */
    size_t cells = nb * ns * nc;
    for (size_t b = 0; b < nb; b++)
        for (size_t s = 0; s < ns; s++)
            for (size_t c = 0; c < nc; c++) {
                double v = sim_timeseries_value(ts, b, s, c);
                if (isnan(v))
                    continue;
                sim_wire_put_u64(w, (b * ns + s) * nc + c);
                sim_wire_put_double(w, v);
            }
    sim_wire_put_u64(w, cells);
}

int sim_timeseries_unpack_add(sim_wire_reader *r, sim_timeseries **into)
{
    char scope[NAME_MAX_BYTES], name[NAME_MAX_BYTES];
    uint64_t nb = sim_wire_get_u64(r);
    double bucket_s = sim_wire_get_double(r);
    uint64_t nc = sim_wire_get_u64(r);
    if (r->bad || nc > 4096)
        return -1;
    char **columns = calloc(nc + 1, sizeof *columns);
    if (!columns)
        sim_out_of_memory("out of memory unpacking a time series");
    for (uint64_t c = 0; c < nc && !r->bad; c++) {
        sim_wire_get_string(r, name, sizeof name);
        if (!(columns[c] = strdup(name)))
            sim_out_of_memory("out of memory unpacking a time series");
    }
    uint64_t ns = sim_wire_get_u64(r);
    bool created = false;
    if (!r->bad && !*into
        && sim_timeseries_cells_needed(nb, ns, nc) <= SIM_TIMESERIES_MAX_CELLS) {
        *into = sim_timeseries_create(nb, bucket_s, (const char *const *)columns, nc);
        if (!*into)
            sim_out_of_memory("out of memory unpacking a time series");
        created = true;
    }
    sim_timeseries *ts = *into;
    bool same = !r->bad && ts && sim_timeseries_buckets(ts) == nb
                && sim_timeseries_bucket_s(ts) == bucket_s && sim_timeseries_columns(ts) == nc
                && (created || sim_timeseries_subjects(ts) == ns);
    for (uint64_t c = 0; c < nc && same; c++)
        same = !strcmp(sim_timeseries_column(ts, c), columns[c]);
    for (uint64_t c = 0; c < nc; c++)
        free(columns[c]);
    free(columns);
    for (uint64_t s = 0; s < ns && same && !r->bad; s++) {
        sim_wire_get_string(r, scope, sizeof scope);
        sim_wire_get_string(r, name, sizeof name);
        if (created)
            sim_timeseries_add_subject(ts, scope, name);
        else
            same = !strcmp(sim_timeseries_subject_scope(ts, s), scope)
                   && !strcmp(sim_timeseries_subject_name(ts, s), name);
    }
    if (!same || r->bad)
        return -1;
    uint64_t cells = nb * ns * nc;
    for (;;) {
        uint64_t at = sim_wire_get_u64(r);
        if (r->bad || at >= cells)
            break;
        double v = sim_wire_get_double(r);
        uint64_t c = at % nc, s = at / nc % ns, b = at / nc / ns;
        sim_timeseries_add(ts, (size_t)b, (size_t)s, (size_t)c, v);
    }
    return r->bad ? -1 : 0;
}
