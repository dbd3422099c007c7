/* A replica's prefix cache: the key-value blocks of prompts it served, kept after their
 * requests ended so that a later prompt that starts the same way skips their prefill
 * (vLLM's automatic prefix caching, SGLang's radix cache).
 *
 * A prompt is a chain of blocks of `block` tokens; only whole blocks are cached.  A
 * block is named by a 64-bit key, never by its tokens: the first shared_tokens of a
 * chain belong to a prompt many requests share (a workload's system prompt), named by
 * `shared`, and the rest to one conversation, named by `own`.  Block i's key mixes its
 * owner with i; since an owner's content fixes everything before it (a session draws
 * its system prompt once), the pair names the block's whole prefix, as a chained hash
 * of (parent, content) would.  A block that straddles the end of the shared part is
 * the conversation's.
 *
 * Eviction is least recently used, and a chain is touched from its last block to its
 * first: a block is then always at least as recent as its descendants, so eviction
 * takes leaves first and never cuts a chain in the middle, and the cached blocks of
 * any chain are a prefix of it (which is what makes prefix_cache_longest a binary
 * search).  Memory: a few dozen bytes a cached block, growing to the largest number
 * ever held.
 */
#ifndef FLEETSIM_MODELS_PREFIX_CACHE_H
#define FLEETSIM_MODELS_PREFIX_CACHE_H

#include <stddef.h>
#include <stdint.h>

typedef struct prefix_chain {
    uint64_t shared;           /* the shared prompt's name; unused when shared_tokens is 0 */
    unsigned shared_tokens;
    uint64_t own;              /* the conversation's (or the request's) name */
} prefix_chain;

/* The key of block i (tokens i x block to (i + 1) x block - 1) of a chain; never 0. */
uint64_t prefix_block_key(const prefix_chain *chain, unsigned i, unsigned block);

typedef struct prefix_cache prefix_cache;

/* An empty cache of blocks of `block` tokens (>= 1).  Out of memory is fatal. */
prefix_cache *prefix_cache_create(unsigned block);
/* NULL is fine. */
void prefix_cache_free(prefix_cache *pc);

/* Tokens of the chain's first `tokens` that the cache holds: a multiple of the block,
 * at most tokens.  Touches nothing. */
unsigned prefix_cache_longest(const prefix_cache *pc, const prefix_chain *chain,
                              unsigned tokens);

/* Inserts the whole blocks of the chain's first `tokens` that are missing and makes
 * them all (those held already too) the most recently used, then evicts least recently
 * used blocks until at most capacity_blocks remain.  A chain longer than the capacity
 * keeps its first capacity_blocks. */
void prefix_cache_insert(prefix_cache *pc, const prefix_chain *chain, unsigned tokens,
                         size_t capacity_blocks);

/* Evicts least recently used blocks until at most capacity_blocks remain (the running
 * sequences took the memory back). */
void prefix_cache_trim(prefix_cache *pc, size_t capacity_blocks);

size_t prefix_cache_blocks(const prefix_cache *pc);
unsigned prefix_cache_block(const prefix_cache *pc);
/* Blocks evicted since creation. */
uint64_t prefix_cache_evictions(const prefix_cache *pc);
/* Whether block i of the chain is held (for tests). */
int prefix_cache_holds(const prefix_cache *pc, const prefix_chain *chain, unsigned i);
size_t prefix_cache_memory_bytes(const prefix_cache *pc);

#endif
