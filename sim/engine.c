/* The event engine: a 4-ary min-heap over a slot table, its far future spilled into
 * buckets of time while many events are pending (engine.h, engine_spill.c). */
#include "sim/engine.h"

#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/array.h"
#include "sim/engine_internal.h"
#include "sim/fatal.h"

/* What a handle reaches: the action, the live entry's version and time.  The generation
 * counts the slot's reuses, so a handle to an event that already ran no longer matches.
 * A free slot links to the next free one; a pending one, while the heap keeps positions,
 * holds its entry's index in the heap. */
typedef struct event_slot {
    sim_event_fn fn; /* NULL while the slot is free */
    void *data;
    double time_s;
    uint32_t generation;
    uint32_t version;
    int32_t priority;
    union {
        uint32_t next_free;
        uint32_t position;
    };
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
#define MAX_HINT_LINES 32
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
    /* Once events are rescheduled or cancelled (`moves`), and while nothing is spilled,
     * each pending slot knows its entry's place in the heap (the sifts write it): a
     * reschedule moves the entry in place and a cancel removes it, so the heap holds no
     * stale entries.  Most reschedules are a fast decode run cut short by an arrival,
     * about one a request; left stale, they made up near half of a small fleet's heap and
     * a fifth of its removals.  A simulation that never moves an event (a queueing
     * station) writes no places: 3% of a whole M/M/8 run.  While spilling (thousands of
     * events, whose slots no cache holds) a sift writes nothing outside the heap, and a
     * reschedule leaves its old entry stale, as engine.h says. */
    bool moves, positions;
    volatile sig_atomic_t stop_requested;
    unsigned nhints;
    read_hint hints[MAX_HINTS];
    /* with many events pending, the heap holds only the near future
     * (sim/engine_spill.c) */
    event_spill spill;
};

sim_engine *sim_engine_create(void)
{
    sim_engine *e = calloc(1, sizeof *e);
    if (e) {
        e->free_slot = NO_SLOT;
        event_spill_init(&e->spill);
    }
    return e;
}

void sim_engine_free(sim_engine *engine)
{
    if (!engine)
        return;
    event_spill_release(&engine->spill);
    free(engine->heap);
    free(engine->slots);
    free(engine);
}

double sim_engine_now(const sim_engine *engine) { return engine->now_s; }

/* ---- heap ------------------------------------------------------------------------ */

/* An entry's place in the order: its time's bits, then its order.  The bits of
 * non-negative doubles order as the doubles do, and check_time admits no NaN and nothing
 * before now, which is never below zero; a negative zero, equal to zero, reads as zero
 * (its sign bit cleared).  Compared with bitwise operators, two keys order two entries
 * as time then order would, without a branch to mispredict. */
typedef struct entry_key {
    uint64_t time_bits, order;
} entry_key;

static inline entry_key key_of(const heap_entry *a)
{
    entry_key k;
    memcpy(&k.time_bits, &a->time_s, sizeof k.time_bits);
    k.time_bits &= ~(UINT64_C(1) << 63);
    k.order = a->order;
    return k;
}

static inline bool key_before(entry_key a, entry_key b)
{
    return (a.time_bits < b.time_bits) | ((a.time_bits == b.time_bits) & (a.order < b.order));
}

static inline bool entry_before(const heap_entry *a, const heap_entry *b)
{
    return key_before(key_of(a), key_of(b));
}

/* Puts an entry at heap[pos] and, with positions kept (slots not NULL), tells its slot. */
static inline void place(heap_entry *heap, event_slot *slots, size_t pos, heap_entry entry)
{
    heap[pos] = entry;
    if (slots)
        slots[entry.slot].position = (uint32_t)pos;
}

/* Sifts entry up from pos, no higher than top (1 while the root is vacant: the event
 * that runs keeps its place until its successor takes it, whatever its time). */
static void sift_up(heap_entry *heap, event_slot *slots, size_t pos, size_t top,
                    heap_entry entry)
{
    while (pos > top) {
        size_t parent = (pos - 1) / ARITY;
        if (!entry_before(&entry, &heap[parent]))
            break;
        place(heap, slots, pos, heap[parent]);
        pos = parent;
    }
    place(heap, slots, pos, entry);
}

static void sift_down(heap_entry *heap, event_slot *slots, size_t n, size_t pos,
                      heap_entry entry)
{
    for (;;) {
        size_t first = pos * ARITY + 1;
        if (first >= n)
            break;
        size_t last = first + ARITY < n ? first + ARITY : n;
        /* the least child without a branch: which one it is the data decides, and a
         * mispredicted branch a level cost more than the compares */
        size_t best = first;
        entry_key least = key_of(&heap[first]);
        for (size_t c = first + 1; c < last; c++) {
            entry_key key = key_of(&heap[c]);
            uint64_t less = -(uint64_t)key_before(key, least);
            best ^= (best ^ c) & less;
            least.time_bits ^= (least.time_bits ^ key.time_bits) & less;
            least.order ^= (least.order ^ key.order) & less;
        }
        if (!key_before(least, key_of(&entry)))
            break;
        place(heap, slots, pos, heap[best]);
        pos = best;
    }
    place(heap, slots, pos, entry);
}

/* The slot table for the sifts to keep positions in, or NULL. */
static inline event_slot *kept_positions(const sim_engine *e)
{
    return e->positions ? e->slots : NULL;
}

static void heap_pop_root(sim_engine *e)
{
    heap_entry last = e->heap[--e->count];
    if (e->count > 0)
        sift_down(e->heap, kept_positions(e), e->count, 0, last);
}

/* Puts entry at pos (an entry moved, a place left empty) and sifts it the way its time
 * says; positions kept. */
static void heap_place_at(sim_engine *e, size_t pos, heap_entry entry)
{
    size_t top = e->root_vacant ? 1 : 0;
    if (pos > top && entry_before(&entry, &e->heap[(pos - 1) / ARITY]))
        sift_up(e->heap, e->slots, pos, top, entry);
    else
        sift_down(e->heap, e->slots, e->count, pos, entry);
}

/* Removes the entry at pos; positions kept. */
static void heap_remove_at(sim_engine *e, size_t pos)
{
    heap_entry last = e->heap[--e->count];
    if (pos < e->count)
        heap_place_at(e, pos, last);
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

/* Puts the heap array in heap order (Floyd's method): after a sweep, or when entries come
 * from the spill tier (stale ones among them, dropped at the root as ever); the order of
 * events is a total order on (time, priority, sequence), so it changes nothing
 * observable. */
static void heapify(sim_engine *e)
{
    for (size_t i = e->count / ARITY + 1; i-- > 0;)
        if (i < e->count)
            sift_down(e->heap, NULL, e->count, i, e->heap[i]);
}

/* Keeps the heap array's live entries, in their order (not heap order). */
static void keep_live(sim_engine *e)
{
    size_t live = 0;
    for (size_t i = 0; i < e->count; i++)
        if (entry_live(e, &e->heap[i]))
            e->heap[live++] = e->heap[i];
    e->count = live;
}

/* Starts keeping places, stale entries none: every entry's but a vacant root's (its
 * slot is free). */
static void keep_positions(sim_engine *e)
{
    e->positions = true;
    for (size_t i = e->root_vacant; i < e->count; i++)
        e->slots[e->heap[i].slot].position = (uint32_t)i;
}

/* Puts the heap in order after entries came or went in bulk (the spill tier, a sweep);
 * places kept where events move and nothing is spilled, the stale entries dropped when
 * that begins. */
static void reorder(sim_engine *e)
{
    bool keep = e->moves && !e->spill.on;
    if (keep && !e->positions) {
        keep_live(e);
        e->stale = 0;
    }
    e->positions = false;
    heapify(e);
    if (keep)
        keep_positions(e);
}

/* An event is about to be moved or cancelled: places kept from now on, unless spilling
 * (no stale entry can be in the heap yet: nothing has moved). */
static inline void note_moves(sim_engine *e)
{
    if (__builtin_expect(!e->moves, 0)) {
        e->moves = true;
        if (!e->spill.on)
            keep_positions(e);
    }
}

static void sweep_stale(sim_engine *e)
{
    bool spilling = e->spill.on;
    if (spilling) /* all of it back, and spilled again at the same scale */
        e->count = event_spill_take_all(&e->spill, &e->heap, e->count, &e->heap_capacity);
    keep_live(e);
    e->stale = 0;
    if (spilling)
        e->count = event_spill_rebucket(&e->spill, e->heap, e->count, e->spill.scale,
                                        e->events_run);
    reorder(e);
}

static void mark_stale(sim_engine *e)
{
    e->stale++;
    if (e->stale > SWEEP_MIN_STALE && e->stale > (e->count + e->spill.spilled) / 2) {
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

/* Puts a new live entry for `slot` into the heap, or into the spill tier when it falls
 * past the heap's bucket. */
static void heap_insert(sim_engine *e, heap_entry entry)
{
    if (e->spill.on && event_spill_put(&e->spill, entry))
        return;
    if (e->root_vacant) {
        e->root_vacant = false;
        /* it takes the place of the event that ran */
        sift_down(e->heap, kept_positions(e), e->count, 0, entry);
        return;
    }
    if (e->count == e->heap_capacity)
        e->heap = grow_array(e->heap, &e->heap_capacity, sizeof *e->heap, "heap entries");
    sift_up(e->heap, kept_positions(e), e->count++, 0, entry);
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
    note_moves(engine);
    if (engine->positions) {
        size_t pos = engine->slots[slot].position;
        slot_release(engine, slot);
        heap_remove_at(engine, pos);
        return true;
    }
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
    note_moves(engine);
    event_slot *s = &engine->slots[slot];
    /* it keeps the priority and takes a new sequence number, so it orders as if
     * scheduled now: moved in place, or a new entry where the old one goes stale */
    s->time_s = time_s;
    if (engine->positions) {
        heap_place_at(engine, s->position, (heap_entry){ time_s, next_order(engine, s->priority),
                                                          slot, s->version });
        return true;
    }
    s->version++;
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
    /* a hint is for a few lines: more would cost more than a miss saves */
    size_t lines = bytes / CACHE_LINE + (bytes % CACHE_LINE != 0);
    if (lines > MAX_HINT_LINES)
        lines = MAX_HINT_LINES;
    for (unsigned i = 0; i < engine->nhints; i++)
        if (engine->hints[i].fn == fn) {
            engine->hints[i].lines = (unsigned)lines;
            return;
        }
    if (engine->nhints < MAX_HINTS)
        engine->hints[engine->nhints++] = (read_hint){ fn, (unsigned)lines };
}

/* Asks the memory system for what the event likely to run next will read, so that it
 * arrives while the current event runs: in a simulation of many replicas each event
 * touches a different one, and its state is no longer in any cache.  The likely next
 * event is the earliest of the root's children (the root holds the event about to run):
 * it is next unless the running event schedules an earlier one or the child is stale.
 * Always inlined: gcc counts a prefetch as no effect, so a separate copy of this function
 * reads as pure and its calls are dropped (seen with a loop over a bit mask of lines). */
static inline __attribute__((always_inline)) void fetch_ahead(const sim_engine *e)
{
    if (e->nhints == 0 || e->count + e->spill.spilled < FETCH_AHEAD_MIN || e->count < 2)
        return;
    size_t end = e->count < ARITY + 1 ? e->count : ARITY + 1;
    size_t next = 1;
    for (size_t c = 2; c < end; c++)
        if (entry_before(&e->heap[c], &e->heap[next]))
            next = c;
    /* the slots of the events likely to run after it (its siblings and its children,
     * among which its successor at the root will be), for the fetch at the next event
     * to find in cache */
    for (size_t c = 1; c < end; c++)
        if (c != next)
            __builtin_prefetch(&e->slots[e->heap[c].slot]);
    size_t below = next * ARITY + 1, below_end = below + ARITY < e->count ? below + ARITY
                                                                           : e->count;
    for (size_t c = below; c < below_end; c++)
        __builtin_prefetch(&e->slots[e->heap[c].slot]);
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
        if (__builtin_expect(e->count >= e->spill.from, 0)) {
            e->count = event_spill_begin(&e->spill, e->heap, e->count, e->events_run);
            reorder(e);
        }
        if (e->count)
            return &e->heap[0];
        if (!e->spill.spilled)
            return NULL;
        e->count = event_spill_refill(&e->spill, &e->heap, &e->heap_capacity, e->events_run);
        reorder(e);
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
    return engine->count + engine->spill.spilled - engine->stale - engine->root_vacant;
}

uint64_t sim_engine_events_run(const sim_engine *engine) { return engine->events_run; }

size_t sim_engine_memory_bytes(const sim_engine *engine)
{
    return sizeof *engine + engine->heap_capacity * sizeof *engine->heap
           + engine->slot_capacity * sizeof *engine->slots + event_spill_bytes(&engine->spill);
}
