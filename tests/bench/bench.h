/* Shared pieces of the benchmark program: a clock and best-of-n timing. */
#ifndef FLEETSIM_BENCH_BENCH_H
#define FLEETSIM_BENCH_BENCH_H

#include <stdint.h>

#include "lua/catalog.h"
#include "models/serving.h"

/* Seconds on the monotonic clock. */
double bench_now_s(void);

/* Peak resident memory of this process so far, in MiB. */
double bench_peak_rss_mib(void);

/* In a bench_in_child child: its peak resident memory less what it shared with the
 * parent at the fork (its own run's peak); elsewhere bench_peak_rss_mib. */
double bench_own_peak_mib(void);

/* CPU seconds this process has used (user and system). */
double bench_cpu_s(void);

/* work(arg, out) in a child process of its own, out (size bytes) copied back: a
 * measurement whose peak memory is its own, not the largest of the runs before it.
 * 0, or -1 when the child failed. */
int bench_in_child(void (*work)(const void *arg, void *out), const void *arg, void *out,
                   size_t size);

/* How many times each measurement is repeated; the fastest run counts, since on a
 * shared machine noise only ever adds time. */
enum { BENCH_REPEATS = 3 };

void bench_hold_table(int quick);
void bench_mm8_table(int quick);
void bench_cli_table(int quick);
void bench_estimate_table(int quick);
void bench_serving_table(int quick);
/* The serving table's fleet (Llama-3-8B on H100s, least outstanding, lognormal
 * lengths) at 4.34 requests/s a replica. */
serving_config bench_fleet_config(const catalog *cat, unsigned replicas);
/* One simulated minute at 64 to 80,000 replicas: cost per request against 64's. */
void bench_fleet_ladder_table(int quick);
/* One size of that fleet for some simulated seconds, in this process (for a profiler). */
void bench_fleet_rung(unsigned replicas, double seconds);
/* 64 prefill + 64 decode replicas: requests per second of wall time (target 2e5). */
void bench_disaggregated_table(int quick);
void bench_prefix_table(int quick);
void bench_training_table(int quick);
/* A year of 1,000 to 100,000 GPUs at high load: jobs per CPU second, peak memory. */
void bench_training_ladder_table(int quick);
/* One cluster of the ladder at an offered load, in this process (for a profiler). */
void bench_training_cluster(unsigned gpus, double load);
void bench_gpu_tasks_table(int quick);
/* A 16 x 8 sweep through the binary with --jobs 1 and --jobs 2: the speed-up. */
void bench_sweep_table(int quick);
void bench_small_points_table(int quick); /* first: see tests/bench/sweep.c */

/* Events per second of the bare M/M/8 loop for this many customers (best of repeats). */
double bench_mm8_bare_rate(uint64_t customers);

#endif
