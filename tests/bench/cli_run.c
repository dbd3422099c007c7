/* The whole program on M/M/8 at rho 0.9 with 2,000,000 customers, run as
 * `fleetsim run tests/bench/mm8.lua`, against the bare loop of mm8.c timed in the same
 * run: events per second (from the run's own event count and its wall time, loading
 * and writing included) and the child's peak resident memory. */
#define _DEFAULT_SOURCE /* wait4 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"

#ifndef FLEETSIM_BIN
#define FLEETSIM_BIN "build/fleetsim"
#endif

typedef struct child_run {
    double seconds;
    double peak_mib;
    double events;
    int status;
} child_run;

/* Runs fleetsim with output to a scratch folder; reads the event count from summary.csv. */
static child_run run_fleetsim(const char *extra)
{
    child_run r = { 0 };
    char dir[] = "/tmp/fleetsim-bench-XXXXXX";
    if (!mkdtemp(dir)) {
        r.status = -1;
        return r;
    }
    char command[1024];
    snprintf(command, sizeof command, "%s run tests/bench/mm8.lua -q -o %s %s > /dev/null",
             FLEETSIM_BIN, dir, extra);
    double start = bench_now_s();
    pid_t pid = fork();
    if (pid == 0) {
        execl("/bin/sh", "sh", "-c", command, (char *)NULL);
        _exit(127);
    }
    int status;
    struct rusage usage;
    wait4(pid, &status, 0, &usage);
    r.seconds = bench_now_s() - start;
    r.peak_mib = (double)usage.ru_maxrss / 1024;
    r.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    char path[256], line[512];
    snprintf(path, sizeof path, "%s/summary.csv", dir);
    FILE *f = fopen(path, "r");
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, "run,bench_mm8,events,", 21))
            r.events = atof(line + 21);
    if (f)
        fclose(f);
    snprintf(command, sizeof command, "rm -rf %s", dir);
    if (system(command) != 0)
        fprintf(stderr, "could not remove %s\n", dir);
    return r;
}

void bench_cli_table(int quick)
{
    uint64_t customers = quick ? 20000 : 2000000;
    char extra[128] = "";
    if (quick)
        snprintf(extra, sizeof extra, "--set duration=%g", customers / 7.2);
    double bare_rate = bench_mm8_bare_rate(customers);
    child_run best = run_fleetsim(extra);
    for (int i = 1; i < BENCH_REPEATS; i++) {
        child_run r = run_fleetsim(extra);
        if (r.seconds < best.seconds)
            best = r;
    }
    printf("fleetsim run, M/M/8 at rho 0.9, %llu customers (whole program: load, run, write)\n",
           (unsigned long long)customers);
    printf("%-14s %14s %9s %14s\n", "model", "events/s", "vs bare", "peak memory");
    printf("%-14s %14.3e %8.0f%% %14s\n", "bare loop", bare_rate, 100.0, "-");
    if (best.status != 0 || best.events <= 0) {
        printf("WARNING: fleetsim run failed (status %d)\n", best.status);
        return;
    }
    double rate = best.events / best.seconds;
    printf("%-14s %14.3e %8.0f%% %11.1f MiB\n", "fleetsim run", rate, 100 * rate / bare_rate,
           best.peak_mib);
}
