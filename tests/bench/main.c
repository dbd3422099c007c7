/* `make bench`: the engine against bare hand-written loops of the same models, compiled
 * with the same flags, so each line's ratio comes from one run on one machine.
 * --quick runs smaller sizes (a smoke test of the benchmark itself). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

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

/* The child's resident memory when it started, in MiB (0 in the parent): its peak
 * counts the parent's pages it shares from the start. */
static double resident_at_fork_mib;

static double resident_mib(void)
{
    FILE *f = fopen("/proc/self/statm", "r");
    unsigned long long size = 0, resident = 0;
    if (f) {
        if (fscanf(f, "%llu %llu", &size, &resident) != 2)
            resident = 0;
        fclose(f);
    }
    return (double)resident * (double)sysconf(_SC_PAGESIZE) / (1024.0 * 1024.0);
}

double bench_own_peak_mib(void) { return bench_peak_rss_mib() - resident_at_fork_mib; }

int bench_in_child(void (*work)(const void *arg, void *out), const void *arg, void *out,
                   size_t size)
{
    int fd[2];
    if (pipe(fd) != 0)
        return -1;
    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0) {
        close(fd[0]);
        close(fd[1]);
        return -1;
    }
    if (pid == 0) {
        close(fd[0]);
#ifdef __GLIBC__
        /* memory the parent freed but kept would serve the child without raising its
         * peak: given back first, the child's peak is what its own work needs (before,
         * a training year at 100,000 GPUs read 28.9 MiB in the ladder and 52.7 alone) */
        malloc_trim(0);
#endif
        resident_at_fork_mib = resident_mib();
        work(arg, out);
        _exit(write(fd[1], out, size) == (ssize_t)size ? 0 : 1);
    }
    close(fd[1]);
    ssize_t got = read(fd[0], out, size);
    close(fd[0]);
    int status;
    waitpid(pid, &status, 0);
    return got == (ssize_t)size && WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

double bench_cpu_s(void)
{
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    return (double)u.ru_utime.tv_sec + 1e-6 * (double)u.ru_utime.tv_usec
           + (double)u.ru_stime.tv_sec + 1e-6 * (double)u.ru_stime.tv_usec;
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
    if (argc > 1 && !strcmp(argv[1], "--serving")) { /* likewise, for an A/B of builds */
        bench_serving_table(0);
        return 0;
    }
    if (argc > 3 && !strcmp(argv[1], "--cluster")) { /* GPUS LOAD: one, to profile */
        bench_training_cluster((unsigned)atoi(argv[2]), atof(argv[3]));
        return 0;
    }
    if (argc > 3 && !strcmp(argv[1], "--fleet")) { /* REPLICAS SECONDS: one, to profile */
        bench_fleet_rung((unsigned)atoi(argv[2]), atof(argv[3]));
        return 0;
    }
    if (argc > 1 && !strcmp(argv[1], "--sweep")) { /* the sweeps alone, for an A/B */
        bench_small_points_table(0);
        printf("\n");
        bench_sweep_table(0);
        return 0;
    }
    if (argc > 1 && !strcmp(argv[1], "--hold")) { /* the event list alone, for an A/B */
        bench_hold_table(0);
        return 0;
    }
    if (argc > 1 && !strcmp(argv[1], "--ladder")) { /* the scaling tables alone */
        bench_fleet_ladder_table(0);
        printf("\n");
        bench_training_ladder_table(0);
        return 0;
    }
    bench_small_points_table(quick); /* first, while this process is small */
    printf("\n");
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
    bench_training_ladder_table(quick);
    printf("\n");
    bench_sweep_table(quick);
    return 0;
}
