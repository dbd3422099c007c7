/* Fitting engine-level parameters to measured step times (see calib_steps.h). */
#include "kernels/calib_steps.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "kernels/calib_ops.h"

#define NPARAMS 8

calib_steps_params calib_steps_identity(void)
{
    return (calib_steps_params){ 0, 0, 1, 1, 1, 1, 1, 0 };
}

void calib_steps_adjust(const perf_profile *base, const calib_steps_params *q, perf_profile *out)
{
    *out = *base;
    perf_family *t = &out->operators;
    t->gemm.efficiency *= q->gemm_compute;
    t->gemm.bandwidth_efficiency *= q->gemm_bandwidth;
    t->gemm.vector_bandwidth_efficiency *= q->gemm_bandwidth; /* one share: both streams */
    t->gemm.floor_s += q->kernel_s;
    for (int i = 0; i < PASS_COUNT; i++) {
        t->pass[i].efficiency *= q->passes;
        t->pass[i].floor_s += q->kernel_s;
    }
    /* Decode attention is one kernel class: its cache reads and its products over the
     * cache.  The products' efficiency (the table's cached-pairs efficiency) is what
     * calib_ops_fit sets from the decode samples, and a step row exercises it only in
     * decode, so the decode share scales it; the prefill share scales the new pairs.
     * (Scaled by the prefill share, a prefill-heavy fit made decode attention of wide
     * query groups compute-bound at the prefill's efficiency: +15-22% at batch 16.) */
    t->attn_decode.efficiency *= q->attention_decode;
    t->attn_decode.floor_s += q->kernel_s;
    t->attn_prefill.new_efficiency *= q->attention_prefill;
    t->attn_prefill.cached_efficiency *= q->attention_decode;
    t->attn_prefill.floor_s += q->kernel_s;
    t->host = (perf_host_constants){ q->host_s, q->host_per_seq_s, 0, 0 };
    out->compute_efficiency = t->gemm.efficiency;
    out->bandwidth_efficiency = t->gemm.bandwidth_efficiency;
    out->kernel_launch_s = t->gemm.floor_s;
    out->host_s = q->host_s;
    out->host_per_seq_s = q->host_per_seq_s;
    out->host_tp_s = out->host_tp_per_seq_s = 0;
}

double calib_step_predict(const calib_step *s, const perf_profile *p)
{
    perf_setup setup = { .model = s->model, .device = s->device, .profile = p,
                         .weights = s->weights,
                         .kv = s->weights == PREC_FP32 ? PREC_FP32 : PREC_FP16, .tp = s->tp };
    double prompts = s->batch - s->decode_tokens;
    double each = prompts > 0 ? s->prefill_tokens / prompts : 0;
    perf_batch b = { .decode_seqs = s->decode_tokens,
                     .decode_context = s->decode_tokens * s->mean_context,
                     .prefill_tokens = s->prefill_tokens, .prefill_seqs = prompts,
                     .prefill_last = prompts, .prefill_new_pairs = prompts * each * each / 2 };
    return perf_iteration(&setup, &b, NULL).total_s;
}

void calib_steps_stats_of(const calib_step *rows, size_t n, const perf_profile *p,
                          bool held_out, calib_steps_stats *out)
{
    *out = (calib_steps_stats){ 0 };
    double sw = 0, swy = 0, ss_res = 0, ss_tot = 0, sq = 0;
    for (size_t i = 0; i < n; i++) /* weighted mean of y with weights 1/y^2 */
        if (rows[i].held_out == held_out) {
            sw += 1 / (rows[i].seconds * rows[i].seconds);
            swy += 1 / rows[i].seconds;
        }
    double mean = sw > 0 ? swy / sw : 0;
    for (size_t i = 0; i < n; i++) {
        if (rows[i].held_out != held_out)
            continue;
        double y = rows[i].seconds, e = calib_step_predict(&rows[i], p) / y - 1;
        ss_res += e * e;
        ss_tot += (y - mean) * (y - mean) / (y * y);
        sq += e * e;
        out->mean_abs_rel += fabs(e);
        if (out->n == 0 || fabs(e) > fabs(out->worst_rel)) {
            out->worst_rel = e;
            out->worst = i;
        }
        out->n++;
    }
    if (out->n) {
        out->mean_abs_rel /= out->n;
        out->rms_rel = sqrt(sq / out->n);
        out->r2 = ss_tot > 0 ? 1 - ss_res / ss_tot : 1;
    }
}

void calib_steps_hold_out(calib_step *rows, size_t n, double fraction)
{
    size_t k = fraction > 0 ? (size_t)fmax(2, round(1 / fraction)) : 0;
    for (size_t i = 0; i < n; i++)
        rows[i].held_out = k && (i + 1) % k == 0;
}

/* ---- the fit ------------------------------------------------------------------------------ */

typedef struct fit_data {
    const calib_step **rows;
    const perf_profile *base;
} fit_data;

/* A share from its fitted variable: exp of a log bounded to +-log(CALIB_STEPS_SHARE_MAX),
 * smoothly (tanh), so that the fit stays unconstrained and the share in range. */
static double share_of(double t)
{
    double b = log(CALIB_STEPS_SHARE_MAX);
    return exp(b * tanh(t / b));
}

/* The fitted variable of a share (its inverse; share strictly inside the range). */
static double variable_of(double share)
{
    double b = log(CALIB_STEPS_SHARE_MAX);
    return b * atanh(log(share) / b);
}

/* theta: square roots of the times (non-negative), bounded logs of the shares. */
static calib_steps_params params_of(const double *t)
{
    return (calib_steps_params){ t[0] * t[0], t[1] * t[1], share_of(t[2]), share_of(t[3]),
                                 share_of(t[4]), share_of(t[5]), share_of(t[6]), t[7] * t[7] };
}

static double step_model(const double *theta, size_t i, void *data)
{
    const fit_data *d = data;
    calib_steps_params q = params_of(theta);
    perf_profile p;
    calib_steps_adjust(d->base, &q, &p);
    return calib_step_predict(d->rows[i], &p);
}

int calib_steps_fit_rows(const calib_step *rows, size_t n, const perf_profile *base,
                         calib_steps_fit *out, perf_profile *fitted, char *err,
                         size_t err_size)
{
    const calib_step **train = malloc((n + 1) * sizeof *train);
    double *y = malloc((n + 1) * sizeof *y);
    size_t m = 0;
    int status = -1;
    if (!train || !y) {
        snprintf(err, err_size, "out of memory");
        goto done;
    }
    for (size_t i = 0; i < n; i++)
        if (!rows[i].held_out) {
            train[m] = &rows[i];
            y[m++] = rows[i].seconds;
        }
    if (m < NPARAMS + 2) {
        snprintf(err, err_size, "%zu rows to fit (after the hold-out) for %d parameters: "
                 "measure at least %d shapes", m, NPARAMS, NPARAMS + 2);
        goto done;
    }
    calib_steps_params id = calib_steps_identity();
    perf_profile start;
    calib_steps_adjust(base, &id, &start);
    calib_steps_stats_of(rows, n, &start, false, &out->before);
    /* host work from the smallest step: what the table leaves of it, a start only */
    double host0 = 0;
    for (size_t i = 0; i < m; i++) {
        double left = train[i]->seconds - calib_step_predict(train[i], &start);
        host0 = i == 0 || left < host0 ? left : host0;
    }
    fit_data d = { train, base };
    double best = INFINITY, theta[NPARAMS], kept[NPARAMS];
    const double scales[] = { 1, 0.5, 2 };
    for (size_t s = 0; s < sizeof scales / sizeof scales[0]; s++) {
        double share = variable_of(scales[s]);
        double trial[NPARAMS] = { sqrt(fmax(host0, 1e-6)), 1e-3, share, share, share,
                                  share, share, 1e-3 };
        double rms = calib_fit_relative(step_model, &d, y, m, trial, NPARAMS);
        if (rms >= 0 && rms < best) {
            best = rms;
            for (int k = 0; k < NPARAMS; k++)
                kept[k] = trial[k];
        }
    }
    if (!isfinite(best)) {
        snprintf(err, err_size, "the fit did not converge on %zu rows", m);
        goto done;
    }
    for (int k = 0; k < NPARAMS; k++)
        theta[k] = kept[k];
    out->params = params_of(theta);
    calib_steps_adjust(base, &out->params, fitted);
    calib_steps_stats_of(rows, n, fitted, false, &out->train);
    calib_steps_stats_of(rows, n, fitted, true, &out->held_out);
    status = 0;
done:
    free(train);
    free(y);
    return status;
}
