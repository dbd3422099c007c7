/* A sweep of 16 points x 8 replications of the M/M/8 scenario (scenarios/mmc_queue.lua,
 * arrival rates 6.0 to 7.5 per second) through the real binary, with --jobs 1 and
 * --jobs 2: wall times, their ratio (target: at most 0.6 on two cores), and whether
 * both wrote the same bytes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"

#ifndef FLEETSIM_BIN
#define FLEETSIM_BIN "build/fleetsim"
#endif

static const char SWEEP[] =
    "--sweep workloads.requests.arrivals.rate=6.0,6.1,6.2,6.3,6.4,6.5,6.6,6.7,6.8,6.9,7.0,"
    "7.1,7.2,7.3,7.4,7.5 --replications 8 --no-plots";

/* Runs the sweep into dir; its wall time in seconds, or -1 if it failed. */
static double run_sweep(const char *dir, const char *duration, unsigned jobs)
{
    char command[1024];
    snprintf(command, sizeof command, "%s run scenarios/mmc_queue.lua -q -o %s %s "
             "--set duration=%s --jobs %u > /dev/null", FLEETSIM_BIN, dir, SWEEP, duration, jobs);
    double start = bench_now_s();
    int status = system(command);
    double seconds = bench_now_s() - start;
    return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? seconds : -1;
}

static double best_of(const char *dir, const char *duration, unsigned jobs)
{
    double best = -1;
    for (int i = 0; i < BENCH_REPEATS; i++) {
        double s = run_sweep(dir, duration, jobs);
        if (s < 0)
            return -1;
        if (best < 0 || s < best)
            best = s;
    }
    return best;
}

void bench_sweep_table(int quick)
{
    const char *duration = quick ? "2h" : "10h"; /* the scenario warms up for 1h */
    char one[] = "/tmp/fleetsim-bench-sweep1-XXXXXX", two[] = "/tmp/fleetsim-bench-sweep2-XXXXXX";
    if (!mkdtemp(one) || !mkdtemp(two)) {
        printf("WARNING: no scratch folder for the sweep benchmark\n");
        return;
    }
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    double serial = best_of(one, duration, 1), parallel = best_of(two, duration, 2);
    printf("fleetsim run --sweep: 16 points x 8 replications of M/M/8, %s each, %ld cores\n",
           duration, cores);
    printf("%-10s %12s %10s\n", "jobs", "wall", "vs jobs 1");
    if (serial < 0 || parallel < 0) {
        printf("WARNING: the sweep failed (jobs %s)\n", serial < 0 ? "1" : "2");
    } else {
        printf("%-10s %10.2f s %9.0f%%\n", "1", serial, 100.0);
        printf("%-10s %10.2f s %9.0f%%   (target: at most 60%% on 2 cores)\n", "2", parallel,
               100 * parallel / serial);
        char command[512];
        snprintf(command, sizeof command, "diff -r %s %s > /dev/null", one, two);
        if (system(command) != 0)
            printf("WARNING: --jobs 1 and --jobs 2 wrote different files\n");
    }
    char command[512];
    snprintf(command, sizeof command, "rm -rf %s %s", one, two);
    if (system(command) != 0)
        fprintf(stderr, "could not remove %s and %s\n", one, two);
}
