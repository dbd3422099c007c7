/* Fits that turn calibration samples into model parameters (GSL).
 *
 * Sizes span decades (4 KB to 4 GB, one token to thousands), so both fits weigh each
 * point by 1/y^2: they minimise relative errors, and a small transfer counts as much as
 * a large one.  Goodness of fit is reported in the same terms: r2 is the weighted
 * coefficient of determination, rms_rel the root mean square of (fit - y) / y.
 */
#ifndef FLEETSIM_KERNELS_CALIB_FIT_H
#define FLEETSIM_KERNELS_CALIB_FIT_H

#include <stdbool.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* time = alpha + bytes / bandwidth: a transfer's or a collective's latency and rate. */
typedef struct calib_alpha_beta {
    double alpha_s;
    double bytes_per_s;
    double r2, rms_rel;
    size_t points;
} calib_alpha_beta;

/* Least squares of seconds against bytes (n >= 2 points, at least two sizes).  A
 * negative intercept (noise on a link with no visible latency) is refitted through the
 * origin, alpha_s = 0.  0, or -1 when the points give no positive bandwidth. */
int calib_fit_alpha_beta(const double *bytes, const double *seconds, size_t n,
                         calib_alpha_beta *out);

/* rate = peak x size / (size + half): a GEMM's FLOP/s against its token count (the
 * form of perf.c's tokens / (tokens + tokens_half)), or against a square's side. */
typedef struct calib_saturation {
    double peak;       /* the asymptote, in the units of rate */
    double half;       /* the size at half the asymptote (0: flat) */
    double r2, rms_rel;
    size_t points;
    bool nonlinear;    /* refined by nonlinear least squares (else the linearisation) */
} calib_saturation;

/* Starts from the linearisation 1/rate = 1/peak + (half/peak) / size, then refines by
 * nonlinear least squares (gsl_multifit_nlinear, positive parameters).  n >= 2 with at
 * least two sizes.  0, or -1 when the rates do not saturate in a usable way (falling
 * with size, even slightly: noise on a flat curve); out then holds the best rate as
 * peak and half 0. */
int calib_fit_saturation(const double *size, const double *rate, size_t n,
                         calib_saturation *out);

/* The same form with the peak held (at the best rate measured): half alone, by least
 * squares of peak / rate - 1 = half / size through the origin, clamped at 0.  0, or -1
 * without two sizes or with a rate that is not positive. */
int calib_fit_half(const double *size, const double *rate, size_t n, double peak,
                   calib_saturation *out);

/* Standard errors of a least-squares fit's p parameters from its m x p Jacobian of the
 * residuals (row-major; destroyed) and their sum of squares: s^2 (J'J)^-1 with s^2 = rss
 * / (m - p), through J's singular values, so that a direction the rows do not see (a
 * singular value under 1e-10 of the largest) gives every parameter along it an infinite
 * error.  m <= p: every error infinite.  0, or -1 when the decomposition fails. */
int calib_fit_standard_errors(double *jacobian, size_t m, size_t p, double rss, double *se);

/* The median and the interquartile range of n values (sorted in place). */
double calib_median(double *values, size_t n, double *iqr);

#ifdef __cplusplus
}
#endif

#endif
