/* CBLAS for the CPU calibration, loaded when it runs.
 *
 * OpenBLAS is opened with dlopen rather than linked: linked, its cblas_* symbols and
 * GSL's own (libgslcblas) would interpose on each other by link order, so either GSL's
 * fits would run on OpenBLAS (whose results vary with the CPU's kernels, and the build
 * keeps numbers bit-identical across CPUs) or the benchmark would time GSL's reference
 * BLAS.  Loaded, OpenBLAS serves this benchmark alone, and every other command starts
 * without its thread pool.  Without it, GSL's reference CBLAS is timed, and named so. */
#ifndef FLEETSIM_KERNELS_CALIB_BLAS_H
#define FLEETSIM_KERNELS_CALIB_BLAS_H

#include <stdbool.h>

typedef struct calib_blas calib_blas;

/* OpenBLAS (libopenblas.so.0) or the fallback; NULL only when out of memory. */
calib_blas *calib_blas_open(void);
void calib_blas_close(calib_blas *b); /* NULL-safe */

/* "OpenBLAS 0.3.21 ... (core Haswell)" or "GSL reference CBLAS (OpenBLAS not found: ...)". */
const char *calib_blas_name(const calib_blas *b);
bool calib_blas_is_tuned(const calib_blas *b);

/* Threads OpenBLAS may use (no effect on the fallback, which has one). */
void calib_blas_set_threads(calib_blas *b, unsigned threads);

/* C (m x n) = A (m x k) B (k x n), row-major, in fp64 or fp32 (float arrays). */
void calib_blas_gemm(const calib_blas *b, bool fp64, int m, int n, int k, const void *a,
                     const void *bm, void *c);

#endif
