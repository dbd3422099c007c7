/* Tiers of a prefix cache below GPU memory: host RAM, a local disk, a store shared by a
 * pool's replicas (LMCache's CPU and disk backends, Mooncake's distributed store).
 *
 * Write-through, as those stores work: every whole block a replica's prefill computes,
 * and every answer's blocks when its request ends, is stored in each tier as it is in
 * the GPU cache; each tier evicts least recently used blocks past its own capacity
 * (models/prefix_cache.h), independently of the GPU's.  The stores' copies run on their
 * own streams beside the forward pass (LMCache's store, Mooncake's put): never waited
 * for, and not counted against the links they use.
 *
 * A request admitted to look up its prefix (replica.h) takes the longest prefix the GPU
 * holds, then walks the tiers in order (host, disk, shared): a tier that holds more of
 * the prompt than found so far offers the blocks in between, fetched in latency + bytes
 * / bandwidth, and they are fetched if that is quicker than prefilling them (the
 * request's prefill from the prefix found so far less its prefill from the deeper one,
 * priced by the replica's own cost model); else the tier is passed over and the next
 * one tried from the same point.  A fetch blocks the next iteration, as the engine
 * loads the blocks into GPU memory before the forward pass that reads them (LMCache's
 * retrieve in vLLM's connector).  The fetched blocks join the GPU cache, pinned by the
 * request, as blocks its prefill computed would.
 *
 * Memory: each tier's cache, a few dozen bytes an owner (or a hashed block) it holds,
 * bounded by its capacity.
 */
#ifndef FLEETSIM_MODELS_PREFIX_TIERS_H
#define FLEETSIM_MODELS_PREFIX_TIERS_H

#include <stdbool.h>
#include <stdint.h>

#include "models/prefix_cache.h"

typedef enum prefix_tier_kind {
    PREFIX_TIER_HOST,   /* the replica's host RAM, over its GPUs' PCIe */
    PREFIX_TIER_DISK,   /* the replica's local disk (NVMe) */
    PREFIX_TIER_SHARED, /* one store for a workload's replicas in a pool, over their NICs */
} prefix_tier_kind;
#define PREFIX_TIERS_MAX 3

/* "host", "disk", "shared". */
const char *prefix_tier_kind_name(prefix_tier_kind kind);

/* A tier as a scenario states it: size 0 is no tier; bandwidth 0 and latency < 0 take
 * the defaults, which the caller resolves (host: the GPUs' PCIe as models/kv_swap.h
 * prices it; shared: the replica's NICs and the network's latency; disk: none, stated). */
typedef struct prefix_tier_spec {
    double size_bytes;
    double bandwidth_bytes_per_s;
    double latency_s;
} prefix_tier_spec;

/* A tier as a replica uses it: cache borrowed (a replica's own for host and disk, its
 * pool's for shared), capacity in blocks, the rates resolved. */
typedef struct prefix_tier {
    prefix_tier_kind kind;
    prefix_cache *cache;
    size_t capacity_blocks;
    double bandwidth_bytes_per_s, latency_s;
} prefix_tier;

/* A replica's tiers, in lookup order. */
typedef struct prefix_tiers {
    unsigned n;
    prefix_tier tier[PREFIX_TIERS_MAX];
} prefix_tiers;

/* What one tier gave a replica's requests (after the warm-up). */
typedef struct prefix_tier_stats {
    uint64_t fetches;   /* admissions that fetched blocks from it */
    uint64_t declined;  /* admissions it held more for that did not fetch from it: a
                           prefill, or a later tier, was quicker */
    double tokens;      /* tokens fetched */
    double bytes;       /* bytes fetched */
    double stall_s;     /* replica time spent waiting for its fetches */
} prefix_tier_stats;

void prefix_tier_stats_add(prefix_tier_stats *sum, const prefix_tier_stats *s);

/* The costs an admission weighs, the replica's: seconds to prefill tokens [from, to) of
 * request q's prompt (its prefill from `from` less its prefill from `to`), and the bytes
 * of cache tokens [from, to) hold. */
typedef struct prefix_costs {
    double (*prefill_s)(const void *context, const void *q, unsigned from, unsigned to);
    double (*bytes)(const void *context, unsigned from, unsigned to);
    const void *context;
} prefix_costs;

/* An admission's plan: the tokens it takes as cached (from the GPU and the tiers), the
 * seconds its fetches take, and per tier the tokens, bytes and seconds fetched and
 * whether it was passed over for a prefill. */
typedef struct prefix_fetch {
    unsigned to;
    double seconds;
    unsigned tokens[PREFIX_TIERS_MAX];
    double bytes[PREFIX_TIERS_MAX], seconds_of[PREFIX_TIERS_MAX];
    bool declined[PREFIX_TIERS_MAX];
} prefix_fetch;

/* Plans the fetches of request q's chain beyond `from` tokens (the GPU's hit, whole
 * blocks) within its first `want`.  Touches no cache. */
prefix_fetch prefix_tiers_plan(const prefix_tiers *t, const prefix_chain *chain,
                               unsigned from, unsigned want, const prefix_costs *costs,
                               const void *q);

/* The plan is carried out: the blocks read are stored in every tier (the most recently
 * used there), and its figures join stats (one per tier; NULL: not counted). */
void prefix_tiers_fetched(const prefix_tiers *t, const prefix_chain *chain,
                          const prefix_fetch *plan, prefix_tier_stats *stats);

/* Stores the chain's first `tokens` (whole blocks) in every tier, write-through. */
void prefix_tiers_store(const prefix_tiers *t, const prefix_chain *chain, unsigned tokens);

#endif
