/* The indexed 4-ary min-heap behind sim/ranking.h.  Its entries are 16 bytes and the
 * array starts three entries before a cache line, so that the four children of any
 * place share one line: a sift reads one line a level, over half the levels of a binary
 * heap.  With thousands of replicas most of them share the least load, and the one
 * just routed to sinks below them all; at 80,000 the deeper levels are out of cache and
 * each level is a miss. */
#include "sim/ranking.h"

#include <stdlib.h>
#include <string.h>

#include "sim/array.h"
#include "sim/fatal.h"

#define ARITY 4
#define LINE 64
/* entries before heap[1] in the allocation, heap[1] on a line's start */
#define LEAD (LINE / sizeof(sim_ranking_entry) - 1)

/* Bitwise, not short-circuit: the sifts use it without a branch (which of the loads is
 * the least the data decides, and a mispredicted branch costs more than the compares). */
static inline bool before(const sim_ranking_entry *a, const sim_ranking_entry *b)
{
    return (a->value < b->value) | ((a->value == b->value) & (a->order < b->order));
}

static inline uint32_t id_of(sim_ranking_entry x) { return sim_ranking_entry_id(x); }

static inline void place(sim_ranking *r, size_t i, sim_ranking_entry x)
{
    r->heap[i] = x;
    r->at[id_of(x)] = (uint32_t)i;
}

static void sift_up(sim_ranking *r, size_t i)
{
    sim_ranking_entry x = r->heap[i];
    while (i > 0) {
        size_t parent = (i - 1) / ARITY;
        if (!before(&x, &r->heap[parent]))
            break;
        place(r, i, r->heap[parent]);
        i = parent;
    }
    place(r, i, x);
}

/* The lesser of two places by their entries, without a branch. */
static inline size_t lesser(const sim_ranking *r, size_t a, size_t b)
{
    size_t less = -(size_t)before(&r->heap[b], &r->heap[a]);
    return a ^ ((a ^ b) & less);
}

static void sift_down(sim_ranking *r, size_t i)
{
    sim_ranking_entry x = r->heap[i];
    for (;;) {
        size_t first = ARITY * i + 1;
        if (first >= r->n)
            break;
        size_t best;
        if (first + ARITY <= r->n) /* four children: two pairs, then their winners */
            best = lesser(r, lesser(r, first, first + 1), lesser(r, first + 2, first + 3));
        else {
            best = first;
            for (size_t c = first + 1; c < r->n; c++)
                best = lesser(r, best, c);
        }
        if (!before(&r->heap[best], &x))
            break;
        place(r, i, r->heap[best]);
        i = best;
    }
    place(r, i, x);
}

/* Room for `need` entries, heap[1] kept on a line's start. */
static void reserve(sim_ranking *r, size_t need)
{
    if (need <= r->cap)
        return;
    size_t cap = r->cap ? r->cap : 16;
    while (cap < need) {
        if (cap > (SIZE_MAX / sizeof *r->heap - LEAD) / 2)
            sim_out_of_memory("out of memory for a ranking");
        cap *= 2;
    }
    size_t bytes = (cap + LEAD) * sizeof *r->heap;
    bytes = (bytes + LINE - 1) / LINE * LINE;
    sim_ranking_entry *block = aligned_alloc(LINE, bytes);
    if (!block)
        sim_out_of_memory("out of memory for a ranking");
    if (r->n)
        memcpy(block + LEAD, r->heap, r->n * sizeof *r->heap);
    if (r->heap)
        free(r->heap - LEAD);
    r->heap = block + LEAD;
    r->cap = cap;
}

void sim_ranking_release(sim_ranking *r)
{
    if (r->heap)
        free(r->heap - LEAD);
    free(r->at);
    free(r->frontier);
    *r = (sim_ranking){ 0 };
}

void sim_ranking_insert(sim_ranking *r, uint32_t id, double value, uint64_t tie)
{
    if (id == SIM_RANKING_NONE || sim_ranking_contains(r, id))
        sim_fatal("sim_ranking_insert: id %u is ranked already", (unsigned)id);
    if (id >= SIM_RANKING_MAX_IDS || tie > SIM_RANKING_MAX_TIE)
        sim_fatal("sim_ranking_insert: id %u or tie %llu out of range", (unsigned)id,
                  (unsigned long long)tie);
    if (id >= r->ids) {
        size_t old = r->ids;
        r->at = sim_array_grow(r->at, &r->ids, (size_t)id + 1, sizeof *r->at, "a ranking");
        for (size_t k = old; k < r->ids; k++)
            r->at[k] = SIM_RANKING_NONE;
    }
    reserve(r, r->n + 1);
    place(r, r->n++, (sim_ranking_entry){ value, tie << SIM_RANKING_ID_BITS | id });
    sift_up(r, r->n - 1);
}

void sim_ranking_remove(sim_ranking *r, uint32_t id)
{
    if (!sim_ranking_contains(r, id))
        sim_fatal("sim_ranking_remove: id %u is not ranked", (unsigned)id);
    size_t i = r->at[id];
    r->at[id] = SIM_RANKING_NONE;
    sim_ranking_entry last = r->heap[--r->n];
    if (id_of(last) == id)
        return;
    place(r, i, last); /* the last entry in id's place goes whichever way it must */
    if (i > 0 && before(&last, &r->heap[(i - 1) / ARITY]))
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
        if (!visit(context, id_of(r->heap[pos]), r->heap[pos].value))
            return;
        for (size_t c = ARITY * pos + 1; c <= ARITY * pos + ARITY && c < r->n; c++)
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
