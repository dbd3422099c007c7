#include "sim/metrics.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim/array.h"
#include "sim/fatal.h"

void sim_metrics_init(sim_metrics *m) { *m = (sim_metrics){ 0 }; }

void sim_metrics_release(sim_metrics *m)
{
    for (size_t i = 0; i < m->count; i++) {
        free(m->items[i].scope);
        free(m->items[i].subject);
        free(m->items[i].name);
        free(m->items[i].unit);
    }
    free(m->items);
    sim_metrics_init(m);
}

const sim_metric *sim_metrics_find(const sim_metrics *m, const char *scope,
                                   const char *subject, const char *name)
{
    for (size_t i = 0; i < m->count; i++) {
        const sim_metric *x = &m->items[i];
        if (!strcmp(x->name, name) && !strcmp(x->subject, subject) && !strcmp(x->scope, scope))
            return x;
    }
    return NULL;
}

static char *copy(const char *s)
{
    char *c = strdup(s);
    if (!c)
        sim_out_of_memory("out of memory recording a metric");
    return c;
}

void sim_metrics_add(sim_metrics *m, const char *scope, const char *subject,
                     const char *name, const char *unit, double value)
{
    sim_metric *x = (sim_metric *)sim_metrics_find(m, scope, subject, name);
    if (!x) {
        m->items = sim_array_grow(m->items, &m->capacity, m->count + 1, sizeof *m->items,
                                  "the metrics");
        x = &m->items[m->count++];
        *x = (sim_metric){ copy(scope), copy(subject), copy(name), copy(unit), { 0 } };
        sim_stat_reset(&x->replications);
    }
    if (!isnan(value))
        sim_stat_add(&x->replications, value);
}
