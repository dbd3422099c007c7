/* The prefix directory by hand: two replicas' caches of 16-token blocks observed by one
 * directory, whose one lookup gives each replica's cached prefix exactly as its own
 * cache answers, through inserts, evictions and a replica leaving. */
#include <criterion/criterion.h>

#include "models/prefix_directory.h"

static prefix_directory *dir;
static prefix_cache *caches[2];
static prefix_directory_member members[2];

static void setup(void)
{
    dir = prefix_directory_create(16);
    for (int k = 0; k < 2; k++) {
        caches[k] = prefix_cache_create(16);
        members[k] = (prefix_directory_member){ dir, prefix_directory_join(dir) };
        prefix_cache_observe(caches[k], prefix_directory_observe, &members[k]);
    }
}

static void teardown(void)
{
    for (int k = 0; k < 2; k++)
        prefix_cache_free(caches[k]);
    prefix_directory_free(dir);
}

TestSuite(prefix_directory, .init = setup, .fini = teardown);

/* A chain of a shared prompt's blocks and its own (no hashed ids). */
static prefix_chain chain(uint64_t shared, unsigned shared_tokens, uint64_t own)
{
    return (prefix_chain){ .shared = shared, .shared_tokens = shared_tokens, .own = own };
}

/* tokens[] for the chain, checked against each cache's own answer too */
static void expect_longest(const prefix_chain *c, unsigned tokens, unsigned a, unsigned b)
{
    unsigned got[2] = { 99, 99 };
    cr_assert_eq(prefix_directory_ids(dir), 2);
    prefix_directory_longest(dir, c, tokens, got);
    cr_expect_eq(got[members[0].id], a, "replica A: %u tokens, expected %u", got[0], a);
    cr_expect_eq(got[members[1].id], b, "replica B: %u tokens, expected %u", got[1], b);
    cr_expect_eq(prefix_cache_longest(caches[0], c, tokens), a);
    cr_expect_eq(prefix_cache_longest(caches[1], c, tokens), b);
}

Test(prefix_directory, gives_each_replica_its_cached_prefix_through_an_eviction)
{
    cr_expect_eq(members[0].id, 0);
    cr_expect_eq(members[1].id, 1);
    /* a 40-token system prompt: blocks 0-1 shared, the rest each conversation's */
    prefix_chain a = chain(99, 40, 1), b = chain(99, 40, 2), other = chain(98, 40, 1);
    prefix_cache_insert(caches[0], &a, 80, 1000); /* A: shared 2, a's own 3 */
    prefix_cache_insert(caches[1], &b, 64, 1000); /* B: shared 2, b's own 2 */
    prefix_cache_insert(caches[1], &a, 48, 1000); /* B: a's own 1 */
    expect_longest(&a, 200, 80, 48);
    expect_longest(&a, 40, 32, 32);     /* stops inside the shared prompt */
    expect_longest(&a, 15, 0, 0);       /* not a whole block */
    expect_longest(&b, 200, 32, 64);
    expect_longest(&other, 200, 0, 0);  /* another system prompt: nothing */
    /* B, oldest first: b's own 2, a's own 1, shared 2; down to 2 blocks evicts both
     * conversations' runs, leaving the system prompt */
    prefix_cache_trim(caches[1], 2);
    expect_longest(&a, 200, 80, 32);
    expect_longest(&b, 200, 32, 32);
    prefix_cache_trim(caches[1], 1);    /* the shared run's last block */
    expect_longest(&a, 200, 80, 16);
    expect_longest(&b, 200, 32, 16);
}

Test(prefix_directory, forgets_a_replica_that_leaves_and_gives_its_id_again)
{
    prefix_chain a = chain(0, 0, 5);
    prefix_cache_insert(caches[0], &a, 64, 1000);
    prefix_cache_insert(caches[1], &a, 32, 1000);
    expect_longest(&a, 64, 64, 32);
    prefix_cache_free(caches[1]); /* tells the directory its runs went */
    prefix_directory_leave(dir, members[1].id);
    caches[1] = prefix_cache_create(16);
    members[1] = (prefix_directory_member){ dir, prefix_directory_join(dir) };
    prefix_cache_observe(caches[1], prefix_directory_observe, &members[1]);
    cr_expect_eq(members[1].id, 1);
    expect_longest(&a, 64, 64, 0);
}

Test(prefix_directory, memory_follows_the_caches_not_the_conversations)
{
    size_t after[2];
    for (uint64_t own = 1; own <= 20000; own++) { /* each conversation evicts an older */
        prefix_chain c = chain(7, 32, own);
        prefix_cache_insert(caches[own % 2], &c, 64, 40);
        if (own == 2000)
            after[0] = prefix_directory_memory_bytes(dir);
    }
    after[1] = prefix_directory_memory_bytes(dir);
    cr_expect_eq(after[1], after[0], "%zu bytes after 2,000 conversations, %zu after 20,000",
                 after[0], after[1]);
    prefix_chain last = chain(7, 32, 20000), gone = chain(7, 32, 2);
    expect_longest(&last, 64, 64, 32);  /* shared on both; its own run on A */
    expect_longest(&gone, 64, 32, 32);
}

Test(prefix_directory, hashed_ids_give_each_replica_its_leading_blocks)
{
    static const uint64_t a_ids[] = { 1, 2, 3, 4 }, b_ids[] = { 1, 2, 7 }, c_ids[] = { 8, 2 };
    prefix_chain a = { .ids = a_ids, .nids = 4 };
    prefix_chain b = { .ids = b_ids, .nids = 3 };
    prefix_chain c = { .ids = c_ids, .nids = 2 };
    prefix_cache_insert(caches[0], &a, 64, 1000); /* A: 1 2 3 4 */
    prefix_cache_insert(caches[1], &b, 48, 1000); /* B: 1 2 7 */
    expect_longest(&a, 64, 64, 32);
    expect_longest(&a, 63, 48, 32);  /* whole blocks of 63 tokens: 3 */
    expect_longest(&b, 48, 32, 48);
    expect_longest(&c, 32, 0, 0);    /* B holds 2, but not 8 before it */
    prefix_cache_trim(caches[0], 1); /* A keeps its root, 1 */
    expect_longest(&a, 64, 16, 32);
    prefix_cache_trim(caches[1], 0);
    expect_longest(&b, 48, 16, 0);
}

/* Whether every replica holds a run whole, as holders come, change, shrink and leave:
 * hand-worked, with the recount when the last holder of the most blocks goes down. */
Test(prefix_directory, knows_when_every_replica_holds_a_run_whole)
{
    prefix_directory *d = prefix_directory_create(16);
    uint64_t k = 42;
    cr_expect(!prefix_directory_all_hold(d, k, 1), "nothing joined");
    unsigned a = prefix_directory_join(d), b = prefix_directory_join(d);
    unsigned c = prefix_directory_join(d);
    prefix_directory_set(d, a, k, 10);
    prefix_directory_set(d, b, k, 10);
    cr_expect(!prefix_directory_all_hold(d, k, 5), "c holds none of it");
    prefix_directory_set(d, c, k, 10);
    cr_expect(prefix_directory_all_hold(d, k, 10));
    cr_expect(!prefix_directory_all_hold(d, k, 11), "no one holds 11 blocks");
    cr_expect(!prefix_directory_all_hold(d, 43, 1), "another run");
    prefix_directory_set(d, b, k, 8);
    cr_expect(!prefix_directory_all_hold(d, k, 8), "8, 10 and 10: not all the most");
    prefix_directory_set(d, b, k, 10);
    cr_expect(prefix_directory_all_hold(d, k, 10));
    prefix_directory_set(d, a, k, 0); /* a's cache let it go, then a leaves */
    cr_expect(!prefix_directory_all_hold(d, k, 10));
    prefix_directory_leave(d, a);
    cr_expect(prefix_directory_all_hold(d, k, 10), "b and c hold it, and only they are left");
    prefix_directory_set(d, c, k, 12);
    cr_expect(!prefix_directory_all_hold(d, k, 10), "c holds 12, b 10");
    prefix_directory_set(d, c, k, 9); /* the last at 12 goes down: the most is b's 10 */
    cr_expect(!prefix_directory_all_hold(d, k, 9));
    prefix_directory_set(d, c, k, 10);
    cr_expect(prefix_directory_all_hold(d, k, 10), "both at 10 again, after the recount");
    prefix_directory_set(d, b, k, 0);
    prefix_directory_set(d, c, k, 0);
    cr_expect(!prefix_directory_all_hold(d, k, 1), "the run is gone");
    prefix_directory_free(d);
}
