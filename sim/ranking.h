/* A ranking: an indexed 4-ary min-heap of small integer ids ordered by (value, tie), so
 * that the least is read in O(1) and an id whose value changed moves in O(log n).  A
 * fleet ranks its replicas by their requests (or tokens) waiting and running, ties by
 * creation order: the least-loaded replica without looking at every replica for every
 * request.
 *
 * Everything a sift reads or writes is in the ranking's own two arrays (the entries,
 * which carry their keys, and each id's place), so moving an id touches no memory of
 * the caller's: with thousands of replicas that is what keeps an update in cache.
 * Ids are the caller's to hand out, dense from 0 (memory follows the largest), below
 * 2^24; ties below 2^40.  With distinct ties the order is total, so the least id is the
 * same whatever the history of insertions and updates. */
#ifndef FLEETSIM_SIM_RANKING_H
#define FLEETSIM_SIM_RANKING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* An entry carries its key: the value, then the tie above the id in one word (the lower
 * first among equal values), 16 bytes, four to a cache line. */
typedef struct sim_ranking_entry {
    double value;
    uint64_t order; /* tie << SIM_RANKING_ID_BITS | id */
} sim_ranking_entry;

#define SIM_RANKING_ID_BITS 24
/* Ids below 2^24 (16,777,216 ranked at once), ties below 2^40: beyond is a bug. */
#define SIM_RANKING_MAX_IDS (UINT32_C(1) << SIM_RANKING_ID_BITS)
#define SIM_RANKING_MAX_TIE ((UINT64_C(1) << (64 - SIM_RANKING_ID_BITS)) - 1)

typedef struct sim_ranking {
    sim_ranking_entry *heap;
    size_t n, cap;
    uint32_t *at;  /* by id: its place in heap, or SIM_RANKING_NONE */
    size_t ids;
    size_t *frontier; /* sim_ranking_walk's */
    size_t frontier_cap;
} sim_ranking;

/* Small ids to rank by, handed out and taken back: the lowest never used, or the last
 * given back.  Zero-filled is empty; sim_ids_release frees it. */
typedef struct sim_ids {
    uint32_t *spare;
    size_t nspare, cap;
    uint32_t next;
} sim_ids;

uint32_t sim_ids_take(sim_ids *ids);
void sim_ids_give(sim_ids *ids, uint32_t id);
void sim_ids_release(sim_ids *ids);

#define SIM_RANKING_NONE UINT32_MAX

/* An empty ranking is zero-filled; sim_ranking_release frees its arrays. */
void sim_ranking_release(sim_ranking *r);

/* id (not ranked) enters with its value and tie; out of memory is fatal. */
void sim_ranking_insert(sim_ranking *r, uint32_t id, double value, uint64_t tie);
/* id (ranked) leaves. */
void sim_ranking_remove(sim_ranking *r, uint32_t id);
/* id (ranked) takes a new value and moves to its place; nothing moves when it is equal. */
void sim_ranking_update(sim_ranking *r, uint32_t id, double value);

static inline bool sim_ranking_contains(const sim_ranking *r, uint32_t id)
{
    return id < r->ids && r->at[id] != SIM_RANKING_NONE;
}
/* The least id, SIM_RANKING_NONE when empty. */
static inline uint32_t sim_ranking_least(const sim_ranking *r)
{
    return r->n ? (uint32_t)(r->heap[0].order & (SIM_RANKING_MAX_IDS - 1)) : SIM_RANKING_NONE;
}

/* The entries in the heap's order, which is no order: for a pass over every ranked id
 * that reads the ranking's array alone (n: sim_ranking_count). */
static inline size_t sim_ranking_count(const sim_ranking *r) { return r->n; }
static inline sim_ranking_entry sim_ranking_entry_at(const sim_ranking *r, size_t i)
{
    return r->heap[i];
}
static inline uint32_t sim_ranking_entry_id(sim_ranking_entry e)
{
    return (uint32_t)(e.order & (SIM_RANKING_MAX_IDS - 1));
}
static inline uint64_t sim_ranking_entry_tie(sim_ranking_entry e)
{
    return e.order >> SIM_RANKING_ID_BITS;
}
/* The value id (ranked) holds. */
static inline double sim_ranking_value(const sim_ranking *r, uint32_t id)
{
    return r->heap[r->at[id]].value;
}

/* Calls visit with each id in increasing (value, tie) order until it returns false:
 * O(k log k) for the first k, without disturbing the ranking (visit must not change
 * it).  EASY backfilling walks the running jobs by end time this way until enough GPUs
 * are free. */
void sim_ranking_walk(sim_ranking *r, bool (*visit)(void *context, uint32_t id, double value),
                      void *context);

#endif
