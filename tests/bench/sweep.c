/* A sweep of 16 points x 8 replications of the M/M/8 scenario (scenarios/mmc_queue.lua,
 * arrival rates 6.0 to 7.5 per second) through the real binary, with --jobs 1 and
 * --jobs 2: wall times, their ratio (target: at most 0.6 on two cores), and whether
 * both wrote the same bytes.  Then a sweep of many small points (issue 37: memory
 * independent of the points, the file run once): 100 and 1,000 points of one simulated
 * minute, the CPU time a point and the process's peak memory. */
#define _GNU_SOURCE /* wait4 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/time.h>
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

/* The peak is the child's ru_maxrss, which is the larger of its own peak and the bench's
 * resident memory when it forked (exec takes the old image's high-water mark): so
 * main() runs this table first, while the bench is a few MiB, under any sweep's peak.
 *
 * Runs `fleetsim run scenarios/mmc_queue.lua` with a sweep of n arrival rates (6.0 up
 * in steps of 1.5/n), one minute and 2 replications a point, charts and all, into dir;
 * its CPU seconds and peak resident MiB, or -1 if it failed. */
static int small_points(const char *dir, size_t n, double *cpu_s, double *peak_mib)
{
    size_t size = n * 12 + 64;
    char *rates = malloc(size);
    if (!rates)
        return -1;
    size_t used = (size_t)snprintf(rates, size, "workloads.requests.arrivals.rate=");
    for (size_t i = 0; i < n; i++)
        used += (size_t)snprintf(rates + used, size - used, "%s%.4f", i ? "," : "",
                                 6.0 + 1.5 * (double)i / (double)n);
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        int null = open("/dev/null", O_WRONLY);
        if (null >= 0) {
            dup2(null, STDOUT_FILENO);
            dup2(null, STDERR_FILENO);
        }
        execl(FLEETSIM_BIN, FLEETSIM_BIN, "run", "scenarios/mmc_queue.lua", "-q", "-o", dir,
              "--sweep", rates, "--set", "duration=1min", "--set", "warmup=0", "--set",
              "bucket=1min", "--set", "replications=2", (char *)NULL);
        _exit(127);
    }
    free(rates);
    int status;
    struct rusage usage;
    if (pid < 0 || wait4(pid, &status, 0, &usage) != pid || !WIFEXITED(status)
        || WEXITSTATUS(status) != 0)
        return -1;
    *cpu_s = (double)usage.ru_utime.tv_sec + (double)usage.ru_stime.tv_sec
             + 1e-6 * (double)(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec);
    *peak_mib = (double)usage.ru_maxrss / 1024;
    return 0;
}

void bench_small_points_table(int quick)
{
    char dir[] = "/tmp/fleetsim-bench-points-XXXXXX";
    if (!mkdtemp(dir)) {
        printf("WARNING: no scratch folder for the small-points benchmark\n");
        return;
    }
    printf("fleetsim run --sweep of small points: M/M/8, 1 simulated minute and 2 "
           "replications a point, charts included (CPU time of the best of %d)\n",
           quick ? 1 : BENCH_REPEATS);
    printf("%-8s %10s %14s %10s\n", "points", "CPU s", "ms a point", "peak MiB");
    const size_t sizes[] = { 100, 1000 };
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        double best = -1, peak = 0;
        for (int i = 0; i < (quick ? 1 : BENCH_REPEATS); i++) {
            double cpu, mib;
            if (small_points(dir, sizes[k], &cpu, &mib) != 0) {
                best = -1;
                break;
            }
            if (best < 0 || cpu < best)
                best = cpu;
            if (mib > peak)
                peak = mib;
        }
        if (best < 0)
            printf("WARNING: the sweep of %zu points failed\n", sizes[k]);
        else
            printf("%-8zu %10.2f %14.2f %10.1f%s\n", sizes[k], best, 1e3 * best / (double)sizes[k],
                   peak, sizes[k] == 1000 ? "   (target: under 40 MiB)" : "");
    }
    char command[512];
    snprintf(command, sizeof command, "rm -rf %s", dir);
    if (system(command) != 0)
        fprintf(stderr, "could not remove %s\n", dir);
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
