/* Calendar queue with Brown's resizing rule: the number of buckets doubles or halves
 * with the queue size, and the bucket width is re-estimated from the spacing of the
 * earliest events at each resize. */
#include "calendar_queue.h"

#include <math.h>
#include <stdlib.h>

#include "sim/fatal.h"

#define NIL UINT32_MAX

typedef struct node {
    double time_s;
    uint64_t sequence;
    uint32_t next;
} node;

struct calendar_queue {
    node *nodes;
    uint32_t node_capacity, free_node;
    uint32_t *buckets;      /* head node of each bucket's sorted list */
    uint32_t nbuckets;      /* a power of two */
    double width_s;
    size_t size;
    uint32_t last_bucket;   /* where the last pop was found */
    double bucket_top_s;    /* end of the current year's slot of last_bucket */
    double last_time_s;
    uint64_t next_sequence;
    int resizing;
};

static inline int before(const node *a, const node *b)
{
    return a->time_s < b->time_s || (a->time_s == b->time_s && a->sequence < b->sequence);
}

static uint32_t bucket_of(const calendar_queue *q, double t)
{
    return (uint32_t)((uint64_t)(t / q->width_s) & (q->nbuckets - 1));
}

static uint32_t node_take(calendar_queue *q)
{
    if (q->free_node == NIL) {
        uint32_t old = q->node_capacity, cap = old ? old * 2 : 1024;
        node *grown = realloc(q->nodes, cap * sizeof *grown);
        if (!grown)
            sim_fatal("calendar queue: out of memory");
        q->nodes = grown;
        for (uint32_t i = cap; i-- > old;) {
            q->nodes[i].next = q->free_node;
            q->free_node = i;
        }
        q->node_capacity = cap;
    }
    uint32_t n = q->free_node;
    q->free_node = q->nodes[n].next;
    return n;
}

static void insert_node(calendar_queue *q, uint32_t n)
{
    uint32_t *link = &q->buckets[bucket_of(q, q->nodes[n].time_s)];
    while (*link != NIL && !before(&q->nodes[n], &q->nodes[*link]))
        link = &q->nodes[*link].next;
    q->nodes[n].next = *link;
    *link = n;
}

static void set_calendar(calendar_queue *q, uint32_t nbuckets, double width_s, double start_s)
{
    free(q->buckets);
    q->buckets = malloc(nbuckets * sizeof *q->buckets);
    if (!q->buckets)
        sim_fatal("calendar queue: out of memory");
    for (uint32_t i = 0; i < nbuckets; i++)
        q->buckets[i] = NIL;
    q->nbuckets = nbuckets;
    q->width_s = width_s;
    q->last_time_s = start_s;
    q->last_bucket = bucket_of(q, start_s);
    q->bucket_top_s = (floor(start_s / width_s) + 1) * width_s;
}

calendar_queue *calendar_queue_create(void)
{
    calendar_queue *q = calloc(1, sizeof *q);
    if (!q)
        sim_fatal("calendar queue: out of memory");
    q->free_node = NIL;
    set_calendar(q, 2, 1.0, 0);
    return q;
}

void calendar_queue_free(calendar_queue *q)
{
    if (!q)
        return;
    free(q->nodes);
    free(q->buckets);
    free(q);
}

size_t calendar_queue_size(const calendar_queue *q) { return q->size; }

/* Brown's width estimate: the mean gap between the first few events, ignoring gaps over
 * twice that mean, times three. */
static double estimate_width(calendar_queue *q)
{
    enum { SAMPLE = 25 };
    size_t n = q->size < SAMPLE ? q->size : SAMPLE;
    if (n < 2)
        return q->width_s;
    double times[SAMPLE];
    /* sample by popping, then put everything back as it was, position included */
    uint32_t last_bucket = q->last_bucket;
    double top = q->bucket_top_s, last_time = q->last_time_s;
    uint64_t sequence = q->next_sequence;
    q->resizing = 1;
    for (size_t i = 0; i < n; i++)
        times[i] = calendar_queue_pop(q);
    for (size_t i = 0; i < n; i++)
        calendar_queue_push(q, times[i]);
    q->resizing = 0;
    q->last_bucket = last_bucket;
    q->bucket_top_s = top;
    q->last_time_s = last_time;
    q->next_sequence = sequence + n;
    double total = 0, mean, kept_total = 0;
    for (size_t i = 1; i < n; i++)
        total += times[i] - times[i - 1];
    mean = total / (double)(n - 1);
    size_t kept = 0;
    for (size_t i = 1; i < n; i++) {
        double gap = times[i] - times[i - 1];
        if (gap <= 2 * mean) {
            kept_total += gap;
            kept++;
        }
    }
    double width = kept && kept_total > 0 ? 3 * kept_total / (double)kept : q->width_s;
    return width > 0 ? width : q->width_s;
}

static void resize(calendar_queue *q, uint32_t nbuckets)
{
    double width = estimate_width(q);
    uint32_t *old = q->buckets, old_n = q->nbuckets;
    q->buckets = NULL;
    set_calendar(q, nbuckets, width, q->last_time_s);
    for (uint32_t b = 0; b < old_n; b++) {
        for (uint32_t n = old[b]; n != NIL;) {
            uint32_t next = q->nodes[n].next;
            insert_node(q, n);
            n = next;
        }
    }
    free(old);
}

void calendar_queue_push(calendar_queue *q, double time_s)
{
    uint32_t n = node_take(q);
    q->nodes[n].time_s = time_s;
    q->nodes[n].sequence = q->next_sequence++;
    insert_node(q, n);
    q->size++;
    if (!q->resizing && q->size > 2 * (size_t)q->nbuckets)
        resize(q, q->nbuckets * 2);
}

static double take_head(calendar_queue *q, uint32_t b)
{
    uint32_t n = q->buckets[b];
    q->buckets[b] = q->nodes[n].next;
    q->nodes[n].next = q->free_node;
    q->free_node = n;
    q->size--;
    double t = q->nodes[n].time_s;
    q->last_bucket = b;
    q->last_time_s = t;
    q->bucket_top_s = (floor(t / q->width_s) + 1) * q->width_s;
    if (!q->resizing && q->nbuckets > 2 && q->size < q->nbuckets / 2 - 2)
        resize(q, q->nbuckets / 2);
    return t;
}

double calendar_queue_pop(calendar_queue *q)
{
    uint32_t b = q->last_bucket;
    double top = q->bucket_top_s;
    for (uint32_t scanned = 0; scanned < q->nbuckets; scanned++) {
        uint32_t head = q->buckets[b];
        if (head != NIL && q->nodes[head].time_s < top)
            return take_head(q, b);
        b = (b + 1) & (q->nbuckets - 1);
        top += q->width_s;
    }
    /* A whole year without an event in its slot: take the earliest head directly. */
    uint32_t best = NIL;
    for (uint32_t i = 0; i < q->nbuckets; i++) {
        uint32_t head = q->buckets[i];
        if (head != NIL && (best == NIL || before(&q->nodes[head], &q->nodes[q->buckets[best]])))
            best = i;
    }
    return take_head(q, best);
}
