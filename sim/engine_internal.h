/* Inside the event list (sim/engine.h): the heap's entry, shared by sim/engine.c (the
 * heap, the slots, running) and sim/engine_spill.c (the far future, kept out of the heap
 * in buckets of time while many events are pending). */
#ifndef FLEETSIM_SIM_ENGINE_INTERNAL_H
#define FLEETSIM_SIM_ENGINE_INTERNAL_H

#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A heap entry carries its whole sort key, so sifting reads the heap array alone.  The
 * entry is live while its version matches its slot's; cancelling or rescheduling an
 * event only bumps the slot's version, and the stale entry is dropped when it reaches
 * the root.  Nothing in the heap points back into the slot table, so a sift writes
 * nothing outside the heap array: that is what keeps large queues fast. */
typedef struct heap_entry {
    double time_s;
    uint64_t order; /* priority (biased to unsigned) in the top 16 bits, sequence below */
    uint32_t slot;
    uint32_t version;
} heap_entry;

/* The spill tier.  An entry at time t falls in bucket k = floor((t - base) * scale), a
 * function that never decreases with t: an entry in a lower bucket is never later than
 * one in a higher bucket, and equal times share a bucket.  The heap holds the buckets up
 * to `now`; the ring those before `far_from`, each unsorted; `far` everything after,
 * unsorted.  Spilled entries are kept in chunks of a shared pool, linked by index, so
 * that the buckets together hold what is spilled and not each its own largest size. */
#define SPILL_CHUNK_ENTRIES 42
#define SPILL_NO_CHUNK UINT32_MAX

typedef struct spill_chunk {
    uint32_t next, n;
    heap_entry entries[SPILL_CHUNK_ENTRIES];
} spill_chunk;

typedef struct spill_bucket {
    uint32_t head, tail; /* chunks, SPILL_NO_CHUNK when empty */
    size_t n;
} spill_bucket;

typedef struct event_spill {
    bool on;
    double base, scale, now, far_from;
    size_t spilled;            /* entries in the ring and far, live and stale */
    size_t from;               /* heap entries at which spilling begins */
    uint64_t since, work;      /* events run when it began; entries bucketed since */
    spill_bucket *ring;        /* buckets 1 to far_from - 1 */
    size_t ring_capacity;
    spill_bucket far;
    spill_chunk *chunks;
    size_t chunk_capacity, chunks_made;
    uint32_t free_chunk;
} event_spill;

/* Not spilling, to begin once the heap holds `from` entries. */
void event_spill_init(event_spill *s);
void event_spill_release(event_spill *s);
size_t event_spill_bytes(const event_spill *s);

/* Keeps an entry out of the heap when it falls past the heap's bucket (spilling only). */
void event_spill_push(event_spill *s, double bucket, heap_entry entry);
static inline bool event_spill_put(event_spill *s, heap_entry entry)
{
    double k = floor((entry.time_s - s->base) * s->scale);
    if (!(k > s->now))
        return false;
    event_spill_push(s, k, entry);
    return true;
}

/* The heap's n entries (in any order) have reached s->from: spills those past the first
 * bucket, which starts at the earliest; returns how many stay, for the caller to put in
 * heap order.  Keeps them all (and waits for twice as many) when their times give no
 * spread. */
size_t event_spill_begin(event_spill *s, heap_entry *heap, size_t n, uint64_t events_run);

/* The heap is empty and entries are spilled: moves the next bucket's entries into the
 * heap array (grown as need be) or, when the ring is spent or a bucket comes up far too
 * full, everything, bucketed afresh; returns how many entries the heap array now holds,
 * for the caller to put in heap order.  Stale entries come along, to be dropped at the
 * root. */
size_t event_spill_refill(event_spill *s, heap_entry **heap, size_t *capacity,
                          uint64_t events_run);

/* Stops spilling: every spilled entry appended to the heap's n (the array grown as need
 * be); returns the new count.  The scale in force is left in s->scale. */
size_t event_spill_take_all(event_spill *s, heap_entry **heap, size_t n, size_t *capacity);

/* After take_all (and, for a sweep, the stale entries dropped): spills the n entries
 * again at the given scale, or (0) an estimated one, within the budget of work; returns
 * how many stay in the heap. */
size_t event_spill_rebucket(event_spill *s, heap_entry *heap, size_t n, double scale,
                            uint64_t events_run);

#endif
