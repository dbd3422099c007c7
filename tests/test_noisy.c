/* Noisy neighbours: the two-state process's long-run share of contended time, its
 * stationary start, its factors, and a never-contended process leaving a replica's run
 * bit-identical. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "lua/catalog.h"
#include "models/memory.h"
#include "models/noisy.h"
#include "models/replica.h"
#include "sim/rng.h"

TestSuite(noisy);

typedef struct seen {
    unsigned changes;
    double compute, memory;
    bool bad_ratio;
    double sensitivity;
} seen;

static void record(void *context, double compute, double memory)
{
    seen *s = context;
    s->changes++;
    s->compute = compute;
    s->memory = memory;
    if (memory > 1 && fabs((compute - 1) - (memory - 1) * s->sensitivity) > 1e-12)
        s->bad_ratio = true;
    if (memory < 1 || compute < 1)
        s->bad_ratio = true;
}

static noisy_spec spec_of(double calm_mean_s, double contended_mean_s)
{
    return (noisy_spec){ sim_dist_exponential(calm_mean_s), sim_dist_exponential(contended_mean_s),
                         sim_dist_uniform(0.8, 1.8), NOISY_DEFAULT_COMPUTE_SENSITIVITY };
}

Test(noisy, long_run_contended_share_is_mean_contended_over_the_cycle)
{
    /* calm 20 min, contended 5 min on average: contended a fifth of the time.  50 batches
     * of 4 days (~230 cycles each): the batch means' 99.9% interval must hold 0.2 */
    noisy_spec s = spec_of(1200, 300);
    char err[200];
    cr_assert_eq(noisy_spec_check(&s, err, sizeof err), 0, "%s", err);
    sim_engine *e = sim_engine_create();
    gsl_rng *rng = sim_rng_stream(1, 0, "pools.cloud.noisy");
    seen got = { .sensitivity = s.compute_sensitivity };
    noisy_process *p = noisy_create(e, &s, rng, record, &got);
    noisy_start(p);
    enum { BATCHES = 50 };
    double batch_s = 4 * 86400, sum = 0, sum2 = 0;
    for (int b = 0; b < BATCHES; b++) {
        noisy_restart_stats(p, sim_engine_now(e));
        sim_engine_run_until(e, (b + 1) * batch_s);
        double f = noisy_contended_fraction(p, sim_engine_now(e));
        sum += f;
        sum2 += f * f;
    }
    double mean = sum / BATCHES, sd = sqrt((sum2 - sum * sum / BATCHES) / (BATCHES - 1));
    double half = 3.5 * sd / sqrt(BATCHES);
    cr_expect(fabs(mean - 0.2) <= half, "contended %.4f +- %.4f, expected 0.2", mean, half);
    cr_expect_lt(half, 0.01, "a sharp test: +- %.4f", half);
    /* 11,520 cycles of 25 min; a slowdown drawn under 1 (a fifth of them) changes nothing */
    cr_expect(got.changes > 17000 && got.changes < 19900, "%u changes", got.changes);
    cr_expect(!got.bad_ratio, "compute slows by 1 + (m - 1) x 0.2, both >= 1");
    noisy_free(p);
    gsl_rng_free(rng);
    sim_engine_free(e);
    noisy_spec_release(&s);
}

Test(noisy, starts_in_the_stationary_state)
{
    /* over 4000 streams, a fifth start contended (sd 0.0063) */
    noisy_spec s = spec_of(1200, 300);
    unsigned contended = 0, n = 4000;
    for (unsigned i = 0; i < n; i++) {
        sim_engine *e = sim_engine_create();
        gsl_rng *rng = sim_rng_stream(7, i, "noisy");
        seen got = { .sensitivity = s.compute_sensitivity };
        noisy_process *p = noisy_create(e, &s, rng, record, &got);
        noisy_start(p);
        contended += noisy_contended(p);
        double cf, mf;
        noisy_factors(p, &cf, &mf);
        cr_assert_eq(mf > 1, noisy_contended(p) && got.changes == 1 && got.memory > 1,
                     "told of a contended start, slowdown %g", mf);
        noisy_free(p);
        gsl_rng_free(rng);
        sim_engine_free(e);
    }
    cr_expect(fabs((double)contended / n - 0.2) < 4 * 0.0063, "%u of %u contended", contended, n);
    noisy_spec_release(&s);
}

Test(noisy, bad_specs_are_refused)
{
    char err[200];
    noisy_spec s = { sim_dist_constant(0), sim_dist_constant(0), sim_dist_constant(1.5), 0.2 };
    cr_expect_eq(noisy_spec_check(&s, err, sizeof err), -1);
    cr_expect(strstr(err, "not both 0"), "%s", err);
    s = (noisy_spec){ sim_dist_exponential(60), sim_dist_exponential(-1), sim_dist_constant(1.5), 0.2 };
    cr_expect_eq(noisy_spec_check(&s, err, sizeof err), -1);
    cr_expect(strstr(err, "contended: "), "%s", err);
    s = (noisy_spec){ sim_dist_exponential(60), sim_dist_exponential(6), sim_dist_constant(1.5), 1.5 };
    cr_expect_eq(noisy_spec_check(&s, err, sizeof err), -1);
    cr_expect(strstr(err, "compute_sensitivity"), "%s", err);
}

/* ---- a calm process leaves a replica's run as it was -------------------------------- */

static catalog cat;

static void load_catalog(void)
{
    char err[512];
    cr_assert_eq(catalog_load(&cat, err, sizeof err), 0, "%s", err);
}
static void free_catalog(void) { catalog_release(&cat); }

TestSuite(noisy_replica, .init = load_catalog, .fini = free_catalog);

static void count_done(void *context, llm_request *q, bool dropped)
{
    (void)q;
    (void)dropped;
    ++*(unsigned *)context;
}

static void slow_replica(void *context, double compute, double memory)
{
    replica_set_speed(context, compute, memory);
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

/* 40 requests over 20 s on one replica, with or without a noisy process; finish times
 * into finish_s. */
static unsigned serve(const noisy_spec *spec, double *finish_s)
{
    const model_spec *m = catalog_model(&cat, "llama-3-8b");
    const device_spec *d = catalog_device(&cat, "H100-SXM");
    replica_config c = {
        .model = m, .device = d, .profile = perf_default_profile(d), .prec = PREC_FP16, .kv_prec = PREC_FP16, .tp = 1,
        .max_batch = 32, .max_tokens = 4096,
        .kv_capacity_tokens = memory_inference(m, d, PREC_FP16, PREC_FP16, 1).kv_capacity_tokens,
    };
    sim_engine *e = sim_engine_create();
    unsigned done = 0;
    replica *r = replica_create(e, &c, count_done, &done);
    gsl_rng *rng = sim_rng_stream(3, 0, "noisy");
    noisy_process *p = spec ? noisy_create(e, spec, rng, slow_replica, r) : NULL;
    if (p)
        noisy_start(p);
    llm_request q[40];
    arrival a[40];
    for (int i = 0; i < 40; i++) {
        q[i] = (llm_request){ .arrival_s = 0.5 * i, .prompt = 200 + 37 * i, .output = 100 + 11 * i };
        a[i] = (arrival){ r, &q[i] };
        sim_event_schedule(e, q[i].arrival_s, 0, arrive, &a[i]);
    }
    sim_engine_run_until(e, 600);
    for (int i = 0; i < 40; i++)
        finish_s[i] = q[i].finish_s;
    noisy_free(p);
    gsl_rng_free(rng);
    replica_free(r);
    sim_engine_free(e);
    return done;
}

Test(noisy_replica, a_never_contended_process_changes_nothing)
{
    double plain[40], calm[40], gentle[40], noisy[40];
    cr_assert_eq(serve(NULL, plain), 40);
    /* contended spells of no length, and contended spells that slow nothing */
    noisy_spec zero = { sim_dist_exponential(2), sim_dist_constant(0), sim_dist_constant(3), 0.2 };
    noisy_spec one = { sim_dist_exponential(2), sim_dist_exponential(1), sim_dist_uniform(0.5, 1), 0.2 };
    serve(&zero, calm);
    serve(&one, gentle);
    cr_expect(memcmp(plain, calm, sizeof plain) == 0, "zero-length contention");
    cr_expect(memcmp(plain, gentle, sizeof plain) == 0, "slowdowns of 1");
    /* while a real one does slow the replica */
    noisy_spec real = { sim_dist_exponential(2), sim_dist_exponential(2), sim_dist_constant(2), 0.2 };
    serve(&real, noisy);
    cr_expect_gt(noisy[39], plain[39]);
}
