/* Operator profiles: the operators of a decoder layer timed at a model's own shapes, as
 * an engine runs them, and the fits that turn them into a device's operator table (the
 * per-operator performance model's constants, models/perf_constants.h, for this device).
 *
 * Samples (calib_sample.h, one per timed repeat), every `bytes` and `flops` counted as
 * models/perf.c counts them, so a fitted efficiency means what the model's does:
 *   op_gemm         a projection, m tokens x k by k x n weights (QKV, output, gate and
 *                   up, down, LM head), weights cold (rotated beyond the caches)
 *   op_attn_decode  attention of m = sequences x kv heads over n cached tokens each, k =
 *                   query heads per kv head (grouped-query); bytes: the cache read
 *   op_attn_prefill causal attention of one prompt of m tokens, n query heads of k dims;
 *                   flops: 4 x k x n x m^2 / 2 (the model's new pairs)
 *   op_norm, op_rope, op_act, op_add, op_embed, op_reshape, op_sample
 *                   the memory passes over m tokens (op_sample: m rows of the vocabulary)
 * CPU: through the same CBLAS as the device calibration (calib_blas.h) and plain loops,
 * in fp32.  CUDA (calib_ops_cuda.cu): in bf16, projections through cuBLAS, decode attention
 * a split-context kernel, prefill attention unfused (cuBLAS around a causal softmax), the
 * passes plain kernels; bytes at 2 an element (the sampling's logits at 4). */
#ifndef FLEETSIM_KERNELS_CALIB_OPS_H
#define FLEETSIM_KERNELS_CALIB_OPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "kernels/calib_bench.h"
#include "kernels/calib_sample.h"
#include "models/llm.h"
#include "models/perf_constants.h"
#include "models/profile.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Times the operators of model m (its widths; layers do not matter) over the grid:
 * tokens 1..1024 for projections and passes, (batch 1..16) x (context 128..2048) for
 * decode attention, prompts 64..1024 for prefill attention (fewer points with quick).
 * Appends to out.  0, or -1 with a message in err. */
int calib_ops_cpu_run(const calib_options *o, const model_spec *m, calib_samples *out,
                      char *err, size_t err_size);

/* The same grid on CUDA device o->cuda_device (bf16; batches to 64, contexts to 4096,
 * prompts to 2048 without quick).  Fills meta's device, kind and threads when meta->device
 * is empty (an operators-only run).  0, or -1 with the failing call in err (also when the
 * build has no CUDA, or there is no device). */
int calib_ops_cuda_run(const calib_options *o, const model_spec *m, calib_samples *out,
                       calib_meta *meta, char *err, size_t err_size);

/* One operator class's fit, for the report. */
typedef struct calib_ops_fit {
    char what[32];       /* "gemm", "norm", "attention_decode", ... */
    size_t points;
    double rms_rel, worst_rel; /* of (fit - median) / median over the shapes */
    double spread;       /* the median over the shapes of (q3 - q1) / median of the repeats */
} calib_ops_fit;

#define CALIB_OPS_FITS_MAX 12

/* A class whose fitted stream ran faster than the memory's bandwidth as measured:
 * explained where its largest shape fits in the last-level cache, else capped at the
 * memory's (calib_ops_check_ceilings). */
typedef struct calib_ops_ceiling {
    char what[32];          /* "gemm weight stream", "gemm one-token stream", "norm", ... */
    double efficiency;      /* as fitted, a share of the table's reference stream */
    double largest_bytes;   /* the bytes of the class's largest shape */
    bool capped;            /* beyond the cache (or no cache size known): set to the
                             * memory's share */
} calib_ops_ceiling;

typedef struct calib_ops_result {
    perf_family table;   /* peak_flops, bandwidth: the references its shares divide */
    calib_ops_fit fits[CALIB_OPS_FITS_MAX];
    size_t nfits;
    double spread[SPREAD_CLASSES]; /* per class, as device_profile's (0: one repeat) */
    calib_ops_ceiling ceilings[CALIB_OPS_FITS_MAX];
    size_t nceilings;
    double cache_bytes;  /* the last-level cache the ceilings were judged by (0: unknown) */
    double memory_bytes_per_s; /* the memory bandwidth they were judged by (0: unknown,
                                * nothing judged) */
    double score_log_se;  /* decode attention's scores: the standard error of the log of
                           * their accesses (kept where under 1; NAN: not fitted, the
                           * samples had one query group or too few shapes) */
} calib_ops_result;

/* True when samples hold operator series (kinds op_*). */
bool calib_ops_present(const calib_samples *samples);

/* Fits every class the samples hold (medians per shape; relative least squares,
 * gsl_multifit_nlinear): GEMM t = floor + max(C, M) + overlap min(C, M) with C's
 * efficiency rising as tokens / (tokens + tokens_half); passes max(floor, bytes at a
 * share of bandwidth rising with tokens); decode attention floor + sequences x kv heads
 * x per_head + max(compute, cache bytes and scores at a share rising with sequences x kv
 * heads), per_head from 7 shapes, the scores' accesses where the samples also have two
 * query groups and determine them (score_log_se), else 0; the products' efficiency
 * (the table's cached pairs) where some shape is bound by them, else the prefill's,
 * at least what the samples allow; prefill attention floor + flops at
 * a share of the peak.  The references are the best GEMM rate and the best weight-
 * streaming rate (one token) measured.  A class without samples keeps fallback's row
 * (the device's family).  0, or -1 with a message (no GEMM samples). */
int calib_ops_fit_all(const calib_samples *samples, const perf_family *fallback,
                      calib_ops_result *out, char *err, size_t err_size);

/* The physical ceiling of a fitted table: a stream (the GEMM's matrix and one-token
 * streams, each memory pass, decode attention's cache reads) whose share of the table's
 * reference, times that reference, exceeds memory_bytes_per_s (a copy's bandwidth
 * measured on the same machine) moves its bytes faster than memory can.  Where the
 * class's largest shape (its samples' bytes; the GEMM's streams: its products of 16
 * tokens or fewer, which the stream sets) fits in cache_bytes, the cache explains it and
 * the share stays; else (or with cache_bytes 0, unknown) the share is capped at the
 * memory's.  Each such class is listed in r->ceilings.  With memory_bytes_per_s 0 (not
 * measured) nothing is judged.  (The reference itself, the fastest one-token product, is
 * a kernel's rate and may sit well under the memory's: a share above 1 alone is no
 * fault.) */
void calib_ops_check_ceilings(calib_ops_result *r, const calib_samples *samples,
                              double cache_bytes, double memory_bytes_per_s);

/* Relative nonlinear least squares of a model with n parameters, started at theta
 * (updated): minimises sum over points of (f(theta, i) / y_i - 1)^2.  Returns the rms of
 * the relative residuals, or -1 when the solver fails.  Shared by the steps fit. */
typedef double (*calib_model_fn)(const double *theta, size_t i, void *data);
double calib_fit_relative(calib_model_fn f, void *data, const double *y, size_t points,
                          double *theta, size_t n);

/* The profile's `operators = { ... }` block (lua/profile_load.c reads it back): the
 * table t fitted at precision prec on model, the measurements' spread per class (NULL or
 * zeros: none recorded), the operator fits behind it with their ceilings (fits NULL: none)
 * and the steps fit that adjusted it (steps NULL: none). */
struct calib_steps_fit;
int calib_ops_write_lua(FILE *out, const perf_family *t, precision prec, const char *model,
                        const double spread[SPREAD_CLASSES], const calib_ops_result *fits,
                        const struct calib_steps_fit *steps, const char *steps_file);

#ifdef __cplusplus
}
#endif

#endif
