/* The links that carry key-value caches from prefill replicas to decode replicas
 * (disaggregated serving, models/serving.h).
 *
 * A transfer of B bytes on a link of bandwidth W and latency L takes L + B / W alone.
 * Transfers on one link share it (processor sharing): while n are in flight each moves
 * at W / n, so two of the same size started together both take L + 2B / W.  The latency
 * is the last byte's way to the far end: it follows the sharing and overlaps other
 * transfers.  Exact with events: a link keeps its attained service per transfer (bytes
 * each in-flight transfer has received, the same for all of them), a transfer ends when
 * that reaches its tag (the service at its start plus its size), and only the smallest
 * tag's end is an event, rescheduled when the count changes: O(log n) per transfer, n in
 * flight.  Deliveries leave in the order transfers end (the latency is the same for all),
 * so they wait in a FIFO with one event for its head.
 *
 * Memory follows the transfers in flight and the links used, never the number sent.
 */
#ifndef FLEETSIM_MODELS_KV_LINK_H
#define FLEETSIM_MODELS_KV_LINK_H

#include <stdint.h>

#include "sim/engine.h"

/* Which transfers share a link. */
typedef enum kv_link_scope {
    KV_LINK_PER_REPLICA,  /* each prefill replica sends over a link of its own (its NICs) */
    KV_LINK_PER_NODE,     /* prefill replicas on one node (gpus_per_node GPUs) share one */
    KV_LINK_ONE,          /* every transfer shares one link (a fabric's bottleneck) */
} kv_link_scope;

typedef struct kv_link_spec {
    double bandwidth_bytes_per_s;  /* of one link, > 0 */
    double latency_s;              /* >= 0 */
    kv_link_scope scope;
    unsigned gpus_per_node;        /* KV_LINK_PER_NODE: GPUs a node holds (>= 1) */
} kv_link_spec;

/* "per_replica", "per_node", "one"; parse gives 0, or -1 for an unknown name. */
const char *kv_link_scope_name(kv_link_scope scope);
int kv_link_scope_parse(const char *name, kv_link_scope *out);

/* The link a transfer from the replica whose first GPU is pool unit `unit` (of tp GPUs)
 * uses. */
unsigned kv_link_of(const kv_link_spec *spec, unsigned unit, unsigned tp);

/* Called from inside an engine event when a transfer's last byte has arrived. */
typedef void (*kv_link_done_fn)(void *context, void *item);

typedef struct kv_links kv_links;

/* Never NULL: out of memory is fatal.  spec is copied. */
kv_links *kv_links_create(sim_engine *engine, const kv_link_spec *spec, kv_link_done_fn done,
                          void *context);
/* Cancels what is in flight (call it while the engine exists); items are the caller's.
 * NULL-safe. */
void kv_links_free(kv_links *k);

/* Starts a transfer of `bytes` (>= 0) on link number `link` now; done(context, item)
 * when it arrives. */
void kv_links_send(kv_links *k, unsigned link, double bytes, void *item);

/* Transfers in flight on a link (sharing it now), and waiting out the latency. */
unsigned kv_links_in_flight(const kv_links *k, unsigned link);

/* Bytes of model state: the links used so far and their transfers in flight. */
size_t kv_links_memory_bytes(const kv_links *k);

#endif
