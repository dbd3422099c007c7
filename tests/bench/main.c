/* `make bench`: the engine against bare hand-written loops of the same models, compiled
 * with the same flags, so each line's ratio comes from one run on one machine.
 * --quick runs smaller sizes (a smoke test of the benchmark itself). */
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "bench.h"
#include "sim/version.h"

double bench_now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

double bench_peak_rss_mib(void)
{
    struct rusage usage;
    getrusage(RUSAGE_SELF, &usage);
    return (double)usage.ru_maxrss / 1024; /* Linux reports KiB */
}

int main(int argc, char **argv)
{
    int quick = argc > 1 && !strcmp(argv[1], "--quick");
    setvbuf(stdout, NULL, _IOLBF, 0); /* rows appear as they are measured */
    printf("fleetsim %s benchmarks (best of %d runs each)\n\n", FLEETSIM_VERSION, BENCH_REPEATS);
    if (argc > 1 && !strcmp(argv[1], "--prefix")) { /* one table, to measure it alone */
        bench_prefix_table(0);
        return 0;
    }
    if (argc > 1 && !strcmp(argv[1], "--ladder")) {
        bench_fleet_ladder_table(0);
        return 0;
    }
    bench_mm8_table(quick);
    printf("\n");
    bench_cli_table(quick);
    printf("\n");
    bench_estimate_table(quick);
    printf("\n");
    bench_serving_table(quick);
    printf("\n");
    bench_fleet_ladder_table(quick);
    printf("\n");
    bench_disaggregated_table(quick);
    printf("\n");
    bench_prefix_table(quick);
    printf("\n");
    bench_gpu_tasks_table(quick);
    printf("\n");
    bench_hold_table(quick);
    printf("\n");
    bench_training_table(quick);
    printf("\n");
    bench_sweep_table(quick);
    return 0;
}
