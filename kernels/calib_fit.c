/* Alpha-beta and saturation fits (see calib_fit.h). */
#include "kernels/calib_fit.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_errno.h>
#include <gsl/gsl_fit.h>
#include <gsl/gsl_linalg.h>
#include <gsl/gsl_multifit_nlinear.h>

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Linear interpolation between order statistics (type 7, as R and numpy do). */
static double quantile(const double *sorted, size_t n, double q)
{
    double at = q * (double)(n - 1);
    size_t i = (size_t)floor(at);
    return i + 1 < n ? sorted[i] + (at - (double)i) * (sorted[i + 1] - sorted[i]) : sorted[n - 1];
}

int calib_fit_standard_errors(double *jacobian, size_t m, size_t p, double rss, double *se)
{
    if (p == 0)
        return 0;
    if (m <= p) {
        for (size_t j = 0; j < p; j++)
            se[j] = INFINITY;
        return 0;
    }
    gsl_matrix_view J = gsl_matrix_view_array(jacobian, m, p);
    gsl_matrix *V = gsl_matrix_alloc(p, p);
    gsl_vector *S = gsl_vector_alloc(p), *work = gsl_vector_alloc(p);
    int status = -1;
    if (!V || !S || !work || gsl_linalg_SV_decomp(&J.matrix, V, S, work) != 0)
        goto done;
    double s2 = rss / (double)(m - p), smax = gsl_vector_get(S, 0);
    for (size_t j = 0; j < p; j++) {
        double var = 0;
        bool blind = false;
        for (size_t c = 0; c < p; c++) {
            double v = gsl_matrix_get(V, j, c), sv = gsl_vector_get(S, c);
            if (sv <= 1e-10 * smax) {
                blind |= fabs(v) > 1e-6;
                continue;
            }
            var += v * v / (sv * sv);
        }
        se[j] = blind ? INFINITY : sqrt(s2 * var);
    }
    status = 0;
done:
    gsl_matrix_free(V);
    gsl_vector_free(S);
    gsl_vector_free(work);
    return status;
}

double calib_median(double *values, size_t n, double *iqr)
{
    if (n == 0) {
        if (iqr)
            *iqr = NAN;
        return NAN;
    }
    qsort(values, n, sizeof *values, by_value);
    if (iqr)
        *iqr = quantile(values, n, 0.75) - quantile(values, n, 0.25);
    return quantile(values, n, 0.5);
}

static bool two_distinct(const double *x, size_t n)
{
    for (size_t i = 1; i < n; i++)
        if (x[i] != x[0])
            return true;
    return false;
}

/* Weighted (1/y^2) r2 and relative rms of a fitted curve. */
static void goodness(const double *y, const double *fit, size_t n, double *r2, double *rms_rel)
{
    double sw = 0, swy = 0;
    for (size_t i = 0; i < n; i++) {
        double w = 1 / (y[i] * y[i]);
        sw += w;
        swy += w * y[i];
    }
    double mean = swy / sw, ss_res = 0, ss_tot = 0;
    for (size_t i = 0; i < n; i++) {
        double w = 1 / (y[i] * y[i]);
        ss_res += w * (fit[i] - y[i]) * (fit[i] - y[i]);
        ss_tot += w * (y[i] - mean) * (y[i] - mean);
    }
    *r2 = ss_tot > 0 ? 1 - ss_res / ss_tot : (ss_res == 0 ? 1 : 0);
    *rms_rel = sqrt(ss_res / (double)n);
}

int calib_fit_alpha_beta(const double *bytes, const double *seconds, size_t n,
                         calib_alpha_beta *out)
{
    memset(out, 0, sizeof *out);
    out->points = n;
    if (n < 2 || !two_distinct(bytes, n))
        return -1;
    double *w = malloc(n * sizeof *w), *fit = malloc(n * sizeof *fit);
    int status = -1;
    if (!w || !fit)
        goto done;
    for (size_t i = 0; i < n; i++) {
        if (!(seconds[i] > 0))
            goto done;
        w[i] = 1 / (seconds[i] * seconds[i]);
    }
    double c0, c1, cov00, cov01, cov11, chisq;
    if (gsl_fit_wlinear(bytes, 1, w, 1, seconds, 1, n, &c0, &c1, &cov00, &cov01, &cov11,
                        &chisq) != GSL_SUCCESS)
        goto done;
    if (c0 < 0) {
        c0 = 0;
        if (gsl_fit_wmul(bytes, 1, w, 1, seconds, 1, n, &c1, &cov11, &chisq) != GSL_SUCCESS)
            goto done;
    }
    if (!(c1 > 0))
        goto done;
    out->alpha_s = c0;
    out->bytes_per_s = 1 / c1;
    for (size_t i = 0; i < n; i++)
        fit[i] = c0 + c1 * bytes[i];
    goodness(seconds, fit, n, &out->r2, &out->rms_rel);
    status = 0;
done:
    free(w);
    free(fit);
    return status;
}

/* ---- saturation: rate = peak x / (x + half), in logs so both stay positive ---- */

typedef struct saturation_data {
    const double *x, *y;
    size_t n;
} saturation_data;

static int saturation_f(const gsl_vector *theta, void *params, gsl_vector *f)
{
    const saturation_data *d = params;
    double peak = exp(gsl_vector_get(theta, 0)), half = exp(gsl_vector_get(theta, 1));
    for (size_t i = 0; i < d->n; i++)
        gsl_vector_set(f, i, (peak * d->x[i] / (d->x[i] + half) - d->y[i]) / d->y[i]);
    return GSL_SUCCESS;
}

static int saturation_df(const gsl_vector *theta, void *params, gsl_matrix *J)
{
    const saturation_data *d = params;
    double peak = exp(gsl_vector_get(theta, 0)), half = exp(gsl_vector_get(theta, 1));
    for (size_t i = 0; i < d->n; i++) {
        double x = d->x[i], s = x + half;
        gsl_matrix_set(J, i, 0, peak * x / s / d->y[i]);
        gsl_matrix_set(J, i, 1, -peak * x * half / (s * s) / d->y[i]);
    }
    return GSL_SUCCESS;
}

/* Refines (peak, half) in place; 0 when the solver converged to finite values. */
static int saturation_refine(const saturation_data *d, double *peak, double *half)
{
    gsl_multifit_nlinear_parameters params = gsl_multifit_nlinear_default_parameters();
    gsl_multifit_nlinear_workspace *w =
        gsl_multifit_nlinear_alloc(gsl_multifit_nlinear_trust, &params, d->n, 2);
    if (!w)
        return -1;
    gsl_multifit_nlinear_fdf fdf = { .f = saturation_f, .df = saturation_df, .fvv = NULL,
                                     .n = d->n, .p = 2, .params = (void *)d };
    double start[2] = { log(*peak), log(*half) };
    gsl_vector_view theta = gsl_vector_view_array(start, 2);
    int info, status = gsl_multifit_nlinear_init(&theta.vector, &fdf, w);
    if (status == GSL_SUCCESS)
        status = gsl_multifit_nlinear_driver(200, 1e-10, 1e-10, 0, NULL, NULL, &info, w);
    if (status == GSL_SUCCESS) {
        const gsl_vector *best = gsl_multifit_nlinear_position(w);
        double p = exp(gsl_vector_get(best, 0)), h = exp(gsl_vector_get(best, 1));
        if (isfinite(p) && isfinite(h) && p > 0) {
            *peak = p;
            *half = h;
        } else {
            status = GSL_FAILURE;
        }
    }
    gsl_multifit_nlinear_free(w);
    return status == GSL_SUCCESS ? 0 : -1;
}

int calib_fit_saturation(const double *size, const double *rate, size_t n,
                         calib_saturation *out)
{
    memset(out, 0, sizeof *out);
    out->points = n;
    double best = 0;
    for (size_t i = 0; i < n; i++)
        best = fmax(best, rate[i]);
    out->peak = best;
    if (n < 2 || !two_distinct(size, n))
        return -1;
    double *ix = malloc(n * sizeof *ix), *iy = malloc(n * sizeof *iy), *w = malloc(n * sizeof *w);
    int status = -1;
    if (!ix || !iy || !w)
        goto done;
    for (size_t i = 0; i < n; i++) {
        if (!(size[i] > 0 && rate[i] > 0))
            goto done;
        ix[i] = 1 / size[i];
        iy[i] = 1 / rate[i];
        w[i] = rate[i] * rate[i]; /* relative errors of rate are those of 1/rate */
    }
    double c0, c1, cov00, cov01, cov11, chisq;
    if (gsl_fit_wlinear(ix, 1, w, 1, iy, 1, n, &c0, &c1, &cov00, &cov01, &cov11, &chisq)
        != GSL_SUCCESS || !(c0 > 0) || c1 < 0)
        goto done; /* no asymptote: the rate still grows linearly, or it falls */
    double peak = 1 / c0;
    /* a flat curve gives half 0; start the refinement from a small positive half */
    double min_size = size[0];
    for (size_t i = 1; i < n; i++)
        min_size = fmin(min_size, size[i]);
    double half = c1 > 0 ? c1 * peak : 1e-3 * min_size;
    saturation_data data = { size, rate, n };
    out->nonlinear = saturation_refine(&data, &peak, &half) == 0;
    out->peak = peak;
    out->half = half < 1e-6 * min_size ? 0 : half;
    for (size_t i = 0; i < n; i++)
        iy[i] = peak * size[i] / (size[i] + out->half);
    goodness(rate, iy, n, &out->r2, &out->rms_rel);
    status = 0;
done:
    free(ix);
    free(iy);
    free(w);
    return status;
}

int calib_fit_half(const double *size, const double *rate, size_t n, double peak,
                   calib_saturation *out)
{
    memset(out, 0, sizeof *out);
    out->points = n;
    out->peak = peak;
    if (n < 2 || !two_distinct(size, n) || !(peak > 0))
        return -1;
    double *u = malloc(n * sizeof *u), *v = malloc(n * sizeof *v);
    int status = -1;
    if (!u || !v)
        goto done;
    for (size_t i = 0; i < n; i++) {
        if (!(size[i] > 0 && rate[i] > 0))
            goto done;
        u[i] = 1 / size[i];
        v[i] = peak / rate[i] - 1;
    }
    double c1, cov11, sumsq;
    if (gsl_fit_mul(u, 1, v, 1, n, &c1, &cov11, &sumsq) != GSL_SUCCESS)
        goto done;
    out->half = fmax(c1, 0);
    for (size_t i = 0; i < n; i++)
        v[i] = peak * size[i] / (size[i] + out->half);
    goodness(rate, v, n, &out->r2, &out->rms_rel);
    status = 0;
done:
    free(u);
    free(v);
    return status;
}
