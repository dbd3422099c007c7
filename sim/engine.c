/* The event engine: a 4-ary indexed min-heap over a slot table (see engine.h). */
#include "sim/engine.h"

#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>

#include "sim/fatal.h"

/* One heap entry carries its whole sort key, so sifting never leaves the heap array. */
typedef struct heap_entry {
    double time_s;
    int32_t priority;
    uint32_t slot;
    uint64_t sequence;
} heap_entry;

/* A slot holds what a handle needs: the action, and where the entry sits in the heap.
 * A free slot links to the next free one through heap_pos.  The generation counts the
 * slot's reuses, so a handle to an event that already ran no longer matches. */
typedef struct event_slot {
    sim_event_fn fn;
    void *data;
    uint32_t heap_pos;
    uint32_t generation;
} event_slot;

#define NO_SLOT UINT32_MAX
#define ARITY 4

struct sim_engine {
    double now_s;
    heap_entry *heap;
    size_t count;
    size_t heap_capacity;
    event_slot *slots;
    size_t slot_capacity;
    uint32_t free_slot;
    uint64_t next_sequence;
    uint64_t events_run;
    volatile sig_atomic_t stop_requested;
};

sim_engine *sim_engine_create(void)
{
    sim_engine *e = calloc(1, sizeof *e);
    if (e)
        e->free_slot = NO_SLOT;
    return e;
}

void sim_engine_free(sim_engine *engine)
{
    if (!engine)
        return;
    free(engine->heap);
    free(engine->slots);
    free(engine);
}

double sim_engine_now(const sim_engine *engine) { return engine->now_s; }

static inline bool entry_before(const heap_entry *a, const heap_entry *b)
{
    if (a->time_s != b->time_s)
        return a->time_s < b->time_s;
    if (a->priority != b->priority)
        return a->priority < b->priority;
    return a->sequence < b->sequence;
}

static inline void heap_place(sim_engine *e, size_t pos, heap_entry entry)
{
    e->heap[pos] = entry;
    e->slots[entry.slot].heap_pos = (uint32_t)pos;
}

static void sift_up(sim_engine *e, size_t pos, heap_entry entry)
{
    while (pos > 0) {
        size_t parent = (pos - 1) / ARITY;
        if (!entry_before(&entry, &e->heap[parent]))
            break;
        heap_place(e, pos, e->heap[parent]);
        pos = parent;
    }
    heap_place(e, pos, entry);
}

static void sift_down(sim_engine *e, size_t pos, heap_entry entry)
{
    size_t n = e->count;
    for (;;) {
        size_t first = pos * ARITY + 1;
        if (first >= n)
            break;
        size_t last = first + ARITY < n ? first + ARITY : n;
        size_t best = first;
        for (size_t c = first + 1; c < last; c++)
            if (entry_before(&e->heap[c], &e->heap[best]))
                best = c;
        if (!entry_before(&e->heap[best], &entry))
            break;
        heap_place(e, pos, e->heap[best]);
        pos = best;
    }
    heap_place(e, pos, entry);
}

/* Puts an entry back in order after its key changed in either direction. */
static void heap_fix(sim_engine *e, size_t pos, heap_entry entry)
{
    if (pos > 0 && entry_before(&entry, &e->heap[(pos - 1) / ARITY]))
        sift_up(e, pos, entry);
    else
        sift_down(e, pos, entry);
}

static void heap_remove_at(sim_engine *e, size_t pos)
{
    heap_entry last = e->heap[--e->count];
    if (pos < e->count)
        heap_fix(e, pos, last);
}

static void *grow_array(void *array, size_t *capacity, size_t elem_size, const char *what)
{
    size_t new_cap = *capacity ? *capacity * 2 : 64;
    if (new_cap > UINT32_MAX - 1)
        sim_fatal("event list full: more than %zu pending %s", *capacity, what);
    void *grown = realloc(array, new_cap * elem_size);
    if (!grown)
        sim_fatal("out of memory growing the event list to %zu %s", new_cap, what);
    *capacity = new_cap;
    return grown;
}

static uint32_t slot_take(sim_engine *e)
{
    if (e->free_slot == NO_SLOT) {
        size_t old_cap = e->slot_capacity;
        e->slots = grow_array(e->slots, &e->slot_capacity, sizeof *e->slots, "slots");
        for (size_t i = e->slot_capacity; i-- > old_cap;) {
            e->slots[i].generation = 1;
            e->slots[i].heap_pos = e->free_slot;
            e->free_slot = (uint32_t)i;
        }
    }
    uint32_t slot = e->free_slot;
    e->free_slot = e->slots[slot].heap_pos;
    return slot;
}

static void slot_release(sim_engine *e, uint32_t slot)
{
    event_slot *s = &e->slots[slot];
    s->generation = s->generation == UINT32_MAX ? 1 : s->generation + 1;
    s->fn = NULL;
    s->heap_pos = e->free_slot;
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

static void check_time(const sim_engine *e, double time_s, const char *caller)
{
    if (!(time_s >= e->now_s))
        sim_fatal("%s: time %.17g s is %s now (%.17g s): scheduling into the past is a bug",
                  caller, time_s, isnan(time_s) ? "not comparable with" : "before", e->now_s);
}

sim_event_id sim_event_schedule(sim_engine *engine, double time_s, int priority,
                                sim_event_fn fn, void *data)
{
    check_time(engine, time_s, "sim_event_schedule");
    if (!fn)
        sim_fatal("sim_event_schedule: NULL action");
    if (engine->count == engine->heap_capacity)
        engine->heap = grow_array(engine->heap, &engine->heap_capacity,
                                  sizeof *engine->heap, "events");
    uint32_t slot = slot_take(engine);
    event_slot *s = &engine->slots[slot];
    s->fn = fn;
    s->data = data;
    heap_entry entry = { time_s, priority, slot, engine->next_sequence++ };
    sift_up(engine, engine->count++, entry);
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
    heap_remove_at(engine, engine->slots[slot].heap_pos);
    slot_release(engine, slot);
    return true;
}

bool sim_event_reschedule(sim_engine *engine, sim_event_id id, double time_s)
{
    check_time(engine, time_s, "sim_event_reschedule");
    uint32_t slot = pending_slot(engine, id);
    if (slot == NO_SLOT)
        return false;
    size_t pos = engine->slots[slot].heap_pos;
    heap_entry entry = engine->heap[pos];
    entry.time_s = time_s;
    entry.sequence = engine->next_sequence++;
    heap_fix(engine, pos, entry);
    return true;
}

bool sim_event_pending(const sim_engine *engine, sim_event_id id)
{
    return pending_slot(engine, id) != NO_SLOT;
}

double sim_event_time(const sim_engine *engine, sim_event_id id)
{
    uint32_t slot = pending_slot(engine, id);
    return slot == NO_SLOT ? NAN : engine->heap[engine->slots[slot].heap_pos].time_s;
}

/* Pops the first event and runs it; the caller checked that one exists. */
static inline void run_first(sim_engine *e)
{
    heap_entry first = e->heap[0];
    event_slot *s = &e->slots[first.slot];
    sim_event_fn fn = s->fn;
    void *data = s->data;
    heap_remove_at(e, 0);
    slot_release(e, first.slot);
    e->now_s = first.time_s;
    e->events_run++;
    fn(e, data);
}

bool sim_engine_step(sim_engine *engine)
{
    if (engine->count == 0 || engine->stop_requested)
        return false;
    run_first(engine);
    return true;
}

uint64_t sim_engine_run(sim_engine *engine)
{
    uint64_t before = engine->events_run;
    while (engine->count > 0 && !engine->stop_requested)
        run_first(engine);
    return engine->events_run - before;
}

uint64_t sim_engine_run_until(sim_engine *engine, double end_s)
{
    check_time(engine, end_s, "sim_engine_run_until");
    uint64_t before = engine->events_run;
    while (engine->count > 0 && engine->heap[0].time_s <= end_s && !engine->stop_requested)
        run_first(engine);
    if (!engine->stop_requested)
        engine->now_s = end_s;
    return engine->events_run - before;
}

void sim_engine_stop(sim_engine *engine) { engine->stop_requested = 1; }
void sim_engine_resume(sim_engine *engine) { engine->stop_requested = 0; }
bool sim_engine_stopped(const sim_engine *engine) { return engine->stop_requested != 0; }

size_t sim_engine_pending(const sim_engine *engine) { return engine->count; }
uint64_t sim_engine_events_run(const sim_engine *engine) { return engine->events_run; }

size_t sim_engine_memory_bytes(const sim_engine *engine)
{
    return sizeof *engine + engine->heap_capacity * sizeof *engine->heap
           + engine->slot_capacity * sizeof *engine->slots;
}
