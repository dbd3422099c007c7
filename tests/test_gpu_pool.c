/* GPU pools: grants and refusals, provisioning delays and retries, the max and the
 * provider's ceiling, preemptions (rate and trace, with notice) and failures. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>

#include "models/gpu_pool.h"
#include "sim/rng.h"

/* A holder that counts what it is told and may act on it. */
typedef struct probe {
    gpu_pool *pool;
    sim_engine *engine;
    unsigned grants, warnings, losses, failures_seen;
    unsigned last_n, last_ids[64];
    double granted_at_s, warned_lost_at_s, lost_at_s;
    int64_t request;
    bool release_on_grant;  /* hand the GPUs back at once (measures waits) */
    bool ask_again;         /* ask for last_n again after a grant or loss */
    unsigned ask_n;
} probe;

static void on_granted(void *context, const unsigned *gpus, unsigned n)
{
    probe *p = context;
    p->grants++;
    p->last_n = n;
    for (unsigned i = 0; i < n && i < 64; i++)
        p->last_ids[i] = gpus[i];
    p->granted_at_s = sim_engine_now(p->engine);
}

static void on_warned(void *context, double lost_at_s)
{
    probe *p = context;
    p->warnings++;
    p->warned_lost_at_s = lost_at_s;
}

static void on_lost(void *context, gpu_loss why)
{
    probe *p = context;
    p->losses++;
    p->failures_seen += why == GPU_FAILED;
    p->lost_at_s = sim_engine_now(p->engine);
}

static const gpu_holder HOLDER = { on_granted, on_warned, on_lost };

static gpu_pool *make_pool(sim_engine *e, const pool_capacity *c)
{
    char err[256];
    gpu_pool *p = gpu_pool_create(e, c, "pool.test", 1, 0, err, sizeof err);
    cr_assert_not_null(p, "%s", err);
    return p;
}

Test(gpu_pool, dedicated_grants_at_once_or_refuses)
{
    sim_engine *e = sim_engine_create();
    pool_capacity c = { .kind = POOL_DEDICATED, .count = 8, .max = 8 };
    gpu_pool *pool = make_pool(e, &c);
    probe a = { .engine = e }, b = { .engine = e };
    int64_t ra = gpu_pool_acquire(pool, 6, &HOLDER, &a);
    cr_assert_geq(ra, 0);
    cr_assert_eq(a.grants, 1, "granted before acquire returns");
    cr_assert_eq(a.last_n, 6);
    cr_assert_eq(gpu_pool_available(pool), 2);
    cr_assert_eq(gpu_pool_acquire(pool, 4, &HOLDER, &b), -1, "4 > 2 free: refused");
    cr_assert_eq(b.grants, 0);
    for (unsigned i = 0; i < 6; i++) /* dedicated GPUs are numbered 0..7 */
        cr_assert_lt(a.last_ids[i], 8);
    sim_engine_run_until(e, 100);
    gpu_pool_release(pool, ra);
    cr_assert_eq(gpu_pool_available(pool), 8);
    /* 6 GPUs busy for 100 s of 200: mean busy 3, held 8 throughout, 1600 GPU-s held */
    sim_engine_run_until(e, 200);
    const gpu_pool_stats *s = gpu_pool_get_stats(pool);
    cr_expect_float_eq(sim_timeavg_mean(&s->busy, 200), 3.0, 1e-12);
    cr_expect_float_eq(s->gpu_seconds, 1600.0, 1e-9);
    cr_expect_eq(s->provision_wait_s.n, 1);
    cr_expect_float_eq(s->provision_wait_s.mean, 0.0, 1e-12);
    gpu_pool_free(pool);
    sim_engine_free(e);
}

Test(gpu_pool, invalid_capacity_is_refused_with_a_message)
{
    sim_engine *e = sim_engine_create();
    char err[256] = "";
    pool_capacity c = { .kind = POOL_CLOUD, .count = 8, .max = 4 };
    cr_expect_null(gpu_pool_create(e, &c, "p", 1, 0, err, sizeof err));
    cr_expect(strstr(err, "max") != NULL, "%s", err);
    pool_capacity d = { .kind = POOL_DEDICATED, .count = 4, .preemption_rate_per_s = 1 };
    cr_expect_null(gpu_pool_create(e, &d, "p", 1, 0, err, sizeof err));
    cr_expect(strstr(err, "spot") != NULL, "%s", err);
    sim_engine_free(e);
}

Test(gpu_pool, cloud_provisioning_wait_is_the_constant_delay)
{
    sim_engine *e = sim_engine_create();
    pool_capacity c = { .kind = POOL_CLOUD, .count = 0, .max = 16,
                        .provision_s = sim_dist_constant(180) };
    gpu_pool *pool = make_pool(e, &c);
    probe a = { .engine = e };
    cr_assert_geq(gpu_pool_acquire(pool, 4, &HOLDER, &a), 0);
    cr_assert_eq(a.grants, 0, "on order");
    cr_assert_eq(gpu_pool_available(pool), 12, "16 less 4 on order");
    sim_engine_run_until(e, 1000);
    cr_assert_eq(a.grants, 1);
    cr_expect_float_eq(a.granted_at_s, 180.0, 1e-12);
    const gpu_pool_stats *s = gpu_pool_get_stats(pool);
    cr_expect_float_eq(s->provision_wait_s.mean, 180.0, 1e-12);
    /* billed from ready: 4 GPUs over 1000 - 180 s */
    cr_expect_float_eq(s->gpu_seconds, 4 * 820.0, 1e-9);
    gpu_pool_free(pool);
    sim_engine_free(e);
}

/* A holder that releases at once and asks again for one GPU, n times. */
static void cycle_granted(void *context, const unsigned *gpus, unsigned n);
static const gpu_holder CYCLER = { cycle_granted, NULL, on_lost };

static void cycle_granted(void *context, const unsigned *gpus, unsigned n)
{
    probe *p = context;
    p->grants++;
    gpu_pool_release(p->pool, p->request);
    if (p->grants < p->ask_n)
        p->request = gpu_pool_acquire(p->pool, 1, &CYCLER, p);
}

Test(gpu_pool, retries_under_unavailability_give_a_geometric_wait)
{
    /* Each attempt fails with q = 0.5 and is retried after 60 s; a success takes 100 s.
     * Failures before a success are geometric with mean q / (1 - q) = 1, so the mean wait
     * is 100 + 60 x 1 = 160 s; its sd is 60 sqrt(q) / (1 - q) = 84.9 s, so the mean of
     * 20000 waits has a standard error of 0.6 s: 4 of them is 2.4 s. */
    sim_engine *e = sim_engine_create();
    pool_capacity c = { .kind = POOL_CLOUD, .max = 1, .provision_s = sim_dist_constant(100),
                        .unavailable_probability = 0.5, .retry_s = 60 };
    gpu_pool *pool = make_pool(e, &c);
    probe p = { .engine = e, .pool = pool, .ask_n = 20000 };
    p.request = gpu_pool_acquire(pool, 1, &CYCLER, &p);
    sim_engine_run(e);
    const gpu_pool_stats *s = gpu_pool_get_stats(pool);
    cr_assert_eq(s->provision_wait_s.n, 20000);
    cr_expect(fabs(s->provision_wait_s.mean - 160) < 2.4, "mean wait %.2f s, expected 160",
              s->provision_wait_s.mean);
    cr_expect_float_eq(s->provision_wait_s.min, 100.0, 1e-9);
    /* one refused attempt per failure: about 20000 in all, within 4 sd (sqrt(2 x 20000)) */
    cr_expect(fabs((double)s->provision_failures - 20000) < 800, "%llu refusals",
              (unsigned long long)s->provision_failures);
    gpu_pool_free(pool);
    sim_engine_free(e);
}

/* ---- max and ceiling under a long random run ----------------------------------------- */

typedef struct tenant {
    gpu_pool *pool;
    sim_engine *engine;
    gsl_rng *rng;
    int64_t request;
    bool holding;
    sim_event_id act;       /* the one pending action */
    unsigned violations, grants, max_held;
} tenant;

static void tenant_act(sim_engine *e, void *data);

static void check_limits(tenant *t)
{
    unsigned held = gpu_pool_held(t->pool), busy = gpu_pool_busy(t->pool);
    /* max 24, ceiling 20: the provider never rents more than 20, so held <= 20 */
    if (held > 20 || busy > held || gpu_pool_available(t->pool) > 24)
        t->violations++;
    if (held > t->max_held)
        t->max_held = held;
}

static void tenant_granted(void *context, const unsigned *gpus, unsigned n)
{
    tenant *t = context;
    t->grants++;
    t->holding = true;
    check_limits(t);
    t->act = sim_event_schedule_in(t->engine, gsl_ran_exponential(t->rng, 300), 0, tenant_act, t);
}

static void tenant_lost(void *context, gpu_loss why)
{
    tenant *t = context;
    t->holding = false;
    check_limits(t);
    sim_event_cancel(t->engine, t->act); /* the release it planned */
    t->act = sim_event_schedule_in(t->engine, gsl_ran_exponential(t->rng, 100), 0, tenant_act, t);
}

static const gpu_holder TENANT = { tenant_granted, NULL, tenant_lost };

static void tenant_act(sim_engine *e, void *data)
{
    tenant *t = data;
    t->act = 0;
    if (t->holding) {
        gpu_pool_release(t->pool, t->request);
        t->holding = false;
    }
    check_limits(t);
    t->request = gpu_pool_acquire(t->pool, 1 + (unsigned)gsl_rng_uniform_int(t->rng, 8),
                                  &TENANT, t);
    if (t->request < 0) /* refused: try later */
        t->act = sim_event_schedule_in(e, gsl_ran_exponential(t->rng, 100), 0, tenant_act, t);
}

Test(gpu_pool, max_and_ceiling_are_never_exceeded)
{
    sim_engine *e = sim_engine_create();
    pool_capacity c = { .kind = POOL_SPOT, .count = 4, .max = 24, .ceiling = 20,
                        .provision_s = sim_dist_exponential(120),
                        .unavailable_probability = 0.2, .retry_s = 30,
                        .preemption_rate_per_s = 1.0 / 7200, .notice_s = 30,
                        .mtbf_s = 50000 };
    gpu_pool *pool = make_pool(e, &c);
    tenant ts[8];
    for (int i = 0; i < 8; i++) {
        ts[i] = (tenant){ .pool = pool, .engine = e, .request = -1 };
        char name[32];
        snprintf(name, sizeof name, "tenant.%d", i);
        ts[i].rng = sim_rng_stream(7, 0, name);
        sim_event_schedule(e, i, 0, tenant_act, &ts[i]);
    }
    sim_engine_run_until(e, 30 * 86400.0);
    unsigned grants = 0, violations = 0, max_held = 0;
    for (int i = 0; i < 8; i++) {
        grants += ts[i].grants;
        violations += ts[i].violations;
        if (ts[i].max_held > max_held)
            max_held = ts[i].max_held;
        gsl_rng_free(ts[i].rng);
    }
    cr_expect_gt(grants, 5000, "a long run: %u grants", grants);
    cr_expect_eq(violations, 0);
    cr_expect_eq(max_held, 20, "the ceiling is reached but never passed");
    const gpu_pool_stats *s = gpu_pool_get_stats(pool);
    cr_expect_gt(s->preemptions, 0);
    cr_expect_gt(s->failures, 0);
    cr_expect_gt(s->provision_failures, 0);
    gpu_pool_free(pool);
    sim_engine_free(e);
}

/* ---- preemptions --------------------------------------------------------------------- */

/* Ten holders of 10 GPUs each who ask again as soon as they lose them. */
typedef struct gang {
    gpu_pool *pool;
    int64_t request;
} gang;

static void gang_granted(void *context, const unsigned *gpus, unsigned n) { (void)context; }
static void gang_lost(void *context, gpu_loss why);
static const gpu_holder GANG = { gang_granted, NULL, gang_lost };
static void gang_lost(void *context, gpu_loss why)
{
    gang *g = context;
    g->request = gpu_pool_acquire(g->pool, 10, &GANG, g);
}

Test(gpu_pool, spot_preemptions_follow_the_rate_times_gpus_held)
{
    /* Preemptions form a Poisson process of rate lambda x held, so their count over a run
     * has mean lambda x (GPU-seconds held) and sd its square root.  With lambda = 1 per
     * GPU-hour and about 100 GPUs held for 100 h, that is about 10^4 +- 100: the count
     * must lie within 4 sd of lambda x gpu_seconds. */
    sim_engine *e = sim_engine_create();
    double lambda = 1.0 / 3600;
    pool_capacity c = { .kind = POOL_SPOT, .count = 100, .max = 100,
                        .provision_s = sim_dist_constant(60), .preemption_rate_per_s = lambda,
                        .notice_s = 30 };
    gpu_pool *pool = make_pool(e, &c);
    gang g[10];
    for (int i = 0; i < 10; i++) {
        g[i] = (gang){ pool, -1 };
        g[i].request = gpu_pool_acquire(pool, 10, &GANG, &g[i]);
        cr_assert_geq(g[i].request, 0);
    }
    sim_engine_run_until(e, 100 * 3600.0);
    const gpu_pool_stats *s = gpu_pool_get_stats(pool);
    double expected = lambda * s->gpu_seconds;
    cr_expect_gt(expected, 8000);
    cr_expect(fabs((double)s->preemptions - expected) < 4 * sqrt(expected),
              "%llu preemptions, expected %.0f", (unsigned long long)s->preemptions, expected);
    gpu_pool_free(pool);
    sim_engine_free(e);
}

Test(gpu_pool, trace_preemption_warns_then_takes_the_whole_gang)
{
    /* Two spot GPUs held from the start, both granted at 0; the trace preempts one at
     * 100 s with 30 s notice: warned at 100 (loss at 130), lost at 130; both GPUs then
     * leave the pool (the preempted one, and the other given back to the provider). */
    sim_engine *e = sim_engine_create();
    double times[] = { 100 };
    pool_capacity c = { .kind = POOL_SPOT, .count = 2, .max = 2,
                        .provision_s = sim_dist_constant(60), .preemption_times_s = times,
                        .npreemption_times = 1, .notice_s = 30 };
    gpu_pool *pool = make_pool(e, &c);
    probe a = { .engine = e };
    cr_assert_geq(gpu_pool_acquire(pool, 2, &HOLDER, &a), 0);
    cr_assert_eq(a.grants, 1, "from the GPUs held from the start");
    sim_engine_run_until(e, 1000);
    cr_expect_eq(a.warnings, 1);
    cr_expect_float_eq(a.warned_lost_at_s, 130.0, 1e-12);
    cr_expect_eq(a.losses, 1);
    cr_expect_float_eq(a.lost_at_s, 130.0, 1e-12);
    cr_expect_eq(gpu_pool_held(pool), 0);
    cr_expect_eq(gpu_pool_available(pool), 2);
    const gpu_pool_stats *s = gpu_pool_get_stats(pool);
    cr_expect_eq(s->preemptions, 1);
    cr_expect_float_eq(s->gpu_seconds, 2 * 130.0, 1e-9);
    gpu_pool_free(pool);
    sim_engine_free(e);
}

/* ---- failures ------------------------------------------------------------------------ */

Test(gpu_pool, dedicated_failures_take_gpus_out_for_repair)
{
    /* 10 GPUs failing at 1 / 1000 s each while in service, each repaired in 100 s: an
     * alternating renewal process, in service 1000 / 1100 = 0.909 of the time, so 9.09
     * GPUs held on average, and failures = held GPU-seconds / 1000 (about 9090 over
     * 10^6 s, sd 95). */
    sim_engine *e = sim_engine_create();
    pool_capacity c = { .kind = POOL_DEDICATED, .count = 10, .max = 10, .mtbf_s = 1000,
                        .repair_s = sim_dist_constant(100) };
    gpu_pool *pool = make_pool(e, &c);
    sim_engine_run_until(e, 1e6);
    const gpu_pool_stats *s = gpu_pool_get_stats(pool);
    double held = sim_timeavg_mean(&s->held, 1e6);
    cr_expect(fabs(held - 10 * 1000.0 / 1100) < 0.05, "mean held %.4f, expected 9.0909", held);
    double expected = s->gpu_seconds / 1000;
    cr_expect(fabs((double)s->failures - expected) < 4 * sqrt(expected),
              "%llu failures, expected %.0f", (unsigned long long)s->failures, expected);
    gpu_pool_free(pool);
    sim_engine_free(e);
}

Test(gpu_pool, a_failure_in_a_gang_loses_the_gang_and_repairs_the_gpu)
{
    /* All 4 GPUs granted to one holder; the first failure (an exponential time) takes
     * the gang: the holder hears GPU_FAILED, 3 GPUs are free again and 1 in repair for
     * 500 s. */
    sim_engine *e = sim_engine_create();
    pool_capacity c = { .kind = POOL_DEDICATED, .count = 4, .max = 4, .mtbf_s = 1000,
                        .repair_s = sim_dist_constant(500) };
    gpu_pool *pool = make_pool(e, &c);
    probe a = { .engine = e };
    cr_assert_geq(gpu_pool_acquire(pool, 4, &HOLDER, &a), 0);
    while (a.losses == 0 && sim_engine_step(e))
        ;
    cr_assert_eq(a.losses, 1);
    cr_expect_eq(a.failures_seen, 1);
    double lost_at = a.lost_at_s;
    cr_expect_eq(gpu_pool_available(pool), 3);
    cr_expect_eq(gpu_pool_held(pool), 3);
    cr_expect_eq(gpu_pool_busy(pool), 0);
    /* until the repair ends, the failed GPU stays out (unless another fails meanwhile) */
    sim_engine_run_until(e, lost_at + 499);
    cr_expect_leq(gpu_pool_held(pool), 3);
    gpu_pool_free(pool);
    sim_engine_free(e);
}
