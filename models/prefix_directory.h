/* A fleet's prefix directory: which replicas hold which cached blocks, so that routing
 * by prefix affinity asks one table for every replica's cached prefix of a request
 * instead of asking each replica's cache (with 64 replicas, 64 table probes a routing,
 * each a cache miss, against two).
 *
 * It mirrors the replicas' prefix caches (models/prefix_cache.h) through their
 * observers: a cache reports each run of blocks it holds per owner, by the run's key,
 * whenever the count changes, and 0 when the run goes (evicted, or the cache freed).
 * A replica is a small id the directory hands out; ids of replicas that left are given
 * again, so they stay below the most replicas held at once.  Memory: one entry per run
 * a replica holds, so it follows the caches, never the sessions that ended.
 */
#ifndef FLEETSIM_MODELS_PREFIX_DIRECTORY_H
#define FLEETSIM_MODELS_PREFIX_DIRECTORY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "models/prefix_cache.h"

typedef struct prefix_directory prefix_directory;

/* An empty directory of caches of blocks of `block` tokens (>= 1), as theirs.  Out of
 * memory is fatal. */
prefix_directory *prefix_directory_create(unsigned block);
/* NULL is fine. */
void prefix_directory_free(prefix_directory *d);

/* A new replica's id: the smallest one free. */
unsigned prefix_directory_join(prefix_directory *d);
/* Frees an id whose runs are all gone (its cache was freed, reporting each as 0). */
void prefix_directory_leave(prefix_directory *d, unsigned id);
/* One more than the largest id in use or used: the length of longest's answer. */
unsigned prefix_directory_ids(const prefix_directory *d);

/* Replica id now holds the first `blocks` blocks of the run named key (0: none). */
void prefix_directory_set(prefix_directory *d, unsigned id, uint64_t key, uint32_t blocks);
/* A prefix_cache_observer: context is a prefix_directory_member. */
typedef struct prefix_directory_member {
    prefix_directory *directory;
    unsigned id;
} prefix_directory_member;
void prefix_directory_observe(void *member, uint64_t key, uint32_t blocks);

/* For every id below prefix_directory_ids, into tokens[id]: what
 * prefix_cache_longest(that replica's cache, chain, tokens) answers now (0 for an id
 * without a replica).  Two table probes however many replicas; for a hashed chain, one
 * a block of the longest prefix held, plus one. */
void prefix_directory_longest(const prefix_directory *d, const prefix_chain *chain,
                              unsigned tokens, unsigned *tokens_by_id);

/* Calls visit with each id holding blocks of the run named key, and how many (in no
 * particular order): the one or two replicas that served a conversation, without a look
 * at the others. */
void prefix_directory_holders(const prefix_directory *d, uint64_t key,
                              void (*visit)(void *context, unsigned id, uint32_t blocks),
                              void *context);

/* Whether every id in use holds the run named key's most blocks, at least `blocks` of
 * them (a shared prompt every replica keeps whole): then each one's prefix of a chain
 * through it is the same as far as that run goes, known without asking each.  False
 * when the ids hold different numbers of its blocks, even all at least `blocks`.  O(1);
 * the count behind it is kept as holders change, counted afresh only when the last
 * holder of the most blocks holds fewer. */
bool prefix_directory_all_hold(const prefix_directory *d, uint64_t key, uint32_t blocks);

size_t prefix_directory_memory_bytes(const prefix_directory *d);

#endif
