/* A fleet on its own, through its contract (models/serving_fleet.h), with no serving
 * workload around it: what it takes, where it routes, and what it tells its owner. */
#include <criterion/criterion.h>
#include <string.h>

#include "lua/catalog.h"
#include "models/memory.h"
#include "models/serving_fleet.h"

static catalog cat;
static sim_engine *engine;

/* What the owner heard. */
static unsigned done_count, done_fleet, ready_count;
static uint64_t done_ids[16];

static void on_done(void *owner, llm_request *q, bool dropped, unsigned fleet)
{
    cr_assert(!dropped);
    done_ids[done_count++ % 16] = q->id;
    done_fleet = fleet;
}
static void on_ready(void *owner) { ready_count++; }
static void on_reroute(void *owner, llm_request *q) { cr_assert_fail("no pool: nothing is lost"); }

static void setup(void)
{
    serving_fleet_check_rankings(true); /* every routing also against a look at each replica */
    char err[512];
    cr_assert_eq(catalog_load(&cat, err, sizeof err), 0, "%s", err);
    engine = sim_engine_create();
    done_count = ready_count = 0;
    done_fleet = 99;
}
static void teardown(void)
{
    sim_engine_free(engine);
    catalog_release(&cat);
}

TestSuite(serving_fleet, .init = setup, .fini = teardown);

static serving_fleet *fleet(unsigned replicas, routing_policy policy)
{
    const model_spec *m = catalog_model(&cat, "llama-3-8b");
    const device_spec *d = catalog_device(&cat, "H100-SXM");
    serving_fleet_config c = {
        .group = { .pool_name = "p", .replicas = replicas, .rtt_s = sim_dist_constant(0) },
        .index = 1,
        .routing = { .policy = policy, .workload = "chat" },
        .events = { NULL, on_done, on_ready, on_reroute },
        .seed = 1,
    };
    c.group.replica = (replica_config){
        .model = m, .device = d, .profile = perf_default_profile(d), .prec = PREC_FP16, .kv_prec = PREC_FP16,
        .tp = 1, .max_batch = 8, .max_tokens = 4096,
        .kv_capacity_tokens = memory_inference(m, d, PREC_FP16, PREC_FP16, 1).kv_capacity_tokens,
    };
    return serving_fleet_create(engine, &c);
}

Test(serving_fleet, takes_nothing_before_it_has_replicas)
{
    serving_fleet *f = fleet(2, ROUTE_ROUND_ROBIN);
    llm_request q = { .prompt = 10, .output = 2 };
    char err[128];
    cr_expect_eq(serving_fleet_active(f), 0);
    cr_expect_eq(serving_fleet_route(f, &q, err, sizeof err), 0, "no replica: the owner keeps it");
    serving_fleet_start(f); /* no pool: both replicas ready at once */
    cr_expect_eq(serving_fleet_active(f), 2);
    cr_expect_eq(ready_count, 2, "the owner hears each replica become ready");
    serving_fleet_free(f);
}

Test(serving_fleet, round_robin_spreads_requests_and_each_end_is_told_with_the_fleet)
{
    serving_fleet *f = fleet(2, ROUTE_ROUND_ROBIN);
    serving_fleet_start(f);
    llm_request q[4];
    char err[128];
    for (unsigned i = 0; i < 4; i++) {
        q[i] = (llm_request){ .prompt = 100, .output = 3, .id = i };
        cr_assert_eq(serving_fleet_route(f, &q[i], err, sizeof err), 1);
    }
    /* two on each replica: neither is saturated at 3, both are at 2 */
    cr_expect(!serving_fleet_saturated(f, 3));
    cr_expect(serving_fleet_saturated(f, 2));
    sim_engine_run_until(engine, 60);
    cr_expect_eq(done_count, 4);
    cr_expect_eq(done_fleet, 1, "the fleet's index comes back with each request");
    serving_group_stats st = serving_fleet_stats(f, 60);
    cr_expect_eq(st.served, 4);
    cr_expect_float_eq(st.replicas_mean, 2, 1e-12);
    cr_expect(st.utilization > 0 && st.utilization < 1, "busy share %g", st.utilization);
    serving_fleet_free(f);
}

static int refuse(void *context, const replica_load *loads, unsigned n, unsigned prompt,
                  unsigned output, double now_s, char *err, size_t err_size)
{
    return 5; /* there are 2 */
}

Test(serving_fleet, a_custom_policy_that_chooses_no_replica_is_an_error)
{
    const model_spec *m = catalog_model(&cat, "llama-3-8b");
    const device_spec *d = catalog_device(&cat, "H100-SXM");
    serving_fleet_config c = {
        .group = { .replicas = 2, .rtt_s = sim_dist_constant(0) },
        .routing = { .policy = ROUTE_CUSTOM, .custom = refuse, .workload = "chat" },
        .events = { NULL, on_done, on_ready, on_reroute },
    };
    c.group.replica = (replica_config){ .model = m, .device = d,
        .profile = perf_default_profile(d), .prec = PREC_FP16, .kv_prec = PREC_FP16, .tp = 1, .max_batch = 8,
        .max_tokens = 4096, .kv_capacity_tokens = 1e5 };
    serving_fleet *f = serving_fleet_create(engine, &c);
    serving_fleet_start(f);
    llm_request q = { .prompt = 10, .output = 2 };
    char err[128] = "";
    cr_expect_eq(serving_fleet_route(f, &q, err, sizeof err), -1);
    cr_expect_str_eq(err, "workload chat: the routing function chose replica 6 of 2");
    serving_fleet_free(f);
}

/* The autoscaler's view: replicas by state, the bounds (max at least the starting
 * count), and busy shares of the interval since the previous look. */
Test(serving_fleet, observe_shows_the_replicas_and_the_intervals_busy_share)
{
    serving_fleet *f = fleet(2, ROUTE_ROUND_ROBIN);
    serving_fleet_start(f);
    cr_expect_eq(serving_fleet_target(f), 2);
    autoscale_view v = serving_fleet_observe(f, 0);
    cr_expect_eq(v.active, 2);
    cr_expect_eq(v.provisioning + v.draining, 0);
    cr_expect_eq(v.max, 2, "max is at least the starting replicas");
    llm_request q = { .prompt = 2000, .output = 200 };
    char err[128];
    cr_assert_eq(serving_fleet_route(f, &q, err, sizeof err), 1);
    sim_engine_run_until(engine, 1e-3);
    v = serving_fleet_observe(f, 1e-3);
    cr_expect_float_eq(v.outstanding, 1, 0);
    cr_expect_float_eq(v.utilization, 0.5, 1e-9, "one of two replicas busy: %g", v.utilization);
    serving_fleet_free(f);
}
