/* A block-level prefix cache with LRU eviction (see prefix_cache.h): a pool of blocks
 * threaded on a doubly linked recency list, and an open-addressing table from key to
 * block (linear probing, deletion by backward shift, so no tombstones build up). */
#include "models/prefix_cache.h"

#include <stdbool.h>
#include <stdlib.h>

#include "sim/fatal.h"

#define NONE UINT32_MAX

typedef struct cache_block {
    uint64_t key;
    uint32_t older, newer; /* the recency list; the free list through older */
} cache_block;

struct prefix_cache {
    unsigned block_tokens;
    cache_block *blocks;
    uint32_t nblocks, cap;  /* blocks ever made, and room for */
    uint32_t free;          /* a free block, or NONE */
    uint32_t oldest, newest;
    size_t held;
    uint32_t *table;        /* block index + 1; 0: empty */
    size_t table_size;      /* a power of two, at least twice the blocks */
    uint64_t evictions;
};

/* splitmix64's finaliser: every bit of the input moves every bit of the output */
static uint64_t mix(uint64_t x)
{
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ULL;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

uint64_t prefix_block_key(const prefix_chain *chain, unsigned i, unsigned block)
{
    bool shared = chain->shared_tokens && ((uint64_t)i + 1) * block <= chain->shared_tokens;
    uint64_t owner = shared ? chain->shared : chain->own;
    uint64_t k = mix(mix(owner ^ (shared ? 0x5348u : 0x4f57u)) + i); /* owners apart */
    return k ? k : 1;
}

prefix_cache *prefix_cache_create(unsigned block_tokens)
{
    prefix_cache *pc = calloc(1, sizeof *pc);
    if (!pc)
        sim_out_of_memory("out of memory for a prefix cache");
    pc->block_tokens = block_tokens ? block_tokens : 1;
    pc->free = pc->oldest = pc->newest = NONE;
    return pc;
}

void prefix_cache_free(prefix_cache *pc)
{
    if (!pc)
        return;
    free(pc->blocks);
    free(pc->table);
    free(pc);
}

static size_t slot_of(const prefix_cache *pc, uint64_t key)
{
    return (size_t)(key & (pc->table_size - 1));
}

/* The block holding key, or NONE. */
static uint32_t find(const prefix_cache *pc, uint64_t key)
{
    if (!pc->table_size)
        return NONE;
    for (size_t s = slot_of(pc, key);; s = (s + 1) & (pc->table_size - 1)) {
        uint32_t e = pc->table[s];
        if (!e)
            return NONE;
        if (pc->blocks[e - 1].key == key)
            return e - 1;
    }
}

static void table_put(prefix_cache *pc, uint32_t b)
{
    size_t s = slot_of(pc, pc->blocks[b].key);
    while (pc->table[s])
        s = (s + 1) & (pc->table_size - 1);
    pc->table[s] = b + 1;
}

static void table_remove(prefix_cache *pc, uint64_t key)
{
    size_t mask = pc->table_size - 1, s = slot_of(pc, key);
    while (pc->blocks[pc->table[s] - 1].key != key)
        s = (s + 1) & mask;
    /* shift back every later entry of the run that may sit at or before the hole */
    for (size_t next = (s + 1) & mask; pc->table[next]; next = (next + 1) & mask) {
        size_t home = slot_of(pc, pc->blocks[pc->table[next] - 1].key);
        if (((next - home) & mask) >= ((next - s) & mask)) {
            pc->table[s] = pc->table[next];
            s = next;
        }
    }
    pc->table[s] = 0;
}

static void grow_table(prefix_cache *pc)
{
    size_t size = pc->table_size ? pc->table_size * 2 : 64;
    free(pc->table);
    pc->table = calloc(size, sizeof *pc->table);
    if (!pc->table)
        sim_out_of_memory("out of memory for a prefix cache");
    pc->table_size = size;
    for (uint32_t b = pc->oldest; b != NONE; b = pc->blocks[b].newer)
        table_put(pc, b);
}

static void unlink_block(prefix_cache *pc, uint32_t b)
{
    cache_block *x = &pc->blocks[b];
    if (x->older != NONE)
        pc->blocks[x->older].newer = x->newer;
    else
        pc->oldest = x->newer;
    if (x->newer != NONE)
        pc->blocks[x->newer].older = x->older;
    else
        pc->newest = x->older;
}

static void append_newest(prefix_cache *pc, uint32_t b)
{
    cache_block *x = &pc->blocks[b];
    x->older = pc->newest;
    x->newer = NONE;
    if (pc->newest != NONE)
        pc->blocks[pc->newest].newer = b;
    else
        pc->oldest = b;
    pc->newest = b;
}

static uint32_t new_block(prefix_cache *pc, uint64_t key)
{
    uint32_t b = pc->free;
    if (b != NONE) {
        pc->free = pc->blocks[b].older;
    } else {
        if (pc->nblocks == pc->cap) {
            uint32_t cap = pc->cap ? pc->cap * 2 : 64;
            cache_block *more = realloc(pc->blocks, (size_t)cap * sizeof *more);
            if (!more || cap < pc->cap)
                sim_out_of_memory("out of memory for a prefix cache");
            pc->blocks = more;
            pc->cap = cap;
        }
        b = pc->nblocks++;
    }
    pc->blocks[b].key = key;
    if ((pc->held + 1) * 2 > pc->table_size)
        grow_table(pc);
    table_put(pc, b);
    pc->held++;
    return b;
}

static void evict_oldest(prefix_cache *pc)
{
    uint32_t b = pc->oldest;
    unlink_block(pc, b);
    table_remove(pc, pc->blocks[b].key);
    pc->blocks[b].older = pc->free;
    pc->free = b;
    pc->held--;
    pc->evictions++;
}

void prefix_cache_trim(prefix_cache *pc, size_t capacity_blocks)
{
    while (pc->held > capacity_blocks)
        evict_oldest(pc);
}

unsigned prefix_cache_longest(const prefix_cache *pc, const prefix_chain *chain,
                              unsigned tokens)
{
    unsigned B = pc->block_tokens;
    unsigned lo = 0, hi = tokens / B; /* blocks 0..lo-1 held; none from hi on known */
    if ((size_t)hi > pc->held)
        hi = (unsigned)pc->held;
    while (lo < hi) { /* the held blocks of a chain are a prefix of it: binary search */
        unsigned mid = lo + (hi - lo + 1) / 2;
        if (find(pc, prefix_block_key(chain, mid - 1, B)) != NONE)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo * B;
}

void prefix_cache_insert(prefix_cache *pc, const prefix_chain *chain, unsigned tokens,
                         size_t capacity_blocks)
{
    size_t n = tokens / pc->block_tokens;
    if (n > capacity_blocks)
        n = capacity_blocks;
    for (size_t i = n; i-- > 0;) { /* the last block first: parents end up newer */
        uint64_t key = prefix_block_key(chain, (unsigned)i, pc->block_tokens);
        uint32_t b = find(pc, key);
        if (b == NONE)
            b = new_block(pc, key);
        else
            unlink_block(pc, b);
        append_newest(pc, b);
    }
    prefix_cache_trim(pc, capacity_blocks);
}

size_t prefix_cache_blocks(const prefix_cache *pc) { return pc->held; }
unsigned prefix_cache_block(const prefix_cache *pc) { return pc->block_tokens; }
uint64_t prefix_cache_evictions(const prefix_cache *pc) { return pc->evictions; }

int prefix_cache_holds(const prefix_cache *pc, const prefix_chain *chain, unsigned i)
{
    return find(pc, prefix_block_key(chain, i, pc->block_tokens)) != NONE;
}

size_t prefix_cache_memory_bytes(const prefix_cache *pc)
{
    return sizeof *pc + (size_t)pc->cap * sizeof *pc->blocks
           + pc->table_size * sizeof *pc->table;
}
