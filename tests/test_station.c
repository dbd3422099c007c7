/* Queueing models built on the engine, checked against theory over independent
 * replications: the analytic value must lie inside the simulated 99% confidence
 * interval, and that interval must be narrow (half-width under 3% of the value), so a
 * biased engine, stream or statistic makes the test fail. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "models/station.h"
#include "sim/queueing_theory.h"

enum { REPLICATIONS = 20 };

/* Per-replication estimates, one observation per replication in each accumulator. */
typedef struct replicated {
    sim_stat wait_mean_s;
    sim_stat p_wait;
    sim_stat queue_length;
    sim_stat utilization;
    sim_stat p_drop;
} replicated;

/* Runs REPLICATIONS replications and collects the estimates of one class. */
static void run_class_replications(station_config config, size_t class_index, double duration_s,
                                   replicated *out)
{
    memset(out, 0, sizeof *out);
    sim_stat_reset(&out->wait_mean_s);
    sim_stat_reset(&out->p_wait);
    sim_stat_reset(&out->queue_length);
    sim_stat_reset(&out->utilization);
    sim_stat_reset(&out->p_drop);
    char err[200];
    for (int r = 0; r < REPLICATIONS; r++) {
        config.replication = (uint64_t)r;
        sim_engine *e = sim_engine_create();
        station *st = station_create(e, &config, err, sizeof err);
        cr_assert_not_null(st, "%s", err);
        station_start(st);
        sim_engine_run_until(e, duration_s);
        const station_stats *s = station_get_stats(st);
        const station_class_stats *k = &s->classes[class_index];
        uint64_t served = k->wait_s.n;
        sim_stat_add(&out->wait_mean_s, k->wait_s.mean);
        sim_stat_add(&out->p_wait, (double)k->waited / (double)served);
        sim_stat_add(&out->queue_length, sim_timeavg_mean(&s->queue_length, duration_s));
        sim_stat_add(&out->utilization, station_utilization(st, duration_s));
        sim_stat_add(&out->p_drop, (double)k->dropped / (double)k->arrivals);
        station_free(st);
        sim_engine_free(e);
    }
}

static void run_replications(station_config config, double duration_s, replicated *out)
{
    run_class_replications(config, 0, duration_s, out);
}

static void expect_theory_in_narrow_ci(const sim_stat *estimates, double theory,
                                       const char *what)
{
    sim_ci ci = sim_ci_student(estimates, 0.99);
    cr_expect(theory >= ci.low && theory <= ci.high,
              "%s: theory %.6g outside the 99%% interval [%.6g, %.6g]", what, theory,
              ci.low, ci.high);
    cr_expect_leq(ci.half_width, 0.03 * fabs(theory),
                  "%s: interval half-width %.3g is over 3%% of %.6g", what, ci.half_width,
                  theory);
}

/* M/M/c at offered load A = c rho, mu = 1: wait, P(wait), Lq (Little) and utilization. */
static void check_mmc(unsigned c, double rho, double duration_s, uint64_t seed)
{
    double lambda = rho * c, mu = 1;
    sim_dist inter = sim_dist_exponential(1 / lambda), service = sim_dist_exponential(1 / mu);
    station_class_config cls = { .name = "mmc", .interarrival = inter, .service = service };
    station_config config = { .servers = c, .classes = &cls, .nclasses = 1, .warmup_s = 200,
                              .seed = seed };
    replicated r;
    run_replications(config, duration_s, &r);
    char what[64];
    double wq = queueing_mmc_wait_mean_s(c, lambda, mu);
    snprintf(what, sizeof what, "M/M/%u rho %.2f mean wait", c, rho);
    expect_theory_in_narrow_ci(&r.wait_mean_s, wq, what);
    snprintf(what, sizeof what, "M/M/%u rho %.2f P(wait)", c, rho);
    expect_theory_in_narrow_ci(&r.p_wait, queueing_erlang_c(c, lambda / mu), what);
    snprintf(what, sizeof what, "M/M/%u rho %.2f queue length", c, rho);
    expect_theory_in_narrow_ci(&r.queue_length, lambda * wq, what);
    snprintf(what, sizeof what, "M/M/%u rho %.2f utilization", c, rho);
    expect_theory_in_narrow_ci(&r.utilization, rho, what);
}

Test(station, mm1_at_rho_0_5, .timeout = 120) { check_mmc(1, 0.5, 6e4, 1); }
Test(station, mm1_at_rho_0_8, .timeout = 120) { check_mmc(1, 0.8, 1.5e5, 2); }
Test(station, mm2_at_rho_0_7, .timeout = 120) { check_mmc(2, 0.7, 9e4, 3); }
Test(station, mm3_at_two_erlangs, .timeout = 120) { check_mmc(3, 2.0 / 3, 8e4, 4); }
Test(station, mm8_at_rho_0_9, .timeout = 120) { check_mmc(8, 0.9, 1.5e5, 5); }

Test(station, mm55_call_centre_at_48_erlangs, .timeout = 120)
{
    /* the published example: P(wait) 0.23870, mean wait 8.184 s with 240 s calls */
    double lambda = 360.0 / 1800, mean_call_s = 240;
    sim_dist inter = sim_dist_exponential(1 / lambda), call = sim_dist_exponential(mean_call_s);
    station_class_config cls = { .name = "calls", .interarrival = inter, .service = call };
    station_config config = { .servers = 55, .classes = &cls, .nclasses = 1, .warmup_s = 3600,
                              .seed = 6 };
    replicated r;
    run_replications(config, 9e6, &r);
    expect_theory_in_narrow_ci(&r.p_wait, 0.23870, "M/M/55 P(wait)");
    expect_theory_in_narrow_ci(&r.wait_mean_s, 8.184, "M/M/55 mean wait");
}

/* M/G/1 against Pollaczek-Khinchine: deterministic and lognormal service. */
static void check_mg1(sim_dist service, double rho, double duration_s, uint64_t seed,
                      const char *what)
{
    double tau = sim_dist_mean(&service), lambda = rho / tau;
    sim_dist inter = sim_dist_exponential(1 / lambda);
    station_class_config cls = { .name = "mg1", .interarrival = inter, .service = service };
    station_config config = { .servers = 1, .classes = &cls, .nclasses = 1,
                              .warmup_s = 200 * tau, .seed = seed };
    replicated r;
    run_replications(config, duration_s, &r);
    double wq = queueing_mg1_wait_mean_s(lambda, tau, sim_dist_variance(&service));
    expect_theory_in_narrow_ci(&r.wait_mean_s, wq, what);
    expect_theory_in_narrow_ci(&r.utilization, rho, what);
}

Test(station, md1_at_rho_0_8_waits_two_service_times, .timeout = 120)
{
    check_mg1(sim_dist_constant(1), 0.8, 1e5, 7, "M/D/1 rho 0.8 mean wait");
    cr_expect_float_eq(queueing_mg1_wait_mean_s(0.8, 1, 0), 2, 1e-12);
}

Test(station, mg1_with_lognormal_service, .timeout = 120)
{
    check_mg1(sim_dist_lognormal(0.8, 0.6), 0.7, 8e4, 8, "M/G/1 lognormal mean wait");
}

Test(station, mm1k_blocking_probability, .timeout = 120)
{
    /* M/M/1 with room for K = 5 in the system (4 waiting): an arrival is lost with
     * probability (1 - rho) rho^K / (1 - rho^(K + 1)) */
    double rho = 0.9;
    int k = 5;
    sim_dist inter = sim_dist_exponential(1 / rho), service = sim_dist_exponential(1);
    station_class_config cls = { .name = "mm1k", .interarrival = inter, .service = service,
                                 .queue_limit = (size_t)k - 1 };
    station_config config = { .servers = 1, .classes = &cls, .nclasses = 1, .warmup_s = 100,
                              .seed = 9 };
    replicated r;
    run_replications(config, 4e4, &r);
    double p_block = (1 - rho) * pow(rho, k) / (1 - pow(rho, k + 1));
    expect_theory_in_narrow_ci(&r.p_drop, p_block, "M/M/1/5 blocking");
}

/* Bit-identical reruns; different replications differ. */
static station_class_stats run_once(uint64_t seed, uint64_t replication, double *wait_p99)
{
    sim_dist inter = sim_dist_exponential(1 / 7.2), service = sim_dist_lognormal(0.9, 0.5);
    station_class_config cls = { .name = "det", .interarrival = inter, .service = service };
    station_config config = { .servers = 8, .classes = &cls, .nclasses = 1, .warmup_s = 10,
                              .seed = seed, .replication = replication };
    char err[128];
    sim_engine *e = sim_engine_create();
    station *st = station_create(e, &config, err, sizeof err);
    station_start(st);
    sim_engine_run_until(e, 5000);
    station_class_stats copy = station_get_stats(st)->classes[0];
    *wait_p99 = sim_histogram_quantile(&copy.wait_hist_s, 0.99);
    copy.wait_hist_s.counts = copy.response_hist_s.counts = NULL; /* freed below */
    station_free(st);
    sim_engine_free(e);
    return copy;
}

Test(station, same_seed_is_bit_identical_and_replications_differ)
{
    double p99_a, p99_b, p99_c;
    station_class_stats a = run_once(42, 0, &p99_a), b = run_once(42, 0, &p99_b);
    station_class_stats c = run_once(42, 1, &p99_c);
    cr_expect_eq(a.arrivals, b.arrivals);
    cr_expect(memcmp(&a.wait_s, &b.wait_s, sizeof a.wait_s) == 0, "wait moments differ");
    cr_expect(memcmp(&a.response_s, &b.response_s, sizeof a.response_s) == 0);
    cr_expect(memcmp(&p99_a, &p99_b, sizeof p99_a) == 0);
    cr_expect_neq(a.arrivals, c.arrivals);
    cr_expect_neq(a.wait_s.mean, c.wait_s.mean);
}

Test(station, invalid_configuration_is_refused_with_the_value)
{
    char err[200];
    sim_engine *e = sim_engine_create();
    station_class_config cls = { .name = "mm", .interarrival = sim_dist_exponential(1),
                                 .service = sim_dist_exponential(1) };
    station_config config = { .servers = 0, .classes = &cls, .nclasses = 1 };
    cr_expect_null(station_create(e, &config, err, sizeof err));
    cr_expect_str_eq(err, "station servers must be >= 1, got 0");
    config.servers = 2;
    cls.service = sim_dist_exponential(-3);
    cr_expect_null(station_create(e, &config, err, sizeof err));
    cr_expect_str_eq(err, "mm service time: exponential mean must be > 0, got -3");
    sim_engine_free(e);
}

Test(station, memory_follows_the_queue_not_the_customers)
{
    sim_dist inter = sim_dist_exponential(1 / 7.2), service = sim_dist_exponential(1);
    station_class_config cls = { .name = "mem", .interarrival = inter, .service = service };
    station_config config = { .servers = 8, .classes = &cls, .nclasses = 1, .seed = 1 };
    char err[64];
    size_t bytes[2];
    for (int i = 0; i < 2; i++) {
        sim_engine *e = sim_engine_create();
        cls.max_arrivals = i == 0 ? 20000 : 400000;
        station *st = station_create(e, &config, err, sizeof err);
        station_start(st);
        sim_engine_run(e);
        cr_assert_eq(station_get_stats(st)->classes[0].wait_s.n, cls.max_arrivals);
        bytes[i] = station_memory_bytes(st) + sim_engine_memory_bytes(e);
        station_free(st);
        sim_engine_free(e);
    }
    /* 20x the customers; only the longest queue and the histogram span may grow */
    cr_expect_leq(bytes[1], 2 * bytes[0] + 4096, "%zu vs %zu bytes", bytes[1], bytes[0]);
}

Test(station, two_classes_share_the_servers_like_one_merged_stream, .timeout = 120)
{
    /* Poisson streams of 3/s and 4.2/s with the same exponential service on 8 servers:
     * the merged stream is M/M/8 at rho 0.9, and under FIFO each class waits as long as
     * the merged customer does */
    sim_dist service = sim_dist_exponential(1);
    station_class_config classes[2] = {
        { .name = "a", .interarrival = sim_dist_exponential(1 / 3.0), .service = service },
        { .name = "b", .interarrival = sim_dist_exponential(1 / 4.2), .service = service },
    };
    station_config config = { .servers = 8, .classes = classes, .nclasses = 2,
                              .warmup_s = 200, .seed = 10 };
    double wq = queueing_mmc_wait_mean_s(8, 7.2, 1);
    replicated r;
    run_class_replications(config, 0, 1.5e5, &r);
    expect_theory_in_narrow_ci(&r.wait_mean_s, wq, "class a mean wait");
    expect_theory_in_narrow_ci(&r.utilization, 0.9, "merged utilization");
    run_class_replications(config, 1, 1.5e5, &r);
    expect_theory_in_narrow_ci(&r.wait_mean_s, wq, "class b mean wait");
    expect_theory_in_narrow_ci(&r.p_wait, queueing_erlang_c(8, 7.2), "class b P(wait)");
}

/* Buckets add up to the whole run. */
typedef struct bucket_totals {
    int buckets;
    uint64_t arrivals, completed;
    double busy_area;
    double last_end_s;
} bucket_totals;

static void add_bucket(void *context, const station_bucket *b)
{
    bucket_totals *t = context;
    cr_assert_float_eq(b->start_s, t->last_end_s, 1e-9, "buckets must tile the run");
    t->buckets++;
    t->arrivals += b->classes[0].arrivals;
    t->completed += b->classes[0].completed;
    t->busy_area += b->busy_servers_mean * (b->end_s - b->start_s);
    t->last_end_s = b->end_s;
}

Test(station, buckets_tile_the_run_and_sum_to_the_totals)
{
    sim_dist inter = sim_dist_exponential(1 / 3.5), service = sim_dist_exponential(1);
    station_class_config cls = { .name = "tile", .interarrival = inter, .service = service };
    station_config config = { .servers = 4, .classes = &cls, .nclasses = 1, .bucket_s = 60,
                              .seed = 11 };
    char err[128];
    sim_engine *e = sim_engine_create();
    station *st = station_create(e, &config, err, sizeof err);
    bucket_totals totals = { 0 };
    station_on_bucket(st, add_bucket, &totals);
    station_start(st);
    sim_engine_run_until(e, 3630); /* 60 whole buckets and a 30 s partial one */
    station_finish(st, 3630);
    const station_stats *s = station_get_stats(st);
    cr_expect_eq(totals.buckets, 61);
    cr_expect_float_eq(totals.last_end_s, 3630, 1e-9);
    cr_expect_eq(totals.arrivals, s->classes[0].arrivals);
    cr_expect_eq(totals.completed, s->classes[0].completed);
    cr_expect_float_eq(totals.busy_area / 3630, sim_timeavg_mean(&s->busy_servers, 3630), 1e-9);
    station_free(st);
    sim_engine_free(e);
}
