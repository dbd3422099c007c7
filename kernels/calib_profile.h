/* From raw calibration samples to a profile: the fits, the figures the performance model
 * takes (models/profile.h), the profile's Lua file and the comparison with the catalog's
 * datasheet numbers.
 *
 * What becomes what:
 *  - GEMM: per precision, the median rate of each shape; the best of them is the
 *    achieved peak (flops); the decode-like series (m = 1..256 tokens against a fixed
 *    n = k weight matrix) gives tokens_half, the tokens at half that peak, by fitting
 *    rate = peak x m / (m + half) with the peak held at the achieved one.  The same form
 *    with a free peak (nonlinear least squares) is reported beside it, for squares too;
 *  - memory: the best median copy or triad rate at the largest size (beyond the caches);
 *  - launch: the median empty-kernel launch (a 1x1x1 BLAS call on a CPU);
 *  - host-device copies and all-reduce: alpha-beta fits; a ring all-reduce of n devices
 *    takes 2 (n - 1) link latencies and moves 2 (n - 1) / n of the message per link.
 * The perf fields are shares of the datasheet entry given (none without one).
 */
#ifndef FLEETSIM_KERNELS_CALIB_PROFILE_H
#define FLEETSIM_KERNELS_CALIB_PROFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "kernels/calib_fit.h"
#include "kernels/calib_ops.h"
#include "kernels/calib_sample.h"
#include "models/device.h"
#include "models/profile.h"

#define CALIB_FITS_MAX 32
#define CALIB_MEDIANS_MAX 512

/* One fit, for the report and the profile's fits table. */
typedef struct calib_fit_report {
    char what[96];       /* "gemm bf16 decode-like (m; n = k = 8192)", "h2d_pinned" */
    bool alpha_beta;     /* else a saturation */
    calib_alpha_beta ab;
    calib_saturation sat;
} calib_fit_report;

/* A series' median: the rate of one configuration. */
typedef struct calib_median_rate {
    char kind[CALIB_KIND_MAX], precision[CALIB_PREC_MAX];
    unsigned threads;
    double m, n, k, size_bytes;
    double median_s, iqr_s;
    double rate;         /* FLOP/s for gemm and fma, B/s otherwise (launch: 1/s) */
    size_t repeats;
} calib_median_rate;

typedef struct calib_result {
    device_profile profile;
    calib_fit_report fits[CALIB_FITS_MAX];
    size_t nfits;
    calib_median_rate medians[CALIB_MEDIANS_MAX];
    size_t nmedians;
    double fma_flops[3];            /* fp32, half2, bfloat162 chains; 0 = not measured */
    double launch_sync_s;           /* launch and wait; 0 = not measured */
    double bandwidth_size_bytes;    /* where the bandwidth was read */
    /* an operator profile (calibrate --model), written as the profile's operators block;
     * NULL: none (borrowed) */
    const calib_ops_result *ops;
    precision ops_precision;
    const char *ops_model;
} calib_result;

/* Fits the samples.  datasheet (NULL: none) sets the perf shares and names the catalog
 * entry.  0, or -1 with a message (no usable sample). */
int calib_result_build(const calib_samples *samples, const calib_meta *meta,
                       const device_spec *datasheet, calib_result *out, char *err,
                       size_t err_size);

/* The profile as a Lua file that returns a table (lua/profile_load.h reads it back).
 * samples_name is the CSV's name, recorded for --refit.  0, or -1 with errno set. */
int calib_result_write_lua(FILE *out, const calib_result *r, const calib_meta *meta,
                           const device_spec *datasheet, const char *samples_name);

/* The human summary: achieved figures against the datasheet, and the fits. */
void calib_result_print(FILE *out, const calib_result *r, const calib_meta *meta,
                        const device_spec *datasheet, const char *datasheet_note);

#endif
