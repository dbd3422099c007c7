/* A replica's prefix cache: the key-value blocks of prompts it served, kept after their
 * requests ended so that a later prompt that starts the same way skips their prefill
 * (vLLM's automatic prefix caching, SGLang's radix cache).
 *
 * A prompt is a chain of blocks of `block` tokens; only whole blocks are cached.  A
 * block is named by its owner and index, never by its tokens: the blocks wholly in the
 * first shared_tokens of a chain belong to a prompt many requests share (a workload's
 * system prompt), named by the 64-bit `shared`, and the rest to one conversation, named
 * by `own`; a block that straddles the end of the shared part is the conversation's.
 * Since an owner's content fixes everything before it (a session draws its system
 * prompt once), (owner, index) names a block's whole prefix, as a chained hash of
 * (parent, content) would.  The cache keeps, per owner, how many of its first blocks it
 * holds: a radix tree of two levels, the shared prompts and the conversations below.
 *
 * Eviction is least recently used, by owner: inserting a chain makes its own run and
 * then its shared run the most recent, so a shared prompt is always more recent than
 * the conversations below it, and eviction takes the last blocks of the least recently
 * used run first: leaves first, never a chain cut in the middle.  (A coarser recency
 * than a block's own: touching a run's first blocks refreshes the whole run, where a
 * radix tree would split it.)  Memory: a few dozen bytes an owner held.
 *
 * A chain may instead name each block by a hashed id (a Mooncake trace's hash_ids, a
 * chained hash of the block and all before it): then ids[i] is block i's name, a block
 * is a run of one, and a chain's hit is its leading ids held.  Inserting touches its
 * blocks from the last to the first, so a block is always more recent than every block
 * after it on any chain through it, and eviction again takes leaves first.  Such a
 * chain's blocks past its ids are never cached.  Memory: a few dozen bytes a block.
 *
 * Running sequences share the blocks they hold (vLLM's reference-counted block pool,
 * SGLang's radix cache with its lock counts): a sequence pins the runs its first blocks
 * lie in, the ones it found cached when it was admitted and the ones its prefill has
 * computed since, and unpins them when it leaves.  A pinned run is off the recency list:
 * eviction never takes it, and its blocks are the memory the running sequences share,
 * counted once (prefix_cache_pinned).  A run is pinned whole, beyond the blocks a
 * sequence reads (a run is the cache's unit); when its last sequence leaves it becomes
 * the most recently used, as a freed block joins the end of an engine's free queue.
 */
#ifndef FLEETSIM_MODELS_PREFIX_CACHE_H
#define FLEETSIM_MODELS_PREFIX_CACHE_H

#include <stddef.h>
#include <stdint.h>

typedef struct prefix_chain {
    uint64_t shared;           /* the shared prompt's name; unused when shared_tokens is 0 */
    unsigned shared_tokens;
    unsigned nids;             /* with ids: how many */
    uint64_t own;              /* the conversation's (or the request's) name */
    const uint64_t *ids;       /* NULL: the two runs above; else block i is named by ids[i]
                                  (i < nids, maybe none; the caller's memory, read during
                                  a call), its later blocks by none */
} prefix_chain;

typedef struct prefix_cache prefix_cache;

/* The names of a chain's two runs in a cache: its blocks wholly inside the shared
 * prompt, and the rest (never 0; the keys an observer is told). */
uint64_t prefix_chain_shared_key(const prefix_chain *chain);
uint64_t prefix_chain_own_key(const prefix_chain *chain);
/* The name of the run of one block hashed as id. */
uint64_t prefix_block_key(uint64_t id);

/* Told, with its context, that the cache now holds the first `blocks` blocks of the
 * run named key (0: none, the run is gone). */
typedef void (*prefix_cache_observer)(void *context, uint64_t key, uint32_t blocks);

/* An empty cache of blocks of `block` tokens (>= 1).  Out of memory is fatal. */
prefix_cache *prefix_cache_create(unsigned block);
/* NULL is fine.  An observer is told that every run it holds goes. */
void prefix_cache_free(prefix_cache *pc);
/* Tells observer (NULL: none) of every change in a run's blocks from now on (a fleet's
 * prefix directory); the cache must be empty. */
void prefix_cache_observe(prefix_cache *pc, prefix_cache_observer observer, void *context);

/* Tokens of the chain's first `tokens` that the cache holds: a multiple of the block,
 * at most tokens.  Touches nothing (the cache is not const only for a lookup's memo). */
unsigned prefix_cache_longest(prefix_cache *pc, const prefix_chain *chain, unsigned tokens);

/* Inserts the whole blocks of the chain's first `tokens` that are missing and makes
 * its unpinned runs the most recently used (own, then shared), then evicts least
 * recently used blocks until at most capacity_blocks unpinned ones remain.  A chain
 * longer than the capacity keeps its first capacity_blocks. */
void prefix_cache_insert(prefix_cache *pc, const prefix_chain *chain, unsigned tokens,
                         size_t capacity_blocks);

/* Evicts least recently used unpinned blocks until at most capacity_blocks of them
 * remain (the running sequences took the memory back). */
void prefix_cache_trim(prefix_cache *pc, size_t capacity_blocks);

/* As prefix_cache_longest, and *unpinned: the blocks of the runs that hit lies in that
 * no sequence pins (what pinning it would take out of the evictable memory). */
unsigned prefix_cache_probe(prefix_cache *pc, const prefix_chain *chain, unsigned tokens,
                            size_t *unpinned);
/* A sequence that pinned the chain's first `from` tokens (0: none; a whole number of
 * blocks, as this returned) now holds its first `to`: the missing whole blocks up to
 * `to` (with ids: those that have one) are inserted, computed by its prefill, and the
 * runs they lie in pinned by it.  The tokens it pins now: from, or more. */
unsigned prefix_cache_pin(prefix_cache *pc, const prefix_chain *chain, unsigned from,
                          unsigned to);
/* The sequence that pinned the chain's first `tokens` leaves: its references go, and a
 * run no sequence pins becomes the most recently used (own, then shared). */
void prefix_cache_unpin(prefix_cache *pc, const prefix_chain *chain, unsigned tokens);
/* Tokens of the chain's first `tokens` a pin names: whole blocks (with ids, those that
 * have one), what prefix_cache_pin(pc, chain, 0, tokens) returns. */
unsigned prefix_cache_pinnable(const prefix_cache *pc, const prefix_chain *chain,
                               unsigned tokens);
/* Blocks of the pinned runs: memory the running sequences share, never evicted. */
size_t prefix_cache_pinned(const prefix_cache *pc);

size_t prefix_cache_blocks(const prefix_cache *pc);
unsigned prefix_cache_block(const prefix_cache *pc);
/* Blocks evicted since creation. */
uint64_t prefix_cache_evictions(const prefix_cache *pc);
/* Whether block i of the chain is held (for tests). */
int prefix_cache_holds(prefix_cache *pc, const prefix_chain *chain, unsigned i);
size_t prefix_cache_memory_bytes(const prefix_cache *pc);

#endif
