/* Shared pieces of the benchmark program: a clock and best-of-n timing. */
#ifndef FLEETSIM_BENCH_BENCH_H
#define FLEETSIM_BENCH_BENCH_H

#include <stdint.h>

/* Seconds on the monotonic clock. */
double bench_now_s(void);

/* Peak resident memory of this process so far, in MiB. */
double bench_peak_rss_mib(void);

/* How many times each measurement is repeated; the fastest run counts, since on a
 * shared machine noise only ever adds time. */
enum { BENCH_REPEATS = 3 };

void bench_hold_table(int quick);
void bench_mm8_table(int quick);
void bench_cli_table(int quick);
void bench_estimate_table(int quick);
void bench_serving_table(int quick);
/* 64 prefill + 64 decode replicas: requests per second of wall time (target 2e5). */
void bench_disaggregated_table(int quick);
void bench_prefix_table(int quick);
void bench_training_table(int quick);
void bench_gpu_tasks_table(int quick);
/* A 16 x 8 sweep through the binary with --jobs 1 and --jobs 2: the speed-up. */
void bench_sweep_table(int quick);

/* Events per second of the bare M/M/8 loop for this many customers (best of repeats). */
double bench_mm8_bare_rate(uint64_t customers);

#endif
