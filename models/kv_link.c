/* Key-value cache transfers over shared links (see kv_link.h). */
#include "models/kv_link.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "models/event_order.h"
#include "sim/array.h"
#include "sim/fatal.h"

typedef struct transfer {
    double tag;     /* the link's attained service at which it has all its bytes */
    uint64_t seq;   /* ties end in the order they started */
    void *item;
} transfer;

typedef struct link {
    kv_links *owner;
    transfer *heap; /* binary min-heap by (tag, seq) */
    size_t n, cap;
    double served;  /* bytes each transfer in flight has received since the link was made */
    double at_s;    /* when served was last brought up to date */
    sim_event_id event; /* the smallest tag's end, or 0 */
} link;

typedef struct delivery {
    double at_s;
    void *item;
} delivery;

struct kv_links {
    sim_engine *engine;
    kv_link_spec spec;
    kv_link_done_fn done;
    void *context;
    link **links;   /* by number; NULL where none was used yet */
    size_t nlinks;
    uint64_t next_seq;
    delivery *fifo; /* a ring: transfers that have ended and wait out the latency */
    size_t head, count, fifo_cap;
    sim_event_id fifo_event;
};

static const char *const SCOPE_NAMES[] = { "per_replica", "per_node", "one" };

const char *kv_link_scope_name(kv_link_scope scope) { return SCOPE_NAMES[scope]; }

int kv_link_scope_parse(const char *name, kv_link_scope *out)
{
    for (int i = 0; i < 3; i++)
        if (!strcmp(name, SCOPE_NAMES[i])) {
            *out = (kv_link_scope)i;
            return 0;
        }
    return -1;
}

unsigned kv_link_of(const kv_link_spec *spec, unsigned unit, unsigned tp)
{
    switch (spec->scope) {
    case KV_LINK_PER_REPLICA:
        return unit / (tp ? tp : 1);
    case KV_LINK_PER_NODE:
        return unit / (spec->gpus_per_node ? spec->gpus_per_node : 1);
    case KV_LINK_ONE:
        break;
    }
    return 0;
}

kv_links *kv_links_create(sim_engine *engine, const kv_link_spec *spec, kv_link_done_fn done,
                          void *context)
{
    if (!(spec->bandwidth_bytes_per_s > 0) || !(spec->latency_s >= 0))
        sim_fatal("kv_links_create: bandwidth %g must be > 0 and latency %g >= 0",
                  spec->bandwidth_bytes_per_s, spec->latency_s);
    kv_links *k = calloc(1, sizeof *k);
    if (!k)
        sim_out_of_memory("out of memory for cache links");
    k->engine = engine;
    k->spec = *spec;
    k->done = done;
    k->context = context;
    return k;
}

void kv_links_free(kv_links *k)
{
    if (!k)
        return;
    for (size_t i = 0; i < k->nlinks; i++) {
        if (!k->links[i])
            continue;
        if (k->links[i]->event)
            sim_event_cancel(k->engine, k->links[i]->event);
        free(k->links[i]->heap);
        free(k->links[i]);
    }
    if (k->fifo_event)
        sim_event_cancel(k->engine, k->fifo_event);
    free(k->links);
    free(k->fifo);
    free(k);
}

/* ---- the heap of one link ---- */

static bool before(const transfer *a, const transfer *b)
{
    return a->tag < b->tag || (a->tag == b->tag && a->seq < b->seq);
}

static void heap_push(link *l, transfer t)
{
    l->heap = sim_array_grow(l->heap, &l->cap, l->n + 1, sizeof *l->heap, "cache transfers");
    size_t i = l->n++;
    while (i > 0 && before(&t, &l->heap[(i - 1) / 2])) {
        l->heap[i] = l->heap[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    l->heap[i] = t;
}

static transfer heap_pop(link *l)
{
    transfer top = l->heap[0], last = l->heap[--l->n];
    size_t i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= l->n)
            break;
        if (c + 1 < l->n && before(&l->heap[c + 1], &l->heap[c]))
            c++;
        if (!before(&l->heap[c], &last))
            break;
        l->heap[i] = l->heap[c];
        i = c;
    }
    if (l->n)
        l->heap[i] = last;
    return top;
}

/* ---- sharing ---- */

/* Brings the attained service up to now: each of the n in flight received W / n. */
static void advance(link *l, double now)
{
    if (l->n)
        l->served += (now - l->at_s) * l->owner->spec.bandwidth_bytes_per_s / (double)l->n;
    l->at_s = now;
}

static void on_link_end(sim_engine *e, void *data);

/* The end of the smallest tag at the present share, as the one event of the link. */
static void plan_link(link *l, double now)
{
    if (!l->n) {
        l->served = 0; /* an idle link starts its count again: tags stay small */
        if (l->event)
            sim_event_cancel(l->owner->engine, l->event);
        l->event = 0;
        return;
    }
    double left = l->heap[0].tag - l->served;
    double end = now + fmax(left, 0) * (double)l->n / l->owner->spec.bandwidth_bytes_per_s;
    if (l->event)
        sim_event_reschedule(l->owner->engine, l->event, end);
    else
        l->event = sim_event_schedule(l->owner->engine, end, EVENT_MODEL, on_link_end, l);
}

static void on_fifo(sim_engine *e, void *data);

static void deliver_later(kv_links *k, double at_s, void *item)
{
    if (k->count == k->fifo_cap) { /* grow the ring, unrolled from its head */
        size_t old = k->fifo_cap;
        delivery *grown = sim_array_grow(NULL, &k->fifo_cap, old + 1, sizeof *grown,
                                         "cache deliveries");
        for (size_t i = 0; i < k->count; i++)
            grown[i] = k->fifo[(k->head + i) % old];
        free(k->fifo);
        k->fifo = grown;
        k->head = 0;
    }
    k->fifo[(k->head + k->count++) % k->fifo_cap] = (delivery){ at_s, item };
    if (!k->fifo_event)
        k->fifo_event = sim_event_schedule(k->engine, at_s, EVENT_MODEL, on_fifo, k);
}

static void on_fifo(sim_engine *e, void *data)
{
    kv_links *k = data;
    k->fifo_event = 0;
    delivery d = k->fifo[k->head];
    k->head = (k->head + 1) % k->fifo_cap;
    k->count--;
    if (k->count)
        k->fifo_event = sim_event_schedule(e, k->fifo[k->head].at_s, EVENT_MODEL, on_fifo, k);
    k->done(k->context, d.item);
}

static void on_link_end(sim_engine *e, void *data)
{
    link *l = data;
    kv_links *k = l->owner;
    double now = sim_engine_now(e);
    l->event = 0;
    advance(l, now);
    l->served = l->heap[0].tag; /* this event is its end: no rounding drift */
    void *ended[8];
    unsigned nended = 0;
    /* transfers of equal tags end together (two of a size started at once); a few at a
     * time, the rest at once in a next event of the same instant */
    while (l->n && l->heap[0].tag <= l->served && nended < 8)
        ended[nended++] = heap_pop(l).item;
    plan_link(l, now);
    for (unsigned i = 0; i < nended; i++) {
        if (k->spec.latency_s > 0)
            deliver_later(k, now + k->spec.latency_s, ended[i]);
        else
            k->done(k->context, ended[i]);
    }
}

void kv_links_send(kv_links *k, unsigned number, double bytes, void *item)
{
    double now = sim_engine_now(k->engine);
    k->links = sim_array_grow_zeroed(k->links, &k->nlinks, (size_t)number + 1, sizeof *k->links,
                                     "cache links");
    link *l = k->links[number];
    if (!l) {
        if (!(l = calloc(1, sizeof *l)))
            sim_out_of_memory("out of memory for cache links");
        l->owner = k;
        l->at_s = now;
        k->links[number] = l;
    }
    advance(l, now);
    heap_push(l, (transfer){ l->served + fmax(bytes, 0), k->next_seq++, item });
    plan_link(l, now);
}

unsigned kv_links_in_flight(const kv_links *k, unsigned number)
{
    return number < k->nlinks && k->links[number] ? (unsigned)k->links[number]->n : 0;
}

size_t kv_links_memory_bytes(const kv_links *k)
{
    size_t bytes = sizeof *k + k->nlinks * sizeof *k->links + k->fifo_cap * sizeof *k->fifo;
    for (size_t i = 0; i < k->nlinks; i++)
        if (k->links[i])
            bytes += sizeof *k->links[i] + k->links[i]->cap * sizeof(transfer);
    return bytes;
}
