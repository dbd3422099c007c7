/* Fleet scale: one simulated minute of the serving table's fleet (Llama-3-8B on H100s,
 * 4.34 requests/s a replica, least-outstanding routing) at 64, 800, 8,000 and 80,000
 * replicas.  Each size has the same per-replica load, so a simulated request should cost
 * the same at any size: the table gives the cost per request against 64 replicas', the
 * engine's events per second against the bare M/M/8 loop measured in this run (which
 * takes the machine's speed out of the ratio), and each size's peak memory, measured in
 * a child process of its own so that one size's peak does not hide the next one's. */
#include <stdio.h>
#include <stdlib.h>

#include "bench.h"
#include "lua/catalog.h"
#include "models/serving.h"

typedef struct rung {
    double seconds;       /* CPU time of the fastest repeat */
    double requests, events, model_mb, peak_mib;
} rung;

/* The fleet of `replicas` on a new engine (*e), run for `seconds` simulated; the CPU
 * seconds that took in *cpu_s. */
static serving *fleet_run(const catalog *cat, unsigned replicas, double seconds,
                          sim_engine **e, double *cpu_s)
{
    serving_config c = bench_fleet_config(cat, replicas);
    char err[512];
    *e = sim_engine_create();
    serving *s = serving_create(*e, &c, err, sizeof err);
    if (!s) {
        fprintf(stderr, "bench: %s\n", err);
        exit(1);
    }
    double start = bench_cpu_s();
    serving_start(s);
    sim_engine_run_until(*e, seconds);
    *cpu_s = bench_cpu_s() - start;
    return s;
}

/* In the child: the fastest of `repeats` runs, then the child's peak memory. */
static rung measure(const catalog *cat, unsigned replicas, int repeats)
{
    rung best = { .seconds = 1e300 };
    for (int i = 0; i < repeats; i++) {
        sim_engine *e;
        double t;
        serving *s = fleet_run(cat, replicas, 60, &e, &t);
        if (t < best.seconds) {
            best.seconds = t;
            best.requests = (double)serving_get_stats(s)->arrived;
            best.events = (double)sim_engine_events_run(e);
            best.model_mb = (serving_memory_bytes(s) + sim_engine_memory_bytes(e)) / 1e6;
        }
        serving_free(s);
        sim_engine_free(e);
    }
    best.peak_mib = bench_own_peak_mib();
    return best;
}

typedef struct rung_arg {
    const catalog *cat;
    unsigned replicas;
    int repeats;
} rung_arg;

static void measure_in_child(const void *arg, void *out)
{
    const rung_arg *a = arg;
    *(rung *)out = measure(a->cat, a->replicas, a->repeats);
}

void bench_fleet_rung(unsigned replicas, double seconds)
{
    catalog cat;
    char err[512];
    if (catalog_load(&cat, err, sizeof err) != 0) {
        printf("WARNING: %s\n", err);
        return;
    }
    sim_engine *e;
    double t;
    serving *s = fleet_run(&cat, replicas, seconds, &e, &t);
    double requests = (double)serving_get_stats(s)->arrived;
    printf("%u replicas, %g simulated s: %.0f requests, %.3f us a request, %.2f events a "
           "request\n", replicas, seconds, requests, 1e6 * t / requests,
           (double)sim_engine_events_run(e) / requests);
    serving_free(s);
    sim_engine_free(e);
    catalog_release(&cat);
}

void bench_fleet_ladder_table(int quick)
{
    catalog cat;
    char err[512];
    if (catalog_load(&cat, err, sizeof err) != 0) {
        printf("WARNING: %s\n", err);
        return;
    }
    static const unsigned SIZES[] = { 64, 800, 8000, 80000 };
    unsigned sizes = quick ? 2 : 4;
    double bare = bench_mm8_bare_rate(quick ? 200000 : 2000000);
    printf("fleet scale: one simulated minute at 4.34 requests/s a replica, least outstanding "
           "(bare M/M/8 loop: %.3g events/s)\n", bare);
    printf("  %8s %11s %12s %10s %9s %10s %9s %9s\n", "replicas", "requests", "requests/s",
           "us/request", "vs 64", "events/s", "vs bare", "peak MiB");
    double per64 = 0;
    for (unsigned k = 0; k < sizes; k++) {
        rung r;
        /* the small sizes take milliseconds: more repeats; 8,000 replicas seconds, as
         * many as the other tables (the best of one run against the best of nine read
         * the machine's noise as a cost of size); 80,000 most of a minute: two, which
         * narrows that bias (one run of a minute moved by up to 25% from run to run on
         * the development machine, the best of nine at 64 replicas by a few percent) */
        int repeats = SIZES[k] >= 80000 ? 2 : SIZES[k] >= 8000 ? BENCH_REPEATS : 3 * BENCH_REPEATS;
        rung_arg arg = { &cat, SIZES[k], repeats };
        if (bench_in_child(measure_in_child, &arg, &r, sizeof r) != 0) {
            printf("WARNING: the run of %u replicas failed\n", SIZES[k]);
            break;
        }
        double per = r.seconds / r.requests;
        if (k == 0)
            per64 = per;
        printf("  %8u %11.0f %12.3g %10.2f %8.2fx %10.3g %8.2fx %9.1f\n", SIZES[k], r.requests,
               r.requests / r.seconds, 1e6 * per, per / per64, r.events / r.seconds,
               r.events / r.seconds / bare, r.peak_mib);
    }
    catalog_release(&cat);
}
