/* A fleet's prefix directory (see prefix_directory.h): an open-addressing table from a
 * run's key to the list of its holders, one entry per (run, replica), the entries in
 * one array with a free list.  The table's slots carry the key beside the list's head,
 * so a probe reads no entry; deletion is by backward shift, so no tombstones build up.
 * A shared prompt's list holds every replica (a few dozen entries, read in a row); a
 * conversation's, the one or two that served it. */
#include "models/prefix_directory.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "sim/array.h"
#include "sim/fatal.h"

#define NONE UINT32_MAX

typedef struct holder {
    uint32_t id, blocks;
    uint32_t next;             /* the run's next holder; the free list through it */
} holder;

typedef struct run_slot {
    uint64_t key;              /* 0: empty (no run's key is 0) */
    uint32_t first;            /* its first holder */
    uint32_t most, at_most;    /* the most blocks a holder holds, and how many hold them */
} run_slot;

struct prefix_directory {
    unsigned block_tokens;
    holder *holders;
    size_t nholders, cap;      /* holders ever made, and room for */
    uint32_t free;
    run_slot *table;
    size_t table_size, runs;   /* a power of two, at least twice the runs */
    unsigned char *taken;      /* by id: in use */
    size_t ntaken;             /* room for */
    unsigned ids;              /* one more than the largest id used */
    unsigned in_use;           /* ids taken now */
};

prefix_directory *prefix_directory_create(unsigned block_tokens)
{
    prefix_directory *d = calloc(1, sizeof *d);
    if (!d)
        sim_out_of_memory("out of memory for a prefix directory");
    d->block_tokens = block_tokens ? block_tokens : 1;
    d->free = NONE;
    return d;
}

void prefix_directory_free(prefix_directory *d)
{
    if (!d)
        return;
    free(d->holders);
    free(d->table);
    free(d->taken);
    free(d);
}

unsigned prefix_directory_join(prefix_directory *d)
{
    unsigned id = 0;
    while (id < d->ids && d->taken[id])
        id++;
    if (id == d->ids) {
        d->taken = sim_array_grow(d->taken, &d->ntaken, id + 1, 1, "a prefix directory");
        d->ids++;
    }
    d->taken[id] = 1;
    d->in_use++;
    return id;
}

void prefix_directory_leave(prefix_directory *d, unsigned id)
{
    d->taken[id] = 0;
    d->in_use--;
}

unsigned prefix_directory_ids(const prefix_directory *d) { return d->ids; }

static size_t home(const prefix_directory *d, uint64_t key)
{
    return (size_t)(key & (d->table_size - 1));
}

/* The slot of key, or of the empty one where it would go. */
static size_t probe(const prefix_directory *d, uint64_t key)
{
    size_t s = home(d, key);
    while (d->table[s].key && d->table[s].key != key)
        s = (s + 1) & (d->table_size - 1);
    return s;
}

static void grow_table(prefix_directory *d)
{
    run_slot *old = d->table;
    size_t old_size = d->table_size;
    d->table_size = old_size ? old_size * 2 : 64;
    if (!(d->table = calloc(d->table_size, sizeof *d->table)))
        sim_out_of_memory("out of memory for a prefix directory");
    for (size_t s = 0; s < old_size; s++)
        if (old[s].key)
            d->table[probe(d, old[s].key)] = old[s];
    free(old);
}

/* Empties slot s, shifting back the later entries of its run whose home allows. */
static void table_remove(prefix_directory *d, size_t s)
{
    size_t mask = d->table_size - 1;
    for (size_t next = (s + 1) & mask; d->table[next].key; next = (next + 1) & mask)
        if (((next - home(d, d->table[next].key)) & mask) >= ((next - s) & mask)) {
            d->table[s] = d->table[next];
            s = next;
        }
    d->table[s].key = 0;
    d->runs--;
}

static uint32_t holder_new(prefix_directory *d, unsigned id, uint32_t blocks, uint32_t next)
{
    uint32_t h = d->free;
    if (h != NONE) {
        d->free = d->holders[h].next;
    } else {
        d->holders = sim_array_grow(d->holders, &d->cap, d->nholders + 1, sizeof *d->holders,
                                    "a prefix directory");
        h = (uint32_t)d->nholders++;
    }
    d->holders[h] = (holder){ id, blocks, next };
    return h;
}

/* Keeps a run's count of the holders at its most blocks as one holder's go from `from`
 * to `to` (0: none; the list already as it will be): counted afresh only when the last
 * of them goes down. */
static void count_most(prefix_directory *d, run_slot *rs, uint32_t from, uint32_t to)
{
    if (from && from == rs->most)
        rs->at_most--;
    if (to > rs->most) {
        rs->most = to;
        rs->at_most = 1;
    } else if (to && to == rs->most) {
        rs->at_most++;
    }
    if (rs->at_most == 0) {
        rs->most = 0;
        for (uint32_t h = rs->first; h != NONE; h = d->holders[h].next)
            if (d->holders[h].blocks > rs->most) {
                rs->most = d->holders[h].blocks;
                rs->at_most = 1;
            } else if (d->holders[h].blocks == rs->most) {
                rs->at_most++;
            }
    }
}

void prefix_directory_set(prefix_directory *d, unsigned id, uint64_t key, uint32_t blocks)
{
    if ((d->runs + 1) * 2 > d->table_size)
        grow_table(d);
    size_t s = probe(d, key);
    if (!d->table[s].key) { /* a run no replica held */
        if (blocks) {
            d->table[s] = (run_slot){ key, holder_new(d, id, blocks, NONE), blocks, 1 };
            d->runs++;
        }
        return;
    }
    run_slot *rs = &d->table[s];
    uint32_t *link = &rs->first;
    while (*link != NONE && d->holders[*link].id != id)
        link = &d->holders[*link].next;
    if (*link == NONE) { /* a new holder of the run */
        if (blocks) {
            rs->first = holder_new(d, id, blocks, rs->first);
            count_most(d, rs, 0, blocks);
        }
        return;
    }
    uint32_t h = *link, had = d->holders[h].blocks;
    if (blocks) {
        d->holders[h].blocks = blocks;
        count_most(d, rs, had, blocks);
        return;
    }
    *link = d->holders[h].next; /* the replica let the run go */
    d->holders[h].next = d->free;
    d->free = h;
    if (rs->first == NONE)
        table_remove(d, s);
    else
        count_most(d, rs, had, 0);
}

bool prefix_directory_all_hold(const prefix_directory *d, uint64_t key, uint32_t blocks)
{
    if (!d->table_size || !d->in_use)
        return false;
    const run_slot *rs = &d->table[probe(d, key)];
    return rs->key && rs->most >= blocks && rs->at_most == d->in_use;
}

void prefix_directory_observe(void *member, uint64_t key, uint32_t blocks)
{
    prefix_directory_member *m = member;
    prefix_directory_set(m->directory, m->id, key, blocks);
}

/* The holders of key's run: the first, or NONE. */
static uint32_t holders_of(const prefix_directory *d, uint64_t key)
{
    if (!d->table_size)
        return NONE;
    size_t s = probe(d, key);
    return d->table[s].key ? d->table[s].first : NONE;
}

/* A hashed chain's prefix for every replica: block i's holders that hold the i before
 * it go on, until block i has none of them (a probe a block of the longest prefix,
 * plus one). */
static void longest_hashed(const prefix_directory *d, const prefix_chain *chain,
                           unsigned tokens, unsigned *blocks_by_id)
{
    unsigned b = d->block_tokens, n = tokens / b < chain->nids ? tokens / b : chain->nids;
    for (unsigned i = 0; i < n; i++) {
        bool longer = false;
        for (uint32_t h = holders_of(d, prefix_block_key(chain->ids[i])); h != NONE;
             h = d->holders[h].next)
            if (blocks_by_id[d->holders[h].id] == i) {
                blocks_by_id[d->holders[h].id] = i + 1;
                longer = true;
            }
        if (!longer)
            break;
    }
    for (unsigned id = 0; id < d->ids; id++)
        blocks_by_id[id] *= b;
}

/* As prefix_cache_longest, for every replica at once: a replica's shared run caps the
 * prefix unless it is whole, when its own run adds to it. */
void prefix_directory_longest(const prefix_directory *d, const prefix_chain *chain,
                              unsigned tokens, unsigned *tokens_by_id)
{
    memset(tokens_by_id, 0, d->ids * sizeof *tokens_by_id);
    if (chain->ids) {
        longest_hashed(d, chain, tokens, tokens_by_id);
        return;
    }
    unsigned b = d->block_tokens, n = tokens / b, s0 = chain->shared_tokens / b;
    if (n == 0)
        return;
    if (s0 > 0)
        for (uint32_t h = holders_of(d, prefix_chain_shared_key(chain)); h != NONE;
             h = d->holders[h].next) {
            unsigned have = d->holders[h].blocks;
            tokens_by_id[d->holders[h].id] = (have < n ? have : n) * b;
        }
    if (n <= s0)
        return;
    for (uint32_t h = holders_of(d, prefix_chain_own_key(chain)); h != NONE;
         h = d->holders[h].next) {
        unsigned id = d->holders[h].id, have = s0 + d->holders[h].blocks;
        if (s0 == 0 || tokens_by_id[id] == s0 * b) /* its shared run is whole */
            tokens_by_id[id] = (have < n ? have : n) * b;
    }
}

void prefix_directory_holders(const prefix_directory *d, uint64_t key,
                              void (*visit)(void *context, unsigned id, uint32_t blocks),
                              void *context)
{
    for (uint32_t h = holders_of(d, key); h != NONE; h = d->holders[h].next)
        visit(context, d->holders[h].id, d->holders[h].blocks);
}

size_t prefix_directory_memory_bytes(const prefix_directory *d)
{
    return sizeof *d + d->cap * sizeof *d->holders + d->table_size * sizeof *d->table
           + d->ntaken;
}
