/* The indexed binary min-heap behind sim/ranking.h.  Binary rather than the engine's
 * 4-ary: an update moves one id a few levels either way, and a sift up reads one parent
 * a level where a 4-ary sift down reads four children. */
#include "sim/ranking.h"

#include <stdlib.h>

#include "sim/array.h"
#include "sim/fatal.h"

/* Bitwise, not short-circuit: the sifts use it without a branch (which of two loads is
 * the less the data decides, and a mispredicted branch costs more than the compares). */
static bool before(const sim_ranking_entry *a, const sim_ranking_entry *b)
{
    return (a->value < b->value) | ((a->value == b->value) & (a->tie < b->tie));
}

static void place(sim_ranking *r, size_t i, sim_ranking_entry x)
{
    r->heap[i] = x;
    r->at[x.id] = (uint32_t)i;
}

static void sift_up(sim_ranking *r, size_t i)
{
    sim_ranking_entry x = r->heap[i];
    while (i > 0) {
        size_t parent = (i - 1) / 2;
        if (!before(&x, &r->heap[parent]))
            break;
        place(r, i, r->heap[parent]);
        i = parent;
    }
    place(r, i, x);
}

static void sift_down(sim_ranking *r, size_t i)
{
    sim_ranking_entry x = r->heap[i];
    for (;;) {
        size_t child = 2 * i + 1;
        if (child >= r->n)
            break;
        if (child + 1 < r->n)
            child += before(&r->heap[child + 1], &r->heap[child]);
        if (!before(&r->heap[child], &x))
            break;
        place(r, i, r->heap[child]);
        i = child;
    }
    place(r, i, x);
}

void sim_ranking_release(sim_ranking *r)
{
    free(r->heap);
    free(r->at);
    free(r->frontier);
    *r = (sim_ranking){ 0 };
}

void sim_ranking_insert(sim_ranking *r, uint32_t id, double value, uint64_t tie)
{
    if (id == SIM_RANKING_NONE || sim_ranking_contains(r, id))
        sim_fatal("sim_ranking_insert: id %u is ranked already", (unsigned)id);
    if (id >= r->ids) {
        size_t old = r->ids;
        r->at = sim_array_grow(r->at, &r->ids, (size_t)id + 1, sizeof *r->at, "a ranking");
        for (size_t k = old; k < r->ids; k++)
            r->at[k] = SIM_RANKING_NONE;
    }
    r->heap = sim_array_grow(r->heap, &r->cap, r->n + 1, sizeof *r->heap, "a ranking");
    place(r, r->n++, (sim_ranking_entry){ value, tie, id });
    sift_up(r, r->n - 1);
}

void sim_ranking_remove(sim_ranking *r, uint32_t id)
{
    if (!sim_ranking_contains(r, id))
        sim_fatal("sim_ranking_remove: id %u is not ranked", (unsigned)id);
    size_t i = r->at[id];
    r->at[id] = SIM_RANKING_NONE;
    sim_ranking_entry last = r->heap[--r->n];
    if (last.id == id)
        return;
    place(r, i, last); /* the last entry in id's place goes whichever way it must */
    if (i > 0 && before(&last, &r->heap[(i - 1) / 2]))
        sift_up(r, i);
    else
        sift_down(r, i);
}

void sim_ranking_update(sim_ranking *r, uint32_t id, double value)
{
    size_t i = r->at[id];
    double old = r->heap[i].value;
    if (value == old)
        return;
    r->heap[i].value = value;
    if (value < old)
        sift_up(r, i);
    else
        sift_down(r, i);
}

/* ---- walking in order: a small heap of the heap's places still to visit ---------- */

static bool place_before(const sim_ranking *r, size_t a, size_t b)
{
    return before(&r->heap[a], &r->heap[b]);
}

static void frontier_push(sim_ranking *r, size_t *n, size_t pos)
{
    r->frontier = sim_array_grow(r->frontier, &r->frontier_cap, *n + 1, sizeof *r->frontier,
                                 "a ranking");
    size_t i = (*n)++;
    while (i > 0 && place_before(r, pos, r->frontier[(i - 1) / 2])) {
        r->frontier[i] = r->frontier[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    r->frontier[i] = pos;
}

static size_t frontier_pop(sim_ranking *r, size_t *n)
{
    size_t top = r->frontier[0], x = r->frontier[--(*n)], i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= *n)
            break;
        if (c + 1 < *n && place_before(r, r->frontier[c + 1], r->frontier[c]))
            c++;
        if (!place_before(r, r->frontier[c], x))
            break;
        r->frontier[i] = r->frontier[c];
        i = c;
    }
    if (*n > 0)
        r->frontier[i] = x;
    return top;
}

void sim_ranking_walk(sim_ranking *r, bool (*visit)(void *context, uint32_t id, double value),
                      void *context)
{
    size_t n = 0;
    if (r->n)
        frontier_push(r, &n, 0);
    while (n > 0) { /* a place's entry comes before its children's: the least of the
                       frontier is the least not yet visited */
        size_t pos = frontier_pop(r, &n);
        if (!visit(context, r->heap[pos].id, r->heap[pos].value))
            return;
        for (size_t c = 2 * pos + 1; c <= 2 * pos + 2 && c < r->n; c++)
            frontier_push(r, &n, c);
    }
}

/* ---- ids ------------------------------------------------------------------------------ */

uint32_t sim_ids_take(sim_ids *ids)
{
    if (ids->nspare)
        return ids->spare[--ids->nspare];
    if (ids->next == SIM_RANKING_NONE)
        sim_fatal("sim_ids_take: out of ids");
    return ids->next++;
}

void sim_ids_give(sim_ids *ids, uint32_t id)
{
    ids->spare = sim_array_grow(ids->spare, &ids->cap, ids->nspare + 1, sizeof *ids->spare,
                                "ids");
    ids->spare[ids->nspare++] = id;
}

void sim_ids_release(sim_ids *ids)
{
    free(ids->spare);
    *ids = (sim_ids){ 0 };
}
