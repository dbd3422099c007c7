/* The prefix cache by hand: whole blocks only, a shared system prompt between chains,
 * the longest held prefix, and the exact order of LRU eviction (leaves first). */
#include <criterion/criterion.h>

#include "models/prefix_cache.h"

static prefix_cache *pc;

static void setup(void) { pc = prefix_cache_create(16); }
static void teardown(void) { prefix_cache_free(pc); }

TestSuite(prefix_cache, .init = setup, .fini = teardown);

/* A chain of a shared prompt's blocks and its own (no hashed ids). */
static prefix_chain chain(uint64_t shared, unsigned shared_tokens, uint64_t own)
{
    return (prefix_chain){ .shared = shared, .shared_tokens = shared_tokens, .own = own };
}

Test(prefix_cache, caches_whole_blocks_only)
{
    prefix_chain a = chain(0, 0, 7);
    prefix_cache_insert(pc, &a, 100, 1000); /* 6 whole blocks of 16: 96 tokens */
    cr_expect_eq(prefix_cache_blocks(pc), 6);
    cr_expect_eq(prefix_cache_longest(pc, &a, 200), 96);
    cr_expect_eq(prefix_cache_longest(pc, &a, 50), 48); /* a prompt of 50: 3 blocks */
    cr_expect_eq(prefix_cache_longest(pc, &a, 15), 0);
    prefix_chain b = chain(0, 0, 8);
    cr_expect_eq(prefix_cache_longest(pc, &b, 200), 0);
}

Test(prefix_cache, shares_the_system_prompt_blocks_between_sessions)
{
    /* a 40-token system prompt: blocks 0 and 1 (tokens 0-31) are shared; block 2
     * (32-47) straddles its end and is each session's own */
    prefix_chain a = chain(99, 40, 1), b = chain(99, 40, 2), other = chain(98, 40, 2);
    prefix_cache_insert(pc, &a, 80, 1000); /* 5 blocks */
    cr_expect_eq(prefix_cache_longest(pc, &b, 80), 32);
    cr_expect_eq(prefix_cache_longest(pc, &other, 80), 0);
    prefix_cache_insert(pc, &b, 64, 1000); /* adds b's blocks 2, 3 */
    cr_expect_eq(prefix_cache_blocks(pc), 7);
    cr_expect(prefix_cache_holds(pc, &b, 3));
    cr_expect(!prefix_cache_holds(pc, &b, 4));
    cr_expect(prefix_cache_holds(pc, &a, 4));
}

Test(prefix_cache, evicts_least_recently_used_leaves_first)
{
    prefix_chain a = chain(0, 0, 1), b = chain(0, 0, 2);
    prefix_cache_insert(pc, &a, 48, 6); /* a0 a1 a2 */
    prefix_cache_insert(pc, &b, 48, 6); /* b0 b1 b2: recency (old..new) a, b */
    cr_expect_eq(prefix_cache_blocks(pc), 6);
    /* a lookup touches nothing; re-inserting a's first block makes a the newest */
    cr_expect_eq(prefix_cache_longest(pc, &a, 48), 48);
    prefix_cache_insert(pc, &a, 16, 6); /* old..new: b, a */
    prefix_cache_trim(pc, 5);           /* b2 goes: b's leaf, not its root */
    cr_expect(!prefix_cache_holds(pc, &b, 2));
    cr_expect(prefix_cache_holds(pc, &b, 1));
    cr_expect_eq(prefix_cache_longest(pc, &a, 48), 48);
    prefix_cache_trim(pc, 3);           /* then b1, b0 */
    cr_expect_eq(prefix_cache_longest(pc, &b, 48), 0);
    cr_expect_eq(prefix_cache_longest(pc, &a, 48), 48);
    prefix_cache_trim(pc, 1);           /* then a2, a1 */
    cr_expect_eq(prefix_cache_longest(pc, &a, 48), 16);
    cr_expect_eq(prefix_cache_evictions(pc), 5);
}

Test(prefix_cache, the_system_prompt_outlives_the_sessions_below_it)
{
    /* a 32-token system prompt (2 blocks) and two sessions of 2 blocks each after it */
    prefix_chain a = chain(5, 32, 1), b = chain(5, 32, 2);
    prefix_cache_insert(pc, &a, 64, 100);
    prefix_cache_insert(pc, &b, 64, 100); /* old..new: a's own, b's own, the shared */
    cr_expect_eq(prefix_cache_blocks(pc), 6);
    prefix_cache_trim(pc, 4);             /* a's own two go first */
    cr_expect_eq(prefix_cache_longest(pc, &a, 64), 32);
    cr_expect_eq(prefix_cache_longest(pc, &b, 64), 64);
    prefix_cache_trim(pc, 2);             /* then b's own: the shared prompt stays */
    cr_expect_eq(prefix_cache_longest(pc, &b, 64), 32);
    prefix_chain c = chain(5, 32, 3);
    cr_expect_eq(prefix_cache_longest(pc, &c, 1000), 32);
    prefix_cache_trim(pc, 1);             /* a shared prompt is cut from its end too */
    cr_expect_eq(prefix_cache_longest(pc, &c, 1000), 16);
}

Test(prefix_cache, a_chain_longer_than_the_capacity_keeps_its_start)
{
    prefix_chain a = chain(0, 0, 1), b = chain(0, 0, 2);
    prefix_cache_insert(pc, &b, 32, 4);
    prefix_cache_insert(pc, &a, 160, 4); /* 10 blocks into 4: a0..a3, b's two evicted */
    cr_expect_eq(prefix_cache_blocks(pc), 4);
    cr_expect_eq(prefix_cache_longest(pc, &a, 160), 64);
    cr_expect_eq(prefix_cache_longest(pc, &b, 32), 0);
    cr_expect_eq(prefix_cache_evictions(pc), 2);
}

Test(prefix_cache, survives_many_insertions_and_evictions)
{
    /* the table's backward-shift deletion keeps every held block findable */
    for (uint64_t s = 1; s <= 5000; s++) {
        prefix_chain c = chain(42, 64, s);
        unsigned tokens = 16 * (unsigned)(1 + s % 9);
        prefix_cache_insert(pc, &c, tokens, 300);
        cr_assert_leq(prefix_cache_blocks(pc), 300);
        cr_assert_eq(prefix_cache_longest(pc, &c, tokens), tokens);
        /* past its end only the system prompt's blocks, held since chain 3 (64 tokens) */
        if (s >= 3)
            cr_assert_eq(prefix_cache_longest(pc, &c, 10000), tokens > 64 ? tokens : 64);
    }
    prefix_chain last = chain(42, 64, 5000), shared = chain(42, 64, 123456);
    cr_expect_eq(prefix_cache_longest(pc, &shared, 10000), 64); /* the system prompt */
    cr_expect_eq(prefix_cache_longest(pc, &last, 10000), 16 * (1 + 5000 % 9)); /* 96 */
    cr_expect_lt(prefix_cache_memory_bytes(pc), 64 * 1024);
}

/* A chain of hashed block ids (a Mooncake trace's hash_ids). */
static prefix_chain hashed(const uint64_t *ids, unsigned n)
{
    return (prefix_chain){ .own = 1, .ids = ids, .nids = n };
}

Test(prefix_cache, hashed_ids_hit_their_leading_blocks_held)
{
    static const uint64_t a_ids[] = { 1, 2, 3 }, b_ids[] = { 1, 2, 4, 5 }, gap[] = { 1, 9, 3 };
    prefix_chain a = hashed(a_ids, 3), b = hashed(b_ids, 4), g = hashed(gap, 3);
    prefix_cache_insert(pc, &a, 48, 100);
    cr_expect_eq(prefix_cache_blocks(pc), 3);
    cr_expect_eq(prefix_cache_longest(pc, &b, 64), 32);  /* ids 1, 2 held, 4 not */
    cr_expect_eq(prefix_cache_longest(pc, &g, 48), 16);  /* 3 is held, but after a miss */
    cr_expect_eq(prefix_cache_longest(pc, &a, 47), 32);  /* whole blocks of 47 tokens: 2 */
    cr_expect_eq(prefix_cache_longest(pc, &a, 1000), 48); /* no more than its ids */
    prefix_cache_insert(pc, &b, 64, 100);                /* adds 4 and 5 only */
    cr_expect_eq(prefix_cache_blocks(pc), 5);
    static const uint64_t no_ids[1];
    prefix_chain none = hashed(no_ids, 0);               /* a row without ids */
    cr_expect_eq(prefix_cache_longest(pc, &none, 1000), 0);
    prefix_cache_insert(pc, &none, 1000, 100);
    cr_expect_eq(prefix_cache_blocks(pc), 5);
}

Test(prefix_cache, hashed_ids_evict_least_recently_used_leaves_first)
{
    static const uint64_t a_ids[] = { 1, 2, 3 }, b_ids[] = { 1, 2, 4, 5 }, c_ids[] = { 6 };
    prefix_chain a = hashed(a_ids, 3), b = hashed(b_ids, 4), c = hashed(c_ids, 1);
    prefix_cache_insert(pc, &a, 48, 100); /* old..new: 3 2 1 */
    prefix_cache_insert(pc, &b, 64, 100); /* 3 5 4 2 1 */
    prefix_cache_insert(pc, &c, 16, 100); /* 3 5 4 2 1 6 */
    prefix_cache_trim(pc, 5);             /* 3: a's leaf, though a's root is newer than 6 */
    cr_expect_eq(prefix_cache_longest(pc, &a, 48), 32);
    cr_expect_eq(prefix_cache_longest(pc, &b, 64), 64);
    prefix_cache_trim(pc, 3);             /* 5, then 4 */
    cr_expect_eq(prefix_cache_longest(pc, &b, 64), 32);
    cr_expect_eq(prefix_cache_longest(pc, &c, 16), 16);
    prefix_cache_insert(pc, &a, 48, 100); /* 2 1 6 -> 6 3 2 1 */
    prefix_cache_trim(pc, 3);             /* 6 */
    cr_expect_eq(prefix_cache_longest(pc, &c, 16), 0);
    cr_expect_eq(prefix_cache_longest(pc, &a, 48), 48);
    prefix_cache_trim(pc, 1);             /* 3, then 2: the root 1 stays */
    cr_expect_eq(prefix_cache_longest(pc, &a, 48), 16);
    cr_expect_eq(prefix_cache_evictions(pc), 6);
    prefix_cache_insert(pc, &b, 64, 2);   /* a chain past the capacity keeps its start */
    cr_expect_eq(prefix_cache_longest(pc, &b, 64), 32);
    cr_expect_eq(prefix_cache_blocks(pc), 2);
}

Test(prefix_cache, pinned_runs_are_never_evicted_and_count_apart)
{
    /* a 32-token system prompt (2 blocks), sessions 1 and 2 below it */
    prefix_chain a = chain(99, 32, 1), b = chain(99, 32, 2);
    prefix_cache_insert(pc, &b, 48, 100); /* old..new: b's own (1), shared (2) */
    /* a sequence of session 1 computes 40 tokens: its 2 whole blocks of the shared
     * prompt (found, but pinned anew) and a's own block 2 is not whole yet */
    size_t unpinned;
    cr_expect_eq(prefix_cache_probe(pc, &a, 40, &unpinned), 32);
    cr_expect_eq(unpinned, 2);
    cr_expect_eq(prefix_cache_pin(pc, &a, 0, 40), 32);
    cr_expect_eq(prefix_cache_pinned(pc), 2);
    cr_expect_eq(prefix_cache_probe(pc, &b, 48, &unpinned), 48);
    cr_expect_eq(unpinned, 1); /* the shared run is pinned already: b's own block only */
    /* its prefill goes on to 80 tokens: blocks 2-4, a's own, inserted and pinned */
    cr_expect_eq(prefix_cache_pin(pc, &a, 32, 80), 80);
    cr_expect_eq(prefix_cache_blocks(pc), 6);
    cr_expect_eq(prefix_cache_pinned(pc), 5);
    prefix_cache_trim(pc, 0); /* only b's own block can go */
    cr_expect_eq(prefix_cache_blocks(pc), 5);
    cr_expect_eq(prefix_cache_evictions(pc), 1);
    cr_expect_eq(prefix_cache_longest(pc, &a, 80), 80);
    /* it leaves: its runs stay cached, evictable, leaves first */
    prefix_cache_unpin(pc, &a, 80);
    cr_expect_eq(prefix_cache_pinned(pc), 0);
    prefix_cache_trim(pc, 3); /* a's own run, the older, loses its last 2 */
    cr_expect_eq(prefix_cache_longest(pc, &a, 80), 48);
    cr_expect_eq(prefix_cache_longest(pc, &b, 80), 32);
}

Test(prefix_cache, a_run_stays_pinned_until_its_last_sequence_leaves)
{
    prefix_chain a = chain(99, 32, 1), b = chain(99, 32, 2), c = chain(0, 0, 3);
    prefix_cache_pin(pc, &a, 0, 32);      /* the shared prompt, computed by a */
    prefix_cache_pin(pc, &b, 0, 32);      /* found by b: the same run, twice pinned */
    cr_expect_eq(prefix_cache_pinned(pc), 2);
    prefix_cache_insert(pc, &c, 32, 100); /* an unpinned run beside them */
    prefix_cache_unpin(pc, &a, 32);
    prefix_cache_trim(pc, 0);             /* b still pins the shared prompt */
    cr_expect_eq(prefix_cache_longest(pc, &b, 32), 32);
    cr_expect_eq(prefix_cache_longest(pc, &c, 32), 0);
    prefix_cache_unpin(pc, &b, 32);       /* the last: now the most recently used */
    prefix_cache_insert(pc, &c, 32, 100); /* old..new: shared, c */
    prefix_cache_trim(pc, 2);
    cr_expect_eq(prefix_cache_longest(pc, &b, 32), 0);
    cr_expect_eq(prefix_cache_longest(pc, &c, 32), 32);
}

Test(prefix_cache, hashed_ids_pin_block_by_block)
{
    static const uint64_t a_ids[] = { 1, 2, 3 }, b_ids[] = { 1, 2, 4 };
    prefix_chain a = hashed(a_ids, 3), b = hashed(b_ids, 3);
    cr_expect_eq(prefix_cache_pin(pc, &a, 0, 1000), 48); /* no more than its ids */
    size_t unpinned;
    cr_expect_eq(prefix_cache_probe(pc, &b, 48, &unpinned), 32);
    cr_expect_eq(unpinned, 0);
    cr_expect_eq(prefix_cache_pin(pc, &b, 0, 32), 32);
    cr_expect_eq(prefix_cache_pin(pc, &b, 32, 48), 48);  /* its own block 4 */
    cr_expect_eq(prefix_cache_pinned(pc), 4);
    prefix_cache_unpin(pc, &a, 48);                      /* 3 alone is free now */
    cr_expect_eq(prefix_cache_pinned(pc), 3);
    prefix_cache_trim(pc, 0);
    cr_expect_eq(prefix_cache_longest(pc, &a, 48), 32);
    cr_expect_eq(prefix_cache_longest(pc, &b, 48), 48);
    prefix_cache_unpin(pc, &b, 48);
    cr_expect_eq(prefix_cache_pinned(pc), 0);
    prefix_cache_trim(pc, 1);                            /* 4, then 2: the root stays */
    cr_expect_eq(prefix_cache_longest(pc, &b, 48), 16);
}
