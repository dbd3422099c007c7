/* From operator samples to a device's operator table (see calib_ops.h). */
#include "kernels/calib_ops.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_errno.h>
#include <gsl/gsl_multifit_nlinear.h>
#include <gsl/gsl_vector.h>

#include "kernels/calib_fit.h"

/* ---- relative nonlinear least squares ------------------------------------------------ */

typedef struct relative_data {
    calib_model_fn f;
    void *data;
    const double *y;
} relative_data;

static int relative_f(const gsl_vector *theta, void *params, gsl_vector *out)
{
    const relative_data *d = params;
    for (size_t i = 0; i < out->size; i++) {
        double r = d->f(theta->data, i, d->data) / d->y[i] - 1;
        gsl_vector_set(out, i, isfinite(r) ? r : 1e6);
    }
    return GSL_SUCCESS;
}

double calib_fit_relative(calib_model_fn f, void *data, const double *y, size_t points,
                          double *theta, size_t n)
{
    if (points < n || n == 0)
        return -1;
    relative_data d = { f, data, y };
    gsl_multifit_nlinear_fdf fdf = { .f = relative_f, .df = NULL, .fvv = NULL, .n = points,
                                     .p = n, .params = &d };
    gsl_multifit_nlinear_parameters params = gsl_multifit_nlinear_default_parameters();
    gsl_multifit_nlinear_workspace *w =
        gsl_multifit_nlinear_alloc(gsl_multifit_nlinear_trust, &params, points, n);
    if (!w)
        return -1;
    gsl_vector_view start = gsl_vector_view_array(theta, n);
    int info = 0;
    double rms = -1;
    if (gsl_multifit_nlinear_init(&start.vector, &fdf, w) == GSL_SUCCESS) {
        int status = gsl_multifit_nlinear_driver(200, 1e-10, 1e-10, 1e-10, NULL, NULL, &info, w);
        if (status == GSL_SUCCESS || status == GSL_EMAXITER) {
            gsl_vector *x = gsl_multifit_nlinear_position(w), *r = gsl_multifit_nlinear_residual(w);
            double ss = 0;
            for (size_t i = 0; i < points; i++)
                ss += gsl_vector_get(r, i) * gsl_vector_get(r, i);
            rms = sqrt(ss / points);
            for (size_t i = 0; i < n; i++)
                theta[i] = gsl_vector_get(x, i);
        }
    }
    gsl_multifit_nlinear_free(w);
    return rms;
}

/* ---- medians per shape --------------------------------------------------------------- */

typedef struct op_point {
    double m, n, k, bytes, flops, seconds;
    double spread;          /* (q3 - q1) / median of the shape's repeats */
} op_point;

typedef struct op_series {
    op_point *p;
    size_t count;
    double peak, bandwidth; /* the references */
    bool per_head_fitted;   /* decode attention: its time per sequence x kv head ... */
    bool score_fitted;      /* ... and its accesses to each score, parameters */
    double element_bytes;   /* a score's, at the samples' precision */
} op_series;

/* The medians of kind's shapes (repeats of one shape are consecutive). */
static size_t medians_of(const calib_samples *s, const char *kind, op_point *out)
{
    size_t n = 0;
    double rep[64];
    for (size_t i = 0; i < s->count;) {
        const calib_sample *a = &s->items[i];
        size_t j = i, r = 0;
        while (j < s->count && !strcmp(s->items[j].kind, a->kind) && s->items[j].m == a->m
               && s->items[j].n == a->n && s->items[j].k == a->k) {
            if (r < 64)
                rep[r++] = s->items[j].seconds;
            j++;
        }
        if (!strcmp(a->kind, kind)) {
            double iqr, median = calib_median(rep, r, &iqr);
            out[n++] = (op_point){ a->m, a->n, a->k, a->bytes, a->flops, median,
                                   r > 1 && median > 0 ? iqr / median : 0 };
        }
        i = j;
    }
    return n;
}

static double sat(double x, double half) { return half > 0 ? x / (x + half) : 1; }

/* The fit's errors and the measurements' spread (the median over the shapes), for the
 * report; the spread. */
static double report(calib_ops_result *r, const char *what, calib_model_fn f, void *data,
                     const op_point *p, size_t n, const double *theta)
{
    double ss = 0, worst = 0, spreads[n + 1];
    for (size_t i = 0; i < n; i++) {
        double e = f(theta, i, data) / p[i].seconds - 1;
        ss += e * e;
        worst = fmax(worst, fabs(e));
        spreads[i] = p[i].spread;
    }
    double spread = calib_median(spreads, n, NULL);
    if (r->nfits < CALIB_OPS_FITS_MAX) {
        calib_ops_fit *fit = &r->fits[r->nfits++];
        snprintf(fit->what, sizeof fit->what, "%s", what);
        fit->points = n;
        fit->rms_rel = sqrt(ss / n);
        fit->worst_rel = worst;
        fit->spread = spread;
    }
    return spread;
}

/* Fits from several starts (the max() forms have kinks); the best kept. */
static void fit_best(calib_model_fn f, void *data, const op_point *p, size_t n, double *theta,
                     size_t np, const double *starts, size_t nstarts)
{
    double *y = malloc(n * sizeof *y), best = INFINITY, trial[8], kept[8];
    if (!y)
        return;
    for (size_t i = 0; i < n; i++)
        y[i] = p[i].seconds;
    memcpy(kept, theta, np * sizeof *theta);
    for (size_t s = 0; s < nstarts; s++) {
        memcpy(trial, starts + s * np, np * sizeof *trial);
        double rms = calib_fit_relative(f, data, y, n, trial, np);
        if (rms >= 0 && rms < best) {
            best = rms;
            memcpy(kept, trial, np * sizeof *trial);
        }
    }
    memcpy(theta, kept, np * sizeof *theta);
    free(y);
}

/* Standard errors of theta's n parameters (logs: an error of 1 is a factor of e either
 * way) from the relative residuals' Jacobian at theta (central differences). */
static void log_errors(calib_model_fn f, void *data, const op_point *p, size_t count,
                       const double *theta, size_t n, double *se)
{
    double *J = malloc((count * n + 1) * sizeof *J), rss = 0, t[8];
    for (size_t j = 0; j < n; j++)
        se[j] = NAN;
    if (!J)
        return;
    for (size_t i = 0; i < count; i++) {
        double r = f(theta, i, data) / p[i].seconds - 1;
        rss += r * r;
    }
    const double h = 1e-4;
    for (size_t j = 0; j < n; j++) {
        memcpy(t, theta, n * sizeof *t);
        for (size_t i = 0; i < count; i++) {
            t[j] = theta[j] + h;
            double up = f(t, i, data);
            t[j] = theta[j] - h;
            J[i * n + j] = (up - f(t, i, data)) / (2 * h * p[i].seconds);
        }
    }
    calib_fit_standard_errors(J, count, n, rss, se);
    free(J);
}

/* ---- the classes ------------------------------------------------------------------------ */

/* theta: log efficiency, log tokens_half, log bandwidth efficiency, overlap (logistic),
 * log floor, and with a sixth (gemm_vector_model) the log bandwidth efficiency of one
 * token's products (the matrix-vector kernel). */
static double gemm_time(const double *t, const op_point *p, const op_series *s,
                        double stream_log)
{
    double c = p->flops / (s->peak * exp(t[0]) * sat(p->m, exp(t[1])));
    double m = p->bytes / (s->bandwidth * exp(stream_log));
    double ov = 1 / (1 + exp(-t[3]));
    return exp(t[4]) + fmax(c, m) + ov * fmin(c, m);
}

static double gemm_model(const double *t, size_t i, void *data)
{
    const op_series *s = data;
    return gemm_time(t, &s->p[i], s, t[2]);
}

/* With the vector kernel apart, the products of a few tokens may be bound by compute
 * (the efficiency curve) as much as by their stream, which the samples then do not
 * identify: the matrix stream is kept within 1/8..8 of the vector's, smoothly (tanh), so
 * that an unidentified one stays finite (a CPU's sgemm at 4 tokens: either side). */
#define MATRIX_STREAM_SPAN 8.0

static double matrix_stream_log(const double *t)
{
    double b = log(MATRIX_STREAM_SPAN);
    return t[5] + b * tanh(t[2] / b);
}

static double gemm_vector_model(const double *t, size_t i, void *data)
{
    const op_series *s = data;
    return gemm_time(t, &s->p[i], s, s->p[i].m <= 1 ? t[5] : matrix_stream_log(t));
}

/* theta: log efficiency, log tokens_half, log floor. */
static double pass_model(const double *t, size_t i, void *data)
{
    const op_series *s = data;
    const op_point *p = &s->p[i];
    return fmax(exp(t[2]), p->bytes / (s->bandwidth * exp(t[0]) * sat(p->m, exp(t[1]))));
}

/* theta: log bandwidth efficiency, log width_half, log floor, log compute efficiency;
 * where the samples have enough shapes, log time per sequence x kv head (m); and where
 * they also have two query groups or more, log accesses to each score (m x k x n scores
 * of s->element_bytes) */
static double decode_stream(const double *t, const op_point *p, const op_series *s)
{
    double scores = s->score_fitted ? exp(t[5]) * s->element_bytes * p->m * p->k * p->n : 0;
    return (p->bytes + scores) / (s->bandwidth * exp(t[0]) * sat(p->m, exp(t[1])));
}

static double decode_model(const double *t, size_t i, void *data)
{
    const op_series *s = data;
    const op_point *p = &s->p[i];
    double dispatch = s->per_head_fitted ? p->m * exp(t[4]) : 0;
    double products = p->flops / (s->peak * exp(t[3]));
    return exp(t[2]) + dispatch + fmax(decode_stream(t, p, s), products);
}

/* The decode fit's three starts for its first n parameters (of six). */
static void decode_starts(size_t n, double out[18])
{
    const double all[] = { log(0.5), log(4), log(1e-5), log(0.3), log(1e-6), log(2),
                           log(0.2), log(1), log(1e-6), log(0.1), log(1e-7), log(8),
                           log(1), log(0.1), log(3e-5), log(1), log(1e-9), log(0.25) };
    for (size_t k = 0; k < 3; k++)
        memcpy(out + n * k, all + 6 * k, n * sizeof *out);
}

/* theta: log efficiency, log floor. */
static double prefill_model(const double *t, size_t i, void *data)
{
    const op_series *s = data;
    return exp(t[1]) + s->p[i].flops / (s->peak * exp(t[0]));
}

bool calib_ops_present(const calib_samples *samples)
{
    for (size_t i = 0; i < samples->count; i++)
        if (!strncmp(samples->items[i].kind, "op_", 3))
            return true;
    return false;
}

/* Decode attention's fit (s->count medians in p) into out->table: the whole form where
 * the shapes allow (7 for five parameters, 8 with the scores), the scores only where the
 * samples have two query groups and pin them, the form without the dispatch from 4
 * shapes; fewer keep the fallback's row (-1).  Where no shape was bound by its products,
 * the least efficiency of them that keeps every shape on its stream; else 0. */
static double fit_decode(calib_ops_result *out, const calib_samples *samples, op_series *s,
                         const op_point *p)
{
    /* the scores are told apart from the cache only across query groups (within one,
     * they are k x accesses x element / (2 x head size x cache element) of its bytes) */
    bool groups = false;
    for (size_t i = 1; i < s->count; i++)
        groups |= p[i].k != p[0].k;
    s->per_head_fitted = s->count >= 7;
    s->score_fitted = groups && s->count >= 8;
    size_t nd = s->score_fitted ? 6 : s->per_head_fitted ? 5 : 4;
    if (s->count < 4)
        return -1;
    for (size_t i = 0; i < samples->count; i++) /* a score is an element of the step's */
        if (!strcmp(samples->items[i].kind, "op_attn_decode")) {
            precision prec;
            if (precision_parse(samples->items[i].precision, &prec) == 0)
                s->element_bytes = precision_bytes(prec);
            break;
        }
    double th[6] = { 0 }, starts[18];
    decode_starts(nd, starts);
    fit_best(decode_model, s, p, s->count, th, nd, starts, 3);
    if (s->score_fitted) {
        /* the scores kept only where the samples determine them: their log's error under
         * 1 (a factor of e either way), else left out as with one group */
        double se[6];
        log_errors(decode_model, s, p, s->count, th, nd, se);
        out->score_log_se = se[5];
        if (!(se[5] < 1)) {
            s->score_fitted = false;
            nd = 5;
            decode_starts(nd, starts);
            fit_best(decode_model, s, p, s->count, th, nd, starts, 3);
        }
    }
    out->spread[SPREAD_ATTN_DECODE] = report(out, "attention_decode", decode_model, s, p,
                                             s->count, th);
    perf_family *t = &out->table;
    t->attn_decode = (perf_attn_decode_constants){
        .efficiency = exp(th[0]), .width_half = exp(th[1]), .floor_s = exp(th[2]),
        .per_head_s = s->per_head_fitted ? exp(th[4]) : 0,
        .score_accesses = s->score_fitted ? exp(th[5]) : 0 };
    t->attn_prefill.cached_efficiency = exp(th[3]);
    double least = 0;
    for (size_t i = 0; i < s->count; i++) {
        double stream = decode_stream(th, &p[i], s);
        if (p[i].flops / (s->peak * exp(th[3])) > stream)
            return 0; /* bound by the products: their efficiency is a finding */
        least = fmax(least, p[i].flops / (s->peak * stream));
    }
    return least;
}

int calib_ops_fit_all(const calib_samples *samples, const perf_family *fallback,
                      calib_ops_result *out, char *err, size_t err_size)
{
    gsl_set_error_handler_off();
    memset(out, 0, sizeof *out);
    out->score_log_se = NAN;
    out->table = *fallback;
    out->table.name = "calibrated";
    out->table.profiled = "this device's operators (fleetsim calibrate --model)";
    op_point *p = malloc((samples->count + 1) * sizeof *p);
    if (!p) {
        snprintf(err, err_size, "out of memory");
        return -1;
    }
    op_series s = { p, medians_of(samples, "op_gemm", p), 0, 0, false, false, 4 };
    if (s.count < 5) {
        snprintf(err, err_size, "no operator GEMM series in the samples (%zu shapes)", s.count);
        free(p);
        return -1;
    }
    for (size_t i = 0; i < s.count; i++) {
        s.peak = fmax(s.peak, p[i].flops / p[i].seconds);
        if (p[i].m == 1)
            s.bandwidth = fmax(s.bandwidth, p[i].bytes / p[i].seconds);
    }
    if (!(s.bandwidth > 0))
        s.bandwidth = s.peak / 10;
    perf_family *t = &out->table;
    t->peak_flops = s.peak;
    t->bandwidth_bytes_per_s = s.bandwidth;
    /* One-token products get their own stream efficiency where the samples have both
     * them and products of a few tokens (the weight-bound ones that set the other). */
    size_t ones = 0, few = 0;
    for (size_t i = 0; i < s.count; i++) {
        ones += p[i].m <= 1;
        few += p[i].m > 1 && p[i].m <= 16;
    }
    bool vector = ones >= 2 && few >= 2;
    double g[6] = { 0 };
    const double gemm_starts[] = { log(0.9), log(16), log(0.9), 0, log(2e-6), log(0.9),
                                   log(0.7), log(4), log(0.7), -2, log(1e-6), log(0.7),
                                   log(1), log(64), log(1), 2, log(1e-5), log(1) };
    double starts5[15], starts6[18];
    for (size_t k = 0; k < 3; k++) {
        memcpy(starts5 + 5 * k, gemm_starts + 6 * k, 5 * sizeof *starts5);
        memcpy(starts6 + 6 * k, gemm_starts + 6 * k, 6 * sizeof *starts6);
        starts6[6 * k + 2] = 0; /* the matrix stream starts at the vector's */
    }
    calib_model_fn gemm = vector ? gemm_vector_model : gemm_model;
    fit_best(gemm, &s, p, s.count, g, vector ? 6 : 5, vector ? starts6 : starts5, 3);
    out->spread[SPREAD_GEMM] = report(out, "gemm", gemm, &s, p, s.count, g);
    t->gemm = (perf_gemm_constants){ .efficiency = exp(g[0]), .tokens_half = exp(g[1]),
                                     .bandwidth_efficiency = exp(vector ? matrix_stream_log(g)
                                                                        : g[2]),
                                     .overlap = 1 / (1 + exp(-g[3])), .floor_s = exp(g[4]),
                                     .vector_bandwidth_efficiency = vector ? exp(g[5]) : 0 };

    static const struct { const char *kind; perf_pass_kind pass; } passes[] = {
        { "op_norm", PASS_NORM }, { "op_rope", PASS_ROPE }, { "op_act", PASS_ACT },
        { "op_add", PASS_ADD }, { "op_embed", PASS_EMBED }, { "op_reshape", PASS_RESHAPE },
        { "op_sample", PASS_SAMPLE },
    };
    const double pass_starts[] = { log(0.5), log(1), log(1e-6), log(0.2), log(8), log(1e-7),
                                   log(1), log(0.1), log(1e-5) };
    double pass_spread[sizeof passes / sizeof passes[0]];
    size_t npass = 0;
    for (size_t k = 0; k < sizeof passes / sizeof passes[0]; k++) {
        s.count = medians_of(samples, passes[k].kind, p);
        if (s.count < 3)
            continue;
        double th[3] = { 0 };
        fit_best(pass_model, &s, p, s.count, th, 3, pass_starts, 3);
        pass_spread[npass++] = report(out, passes[k].kind + 3, pass_model, &s, p, s.count, th);
        t->pass[passes[k].pass] = (perf_pass_constants){ exp(th[0]), exp(th[1]), exp(th[2]) };
    }
    if (npass)
        out->spread[SPREAD_PASSES] = calib_median(pass_spread, npass, NULL);
    s.count = medians_of(samples, "op_attn_decode", p);
    double products_floor = fit_decode(out, samples, &s, p);
    s.count = medians_of(samples, "op_attn_prefill", p);
    if (s.count >= 2) {
        double th[2] = { 0 };
        const double starts[] = { log(0.3), log(1e-5), log(0.05), log(1e-4) };
        fit_best(prefill_model, &s, p, s.count, th, 2, starts, 2);
        out->spread[SPREAD_ATTN_PREFILL] = report(out, "attention_prefill", prefill_model, &s,
                                                  p, s.count, th);
        t->attn_prefill.new_efficiency = exp(th[0]);
        t->attn_prefill.floor_s = exp(th[1]);
    }
    /* Where no decode shape was bound by its products, the samples say only that their
     * efficiency is at least what keeps every shape on its stream: the products over
     * cached tokens then run at the prefill kernel's rate for them, but no slower than
     * that least value (else the start of the fit would stand as a finding). */
    if (products_floor > 0)
        t->attn_prefill.cached_efficiency = fmax(products_floor, t->attn_prefill.new_efficiency);
    free(p);
    return 0;
}

/* ---- the physical ceiling ---------------------------------------------------------------- */

/* The largest bytes of kind's samples with at most max_m rows (0: any). */
static double largest_bytes(const calib_samples *s, const char *kind, double max_m)
{
    double most = 0;
    for (size_t i = 0; i < s->count; i++)
        if (!strcmp(s->items[i].kind, kind) && (max_m <= 0 || s->items[i].m <= max_m))
            most = fmax(most, s->items[i].bytes);
    return most;
}

/* A class's share against the memory's: listed when above it, capped at it unless the
 * cache holds the class's largest shape. */
static void ceiling(calib_ops_result *r, const char *what, double *efficiency, double bytes)
{
    double most = r->memory_bytes_per_s / r->table.bandwidth_bytes_per_s;
    if (!(*efficiency > most) || !(bytes > 0) || r->nceilings >= CALIB_OPS_FITS_MAX)
        return;
    calib_ops_ceiling *c = &r->ceilings[r->nceilings++];
    snprintf(c->what, sizeof c->what, "%s", what);
    c->efficiency = *efficiency;
    c->largest_bytes = bytes;
    c->capped = !(r->cache_bytes > 0 && bytes <= r->cache_bytes);
    if (c->capped)
        *efficiency = most;
}

void calib_ops_check_ceilings(calib_ops_result *r, const calib_samples *samples,
                              double cache_bytes, double memory_bytes_per_s)
{
    static const struct { const char *kind; perf_pass_kind pass; } passes[] = {
        { "op_norm", PASS_NORM }, { "op_rope", PASS_ROPE }, { "op_act", PASS_ACT },
        { "op_add", PASS_ADD }, { "op_embed", PASS_EMBED }, { "op_reshape", PASS_RESHAPE },
        { "op_sample", PASS_SAMPLE },
    };
    perf_family *t = &r->table;
    r->nceilings = 0;
    r->cache_bytes = cache_bytes;
    r->memory_bytes_per_s = memory_bytes_per_s;
    if (!(memory_bytes_per_s > 0) || !(t->bandwidth_bytes_per_s > 0))
        return; /* nothing to judge by */
    ceiling(r, "gemm weight stream", &t->gemm.bandwidth_efficiency,
            largest_bytes(samples, "op_gemm", 16));
    ceiling(r, "gemm one-token stream", &t->gemm.vector_bandwidth_efficiency,
            largest_bytes(samples, "op_gemm", 1));
    for (size_t k = 0; k < sizeof passes / sizeof passes[0]; k++)
        ceiling(r, passes[k].kind + 3, &t->pass[passes[k].pass].efficiency,
                largest_bytes(samples, passes[k].kind, 0));
    ceiling(r, "attention_decode", &t->attn_decode.efficiency,
            largest_bytes(samples, "op_attn_decode", 0));
}
