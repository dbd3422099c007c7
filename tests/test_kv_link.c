/* Cache transfers over shared links: times by hand for one transfer, for transfers
 * that share a link from the start or join one in flight, and links that do not share. */
#include <criterion/criterion.h>

#include "models/kv_link.h"

static sim_engine *engine;

static void setup(void) { engine = sim_engine_create(); }
static void teardown(void) { sim_engine_free(engine); }

TestSuite(kv_link, .init = setup, .fini = teardown);

/* Each item is a slot that records when its transfer arrived. */
static void arrived(void *context, void *item)
{
    *(double *)item = sim_engine_now(context);
}

typedef struct send_at {
    kv_links *k;
    unsigned link;
    double bytes;
    double *done;
} send_at;

static void on_send(sim_engine *e, void *data)
{
    send_at *s = data;
    kv_links_send(s->k, s->link, s->bytes, s->done);
}

static const double GB = 1e9;

Test(kv_link, one_transfer_takes_latency_plus_bytes_over_bandwidth)
{
    kv_link_spec spec = { 50 * GB, 10e-6, KV_LINK_ONE, 0 };
    kv_links *k = kv_links_create(engine, &spec, arrived, engine);
    /* Llama-3-8B's fp16 cache: 32 layers x 8 kv heads x 128 x 2 (K, V) x 2 bytes =
     * 131,072 bytes a token; a 2,000-token prompt is 262.144 MB: 5.24288 ms at 50 GB/s */
    double done = -1;
    kv_links_send(k, 0, 131072.0 * 2000, &done);
    sim_engine_run(engine);
    cr_expect_float_eq(done, 10e-6 + 262.144e6 / (50 * GB), 1e-15, "arrived at %.12g", done);
    kv_links_free(k);
}

Test(kv_link, two_transfers_sharing_a_link_take_twice_as_long)
{
    kv_link_spec spec = { 10 * GB, 0.001, KV_LINK_ONE, 0 };
    kv_links *k = kv_links_create(engine, &spec, arrived, engine);
    double a = -1, b = -1;
    kv_links_send(k, 0, 1 * GB, &a);
    kv_links_send(k, 0, 1 * GB, &b);
    cr_expect_eq(kv_links_in_flight(k, 0), 2);
    sim_engine_run(engine);
    cr_expect_float_eq(a, 0.001 + 0.2, 1e-12, "first at %.12g", a);  /* 2 GB at 10 GB/s */
    cr_expect_float_eq(b, 0.001 + 0.2, 1e-12, "second at %.12g", b);
    kv_links_free(k);
}

/* A: 1 GB at 0; B: 1 GB at 0.05 s, when A has 0.5 GB.  Shared, A's other 0.5 GB take
 * 0.1 s (to 0.15), while B gets 0.5 GB; alone then, B's last 0.5 GB take 0.05 s (to 0.2). */
Test(kv_link, a_transfer_joining_one_in_flight_slows_it_from_then_on)
{
    kv_link_spec spec = { 10 * GB, 0, KV_LINK_ONE, 0 };
    kv_links *k = kv_links_create(engine, &spec, arrived, engine);
    double a = -1, b = -1;
    kv_links_send(k, 0, 1 * GB, &a);
    send_at later = { k, 0, 1 * GB, &b };
    sim_event_schedule(engine, 0.05, 0, on_send, &later);
    sim_engine_run(engine);
    cr_expect_float_eq(a, 0.15, 1e-12, "first at %.12g", a);
    cr_expect_float_eq(b, 0.2, 1e-12, "second at %.12g", b);
    kv_links_free(k);
}

/* Small after large: the small one (0.1 GB) shares from 0 with the large (1 GB) and ends
 * at 0.02 s; the large one has 0.9 GB left, alone: 0.09 s more. */
Test(kv_link, a_small_transfer_overtakes_a_large_one)
{
    kv_link_spec spec = { 10 * GB, 0.5, KV_LINK_ONE, 0 };
    kv_links *k = kv_links_create(engine, &spec, arrived, engine);
    double large = -1, small = -1;
    kv_links_send(k, 0, 1 * GB, &large);
    kv_links_send(k, 0, 0.1 * GB, &small);
    sim_engine_run(engine);
    cr_expect_float_eq(small, 0.5 + 0.02, 1e-12, "small at %.12g", small);
    cr_expect_float_eq(large, 0.5 + 0.11, 1e-12, "large at %.12g", large);
    kv_links_free(k);
}

Test(kv_link, transfers_on_different_links_do_not_share)
{
    kv_link_spec spec = { 10 * GB, 0, KV_LINK_PER_REPLICA, 0 };
    kv_links *k = kv_links_create(engine, &spec, arrived, engine);
    double a = -1, b = -1;
    kv_links_send(k, kv_link_of(&spec, 0, 2), 1 * GB, &a);
    kv_links_send(k, kv_link_of(&spec, 2, 2), 1 * GB, &b);
    sim_engine_run(engine);
    cr_expect_float_eq(a, 0.1, 1e-12);
    cr_expect_float_eq(b, 0.1, 1e-12);
    kv_links_free(k);
}

Test(kv_link, replicas_map_to_links_by_scope)
{
    kv_link_spec one = { 1, 0, KV_LINK_ONE, 0 }, replica = { 1, 0, KV_LINK_PER_REPLICA, 0 };
    kv_link_spec node = { 1, 0, KV_LINK_PER_NODE, 8 };
    /* replicas of tp 2 at units 0, 2, 4, ...: replica 5 starts at unit 10 */
    cr_expect_eq(kv_link_of(&one, 10, 2), 0);
    cr_expect_eq(kv_link_of(&replica, 10, 2), 5);
    cr_expect_eq(kv_link_of(&node, 10, 2), 1);  /* units 8-15: the second node */
    cr_expect_eq(kv_link_of(&node, 7, 1), 0);
    kv_link_scope s;
    cr_expect_eq(kv_link_scope_parse("per_node", &s), 0);
    cr_expect_eq(s, KV_LINK_PER_NODE);
    cr_expect_eq(kv_link_scope_parse("per_gpu", &s), -1);
    cr_expect_str_eq(kv_link_scope_name(KV_LINK_ONE), "one");
}

/* Many transfers, four at a time on one link, each sent again as it arrives: memory
 * stays what four in flight need, and all of them arrive. */
typedef struct chain {
    kv_links *k;
    unsigned left, arrived;
} chain;

static void resend(void *context, void *item)
{
    chain *c = context;
    c->arrived++;
    if (c->left > 0) {
        c->left--;
        kv_links_send(c->k, 0, 1e6, item);
    }
}

Test(kv_link, memory_follows_the_transfers_in_flight_not_the_number_sent)
{
    kv_link_spec spec = { 1e9, 1e-6, KV_LINK_ONE, 0 };
    chain c = { NULL, 100000, 0 };
    c.k = kv_links_create(engine, &spec, resend, &c);
    int slot[4];
    for (int i = 0; i < 4; i++)
        kv_links_send(c.k, 0, 1e6, &slot[i]);
    sim_engine_run_until(engine, 0.01);
    size_t early = kv_links_memory_bytes(c.k);
    sim_engine_run(engine);
    cr_expect_eq(c.arrived, 4 + 100000);
    cr_expect_eq(kv_links_memory_bytes(c.k), early);
    /* four of 1 MB share 1 GB/s: each round of four takes 4 ms, then 1 us of latency */
    double rounds = (4 + 100000) / 4.0;
    cr_expect_float_eq(sim_engine_now(engine), rounds * (0.004 + 1e-6), 1e-6,
                       "ended at %.9g", sim_engine_now(engine));
    kv_links_free(c.k);
}
