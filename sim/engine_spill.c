/* The event list's far future, kept out of the heap while many events are pending
 * (sim/engine.h says why; sim/engine_internal.h, how it is laid out).
 *
 * With tens of thousands of events pending (a fleet of thousands of replicas, each with
 * its iteration's end), a sift runs through levels of the heap that no cache holds.  So
 * past SPILL_ON entries the heap keeps only the near future, the buckets up to the
 * current one.  When it runs dry, the ring's next bucket moves into it (the caller puts
 * it in heap order, O(bucket)); when the ring is spent, what is left is bucketed afresh.
 * Events still pop in exact (time, priority, sequence) order, so spilling changes
 * nothing observable; ties, however many, only make one bucket large, which the heap
 * orders as before. */
#include "sim/engine_internal.h"

#include <math.h>
#include <stdlib.h>

#include "sim/array.h"
#include "sim/fatal.h"

/* The heap starts spilling at SPILL_ON entries; when everything is bucketed afresh (the
 * ring spent, a bucket far too full, a sweep) and fewer than SPILL_OFF are left, it takes
 * everything back.  Buckets are sized to hold about BUCKET_TARGET entries each, so the
 * heap stays in the first two levels of cache, and there are enough of them (at least
 * MIN_BUCKETS) for twice the entries, so that the ring is rarely spent. */
#define SPILL_ON 8192
#define SPILL_OFF 2048
#define MIN_BUCKETS 256
#define BUCKET_TARGET 512
/* The width comes from an even sample of the entries' times, read near the front, where
 * the next buckets are: from its FRONT earliest of SAMPLES. */
#define SAMPLES 255
#define FRONT 16
/* Bucketing every entry afresh costs O(n); since spilling began, it may take this many
 * entries for each event run, plus ALLOWANCE times the entries it buckets now, or the
 * heap stays whole until it doubles: small dense clusters far apart would call for it
 * every few events. */
#define WORK_PER_EVENT 8
#define ALLOWANCE 4

static const spill_bucket EMPTY = { SPILL_NO_CHUNK, SPILL_NO_CHUNK, 0 };

void event_spill_init(event_spill *s)
{
    *s = (event_spill){ .from = SPILL_ON, .far = EMPTY, .free_chunk = SPILL_NO_CHUNK };
}

void event_spill_release(event_spill *s)
{
    free(s->ring);
    free(s->chunks);
    event_spill_init(s);
}

size_t event_spill_bytes(const event_spill *s)
{
    return s->ring_capacity * sizeof *s->ring + s->chunk_capacity * sizeof *s->chunks;
}

/* ---- buckets: chunks of a shared pool ------------------------------------------- */

static uint32_t chunk_take(event_spill *s)
{
    if (s->free_chunk != SPILL_NO_CHUNK) {
        uint32_t c = s->free_chunk;
        s->free_chunk = s->chunks[c].next;
        return c;
    }
    if (s->chunks_made == SPILL_NO_CHUNK)
        sim_fatal("event list full: more than %zu chunks of spilled events", s->chunks_made);
    s->chunks = sim_array_grow(s->chunks, &s->chunk_capacity, s->chunks_made + 1,
                               sizeof *s->chunks, "the event list");
    return (uint32_t)s->chunks_made++;
}

void event_spill_push(event_spill *s, double bucket, heap_entry entry)
{
    spill_bucket *b = bucket < s->far_from ? &s->ring[(size_t)bucket] : &s->far;
    if (b->tail == SPILL_NO_CHUNK || s->chunks[b->tail].n == SPILL_CHUNK_ENTRIES) {
        uint32_t c = chunk_take(s);
        s->chunks[c].next = SPILL_NO_CHUNK;
        s->chunks[c].n = 0;
        if (b->tail == SPILL_NO_CHUNK)
            b->head = c;
        else
            s->chunks[b->tail].next = c;
        b->tail = c;
    }
    spill_chunk *tail = &s->chunks[b->tail];
    tail->entries[tail->n++] = entry;
    b->n++;
    s->spilled++;
}

/* Appends a bucket's entries to the heap array's n and gives its chunks back; returns
 * the new count. */
static size_t take_bucket(event_spill *s, spill_bucket *b, heap_entry **heap, size_t n,
                          size_t *capacity)
{
    *heap = sim_array_grow(*heap, capacity, n + b->n, sizeof **heap, "the event list");
    for (uint32_t c = b->head; c != SPILL_NO_CHUNK;) {
        spill_chunk *chunk = &s->chunks[c];
        for (uint32_t i = 0; i < chunk->n; i++)
            (*heap)[n++] = chunk->entries[i];
        uint32_t next = chunk->next;
        chunk->next = s->free_chunk;
        s->free_chunk = c;
        c = next;
    }
    s->spilled -= b->n;
    *b = EMPTY;
    return n;
}

size_t event_spill_take_all(event_spill *s, heap_entry **heap, size_t n, size_t *capacity)
{
    s->on = false;
    s->from = SPILL_ON;
    for (size_t k = 0; k < (size_t)s->far_from; k++)
        n = take_bucket(s, &s->ring[k], heap, n, capacity);
    return take_bucket(s, &s->far, heap, n, capacity);
}

/* ---- bucketing -------------------------------------------------------------------- */

static int offset_cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The scale that puts about BUCKET_TARGET of n entries in a bucket, from the density
 * near the front: the sample's FRONT earliest offsets past base (or more, past those that
 * tie at base).  0 when the sample has no spread to go by. */
static double scale_of(const heap_entry *entries, size_t n, double base)
{
    double offset[SAMPLES];
    size_t m = 0, stride = n / SAMPLES + 1;
    for (size_t i = 0; i < n && m < SAMPLES; i += stride)
        if (isfinite(entries[i].time_s - base))
            offset[m++] = entries[i].time_s - base;
    if (m == 0)
        return 0;
    qsort(offset, m, sizeof *offset, offset_cmp);
    size_t j = m < FRONT ? m - 1 : FRONT - 1;
    while (j < m && !(offset[j] > 0))
        j++;
    if (j == m)
        return 0;
    /* the earliest j + 1 of m samples stand for n (j + 1) / m entries */
    double width = offset[j] * BUCKET_TARGET * (double)m / ((double)n * (double)(j + 1));
    double scale = 1 / width;
    return isfinite(scale) && scale > 0 ? scale : 0;
}

/* Spills the n entries past the first bucket, which starts at the earliest; returns how
 * many stay.  The scale is the given one, or (0) one estimated from the entries; none
 * spill (and spilling waits for twice as many) when their times give no spread. */
static size_t start(event_spill *s, heap_entry *heap, size_t n, double scale)
{
    double base = INFINITY;
    for (size_t i = 0; i < n; i++)
        base = fmin(base, heap[i].time_s);
    if (!isfinite(base))
        scale = 0; /* nothing, or only events at an infinite time */
    else if (scale == 0)
        scale = scale_of(heap, n, base);
    if (scale == 0) {
        s->from = 2 * n;
        return n;
    }
    size_t buckets = 2 * n / BUCKET_TARGET;
    if (buckets < MIN_BUCKETS)
        buckets = MIN_BUCKETS;
    if (buckets > s->ring_capacity) {
        size_t old = s->ring_capacity;
        s->ring = sim_array_grow(s->ring, &s->ring_capacity, buckets, sizeof *s->ring,
                                 "the event list");
        for (size_t k = old; k < s->ring_capacity; k++)
            s->ring[k] = EMPTY;
    }
    s->on = true;
    s->from = SIZE_MAX;
    s->base = base;
    s->scale = scale;
    s->now = 0;
    s->far_from = (double)buckets;
    size_t kept = 0;
    for (size_t i = 0; i < n; i++)
        if (!event_spill_put(s, heap[i]))
            heap[kept++] = heap[i];
    return kept;
}

size_t event_spill_begin(event_spill *s, heap_entry *heap, size_t n, uint64_t events_run)
{
    s->since = events_run;
    s->work = 0;
    return start(s, heap, n, 0);
}

size_t event_spill_rebucket(event_spill *s, heap_entry *heap, size_t n, double scale,
                            uint64_t events_run)
{
    s->work += n;
    uint64_t budget = WORK_PER_EVENT * (events_run - s->since) + ALLOWANCE * (uint64_t)n;
    if (n >= SPILL_OFF && s->work <= budget)
        return start(s, heap, n, scale);
    if (n >= SPILL_OFF)
        s->from = 2 * n;
    return n;
}

/* A bucket of many more entries than it should hold, over a span of time (the events
 * have grown denser since the scale was set): the scale that would give it its target;
 * 0 for a bucket of the right size, or of ties. */
static double denser_scale(const event_spill *s, const spill_bucket *b)
{
    if (b->n <= 4 * BUCKET_TARGET)
        return 0;
    double first = INFINITY, last = -INFINITY;
    for (uint32_t c = b->head; c != SPILL_NO_CHUNK; c = s->chunks[c].next)
        for (uint32_t i = 0; i < s->chunks[c].n; i++) {
            first = fmin(first, s->chunks[c].entries[i].time_s);
            last = fmax(last, s->chunks[c].entries[i].time_s);
        }
    double scale = s->scale * (double)b->n / BUCKET_TARGET;
    return last > first && isfinite(scale) ? scale : 0;
}

size_t event_spill_refill(event_spill *s, heap_entry **heap, size_t *capacity,
                          uint64_t events_run)
{
    for (double k = s->now + 1; k < s->far_from; k++) {
        spill_bucket *b = &s->ring[(size_t)k];
        if (!b->n)
            continue;
        double denser = denser_scale(s, b);
        if (denser > 0) { /* spilled again, finer */
            size_t n = event_spill_take_all(s, heap, 0, capacity);
            return event_spill_rebucket(s, *heap, n, denser, events_run);
        }
        s->now = k;
        return take_bucket(s, b, heap, 0, capacity);
    }
    /* the ring is spent: what is left, bucketed afresh */
    size_t n = event_spill_take_all(s, heap, 0, capacity);
    return event_spill_rebucket(s, *heap, n, 0, events_run);
}
