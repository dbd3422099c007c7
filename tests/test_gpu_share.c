/* Sharing a GPU: time-slicing and MIG interference arithmetic, noise, pushes only on
 * change, and replicas time-slicing one GPU (fast path against one event per
 * iteration). */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "lua/catalog.h"
#include "models/gpu_share.h"
#include "models/memory.h"
#include "models/replica.h"

TestSuite(gpu_share);

typedef struct member_log {
    unsigned applies;
    double compute, memory;
} member_log;

static void log_apply(void *context, double compute, double memory)
{
    member_log *m = context;
    m->applies++;
    m->compute = compute;
    m->memory = memory;
}

static gpu_share *group(sharing_spec spec, unsigned n, member_log *logs)
{
    gpu_share *g = gpu_share_create(&spec, n, log_apply);
    cr_assert_not_null(g);
    for (unsigned i = 0; i < n; i++) {
        logs[i] = (member_log){ 0, 1, 1 };
        gpu_share_attach(g, i, &logs[i]);
    }
    return g;
}

static const sharing_spec TIME_SLICED = { .mode = SHARE_TIME_SLICING, .tenants = 3,
                                          .slice_s = 2e-3, .switch_s = 50e-6 };

Test(gpu_share, two_busy_tenants_each_run_at_2_1_plus_switch_over_slice)
{
    member_log m[3];
    gpu_share *g = group(TIME_SLICED, 3, m);
    gpu_share_set_busy(g, 0, true);
    cr_expect_eq(m[0].applies, 0, "alone, full speed");
    gpu_share_set_busy(g, 1, true);
    double two = 2 * (1 + 50e-6 / 2e-3); /* 2.05 */
    cr_expect_float_eq(m[0].compute, two, 1e-15);
    cr_expect_float_eq(m[0].memory, two, 1e-15);
    cr_expect_float_eq(m[1].memory, two, 1e-15);
    cr_expect_float_eq(m[2].memory, 3 * (1 + 50e-6 / 2e-3), 1e-15, "the idle one, were it to join");
    gpu_share_set_busy(g, 2, true);
    cr_expect_float_eq(m[0].compute, 3.075, 1e-12);
    gpu_share_set_busy(g, 1, false);
    gpu_share_set_busy(g, 2, false);
    cr_expect_eq(m[0].compute, 1);
    cr_expect_eq(m[0].memory, 1);
    cr_expect_eq(gpu_share_busy_count(g), 1);
    gpu_share_free(g);
}

Test(gpu_share, mig_slices_slow_memory_by_the_busy_others)
{
    sharing_spec mig = { .mode = SHARE_MIG, .bandwidth_interference = 0.15 };
    member_log m[7];
    gpu_share *g = group(mig, 7, m);
    for (unsigned i = 0; i < 3; i++)
        gpu_share_set_busy(g, i, true);
    /* a busy slice sees 2 busy others of 6, an idle one 3 */
    cr_expect_float_eq(m[0].memory, 1 + 0.15 * 2 / 6, 1e-15);
    cr_expect_float_eq(m[6].memory, 1 + 0.15 * 3 / 6, 1e-15);
    cr_expect_eq(m[0].compute, 1, "compute is partitioned");
    for (unsigned i = 3; i < 7; i++)
        gpu_share_set_busy(g, i, true);
    cr_expect_float_eq(m[4].memory, 1.15, 1e-15, "all others busy: the whole interference");
    gpu_share_free(g);

    member_log one;
    g = group(mig, 1, &one);
    gpu_share_set_busy(g, 0, true);
    cr_expect_eq(one.applies, 0, "a 7g slice has no neighbours");
    gpu_share_free(g);
}

Test(gpu_share, noise_multiplies_every_member_and_pushes_only_changes)
{
    member_log m[3];
    gpu_share *g = group(TIME_SLICED, 3, m);
    gpu_share_set_noise(g, 1.1, 1.5);
    cr_expect_eq(m[2].applies, 1);
    cr_expect_float_eq(m[2].compute, 1.1, 1e-15);
    gpu_share_set_busy(g, 0, true);
    gpu_share_set_busy(g, 1, true);
    cr_expect_float_eq(m[0].compute, 2.05 * 1.1, 1e-12);
    cr_expect_float_eq(m[0].memory, 2.05 * 1.5, 1e-12);
    unsigned before = m[0].applies + m[1].applies + m[2].applies;
    gpu_share_set_busy(g, 1, true);
    gpu_share_set_noise(g, 1.1, 1.5);
    cr_expect_eq(m[0].applies + m[1].applies + m[2].applies, before, "nothing changed, nothing told");
    gpu_share_set_noise(g, 1, 1);
    cr_expect_float_eq(m[1].memory, 2.05, 1e-12);
    gpu_share_free(g);

    sharing_spec none = { .mode = SHARE_NONE };
    member_log solo;
    g = group(none, 1, &solo);
    gpu_share_set_busy(g, 0, true);
    gpu_share_set_noise(g, 1.04, 1.2);
    cr_expect_eq(solo.applies, 1);
    cr_expect_float_eq(solo.memory, 1.2, 1e-15);
    gpu_share_free(g);
}

/* ---- replicas time-slicing one GPU ------------------------------------------------- */

static catalog cat;

static void load_catalog(void)
{
    char err[512];
    cr_assert_eq(catalog_load(&cat, err, sizeof err), 0, "%s", err);
}
static void free_catalog(void) { catalog_release(&cat); }

TestSuite(gpu_share_replicas, .init = load_catalog, .fini = free_catalog);

static void set_replica_speed(void *r, double compute, double memory)
{
    replica_set_speed(r, compute, memory);
}

static void ignore_done(void *context, llm_request *q, bool dropped)
{
    (void)context;
    (void)q;
    (void)dropped;
}

typedef struct arrival {
    replica *r;
    llm_request *q;
} arrival;

static void arrive(sim_engine *e, void *data)
{
    (void)e;
    arrival *a = data;
    replica_enqueue(a->r, a->q);
}

enum { N = 30 };

/* bursts on each tenant that overlap now and then */
static double q_arrival(unsigned i) { return 0.37 * i + (i % 2 ? 0.11 : 0); }

/* Two replicas of llama-3-8b sharing an H100 by time-slicing, each with its own
 * requests; finish times into finish_s. */
static uint64_t two_tenants(bool reference, bool shared, double *finish_s)
{
    const model_spec *m = catalog_model(&cat, "llama-3-8b");
    const device_spec *d = catalog_device(&cat, "H100-SXM");
    sharing_spec ts = TIME_SLICED;
    ts.tenants = 2;
    gpu_share *g = gpu_share_create(&ts, 2, set_replica_speed);
    sim_engine *e = sim_engine_create();
    replica *r[2];
    for (unsigned i = 0; i < 2; i++) {
        replica_config c = {
            .model = m, .device = d, .profile = perf_default_profile(d), .prec = PREC_FP16, .kv_prec = PREC_FP16,
            .tp = 1, .max_batch = 16, .max_tokens = 4096, .reference = reference,
            .kv_capacity_tokens = memory_inference(m, d, PREC_FP16, PREC_FP16, 1).kv_capacity_tokens / 2,
            .on_busy = shared ? gpu_share_busy_changed : NULL,
            .busy_context = gpu_share_member_of(g, i),
        };
        r[i] = replica_create(e, &c, ignore_done, NULL);
        gpu_share_attach(g, i, r[i]);
    }
    llm_request q[N];
    arrival a[N];
    for (unsigned i = 0; i < N; i++) {
        double t = q_arrival(i);
        q[i] = (llm_request){ .arrival_s = t, .prompt = 100 + 53 * (i % 7), .output = 60 + 29 * (i % 5) };
        a[i] = (arrival){ r[i % 2], &q[i] };
        sim_event_schedule(e, t, 0, arrive, &a[i]);
    }
    sim_engine_run(e);
    for (unsigned i = 0; i < N; i++)
        finish_s[i] = q[i].finish_s;
    uint64_t events = replica_get_stats(r[0])->iterations_events
                      + replica_get_stats(r[1])->iterations_events;
    replica_free(r[0]);
    replica_free(r[1]);
    sim_engine_free(e);
    gpu_share_free(g);
    return events;
}

Test(gpu_share_replicas, fast_path_agrees_with_reference_as_tenants_come_and_go)
{
    double fast[N], ref[N], alone[N];
    uint64_t fast_events = two_tenants(false, true, fast);
    uint64_t ref_events = two_tenants(true, true, ref);
    two_tenants(false, false, alone);
    for (unsigned i = 0; i < N; i++)
        cr_expect_leq(fabs(fast[i] / ref[i] - 1), 1e-9, "request %u: %.12g vs %.12g", i,
                      fast[i], ref[i]);
    cr_expect_lt(fast_events * 3, ref_events, "fast %llu, reference %llu",
                 (unsigned long long)fast_events, (unsigned long long)ref_events);
    double slower = 0, sum = 0;
    for (unsigned i = 0; i < N; i++) {
        slower += fast[i] - q_arrival(i);
        sum += alone[i] - q_arrival(i);
    }
    cr_expect_gt(slower, 1.2 * sum, "sharing the GPU slows both: %g s vs %g s", slower, sum);
}

/* ---- the scenario keys (lua/sharing_load.h) ------------------------------------------ */

#include <lauxlib.h>

#include "lua/sandbox.h"
#include "lua/sharing_load.h"

static sandbox *sb;
static char load_err[512];

static void open_sandbox(void)
{
    sb = sandbox_create(false);
    cr_assert_not_null(sb);
    lua_State *L = sandbox_state(sb);
    /* the API's units, and constructors for the two kinds fleetsim's init.lua names */
    cr_assert_eq(luaL_loadstring(L, "require 'fleetsim'"), LUA_OK);
    cr_assert_eq(lua_pcall(L, 0, 0, 0), LUA_OK, "%s", lua_tostring(L, -1));
    lua_getfield(L, LUA_REGISTRYINDEX, "fleetsim.api");
    const char *kinds[] = { "noisy", "time_slicing", "uniform", "lognormal" };
    for (int i = 0; i < 4; i++) {
        lua_getfield(L, -1, "constructor");
        lua_pushstring(L, kinds[i]);
        lua_call(L, 1, 1);
        lua_setglobal(L, kinds[i]);
    }
    lua_pop(L, 1);
}
static void close_sandbox(void) { sandbox_free(sb); }

TestSuite(sharing_load, .init = open_sandbox, .fini = close_sandbox);

/* Runs `return { ... }` (a pool's table) and opens it as pools.cloud. */
static load_context pool_of(const char *source, fields_object *pool)
{
    lua_State *L = sandbox_state(sb);
    load_context c = { .L = L, .err = load_err, .err_size = sizeof load_err };
    cr_assert_eq(luaL_loadbuffer(L, source, strlen(source), "@pool.lua"), LUA_OK);
    cr_assert_eq(lua_pcall(L, 0, 1, 0), LUA_OK, "%s", lua_tostring(L, -1));
    cr_assert_eq(fields_object_open(&c, -1, "pools.cloud", "", NULL, "a pool", pool), 0, "%s",
                 load_err);
    return c;
}

Test(sharing_load, noisy_plain_durations_are_exponential_means)
{
    fields_object pool;
    load_context c = pool_of("return { noisy = noisy { calm = '20m', contended = '5m',\n"
                             "  slowdown = uniform { low = 1.2, high = 2 } } }", &pool);
    noisy_spec s;
    bool present;
    cr_assert_eq(sharing_load_convert_noisy(&c, &pool, &s, &present), 0, "%s", load_err);
    cr_expect(present);
    cr_expect_eq(s.calm_s.kind, SIM_DIST_EXPONENTIAL);
    cr_expect_float_eq(s.calm_s.a, 1200, 1e-9);
    cr_expect_float_eq(sim_dist_mean(&s.contended_s), 300, 1e-9);
    cr_expect_eq(s.slowdown.kind, SIM_DIST_UNIFORM);
    cr_expect_float_eq(s.compute_sensitivity, NOISY_DEFAULT_COMPUTE_SENSITIVITY, 0);
    noisy_spec_release(&s);

    lua_settop(c.L, 0);
    c = pool_of("return { }", &pool);
    cr_assert_eq(sharing_load_convert_noisy(&c, &pool, &s, &present), 0);
    cr_expect(!present);
}

Test(sharing_load, noisy_mistakes_name_the_line_and_key)
{
    static const struct { const char *source, *message; } cases[] = {
        { "return { noisy = noisy { calm = '20m', contended = '5m', slowdown = 0.5 } }",
          "pool.lua:1: pools.cloud.noisy.slowdown: expected a number >= 1, got 0.5" },
        { "return { noisy = noisy { calm = '20m', contended = '5m', slowdown = 'lots' } }",
          "pool.lua:1: pools.cloud.noisy.slowdown: expected a slowdown factor >= 1 such as 1.5, "
          "or a distribution such as fs.uniform { low = 1.2, high = 2 }, got \"lots\"" },
        { "return { noisy = noisy { calm = 0, contended = 0, slowdown = 2 } }",
          "pool.lua:1: pools.cloud.noisy: calm and contended spells need finite mean lengths, "
          "not both 0 (got 0 s and 0 s)" },
        { "return { noisy = noisy { calm = '20m', contendd = '5m', slowdown = 2 } }", NULL },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        fields_object pool;
        lua_settop(sandbox_state(sb), 0);
        load_context c = pool_of(cases[i].source, &pool);
        noisy_spec s;
        bool present;
        cr_expect_eq(sharing_load_convert_noisy(&c, &pool, &s, &present), -1, "%s",
                     cases[i].source);
        if (cases[i].message)
            cr_expect_str_eq(load_err, cases[i].message);
        else
            cr_expect(strstr(load_err, "contendd") && strstr(load_err, "contended"), "%s", load_err);
    }
}

Test(sharing_load, mig_and_time_slicing)
{
    fields_object pool;
    sharing_spec s;
    load_context c = pool_of("return { mig = '1g.10gb', bandwidth_interference = 0.1 }", &pool);
    cr_assert_eq(sharing_load_convert(&c, &pool, &s), 0, "%s", load_err);
    cr_expect_eq(s.mode, SHARE_MIG);
    cr_expect_str_eq(s.mig_profile, "1g.10gb");
    cr_expect_float_eq(s.bandwidth_interference, 0.1, 0);
    catalog cat2;
    char err[512];
    cr_assert_eq(catalog_load(&cat2, err, sizeof err), 0, "%s", err);
    cr_expect_eq(sharing_load_check_mig_profile(&c, &pool, &s, catalog_device(&cat2, "H100-SXM")),
                 0);
    cr_expect_eq(sharing_load_check_mig_profile(&c, &pool, &s, catalog_device(&cat2, "H200-SXM")),
                 -1);
    cr_expect_str_eq(load_err, "pools.cloud.mig: unknown MIG profile \"1g.10gb\" for H200-SXM "
                               "(profiles: 1g.18gb, 1g.35gb, 2g.35gb, 3g.71gb, 4g.71gb, 7g.141gb)");
    catalog_release(&cat2);
    sharing_spec_release(&s);

    lua_settop(c.L, 0);
    c = pool_of("return { time_slicing = time_slicing { tenants = 3, slice = '4ms' } }", &pool);
    cr_assert_eq(sharing_load_convert(&c, &pool, &s), 0, "%s", load_err);
    cr_expect_eq(s.mode, SHARE_TIME_SLICING);
    cr_expect_eq(s.tenants, 3);
    cr_expect_float_eq(s.slice_s, 4e-3, 1e-15);
    cr_expect_float_eq(s.switch_s, GPU_SHARE_DEFAULT_SWITCH_S, 0);
    sharing_spec_release(&s);

    lua_settop(c.L, 0);
    c = pool_of("return { mig = '1g.10gb', time_slicing = time_slicing { tenants = 2 } }", &pool);
    cr_expect_eq(sharing_load_convert(&c, &pool, &s), -1);
    cr_expect(strstr(load_err, "not both"), "%s", load_err);
    sharing_spec_release(&s);

    lua_settop(c.L, 0);
    c = pool_of("return { time_slicing = time_slicing { tenants = 1 } }", &pool);
    cr_expect_eq(sharing_load_convert(&c, &pool, &s), -1);
    cr_expect(strstr(load_err, "pools.cloud.time_slicing.tenants"), "%s", load_err);
    sharing_spec_release(&s);

    lua_settop(c.L, 0);
    c = pool_of("return { }", &pool);
    cr_assert_eq(sharing_load_convert(&c, &pool, &s), 0);
    cr_expect_eq(s.mode, SHARE_NONE);
}
