/* Raw calibration samples: one timed repeat of one micro-kernel on one size or shape,
 * kept in memory while a calibration runs and written beside the profile as CSV, so that
 * `fleetsim calibrate --refit` can redo the fit from them alone.
 *
 * The CSV starts with "# key: value" lines (device, kind, host, date, ...), then a header
 * row and one row per sample:
 *
 *     kind,precision,threads,m,n,k,size_bytes,bytes,flops,repeat,seconds
 *
 * kind: "copy", "triad" (memory bandwidth; size_bytes per array, bytes moved per pass),
 * "gemm" (m x k times k x n; flops = 2 m n k), "fma" (dependent FMA chains), "launch" and
 * "launch_sync" (an empty kernel, or a 1x1x1 BLAS call on a CPU), "h2d_pinned",
 * "h2d_pageable", "d2h_pinned", "d2h_pageable" (host-device copies of size_bytes) and
 * "allreduce" (NCCL, threads = devices).  seconds is per operation.
 */
#ifndef FLEETSIM_KERNELS_CALIB_SAMPLE_H
#define FLEETSIM_KERNELS_CALIB_SAMPLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CALIB_KIND_MAX 16
#define CALIB_PREC_MAX 8
#define CALIB_TEXT_MAX 128

typedef struct calib_sample {
    char kind[CALIB_KIND_MAX];
    char precision[CALIB_PREC_MAX]; /* "fp32", "fp64", "fp16", "bf16", "fp8", "int8", "-" */
    unsigned threads;               /* CPU threads, or devices for "allreduce"; else 1 */
    double m, n, k;                 /* GEMM shape; 0 otherwise */
    double size_bytes;              /* working set (per array for copy and triad) */
    double bytes;                   /* bytes moved per operation */
    double flops;                   /* floating-point (or integer) operations per operation */
    unsigned repeat;                /* 0, 1, ... after the warm-up */
    double seconds;                 /* per operation */
} calib_sample;

/* What was measured, for the profile and the comparison with the catalog. */
typedef struct calib_meta {
    char device[CALIB_TEXT_MAX];  /* "NVIDIA H200", "AMD EPYC 9654 96-Core Processor" */
    char kind[8];                 /* "gpu" or "cpu" */
    char host[CALIB_TEXT_MAX];
    char date[32];                /* "2026-05-04T10:00:00Z" */
    char blas[CALIB_TEXT_MAX];    /* the BLAS a CPU ran ("OpenBLAS 0.3.21 (Haswell)") */
    unsigned threads;             /* CPU cores used, or GPUs seen */
    bool quick;
    char model[CALIB_TEXT_MAX];   /* the model whose operators were timed ("" if none) */
    double memory_bytes;          /* the measured machine's: a GPU's as CUDA reports it, a
                                   * CPU's physical memory; 0 if not known */
    double cache_bytes;           /* its last-level cache (a GPU's L2, a CPU's L3); 0 if not
                                   * known */
    double copy_bytes_per_s;      /* a large copy's bandwidth (bytes read and written) as the
                                   * sampling tool measured it; 0 if not measured */
} calib_meta;

/* A growing list of samples.  Zeroed is empty; release with calib_samples_release. */
typedef struct calib_samples {
    calib_sample *items;
    size_t count, capacity;
} calib_samples;

/* Appends a copy of s; 0, or -1 when out of memory. */
int calib_samples_add(calib_samples *list, const calib_sample *s);
void calib_samples_release(calib_samples *list);

/* Writes the metadata lines, the header and the samples; 0, or -1 with errno set. */
int calib_samples_write(FILE *out, const calib_meta *meta, const calib_samples *list);

/* Reads a file written by calib_samples_write (metadata lines are optional; unknown
 * ones are ignored).  0, or -1 with "path:line: ..." in err; *list is empty then. */
int calib_samples_read(const char *path, calib_meta *meta, calib_samples *list, char *err,
                       size_t err_size);

#ifdef __cplusplus
}
#endif

#endif
