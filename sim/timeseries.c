#include "sim/timeseries.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sim/array.h"
#include "sim/fatal.h"

typedef struct cell {
    double sum;
    double count;
} cell;

typedef struct ts_subject {
    char *scope, *name;
    cell *cells; /* nbuckets x ncolumns */
} ts_subject;

struct sim_timeseries {
    size_t nbuckets;
    double bucket_s;
    char **columns;
    size_t ncolumns;
    ts_subject *subjects;
    size_t nsubjects, subjects_cap;
};

size_t sim_timeseries_cells_needed(size_t nbuckets, size_t nsubjects, size_t ncolumns)
{
    if (nbuckets && nsubjects > SIZE_MAX / nbuckets / (ncolumns ? ncolumns : 1))
        return SIZE_MAX;
    return nbuckets * nsubjects * ncolumns;
}

sim_timeseries *sim_timeseries_create(size_t nbuckets, double bucket_s,
                                      const char *const *columns, size_t ncolumns)
{
    sim_timeseries *ts = calloc(1, sizeof *ts);
    if (!ts)
        return NULL;
    ts->nbuckets = nbuckets;
    ts->bucket_s = bucket_s;
    ts->ncolumns = ncolumns;
    ts->columns = calloc(ncolumns ? ncolumns : 1, sizeof *ts->columns);
    if (!ts->columns) {
        free(ts);
        return NULL;
    }
    for (size_t i = 0; i < ncolumns; i++) {
        ts->columns[i] = strdup(columns[i]);
        if (!ts->columns[i]) {
            sim_timeseries_free(ts);
            return NULL;
        }
    }
    return ts;
}

void sim_timeseries_free(sim_timeseries *ts)
{
    if (!ts)
        return;
    for (size_t i = 0; i < ts->ncolumns; i++)
        free(ts->columns[i]);
    for (size_t i = 0; i < ts->nsubjects; i++) {
        free(ts->subjects[i].scope);
        free(ts->subjects[i].name);
        free(ts->subjects[i].cells);
    }
    free(ts->columns);
    free(ts->subjects);
    free(ts);
}

size_t sim_timeseries_add_subject(sim_timeseries *ts, const char *scope, const char *name)
{
    if (sim_timeseries_cells_needed(ts->nbuckets, ts->nsubjects + 1, ts->ncolumns)
        > SIM_TIMESERIES_MAX_CELLS)
        sim_fatal("timeseries over %zu cells: the caller must check the size first",
                  SIM_TIMESERIES_MAX_CELLS);
    ts->subjects = sim_array_grow(ts->subjects, &ts->subjects_cap, ts->nsubjects + 1,
                                  sizeof *ts->subjects, "a timeseries' subjects");
    ts_subject *s = &ts->subjects[ts->nsubjects];
    s->scope = strdup(scope);
    s->name = strdup(name);
    s->cells = calloc(ts->nbuckets * ts->ncolumns + 1, sizeof *s->cells);
    if (!s->scope || !s->name || !s->cells)
        sim_out_of_memory("out of memory adding a timeseries subject");
    return ts->nsubjects++;
}

void sim_timeseries_add(sim_timeseries *ts, size_t bucket, size_t subject, size_t column,
                        double value)
{
    if (bucket >= ts->nbuckets || isnan(value))
        return;
    cell *c = &ts->subjects[subject].cells[bucket * ts->ncolumns + column];
    c->sum += value;
    c->count += 1;
}

size_t sim_timeseries_buckets(const sim_timeseries *ts) { return ts->nbuckets; }
double sim_timeseries_bucket_s(const sim_timeseries *ts) { return ts->bucket_s; }
size_t sim_timeseries_subjects(const sim_timeseries *ts) { return ts->nsubjects; }
size_t sim_timeseries_columns(const sim_timeseries *ts) { return ts->ncolumns; }
const char *sim_timeseries_column(const sim_timeseries *ts, size_t column) { return ts->columns[column]; }
const char *sim_timeseries_subject_scope(const sim_timeseries *ts, size_t subject) { return ts->subjects[subject].scope; }
const char *sim_timeseries_subject_name(const sim_timeseries *ts, size_t subject) { return ts->subjects[subject].name; }

double sim_timeseries_value(const sim_timeseries *ts, size_t bucket, size_t subject,
                            size_t column)
{
    const cell *c = &ts->subjects[subject].cells[bucket * ts->ncolumns + column];
    return c->count > 0 ? c->sum / c->count : NAN;
}
