/* Samples to fits, profile, Lua file and report (see calib_profile.h). */
#include "kernels/calib_profile.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- medians per configuration -------------------------------------------------------- */

static bool same_config(const calib_sample *s, const calib_median_rate *m)
{
    return !strcmp(s->kind, m->kind) && !strcmp(s->precision, m->precision)
           && s->threads == m->threads && s->m == m->m && s->n == m->n && s->k == m->k
           && s->size_bytes == m->size_bytes;
}

static int collect_medians(const calib_samples *s, calib_result *r, char *err, size_t err_size)
{
    size_t *group = malloc(s->count * sizeof *group);
    double *seconds = malloc(s->count * sizeof *seconds);
    int status = 0;
    if (!group || !seconds) {
        snprintf(err, err_size, "out of memory");
        status = -1;
    }
    for (size_t i = 0; i < s->count && status == 0; i++) {
        const calib_sample *x = &s->items[i];
        size_t g = 0;
        while (g < r->nmedians && !same_config(x, &r->medians[g]))
            g++;
        if (g == r->nmedians) {
            if (g == CALIB_MEDIANS_MAX) {
                snprintf(err, err_size, "more than %d configurations in the samples",
                         CALIB_MEDIANS_MAX);
                status = -1;
                break;
            }
            calib_median_rate *m = &r->medians[r->nmedians++];
            memset(m, 0, sizeof *m);
            memcpy(m->kind, x->kind, sizeof m->kind);
            memcpy(m->precision, x->precision, sizeof m->precision);
            m->threads = x->threads;
            m->m = x->m, m->n = x->n, m->k = x->k, m->size_bytes = x->size_bytes;
        }
        group[i] = g;
    }
    for (size_t g = 0; g < r->nmedians && status == 0; g++) {
        calib_median_rate *m = &r->medians[g];
        size_t n = 0;
        double work = 0;
        for (size_t i = 0; i < s->count; i++) {
            if (group[i] != g)
                continue;
            seconds[n++] = s->items[i].seconds;
            work = !strcmp(m->kind, "gemm") || !strcmp(m->kind, "fma") ? s->items[i].flops
                                                                       : s->items[i].bytes;
        }
        m->repeats = n;
        m->median_s = calib_median(seconds, n, &m->iqr_s);
        m->rate = !strncmp(m->kind, "launch", 6) ? 1 / m->median_s : work / m->median_s;
    }
    free(group);
    free(seconds);
    return status;
}

/* ---- fits ------------------------------------------------------------------------------ */

static calib_fit_report *add_fit(calib_result *r, const char *what)
{
    if (r->nfits == CALIB_FITS_MAX)
        return NULL;
    calib_fit_report *f = &r->fits[r->nfits++];
    memset(f, 0, sizeof *f);
    snprintf(f->what, sizeof f->what, "%s", what);
    return f;
}

/* Rates of the gemm medians of one precision that pass `keep`; returns how many. */
static size_t gemm_points(const calib_result *r, const char *prec, int which, double wide,
                          double *x, double *y)
{
    size_t n = 0;
    for (size_t i = 0; i < r->nmedians; i++) {
        const calib_median_rate *m = &r->medians[i];
        if (strcmp(m->kind, "gemm") || strcmp(m->precision, prec))
            continue;
        bool skinny = m->m < m->n && m->n == m->k && m->n == wide;
        bool square = m->m == m->n && m->n == m->k;
        if ((which == 0 && skinny) || (which == 1 && square)) {
            x[n] = m->m; /* tokens, or a square's side */
            y[n++] = m->rate;
        }
    }
    return n;
}

/* Best rate over every shape, and the fits; the achieved peak and tokens_half. */
static void fit_gemm(calib_result *r, const char *prec, double *peak, double *tokens_half)
{
    double wide = 0, best = 0, x[CALIB_MEDIANS_MAX], y[CALIB_MEDIANS_MAX];
    for (size_t i = 0; i < r->nmedians; i++) {
        const calib_median_rate *m = &r->medians[i];
        if (strcmp(m->kind, "gemm") || strcmp(m->precision, prec))
            continue;
        best = fmax(best, m->rate);
        if (m->m < m->n && m->n == m->k)
            wide = fmax(wide, m->n);
    }
    *peak = best;
    *tokens_half = NAN;
    if (best <= 0)
        return;
    char what[96];
    size_t n = gemm_points(r, prec, 0, wide, x, y);
    calib_fit_report *f;
    snprintf(what, sizeof what, "gemm %s decode-like (m; n = k = %.0f), free peak", prec, wide);
    if (n >= 2 && (f = add_fit(r, what)) && calib_fit_saturation(x, y, n, &f->sat) != 0)
        r->nfits--; /* no asymptote: the held-peak fit below still says something */
    snprintf(what, sizeof what, "gemm %s decode-like (m; n = k = %.0f), peak held", prec, wide);
    if (n >= 2 && (f = add_fit(r, what))) {
        if (calib_fit_half(x, y, n, best, &f->sat) == 0)
            *tokens_half = f->sat.half;
        else
            r->nfits--;
    }
    n = gemm_points(r, prec, 1, 0, x, y);
    snprintf(what, sizeof what, "gemm %s squares (side)", prec);
    if (n >= 2 && (f = add_fit(r, what)) && calib_fit_saturation(x, y, n, &f->sat) != 0)
        r->nfits--;
}

/* Alpha-beta over the medians of one kind (x: size_bytes, or bytes moved); 0 when fitted. */
static int fit_transfer(calib_result *r, const char *kind, bool moved, calib_alpha_beta *out,
                        unsigned *threads)
{
    double x[CALIB_MEDIANS_MAX], y[CALIB_MEDIANS_MAX];
    size_t n = 0;
    for (size_t i = 0; i < r->nmedians; i++) {
        const calib_median_rate *m = &r->medians[i];
        if (strcmp(m->kind, kind) || (threads && *threads && m->threads != *threads))
            continue;
        if (threads)
            *threads = m->threads;
        x[n] = moved ? m->rate * m->median_s : m->size_bytes;
        y[n++] = m->median_s;
    }
    calib_fit_report *f;
    if (n < 2 || !(f = add_fit(r, kind)))
        return -1;
    f->alpha_beta = true;
    if (calib_fit_alpha_beta(x, y, n, &f->ab) != 0) {
        r->nfits--;
        return -1;
    }
    *out = f->ab;
    return 0;
}

static double median_rate_of(const calib_result *r, const char *kind, const char *prec)
{
    for (size_t i = 0; i < r->nmedians; i++)
        if (!strcmp(r->medians[i].kind, kind) && (!prec || !strcmp(r->medians[i].precision, prec)))
            return r->medians[i].rate;
    return 0;
}

int calib_result_build(const calib_samples *samples, const calib_meta *meta,
                       const device_spec *datasheet, calib_result *r, char *err,
                       size_t err_size)
{
    memset(r, 0, sizeof *r);
    device_profile *p = &r->profile;
    profile_init(p);
    snprintf(p->device, sizeof p->device, "%s", meta->device);
    snprintf(p->kind, sizeof p->kind, "%s", meta->kind);
    snprintf(p->host, sizeof p->host, "%s", meta->host);
    snprintf(p->date, sizeof p->date, "%s", meta->date);
    p->memory_bytes = meta->memory_bytes;
    if (datasheet)
        snprintf(p->catalog, sizeof p->catalog, "%s", datasheet->name);
    if (collect_medians(samples, r, err, err_size) != 0)
        return -1;
    bool gpu = !strcmp(meta->kind, "gpu");

    double half[PREC_COUNT];
    for (int i = 0; i < PREC_COUNT; i++)
        fit_gemm(r, precision_name((precision)i), &p->flops[i], &half[i]);
    double fp64_half;
    fit_gemm(r, "fp64", &p->fp64_flops, &fp64_half);
    const char *fma_names[3] = { "fp32", "fp16", "bf16" };
    for (int i = 0; i < 3; i++)
        r->fma_flops[i] = median_rate_of(r, "fma", fma_names[i]);
    if (!(p->flops[PREC_FP32] > 0))
        p->flops[PREC_FP32] = r->fma_flops[0]; /* a GPU's fp32 peak is its FMA units' */

    /* memory: the best copy or triad at the largest size */
    for (size_t i = 0; i < r->nmedians; i++) {
        const calib_median_rate *m = &r->medians[i];
        if ((!strcmp(m->kind, "copy") || !strcmp(m->kind, "triad")))
            r->bandwidth_size_bytes = fmax(r->bandwidth_size_bytes, m->size_bytes);
    }
    for (size_t i = 0; i < r->nmedians; i++) {
        const calib_median_rate *m = &r->medians[i];
        if ((!strcmp(m->kind, "copy") || !strcmp(m->kind, "triad"))
            && m->size_bytes == r->bandwidth_size_bytes)
            p->bandwidth_bytes_per_s = fmax(p->bandwidth_bytes_per_s, m->rate);
    }
    double launches = median_rate_of(r, "launch", NULL);
    p->launch_s = launches > 0 ? 1 / launches : 0;
    double synced = median_rate_of(r, "launch_sync", NULL);
    r->launch_sync_s = synced > 0 ? 1 / synced : 0;

    calib_alpha_beta ab;
    unsigned one = 1;
    if (gpu) /* device copies: the fixed cost of a bandwidth kernel, and its rate */
        fit_transfer(r, "copy", true, &ab, &one);
    if (fit_transfer(r, "h2d_pinned", false, &ab, NULL) == 0) {
        p->host_link_bytes_per_s = ab.bytes_per_s;
        p->host_link_latency_s = ab.alpha_s;
    }
    fit_transfer(r, "h2d_pageable", false, &ab, NULL);
    fit_transfer(r, "d2h_pinned", false, &ab, NULL);
    fit_transfer(r, "d2h_pageable", false, &ab, NULL);
    unsigned devices = 0;
    if (fit_transfer(r, "allreduce", false, &ab, &devices) == 0 && devices >= 2) {
        double steps = 2.0 * (devices - 1);
        p->link_bytes_per_s = steps / devices * ab.bytes_per_s;
        p->perf.link_latency_s = ab.alpha_s / steps;
    }

    /* the performance model's fields: the reference precision's curve */
    precision ref = PREC_FP32;
    if (gpu && p->flops[PREC_BF16] > 0)
        ref = PREC_BF16;
    else if (gpu && p->flops[PREC_FP16] > 0)
        ref = PREC_FP16;
    p->perf.tokens_half = half[ref];
    if (datasheet && p->flops[ref] > 0 && datasheet->peak_flops[ref] > 0)
        p->perf.compute_efficiency = p->flops[ref] / datasheet->peak_flops[ref];
    if (datasheet && p->bandwidth_bytes_per_s > 0 && datasheet->bandwidth_bytes_per_s > 0)
        p->perf.bandwidth_efficiency = p->bandwidth_bytes_per_s / datasheet->bandwidth_bytes_per_s;
    if (p->launch_s > 0)
        p->perf.kernel_launch_s = p->launch_s;
    bool any = p->bandwidth_bytes_per_s > 0 || p->launch_s > 0;
    for (int i = 0; i < PREC_COUNT; i++)
        any |= p->flops[i] > 0;
    if (!any) {
        snprintf(err, err_size, "no GEMM, bandwidth or launch samples to fit");
        return -1;
    }
    return 0;
}

/* ---- the Lua file ---------------------------------------------------------------------- */

static void lua_string(FILE *out, const char *s)
{
    fputc('"', out);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            fprintf(out, "\\%c", c);
        else if (c < 32 || c == 127)
            fprintf(out, "\\%03u", c);
        else
            fputc(c, out);
    }
    fputc('"', out);
}

/* `key = value,` for a measured (positive, finite) number; nothing otherwise. */
static void lua_number(FILE *out, const char *indent, const char *key, double v)
{
    if (isfinite(v) && v > 0)
        fprintf(out, "%s%s = %.6g,\n", indent, key, v);
}

int calib_result_write_lua(FILE *out, const calib_result *r, const calib_meta *meta,
                           const device_spec *datasheet, const char *samples_name)
{
    const device_profile *p = &r->profile;
    fprintf(out, "-- A fleetsim calibration profile, written by `fleetsim calibrate` (README.md,\n"
                 "-- \"Calibration\").  achieved: what this device did (FLOP/s, B/s, s); perf: the\n"
                 "-- performance model's fields, as shares of the datasheet below; fits and\n"
                 "-- medians: how they were found.  Raw samples: %s\n", samples_name);
    fprintf(out, "return {\n  format = 1,\n  device = ");
    lua_string(out, p->device);
    fprintf(out, ", kind = ");
    lua_string(out, p->kind);
    fprintf(out, ", catalog = ");
    lua_string(out, p->catalog);
    fprintf(out, ",\n  host = ");
    lua_string(out, p->host);
    fprintf(out, ", date = ");
    lua_string(out, p->date);
    fprintf(out, ",\n  threads = %u, quick = %s, samples = ", meta->threads,
            meta->quick ? "true" : "false");
    lua_string(out, samples_name);
    if (*meta->blas) {
        fprintf(out, ",\n  blas = ");
        lua_string(out, meta->blas);
    }
    fprintf(out, ",\n  achieved = {\n    flops = {");
    for (int i = 0; i < PREC_COUNT; i++)
        if (p->flops[i] > 0)
            fprintf(out, " %s = %.6g,", precision_name((precision)i), p->flops[i]);
    fprintf(out, " },\n");
    lua_number(out, "    ", "fp64_flops", p->fp64_flops);
    lua_number(out, "    ", "bandwidth_bytes_per_s", p->bandwidth_bytes_per_s);
    lua_number(out, "    ", "link_bytes_per_s", p->link_bytes_per_s);
    lua_number(out, "    ", "host_link_bytes_per_s", p->host_link_bytes_per_s);
    lua_number(out, "    ", "host_link_latency_s", p->host_link_latency_s);
    lua_number(out, "    ", "launch_s", p->launch_s);
    lua_number(out, "    ", "memory_bytes", p->memory_bytes);
    fprintf(out, "  },\n  perf = {\n");
    lua_number(out, "    ", "compute_efficiency", p->perf.compute_efficiency);
    lua_number(out, "    ", "tokens_half", p->perf.tokens_half);
    lua_number(out, "    ", "bandwidth_efficiency", p->perf.bandwidth_efficiency);
    lua_number(out, "    ", "kernel_launch_s", p->perf.kernel_launch_s);
    lua_number(out, "    ", "link_latency_s", p->perf.link_latency_s);
    fprintf(out, "  },\n");
    if (datasheet) {
        fprintf(out, "  datasheet = {\n    name = ");
        lua_string(out, datasheet->name);
        fprintf(out, ",\n    flops = {");
        for (int i = 0; i < PREC_COUNT; i++)
            if (datasheet->peak_flops[i] > 0)
                fprintf(out, " %s = %.6g,", precision_name((precision)i), datasheet->peak_flops[i]);
        fprintf(out, " },\n    bandwidth_bytes_per_s = %.6g,\n", datasheet->bandwidth_bytes_per_s);
        if (datasheet->cores)
            fprintf(out, "    cores = %u,\n", datasheet->cores);
        fprintf(out, "  },\n");
    }
    fprintf(out, "  fits = {\n");
    for (size_t i = 0; i < r->nfits; i++) {
        const calib_fit_report *f = &r->fits[i];
        fprintf(out, "    { what = ");
        lua_string(out, f->what);
        if (f->alpha_beta)
            fprintf(out, ", alpha_s = %.6g, bytes_per_s = %.6g, r2 = %.6f, rms_rel = %.4g, "
                    "points = %zu },\n", f->ab.alpha_s, f->ab.bytes_per_s, f->ab.r2,
                    f->ab.rms_rel, f->ab.points);
        else
            fprintf(out, ", peak = %.6g, half = %.6g, r2 = %.6f, rms_rel = %.4g, points = %zu },\n",
                    f->sat.peak, f->sat.half, f->sat.r2, f->sat.rms_rel, f->sat.points);
    }
    fprintf(out, "  },\n  medians = { -- per configuration: rate in FLOP/s (gemm, fma), B/s, or 1/s (launch)\n");
    for (size_t i = 0; i < r->nmedians; i++) {
        const calib_median_rate *m = &r->medians[i];
        fprintf(out, "    { kind = \"%s\", precision = \"%s\", threads = %u, m = %.0f, n = %.0f, "
                "k = %.0f, size_bytes = %.0f, median_s = %.6g, iqr_s = %.3g, rate = %.6g },\n",
                m->kind, m->precision, m->threads, m->m, m->n, m->k, m->size_bytes, m->median_s,
                m->iqr_s, m->rate);
    }
    fprintf(out, "  },\n");
    if (r->ops && calib_ops_write_lua(out, &r->ops->table, r->ops_precision, r->ops_model,
                                      r->ops->spread, r->ops, NULL, NULL) != 0)
        return -1;
    fprintf(out, "}\n");
    return ferror(out) ? -1 : 0;
}

/* ---- the report ------------------------------------------------------------------------ */

static void share_line(FILE *out, const char *what, double achieved, double peak,
                       const char *unit, double scale, unsigned threads, unsigned cores)
{
    fprintf(out, "  %-22s %10.4g %-7s", what, achieved / scale, unit);
    if (peak > 0) {
        fprintf(out, "  %10.4g %-7s %6.2f%%", peak / scale, unit, 100 * achieved / peak);
        if (cores && threads && threads < cores) /* a share of the cores used, too */
            fprintf(out, "   (%u of %u cores: %.4g %s, %.1f%%)", threads, cores,
                    peak * threads / cores / scale, unit, 100 * achieved / (peak * threads / cores));
    }
    fputc('\n', out);
}

void calib_result_print(FILE *out, const calib_result *r, const calib_meta *meta,
                        const device_spec *datasheet, const char *datasheet_note)
{
    const device_profile *p = &r->profile;
    fprintf(out, "\n%s (%s, %u %s)%s%s\n", p->device, p->kind, meta->threads,
            strcmp(p->kind, "gpu") ? "threads" : "device(s) seen", *meta->blas ? ", BLAS: " : "",
            meta->blas);
    if (datasheet)
        fprintf(out, "compared with the catalog's %s%s\n", datasheet->name, datasheet_note);
    else
        fprintf(out, "no catalog entry to compare with%s\n", datasheet_note);
    fprintf(out, "\n  %-22s %18s  %18s %7s\n", "", "achieved", datasheet ? "datasheet" : "", datasheet ? "share" : "");
    unsigned cores = datasheet ? datasheet->cores : 0;
    for (int i = 0; i < PREC_COUNT; i++) {
        if (!(p->flops[i] > 0))
            continue;
        char what[32];
        snprintf(what, sizeof what, "%s peak", precision_name((precision)i));
        share_line(out, what, p->flops[i], datasheet ? datasheet->peak_flops[i] : 0, "TFLOP/s",
                   1e12, meta->threads, cores);
    }
    if (p->fp64_flops > 0)
        share_line(out, "fp64 peak", p->fp64_flops, 0, "TFLOP/s", 1e12, 0, 0);
    const char *fma_names[3] = { "fp32 FMA chains", "half2 FMA chains", "bfloat162 FMA chains" };
    for (int i = 0; i < 3; i++)
        if (r->fma_flops[i] > 0)
            share_line(out, fma_names[i], r->fma_flops[i], i == 0 && datasheet ? datasheet->peak_flops[PREC_FP32] : 0,
                       "TFLOP/s", 1e12, 0, 0);
    if (p->bandwidth_bytes_per_s > 0)
        share_line(out, "memory bandwidth", p->bandwidth_bytes_per_s,
                   datasheet ? datasheet->bandwidth_bytes_per_s : 0, "GB/s", 1e9, 0, 0);
    if (p->host_link_bytes_per_s > 0)
        share_line(out, "host->device pinned", p->host_link_bytes_per_s,
                   datasheet ? datasheet->pcie_bytes_per_s : 0, "GB/s", 1e9, 0, 0);
    if (p->link_bytes_per_s > 0)
        share_line(out, "device link (1 dir)", p->link_bytes_per_s,
                   datasheet ? datasheet->nvlink_bytes_per_s / 2 : 0, "GB/s", 1e9, 0, 0);
    if (p->launch_s > 0)
        fprintf(out, "  %-22s %10.4g us\n", strcmp(p->kind, "gpu") ? "1x1x1 GEMM call" : "kernel launch",
                p->launch_s * 1e6);
    if (r->launch_sync_s > 0)
        fprintf(out, "  %-22s %10.4g us\n", "launch + synchronise", r->launch_sync_s * 1e6);
    fprintf(out, "\nperformance model: compute_efficiency %.4g, tokens_half %.4g, "
            "bandwidth_efficiency %.4g, kernel_launch_s %.3g", p->perf.compute_efficiency,
            p->perf.tokens_half, p->perf.bandwidth_efficiency, p->perf.kernel_launch_s);
    if (!isnan(p->perf.link_latency_s))
        fprintf(out, ", link_latency_s %.3g", p->perf.link_latency_s);
    fputc('\n', out);
    fprintf(out, "\nfits (r2 and rms on relative errors):\n");
    for (size_t i = 0; i < r->nfits; i++) {
        const calib_fit_report *f = &r->fits[i];
        if (f->alpha_beta)
            fprintf(out, "  %-58s alpha %.3g us, %.4g GB/s, r2 %.4f, rms %.1f%%, %zu sizes\n",
                    f->what, f->ab.alpha_s * 1e6, f->ab.bytes_per_s / 1e9, f->ab.r2,
                    100 * f->ab.rms_rel, f->ab.points);
        else
            fprintf(out, "  %-58s peak %.4g TFLOP/s, half %.4g, r2 %.4f, rms %.1f%%, %zu sizes\n",
                    f->what, f->sat.peak / 1e12, f->sat.half, f->sat.r2, 100 * f->sat.rms_rel,
                    f->sat.points);
    }
}
