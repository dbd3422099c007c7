/* The event engine: a 4-ary min-heap with lazy deletion over a slot table (engine.h). */
#include "sim/engine.h"

#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>

#include "sim/array.h"
#include "sim/fatal.h"

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

/* What a handle reaches: the action, the live entry's version and time.  The generation
 * counts the slot's reuses, so a handle to an event that already ran no longer matches.
 * A free slot links to the next free one through next_free. */
typedef struct event_slot {
    sim_event_fn fn; /* NULL while the slot is free */
    void *data;
    double time_s;
    uint32_t generation;
    uint32_t version;
    int32_t priority;
    uint32_t next_free;
} event_slot;

#define NO_SLOT UINT32_MAX
#define ARITY 4
#define SEQUENCE_BITS 48
#define PRIORITY_BIAS 32768
/* Stale entries are swept out once they outnumber live ones (and are more than this). */
#define SWEEP_MIN_STALE 1024
/* Actions whose reads the engine fetches ahead (sim_engine_hint_reads); a simulation has
 * one or two whose data is large and scattered. */
#define MAX_HINTS 4
#define CACHE_LINE 64
/* Below this many pending entries the events' data is as a rule still cached (800 replicas'
 * state, about a kilobyte each, fits a core's second-level cache), and fetching ahead
 * costs more than it saves: measured 5% slower at 800 and 64 replicas, 10-20% faster at
 * 8,000 and 80,000 (docs/performance.md, Fleet scale). */
#define FETCH_AHEAD_MIN 4096

typedef struct read_hint {
    sim_event_fn fn;
    unsigned lines; /* cache lines from the start of the action's data */
} read_hint;

/* The spill tier (see "spilling" below).  The heap starts spilling at SPILL_ON entries
 * and takes everything back when fewer than SPILL_OFF are left; the ring's buckets are
 * sized to hold about SPILL_BUCKET_TARGET entries each, so the heap stays in the first
 * two levels of cache, and there are enough of them (at least SPILL_BUCKETS) for twice
 * the entries, so that the ring is rarely spent. */
#define SPILL_ON 8192
#define SPILL_OFF 2048
#define SPILL_BUCKETS 256
#define SPILL_BUCKET_TARGET 512
#define SPILL_SAMPLES 255
/* Bucketing every entry afresh costs O(n); it may take this many entries for each event
 * run since spilling began (after a first allowance of SPILL_ALLOWANCE times the
 * entries), or the heap stays whole until it doubles. */
#define SPILL_WORK_PER_EVENT 8
#define SPILL_ALLOWANCE 4
#define SPILL_FRONT 16

/* Spilled entries are kept in chunks of a shared pool, linked by index, so that the
 * buckets together hold what is spilled and not each its own largest size. */
#define CHUNK_ENTRIES 42
#define NO_CHUNK UINT32_MAX

typedef struct spill_chunk {
    uint32_t next, n;
    heap_entry entries[CHUNK_ENTRIES];
} spill_chunk;

typedef struct spill_bucket {
    uint32_t head, tail; /* chunks, NO_CHUNK when empty */
    size_t n;
} spill_bucket;

struct sim_engine {
    double now_s;
    heap_entry *heap;
    size_t count;           /* entries in the heap, live and stale */
    size_t stale;           /* stale entries among them */
    size_t heap_capacity;
    event_slot *slots;
    size_t slot_capacity;
    uint32_t free_slot;
    uint64_t next_sequence;
    uint64_t events_run;
    /* While an event runs, its entry stays at the heap root, marked vacant: the first
     * event the action schedules takes its place with one sift down, instead of a
     * removal (sift down) and an insertion (sift up).  Most actions schedule a
     * successor. */
    bool root_vacant;
    volatile sig_atomic_t stop_requested;
    unsigned nhints;
    read_hint hints[MAX_HINTS];
    /* Spilling: with many events pending, only the near future is in the heap.  An entry
     * at time t falls in bucket k = floor((t - spill_base) * spill_scale); the heap holds
     * the buckets up to spill_now, the ring those before spill_far, far the rest. */
    bool spilling;
    double spill_base, spill_scale, spill_now, spill_far;
    size_t spilled;    /* entries in the ring and far, live and stale */
    size_t spill_from; /* heap entries at which to start spilling */
    uint64_t spill_since, spill_work; /* events_run when it began; entries bucketed since */
    spill_bucket *ring; /* buckets 1 to spill_far - 1 (ring_capacity allocated) */
    size_t ring_capacity;
    spill_bucket far;
    spill_chunk *chunks;
    size_t chunk_capacity, chunks_made;
    uint32_t free_chunk;
};

sim_engine *sim_engine_create(void)
{
    sim_engine *e = calloc(1, sizeof *e);
    if (e) {
        e->free_slot = NO_SLOT;
        e->spill_from = SPILL_ON;
    }
    return e;
}

void sim_engine_free(sim_engine *engine)
{
    if (!engine)
        return;
    free(engine->ring);
    free(engine->chunks);
    free(engine->heap);
    free(engine->slots);
    free(engine);
}

double sim_engine_now(const sim_engine *engine) { return engine->now_s; }

/* ---- heap ------------------------------------------------------------------------ */

static inline bool entry_before(const heap_entry *a, const heap_entry *b)
{
    if (a->time_s != b->time_s)
        return a->time_s < b->time_s;
    return a->order < b->order;
}

static void sift_up(heap_entry *heap, size_t pos, heap_entry entry)
{
    while (pos > 0) {
        size_t parent = (pos - 1) / ARITY;
        if (!entry_before(&entry, &heap[parent]))
            break;
        heap[pos] = heap[parent];
        pos = parent;
    }
    heap[pos] = entry;
}

static void sift_down(heap_entry *heap, size_t n, size_t pos, heap_entry entry)
{
    for (;;) {
        size_t first = pos * ARITY + 1;
        if (first >= n)
            break;
        size_t last = first + ARITY < n ? first + ARITY : n;
        size_t best = first;
        for (size_t c = first + 1; c < last; c++)
            if (entry_before(&heap[c], &heap[best]))
                best = c;
        if (!entry_before(&heap[best], &entry))
            break;
        heap[pos] = heap[best];
        pos = best;
    }
    heap[pos] = entry;
}

static void heap_pop_root(sim_engine *e)
{
    heap_entry last = e->heap[--e->count];
    if (e->count > 0)
        sift_down(e->heap, e->count, 0, last);
}

static inline bool entry_live(const sim_engine *e, const heap_entry *entry)
{
    const event_slot *s = &e->slots[entry->slot];
    return s->fn && s->version == entry->version;
}

/* Drops stale entries from the root, so that heap[0], if any, is the next event. */
static inline void drop_stale_root(sim_engine *e)
{
    while (e->stale > 0 && e->count > 0 && !entry_live(e, &e->heap[0])) {
        heap_pop_root(e);
        e->stale--;
    }
}

/* Completes the removal of the event that last ran, if no new event took its place. */
static inline void settle_root(sim_engine *e)
{
    if (e->root_vacant) {
        e->root_vacant = false;
        heap_pop_root(e);
    }
}

/* Rebuilds the heap from its live entries (Floyd's method); the order of events is a
 * total order on (time, priority, sequence), so the rebuild changes nothing observable. */
static void heapify(sim_engine *e)
{
    for (size_t i = e->count / ARITY + 1; i-- > 0;)
        if (i < e->count)
            sift_down(e->heap, e->count, i, e->heap[i]);
}

/* Keeps an array's live entries, in their order; returns how many. */
static size_t keep_live(const sim_engine *e, heap_entry *entries, size_t n)
{
    size_t live = 0;
    for (size_t i = 0; i < n; i++)
        if (entry_live(e, &entries[i]))
            entries[live++] = entries[i];
    return live;
}

static void respill(sim_engine *e);

static void sweep_stale(sim_engine *e)
{
    if (e->spilling) {
        respill(e);
        return;
    }
    e->count = keep_live(e, e->heap, e->count);
    heapify(e);
    e->stale = 0;
}

static void mark_stale(sim_engine *e)
{
    e->stale++;
    if (e->stale > SWEEP_MIN_STALE && e->stale > (e->count + e->spilled) / 2) {
        settle_root(e);
        sweep_stale(e);
    }
}

/* ---- slots ------------------------------------------------------------------------ */

/* Doubles an array of the event list from 64 (slots are numbered in 32 bits). */
static void *grow_array(void *array, size_t *capacity, size_t elem_size, const char *what)
{
    if (*capacity * 2 > UINT32_MAX - 1)
        sim_fatal("event list full: more than %zu %s", *capacity, what);
    return sim_array_grow(array, capacity, *capacity < 64 ? 64 : *capacity + 1, elem_size,
                          "the event list");
}

static uint32_t slot_take(sim_engine *e)
{
    if (e->free_slot == NO_SLOT) {
        size_t old_cap = e->slot_capacity;
        e->slots = grow_array(e->slots, &e->slot_capacity, sizeof *e->slots, "events");
        for (size_t i = e->slot_capacity; i-- > old_cap;) {
            e->slots[i] = (event_slot){ .generation = 1, .next_free = e->free_slot };
            e->free_slot = (uint32_t)i;
        }
    }
    uint32_t slot = e->free_slot;
    e->free_slot = e->slots[slot].next_free;
    return slot;
}

/* Frees a slot: its handle and its heap entry (if still there) both become stale. */
static void slot_release(sim_engine *e, uint32_t slot)
{
    event_slot *s = &e->slots[slot];
    s->generation = s->generation == UINT32_MAX ? 1 : s->generation + 1;
    s->version++;
    s->fn = NULL;
    s->next_free = e->free_slot;
    e->free_slot = slot;
}

static inline sim_event_id make_id(uint32_t slot, uint32_t generation)
{
    return (uint64_t)generation << 32 | slot;
}

/* The slot of a pending event, or NO_SLOT. */
static uint32_t pending_slot(const sim_engine *e, sim_event_id id)
{
    uint32_t slot = (uint32_t)id, generation = (uint32_t)(id >> 32);
    if (id == 0 || slot >= e->slot_capacity)
        return NO_SLOT;
    const event_slot *s = &e->slots[slot];
    return s->generation == generation && s->fn ? slot : NO_SLOT;
}

/* ---- spilling: the far future out of the heap ------------------------------------ */

/* With tens of thousands of events pending (a fleet of thousands of replicas, each with
 * its iteration's end), a sift runs through levels of the heap that no cache holds.  So
 * past SPILL_ON entries the heap keeps only the near future: an entry at time t belongs
 * to bucket k = floor((t - spill_base) * spill_scale), a function that never decreases
 * with t, so an entry in a lower bucket is never later than one in a higher bucket and
 * equal times share a bucket.  The heap holds the buckets up to spill_now; a ring of
 * unsorted arrays those up to spill_far; far everything after, unsorted.  When the heap
 * runs dry, the next bucket of the ring moves into it (Floyd's heapify, O(bucket));
 * when the ring is spent, far is sized afresh.  Events still pop in exact (time,
 * priority, sequence) order, so spilling changes nothing observable; ties, however many,
 * only make one bucket large, where the heap orders them as before. */

static inline double bucket_of(const sim_engine *e, double time_s)
{
    return floor((time_s - e->spill_base) * e->spill_scale);
}

static uint32_t chunk_take(sim_engine *e)
{
    if (e->free_chunk != NO_CHUNK) {
        uint32_t c = e->free_chunk;
        e->free_chunk = e->chunks[c].next;
        return c;
    }
    if (e->chunks_made == e->chunk_capacity)
        e->chunks = grow_array(e->chunks, &e->chunk_capacity, sizeof *e->chunks,
                               "chunks of spilled entries");
    return (uint32_t)e->chunks_made++;
}

static void bucket_push(sim_engine *e, spill_bucket *b, heap_entry entry)
{
    if (b->tail == NO_CHUNK || e->chunks[b->tail].n == CHUNK_ENTRIES) {
        uint32_t c = chunk_take(e);
        e->chunks[c].next = NO_CHUNK;
        e->chunks[c].n = 0;
        if (b->tail == NO_CHUNK)
            b->head = c;
        else
            e->chunks[b->tail].next = c;
        b->tail = c;
    }
    spill_chunk *tail = &e->chunks[b->tail];
    tail->entries[tail->n++] = entry;
    b->n++;
}

/* Puts an entry of a later bucket than the heap's in the ring or far; false (nothing
 * done) when it belongs in the heap. */
static inline bool spill(sim_engine *e, heap_entry entry)
{
    double k = bucket_of(e, entry.time_s);
    if (!(k > e->spill_now))
        return false;
    bucket_push(e, k < e->spill_far ? &e->ring[(size_t)k] : &e->far, entry);
    e->spilled++;
    return true;
}

/* Appends a bucket's entries to the heap array (not yet in heap order) and gives its
 * chunks back.  Its stale entries go too, to be dropped at the root as ever (checking
 * each against its slot here would read the slot table at random), unless sweeping. */
static void take_bucket(sim_engine *e, spill_bucket *b, bool sweeping)
{
    while (e->heap_capacity < e->count + b->n)
        e->heap = grow_array(e->heap, &e->heap_capacity, sizeof *e->heap, "heap entries");
    for (uint32_t c = b->head; c != NO_CHUNK;) {
        spill_chunk *chunk = &e->chunks[c];
        for (uint32_t i = 0; i < chunk->n; i++) {
            if (!sweeping || entry_live(e, &chunk->entries[i]))
                e->heap[e->count++] = chunk->entries[i];
            else
                e->stale--;
        }
        uint32_t next = chunk->next;
        chunk->next = e->free_chunk;
        e->free_chunk = c;
        c = next;
    }
    e->spilled -= b->n;
    *b = (spill_bucket){ NO_CHUNK, NO_CHUNK, 0 };
}

static int offset_cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The scale that puts about SPILL_BUCKET_TARGET of n entries in a bucket, from an even
 * sample of their times past base: the density near the front, where the next buckets
 * are, from the sample's SPILL_FRONT earliest (or more, past those that tie at base).
 * 0 when the sample has no spread to go by. */
static double spill_scale_of(const heap_entry *entries, size_t n, double base)
{
    double offset[SPILL_SAMPLES];
    size_t m = 0, stride = n / SPILL_SAMPLES + 1;
    for (size_t i = 0; i < n && m < SPILL_SAMPLES; i += stride)
        if (isfinite(entries[i].time_s - base))
            offset[m++] = entries[i].time_s - base;
    if (m == 0)
        return 0;
    qsort(offset, m, sizeof *offset, offset_cmp);
    size_t j = m < SPILL_FRONT ? m - 1 : SPILL_FRONT - 1;
    while (j < m && !(offset[j] > 0))
        j++;
    if (j == m)
        return 0;
    /* the earliest j + 1 of m samples stand for n (j + 1) / m entries */
    double width = offset[j] * SPILL_BUCKET_TARGET * (double)m / ((double)n * (double)(j + 1));
    double scale = 1 / width;
    return isfinite(scale) && scale > 0 ? scale : 0;
}

/* Spills the heap array's entries (in any order) past its first bucket, which starts at
 * the earliest entry, and puts the rest in heap order.  The scale is the given one, or
 * (0) one estimated from the entries.  Stays a plain heap (and tries again at twice the
 * size) when the entries' times give no spread. */
static void start_spilling(sim_engine *e, double scale)
{
    double base = INFINITY;
    for (size_t i = 0; i < e->count; i++)
        base = fmin(base, e->heap[i].time_s);
    if (!isfinite(base))
        scale = 0; /* nothing, or only events at an infinite time */
    else if (scale == 0)
        scale = spill_scale_of(e->heap, e->count, base);
    if (scale == 0) {
        e->spill_from = 2 * e->count;
        heapify(e);
        return;
    }
    size_t buckets = 2 * e->count / SPILL_BUCKET_TARGET;
    if (buckets < SPILL_BUCKETS)
        buckets = SPILL_BUCKETS;
    if (buckets > e->ring_capacity) {
        size_t old = e->ring_capacity;
        e->ring = sim_array_grow(e->ring, &e->ring_capacity, buckets, sizeof *e->ring,
                                 "the event list");
        for (size_t i = old; i < e->ring_capacity; i++)
            e->ring[i] = (spill_bucket){ NO_CHUNK, NO_CHUNK, 0 };
        if (old == 0) {
            e->far = (spill_bucket){ NO_CHUNK, NO_CHUNK, 0 };
            e->free_chunk = NO_CHUNK;
        }
    }
    e->spilling = true;
    e->spill_from = SIZE_MAX;
    e->spill_base = base;
    e->spill_scale = scale;
    e->spill_now = 0;
    e->spill_far = (double)buckets;
    size_t kept = 0;
    for (size_t i = 0; i < e->count; i++)
        if (!spill(e, e->heap[i]))
            e->heap[kept++] = e->heap[i];
    e->count = kept;
    heapify(e);
}

/* Brings every entry back into the heap array (not in heap order). */
static void unspill(sim_engine *e, bool sweeping)
{
    e->spilling = false;
    e->spill_from = SPILL_ON;
    for (size_t i = 0; i < (size_t)e->spill_far; i++)
        take_bucket(e, &e->ring[i], sweeping);
    take_bucket(e, &e->far, sweeping);
}

/* Spilling begins: the heap has grown past spill_from. */
static void begin_spilling(sim_engine *e)
{
    e->spill_since = e->events_run;
    e->spill_work = 0;
    start_spilling(e, 0);
}

/* Buckets everything afresh once unspill has brought it back: at the given scale, or (0)
 * an estimated one.  A distribution that calls for this every few events (small dense
 * clusters far apart) would cost more than the heap saves: past its budget of work the
 * heap stays whole, as does one left with few entries. */
static void rebucket(sim_engine *e, double scale)
{
    e->spill_work += e->count;
    uint64_t budget = SPILL_WORK_PER_EVENT * (e->events_run - e->spill_since)
                      + SPILL_ALLOWANCE * (uint64_t)e->count;
    if (e->count >= SPILL_OFF && e->spill_work <= budget) {
        start_spilling(e, scale);
        return;
    }
    if (e->count >= SPILL_OFF)
        e->spill_from = 2 * e->count;
    heapify(e);
}

/* Sweeps stale entries out of a spilling list: all of it back, and spilled again at the
 * same scale from its earliest entry. */
static void respill(sim_engine *e)
{
    double scale = e->spill_scale;
    e->count = keep_live(e, e->heap, e->count);
    unspill(e, true);
    e->stale = 0;
    rebucket(e, scale);
}

/* A bucket of many more entries than it should hold, over a span of time (the events
 * have grown denser since the scale was set): the scale that would give it its target;
 * 0 for a bucket of the right size, or of ties. */
static double denser_scale(const sim_engine *e, const spill_bucket *b)
{
    if (b->n <= 4 * SPILL_BUCKET_TARGET)
        return 0;
    double first = INFINITY, last = -INFINITY;
    for (uint32_t c = b->head; c != NO_CHUNK; c = e->chunks[c].next)
        for (uint32_t i = 0; i < e->chunks[c].n; i++) {
            first = fmin(first, e->chunks[c].entries[i].time_s);
            last = fmax(last, e->chunks[c].entries[i].time_s);
        }
    return last > first ? e->spill_scale * (double)b->n / SPILL_BUCKET_TARGET : 0;
}

/* The heap is empty and entries are spilled: the ring's next bucket moves into the heap;
 * a bucket far too full is first spilled again, finer; when the ring is spent, what is
 * left is bucketed afresh (or all comes back to the heap, when few entries are left). */
static void refill(sim_engine *e)
{
    for (double k = e->spill_now + 1; k < e->spill_far; k++) {
        spill_bucket *b = &e->ring[(size_t)k];
        if (b->n) {
            double denser = denser_scale(e, b);
            if (denser > 0) {
                unspill(e, false);
                rebucket(e, denser);
                return;
            }
            e->spill_now = k;
            take_bucket(e, b, false);
            heapify(e);
            return;
        }
    }
    unspill(e, false);
    rebucket(e, 0);
}

/* ---- scheduling ------------------------------------------------------------------ */

__attribute__((noinline, cold)) static void past_time(const sim_engine *e, double time_s,
                                                     const char *caller)
{
    sim_fatal("%s: time %.17g s is %s now (%.17g s): scheduling into the past is a bug",
              caller, time_s, isnan(time_s) ? "not comparable with" : "before", e->now_s);
}

static inline void check_time(const sim_engine *e, double time_s, const char *caller)
{
    if (__builtin_expect(!(time_s >= e->now_s), 0))
        past_time(e, time_s, caller);
}

static uint64_t next_order(sim_engine *e, int priority)
{
    if (priority < -PRIORITY_BIAS || priority >= PRIORITY_BIAS)
        sim_fatal("event priority %d is outside [%d, %d]", priority, -PRIORITY_BIAS,
                  PRIORITY_BIAS - 1);
    if (e->next_sequence >> SEQUENCE_BITS)
        sim_fatal("more than 2^%d events scheduled in one engine", SEQUENCE_BITS);
    return (uint64_t)(priority + PRIORITY_BIAS) << SEQUENCE_BITS | e->next_sequence++;
}

/* Puts a new live entry for `slot` into the heap. */
static void heap_insert(sim_engine *e, heap_entry entry)
{
    if (e->spilling && spill(e, entry))
        return;
    if (e->root_vacant) {
        e->root_vacant = false;
        sift_down(e->heap, e->count, 0, entry); /* it takes the place of the event that ran */
        return;
    }
    if (e->count == e->heap_capacity)
        e->heap = grow_array(e->heap, &e->heap_capacity, sizeof *e->heap, "heap entries");
    sift_up(e->heap, e->count++, entry);
}

sim_event_id sim_event_schedule(sim_engine *engine, double time_s, int priority,
                                sim_event_fn fn, void *data)
{
    check_time(engine, time_s, "sim_event_schedule");
    if (__builtin_expect(!fn, 0))
        sim_fatal("sim_event_schedule: NULL action");
    uint32_t slot = slot_take(engine);
    event_slot *s = &engine->slots[slot];
    s->fn = fn;
    s->data = data;
    s->time_s = time_s;
    s->priority = priority;
    heap_insert(engine, (heap_entry){ time_s, next_order(engine, priority), slot, s->version });
    return make_id(slot, s->generation);
}

sim_event_id sim_event_schedule_in(sim_engine *engine, double delay_s, int priority,
                                   sim_event_fn fn, void *data)
{
    if (!(delay_s >= 0))
        sim_fatal("sim_event_schedule_in: delay %.17g s is negative: scheduling into the "
                  "past is a bug", delay_s);
    return sim_event_schedule(engine, engine->now_s + delay_s, priority, fn, data);
}

bool sim_event_cancel(sim_engine *engine, sim_event_id id)
{
    uint32_t slot = pending_slot(engine, id);
    if (slot == NO_SLOT)
        return false;
    slot_release(engine, slot);
    mark_stale(engine);
    return true;
}

bool sim_event_reschedule(sim_engine *engine, sim_event_id id, double time_s)
{
    check_time(engine, time_s, "sim_event_reschedule");
    uint32_t slot = pending_slot(engine, id);
    if (slot == NO_SLOT)
        return false;
    event_slot *s = &engine->slots[slot];
    /* the old entry goes stale; the new one keeps the priority and takes a new sequence
     * number, so it orders as if scheduled now */
    s->version++;
    s->time_s = time_s;
    heap_insert(engine, (heap_entry){ time_s, next_order(engine, s->priority), slot,
                                      s->version });
    mark_stale(engine);
    return true;
}

bool sim_event_pending(const sim_engine *engine, sim_event_id id)
{
    return pending_slot(engine, id) != NO_SLOT;
}

double sim_event_time(const sim_engine *engine, sim_event_id id)
{
    uint32_t slot = pending_slot(engine, id);
    return slot == NO_SLOT ? NAN : engine->slots[slot].time_s;
}

/* ---- running --------------------------------------------------------------------- */

void sim_engine_hint_reads(sim_engine *engine, sim_event_fn fn, size_t bytes)
{
    unsigned lines = (unsigned)((bytes + CACHE_LINE - 1) / CACHE_LINE);
    for (unsigned i = 0; i < engine->nhints; i++)
        if (engine->hints[i].fn == fn) {
            engine->hints[i].lines = lines;
            return;
        }
    if (engine->nhints < MAX_HINTS)
        engine->hints[engine->nhints++] = (read_hint){ fn, lines };
}

/* Asks the memory system for what the event likely to run next will read, so that it
 * arrives while the current event runs: in a simulation of many replicas each event
 * touches a different one, and its state is no longer in any cache.  The likely next
 * event is the earliest of the root's children (the root holds the event about to run):
 * it is next unless the running event schedules an earlier one or the child is stale. */
static inline void fetch_ahead(const sim_engine *e)
{
    if (e->nhints == 0 || e->count + e->spilled < FETCH_AHEAD_MIN || e->count < 2)
        return;
    size_t end = e->count < ARITY + 1 ? e->count : ARITY + 1;
    size_t next = 1;
    for (size_t c = 2; c < end; c++)
        if (entry_before(&e->heap[c], &e->heap[next]))
            next = c;
    const event_slot *s = &e->slots[e->heap[next].slot];
    if (s->version != e->heap[next].version)
        return; /* stale: the next event is elsewhere */
    for (unsigned i = 0; i < e->nhints; i++)
        if (e->hints[i].fn == s->fn) {
            const char *data = s->data;
            for (unsigned k = 0; k < e->hints[i].lines; k++)
                __builtin_prefetch(data + (size_t)k * CACHE_LINE);
            return;
        }
}

/* The next live event's entry, or NULL; drops stale entries on the way. */
static inline const heap_entry *peek(sim_engine *e)
{
    for (;;) {
        drop_stale_root(e);
        if (__builtin_expect(e->count >= e->spill_from, 0))
            begin_spilling(e);
        if (e->count)
            return &e->heap[0];
        if (!e->spilled)
            return NULL;
        refill(e);
    }
}

/* Runs the event at the root, which the caller found live.  Its entry stays at the
 * root, vacant, until the action schedules a replacement or returns. */
static inline void run_root(sim_engine *e)
{
    uint32_t slot = e->heap[0].slot;
    event_slot *s = &e->slots[slot];
    sim_event_fn fn = s->fn;
    void *data = s->data;
    e->now_s = e->heap[0].time_s;
    slot_release(e, slot);
    e->events_run++;
    e->root_vacant = true;
    fetch_ahead(e);
    fn(e, data);
    settle_root(e);
}

bool sim_engine_step(sim_engine *engine)
{
    if (engine->stop_requested || !peek(engine))
        return false;
    run_root(engine);
    return true;
}

uint64_t sim_engine_run(sim_engine *engine)
{
    uint64_t before = engine->events_run;
    while (!engine->stop_requested && peek(engine))
        run_root(engine);
    return engine->events_run - before;
}

uint64_t sim_engine_run_until(sim_engine *engine, double end_s)
{
    check_time(engine, end_s, "sim_engine_run_until");
    uint64_t before = engine->events_run;
    const heap_entry *next;
    while (!engine->stop_requested && (next = peek(engine)) && next->time_s <= end_s)
        run_root(engine);
    if (!engine->stop_requested)
        engine->now_s = end_s;
    return engine->events_run - before;
}

void sim_engine_stop(sim_engine *engine) { engine->stop_requested = 1; }
void sim_engine_resume(sim_engine *engine) { engine->stop_requested = 0; }
bool sim_engine_stopped(const sim_engine *engine) { return engine->stop_requested != 0; }

size_t sim_engine_pending(const sim_engine *engine)
{
    return engine->count + engine->spilled - engine->stale - engine->root_vacant;
}

uint64_t sim_engine_events_run(const sim_engine *engine) { return engine->events_run; }

size_t sim_engine_memory_bytes(const sim_engine *engine)
{
    size_t spill = engine->ring_capacity * sizeof *engine->ring
                   + engine->chunk_capacity * sizeof *engine->chunks;
    return sizeof *engine + engine->heap_capacity * sizeof *engine->heap
           + engine->slot_capacity * sizeof *engine->slots + spill;
}
