/* The micro-kernels of a calibration: each series measured after a warm-up, several
 * repeats, every repeat one sample (calib_sample.h).  The CPU's are always built; the
 * CUDA ones come from calib_cuda.cu with nvcc, from calib_cuda_absent.c otherwise, so
 * callers need no #ifdefs. */
#ifndef FLEETSIM_KERNELS_CALIB_BENCH_H
#define FLEETSIM_KERNELS_CALIB_BENCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "kernels/calib_sample.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct calib_options {
    bool quick;          /* fewer sizes and repeats: under a minute */
    unsigned threads;    /* CPU: the most threads to use (0: every online core) */
    int cuda_device;     /* CUDA: the device index */
    FILE *progress;      /* a line per series, or NULL */
} calib_options;

/* STREAM-like copy and triad over sizes from L1 to DRAM and 1..threads threads, and
 * fp32 and fp64 GEMM through CBLAS (OpenBLAS when it can be loaded, else GSL's
 * reference CBLAS, which meta->blas then names) over skinny shapes and squares.
 * Appends to out and fills meta (device, kind, threads, blas; not host or date).
 * 0, or -1 with a message in err. */
int calib_cpu_run(const calib_options *o, calib_samples *out, calib_meta *meta, char *err,
                  size_t err_size);

/* This machine's physical memory in bytes (sysconf), 0 where it cannot say: what a
 * profile measured on its CPU holds, in place of the catalog CPU's. */
double calib_cpu_memory_bytes(void);

/* This CPU's last-level cache in bytes (sysconf: L3, else L2), 0 where it cannot say. */
double calib_cpu_cache_bytes(void);

/* The CUDA device's copy and triad bandwidth (4 KB..4 GB within free memory), FMA chains
 * (fp32, half2, bfloat162), cuBLAS GEMM (fp16, bf16, int8; fp8 from compute capability
 * 8.9) over decode-like and square shapes, launch latency, pageable and pinned
 * host-device copies, and NCCL all-reduce when there are two devices or more.
 * 0, or -1 with the failing call and its error string in err (also when the build has
 * no CUDA or there is no device). */
int calib_cuda_run(const calib_options *o, calib_samples *out, calib_meta *meta, char *err,
                   size_t err_size);

#ifdef __cplusplus
}
#endif

#endif
