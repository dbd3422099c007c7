#include "sim/metrics.h"

#include <math.h>
#include <stdint.h>
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
    free(m->index);
    sim_metrics_init(m);
}

/* FNV-1a over the key's three parts, each with its terminating NUL. */
static size_t key_hash(const char *scope, const char *subject, const char *name)
{
    uint64_t h = 14695981039346656037ull;
    const char *parts[3] = { scope, subject, name };
    for (int k = 0; k < 3; k++)
        for (const unsigned char *p = (const unsigned char *)parts[k];; p++) {
            h = (h ^ *p) * 1099511628211ull;
            if (!*p)
                break;
        }
    return (size_t)h;
}

/* The index slot of the key: its item's, or the empty one where it would go. */
static size_t slot_of(const sim_metrics *m, const char *scope, const char *subject,
                      const char *name)
{
    size_t mask = m->index_size - 1;
    for (size_t at = key_hash(scope, subject, name) & mask;; at = (at + 1) & mask) {
        size_t item = m->index[at];
        if (!item)
            return at;
        const sim_metric *x = &m->items[item - 1];
        if (!strcmp(x->name, name) && !strcmp(x->subject, subject) && !strcmp(x->scope, scope))
            return at;
    }
}

/* A larger index, every item placed again. */
static void grow_index(sim_metrics *m)
{
    size_t size = m->index_size ? 2 * m->index_size : 64;
    free(m->index);
    m->index = calloc(size, sizeof *m->index);
    if (!m->index)
        sim_out_of_memory("out of memory recording a metric");
    m->index_size = size;
    for (size_t i = 0; i < m->count; i++) {
        const sim_metric *x = &m->items[i];
        m->index[slot_of(m, x->scope, x->subject, x->name)] = i + 1;
    }
}

const sim_metric *sim_metrics_find(const sim_metrics *m, const char *scope,
                                   const char *subject, const char *name)
{
    if (!m->index_size)
        return NULL;
    size_t item = m->index[slot_of(m, scope, subject, name)];
    return item ? &m->items[item - 1] : NULL;
}

double sim_metrics_mean(const sim_metrics *m, const char *scope, const char *subject,
                        const char *name)
{
    const sim_metric *x = sim_metrics_find(m, scope, subject, name);
    return x && x->replications.n ? x->replications.mean : NAN;
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
    if (2 * (m->count + 1) > m->index_size)
        grow_index(m);
    size_t at = slot_of(m, scope, subject, name);
    sim_metric *x = m->index[at] ? &m->items[m->index[at] - 1] : NULL;
    if (!x) {
        m->items = sim_array_grow(m->items, &m->capacity, m->count + 1, sizeof *m->items,
                                  "the metrics");
        x = &m->items[m->count++];
        *x = (sim_metric){ copy(scope), copy(subject), copy(name), copy(unit), { 0 } };
        sim_stat_reset(&x->replications);
        m->index[at] = m->count;
    }
    if (!isnan(value))
        sim_stat_add(&x->replications, value);
}

void sim_metrics_add_metric(sim_metrics *m, const sim_metric *from)
{
    sim_metrics_add(m, from->scope, from->subject, from->name, from->unit, NAN);
    size_t at = slot_of(m, from->scope, from->subject, from->name);
    sim_stat_merge(&m->items[m->index[at] - 1].replications, &from->replications);
}
