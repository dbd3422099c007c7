/* A block-level prefix cache with LRU eviction (see prefix_cache.h), kept as segments:
 * a chain's blocks are a run of the shared prompt's and a run of its own, so the cache
 * holds, per owner, how many of its blocks it has, on one recency list, and an
 * open-addressing table from owner to segment (linear probing, deletion by backward
 * shift, so no tombstones build up).  Looking up, inserting and evicting a chain are
 * then O(1) however long it is: a 3,000-token prompt is 188 blocks of 16.  An observer
 * (a fleet's prefix directory) hears of every change in a segment's blocks. */
#include "models/prefix_cache.h"

#include <stdbool.h>
#include <stdlib.h>

#include "sim/fatal.h"

#define NONE UINT32_MAX

typedef struct segment {
    uint64_t key;            /* the owner's, tagged shared or own */
    uint32_t blocks;         /* its first `blocks` blocks are held */
    uint32_t refs;           /* running sequences pinning it: off the recency list */
    uint32_t older, newer;   /* the recency list (unpinned only); the free list through
                                older */
} segment;

struct prefix_cache {
    unsigned block_tokens;
    segment *segs;
    uint32_t nsegs, cap;     /* segments ever made, and room for */
    uint32_t free;           /* a free segment, or NONE */
    uint32_t oldest, newest;
    size_t live;             /* segments on the recency list */
    size_t held;             /* blocks, over every segment */
    size_t pinned;           /* blocks of the pinned segments */
    uint32_t *table;         /* segment index + 1; 0: empty */
    size_t table_size;       /* a power of two, at least twice the live segments */
    uint64_t evictions;
    /* the last shared prompt looked up and its segment: every routing asks each
     * replica for the same few system prompts, and a table probe is a cache miss */
    uint64_t memo_key;
    uint32_t memo_seg;
    prefix_cache_observer observer;
    void *observer_context;
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

uint64_t prefix_chain_shared_key(const prefix_chain *c)
{
    uint64_t k = mix(c->shared ^ 0x5348415245440000ULL);
    return k ? k : 1;
}

uint64_t prefix_chain_own_key(const prefix_chain *c)
{
    uint64_t k = mix(c->own ^ 0x4f574e0000000000ULL);
    return k ? k : 2;
}

uint64_t prefix_block_key(uint64_t id)
{
    uint64_t k = mix(id ^ 0x4841534845440000ULL);
    return k ? k : 3;
}

/* Blocks wholly inside the shared prompt: the own run starts there. */
static unsigned shared_blocks(const prefix_cache *pc, const prefix_chain *c)
{
    return c->shared_tokens / pc->block_tokens;
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
    if (pc->observer) /* pinned or not: every segment in use has a key */
        for (uint32_t g = 0; g < pc->nsegs; g++)
            if (pc->segs[g].key)
                pc->observer(pc->observer_context, pc->segs[g].key, 0);
    free(pc->segs);
    free(pc->table);
    free(pc);
}

void prefix_cache_observe(prefix_cache *pc, prefix_cache_observer observer, void *context)
{
    pc->observer = observer;
    pc->observer_context = context;
}

static void tell(const prefix_cache *pc, const segment *x)
{
    if (pc->observer)
        pc->observer(pc->observer_context, x->key, x->blocks);
}

static size_t slot_of(const prefix_cache *pc, uint64_t key)
{
    return (size_t)(key & (pc->table_size - 1));
}

/* The segment of key, or NONE. */
static uint32_t find(const prefix_cache *pc, uint64_t key)
{
    if (!pc->table_size)
        return NONE;
    for (size_t s = slot_of(pc, key);; s = (s + 1) & (pc->table_size - 1)) {
        uint32_t e = pc->table[s];
        if (!e)
            return NONE;
        if (pc->segs[e - 1].key == key)
            return e - 1;
    }
}

static void table_put(prefix_cache *pc, uint32_t g)
{
    size_t s = slot_of(pc, pc->segs[g].key);
    while (pc->table[s])
        s = (s + 1) & (pc->table_size - 1);
    pc->table[s] = g + 1;
}

static void table_remove(prefix_cache *pc, uint64_t key)
{
    size_t mask = pc->table_size - 1, s = slot_of(pc, key);
    while (pc->segs[pc->table[s] - 1].key != key)
        s = (s + 1) & mask;
    /* shift back every later entry of the run whose home is not after the hole */
    for (size_t next = (s + 1) & mask; pc->table[next]; next = (next + 1) & mask) {
        size_t home = slot_of(pc, pc->segs[pc->table[next] - 1].key);
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
    for (uint32_t g = 0; g < pc->nsegs; g++) /* the pinned too, off the list */
        if (pc->segs[g].key)
            table_put(pc, g);
}

static void unlink_segment(prefix_cache *pc, uint32_t g)
{
    segment *x = &pc->segs[g];
    if (x->older != NONE)
        pc->segs[x->older].newer = x->newer;
    else
        pc->oldest = x->newer;
    if (x->newer != NONE)
        pc->segs[x->newer].older = x->older;
    else
        pc->newest = x->older;
}

static void append_newest(prefix_cache *pc, uint32_t g)
{
    segment *x = &pc->segs[g];
    x->older = pc->newest;
    x->newer = NONE;
    if (pc->newest != NONE)
        pc->segs[pc->newest].newer = g;
    else
        pc->oldest = g;
    pc->newest = g;
}

/* The segment of key, made (empty, linked newest) if missing. */
static uint32_t segment_of(prefix_cache *pc, uint64_t key)
{
    uint32_t g = find(pc, key);
    if (g != NONE)
        return g;
    g = pc->free;
    if (g != NONE) {
        pc->free = pc->segs[g].older;
    } else {
        if (pc->nsegs == pc->cap) {
            uint32_t cap = pc->cap ? pc->cap * 2 : 64;
            segment *more = realloc(pc->segs, (size_t)cap * sizeof *more);
            if (!more || cap < pc->cap)
                sim_out_of_memory("out of memory for a prefix cache");
            pc->segs = more;
            pc->cap = cap;
        }
        g = pc->nsegs++;
    }
    pc->segs[g].key = key;
    pc->segs[g].blocks = 0;
    pc->segs[g].refs = 0;
    append_newest(pc, g);
    pc->live++;
    if (pc->live * 2 > pc->table_size)
        grow_table(pc); /* puts g too: it is on the list */
    else
        table_put(pc, g);
    return g;
}

/* Makes the segment of key hold at least `blocks` and, unless pinned (off the list),
 * the most recently used; its index. */
static uint32_t touch(prefix_cache *pc, uint64_t key, uint32_t blocks)
{
    uint32_t g = segment_of(pc, key);
    segment *x = &pc->segs[g];
    if (!x->refs) {
        unlink_segment(pc, g);
        append_newest(pc, g);
    }
    if (x->blocks < blocks) {
        pc->held += blocks - x->blocks;
        if (x->refs)
            pc->pinned += blocks - x->blocks;
        x->blocks = blocks;
        tell(pc, x);
    }
    return g;
}

void prefix_cache_trim(prefix_cache *pc, size_t capacity_blocks)
{
    /* the list holds the unpinned segments only: eviction never reaches a pinned one */
    while (pc->held - pc->pinned > capacity_blocks) {
        uint32_t g = pc->oldest;
        segment *x = &pc->segs[g];
        size_t over = pc->held - pc->pinned - capacity_blocks;
        uint32_t take = over < x->blocks ? (uint32_t)over : x->blocks; /* its last blocks */
        x->blocks -= take;
        pc->held -= take;
        pc->evictions += take;
        tell(pc, x);
        if (x->blocks == 0) {
            unlink_segment(pc, g);
            table_remove(pc, x->key);
            x->older = pc->free;
            x->key = 0; /* no key is 0: a free segment is no memo's */
            pc->free = g;
            pc->live--;
        }
    }
}

/* find, through the memo, for a shared prompt. */
static uint32_t find_shared(prefix_cache *pc, uint64_t key)
{
    if (pc->memo_key == key && pc->memo_seg < pc->nsegs && pc->segs[pc->memo_seg].key == key)
        return pc->memo_seg;
    uint32_t g = find(pc, key);
    if (g != NONE) {
        pc->memo_key = key;
        pc->memo_seg = g;
    }
    return g;
}

/* Whole blocks of a hashed chain's first `tokens` that have an id. */
static unsigned hashed_blocks(const prefix_cache *pc, const prefix_chain *c, size_t tokens)
{
    size_t n = tokens / pc->block_tokens;
    return n < c->nids ? (unsigned)n : c->nids;
}

unsigned prefix_cache_longest(prefix_cache *pc, const prefix_chain *chain, unsigned tokens)
{
    if (chain->ids) {
        unsigned n = hashed_blocks(pc, chain, tokens), have = 0;
        while (have < n && find(pc, prefix_block_key(chain->ids[have])) != NONE)
            have++;
        return have * pc->block_tokens;
    }
    unsigned n = tokens / pc->block_tokens, s0 = shared_blocks(pc, chain);
    if (n == 0)
        return 0;
    if (s0 > 0) {
        uint32_t g = find_shared(pc, prefix_chain_shared_key(chain));
        unsigned have = g == NONE ? 0 : pc->segs[g].blocks;
        if (have < s0 || n <= s0) /* the chain stops inside the shared prompt */
            return (have < n ? have : n) * pc->block_tokens;
    }
    uint32_t g = find(pc, prefix_chain_own_key(chain));
    unsigned have = s0 + (g == NONE ? 0 : pc->segs[g].blocks);
    return (have < n ? have : n) * pc->block_tokens;
}

void prefix_cache_insert(prefix_cache *pc, const prefix_chain *chain, unsigned tokens,
                         size_t capacity_blocks)
{
    if (chain->ids) { /* the last block first: each block ends up newer than its children */
        unsigned n = hashed_blocks(pc, chain, tokens);
        if (n > capacity_blocks)
            n = (unsigned)capacity_blocks;
        for (unsigned i = n; i-- > 0;)
            touch(pc, prefix_block_key(chain->ids[i]), 1);
        prefix_cache_trim(pc, capacity_blocks);
        return;
    }
    size_t n = tokens / pc->block_tokens;
    if (n > capacity_blocks)
        n = capacity_blocks;
    unsigned s0 = shared_blocks(pc, chain);
    if (n > s0) /* the own run first: the shared one, its parent, ends up newer */
        touch(pc, prefix_chain_own_key(chain), (uint32_t)(n - s0));
    if (s0 > 0 && n > 0)
        touch(pc, prefix_chain_shared_key(chain), (uint32_t)(n < s0 ? n : s0));
    prefix_cache_trim(pc, capacity_blocks);
}

/* ---- pins ------------------------------------------------------------------------ */

/* A reference on segment g: the first takes it off the recency list. */
static void ref(prefix_cache *pc, uint32_t g)
{
    segment *x = &pc->segs[g];
    if (x->refs++ == 0) {
        unlink_segment(pc, g);
        pc->pinned += x->blocks;
    }
}

/* Drops a reference on the segment of key; the last puts it back as the most recently
 * used (an engine's block freed by its last sequence joins the tail of the free queue). */
static void unref(prefix_cache *pc, uint64_t key)
{
    uint32_t g = find(pc, key);
    if (g == NONE || pc->segs[g].refs == 0)
        sim_fatal("prefix_cache_unpin: a run no sequence pins");
    segment *x = &pc->segs[g];
    if (--x->refs == 0) {
        append_newest(pc, g);
        pc->pinned -= x->blocks;
    }
}

/* Blocks of the chain's first `tokens` that pins name: whole, and with ids only those
 * that have one. */
static unsigned pin_blocks(const prefix_cache *pc, const prefix_chain *c, unsigned tokens)
{
    return c->ids ? hashed_blocks(pc, c, tokens) : tokens / pc->block_tokens;
}

unsigned prefix_cache_probe(prefix_cache *pc, const prefix_chain *chain, unsigned tokens,
                            size_t *unpinned)
{
    unsigned hit = prefix_cache_longest(pc, chain, tokens), n = hit / pc->block_tokens;
    size_t free_held = 0;
    if (chain->ids) {
        for (unsigned i = 0; i < n; i++)
            free_held += pc->segs[find(pc, prefix_block_key(chain->ids[i]))].refs == 0;
    } else if (n > 0) {
        unsigned s0 = shared_blocks(pc, chain);
        if (s0 > 0) {
            const segment *x = &pc->segs[find_shared(pc, prefix_chain_shared_key(chain))];
            free_held += x->refs ? 0 : x->blocks;
        }
        if (n > s0) {
            const segment *x = &pc->segs[find(pc, prefix_chain_own_key(chain))];
            free_held += x->refs ? 0 : x->blocks;
        }
    }
    *unpinned = free_held;
    return hit;
}

unsigned prefix_cache_pin(prefix_cache *pc, const prefix_chain *chain, unsigned from,
                          unsigned to)
{
    unsigned n0 = pin_blocks(pc, chain, from), n1 = pin_blocks(pc, chain, to);
    if (n1 <= n0)
        return n0 * pc->block_tokens;
    if (chain->ids) {
        for (unsigned i = n0; i < n1; i++)
            ref(pc, touch(pc, prefix_block_key(chain->ids[i]), 1));
        return n1 * pc->block_tokens;
    }
    unsigned s0 = shared_blocks(pc, chain);
    if (s0 > 0 && n0 < s0) { /* more of the shared prompt: its run, referenced once */
        uint32_t g = touch(pc, prefix_chain_shared_key(chain), n1 < s0 ? n1 : s0);
        if (n0 == 0)
            ref(pc, g);
    }
    if (n1 > s0) {
        uint32_t g = touch(pc, prefix_chain_own_key(chain), n1 - s0);
        if (n0 <= s0)
            ref(pc, g);
    }
    return n1 * pc->block_tokens;
}

void prefix_cache_unpin(prefix_cache *pc, const prefix_chain *chain, unsigned tokens)
{
    unsigned n = pin_blocks(pc, chain, tokens);
    if (chain->ids) { /* the last first: each block ends up newer than its children */
        for (unsigned i = n; i-- > 0;)
            unref(pc, prefix_block_key(chain->ids[i]));
        return;
    }
    unsigned s0 = shared_blocks(pc, chain);
    if (n > s0) /* the own run first: the shared one, its parent, ends up newer */
        unref(pc, prefix_chain_own_key(chain));
    if (s0 > 0 && n > 0)
        unref(pc, prefix_chain_shared_key(chain));
}

size_t prefix_cache_pinned(const prefix_cache *pc) { return pc->pinned; }

unsigned prefix_cache_pinnable(const prefix_cache *pc, const prefix_chain *chain,
                               unsigned tokens)
{
    return pin_blocks(pc, chain, tokens) * pc->block_tokens;
}

size_t prefix_cache_blocks(const prefix_cache *pc) { return pc->held; }
unsigned prefix_cache_block(const prefix_cache *pc) { return pc->block_tokens; }
uint64_t prefix_cache_evictions(const prefix_cache *pc) { return pc->evictions; }

int prefix_cache_holds(prefix_cache *pc, const prefix_chain *chain, unsigned i)
{
    return prefix_cache_longest(pc, chain, (i + 1) * pc->block_tokens)
           == (i + 1) * pc->block_tokens;
}

size_t prefix_cache_memory_bytes(const prefix_cache *pc)
{
    return sizeof *pc + (size_t)pc->cap * sizeof *pc->segs
           + pc->table_size * sizeof *pc->table;
}
