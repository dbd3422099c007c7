/* Fitting engine-level parameters to measured step times (see calib_steps.h). */
#include "kernels/calib_steps.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/calib_fit.h"
#include "kernels/calib_ops.h"

#define NPARAMS CALIB_STEPS_NPARAMS

const char *const calib_steps_param_names[NPARAMS] = {
    "host_s", "host_per_seq_s", "gemm_compute", "gemm_bandwidth", "attention_prefill",
    "attention_decode", "passes", "kernel_s",
};

/* Which parameters are shares (fitted in log terms) and which times (seconds, >= 0). */
static const bool IS_SHARE[NPARAMS] = { false, false, true, true, true, true, true, false };

void calib_steps_params_get(const calib_steps_params *q, double out[NPARAMS])
{
    const double v[NPARAMS] = { q->host_s, q->host_per_seq_s, q->gemm_compute,
                                q->gemm_bandwidth, q->attention_prefill, q->attention_decode,
                                q->passes, q->kernel_s };
    memcpy(out, v, sizeof v);
}

static calib_steps_params params_set(const double v[NPARAMS])
{
    return (calib_steps_params){ v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7] };
}

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
    /* Decode attention is one kernel class: its cache reads (and an eager engine's
     * scores and dispatch per head) and its products over the cache.  The products'
     * efficiency (the table's cached-pairs efficiency) is what calib_ops_fit sets from
     * the decode samples, and a step row exercises it only in decode, so the decode
     * share scales it; the prefill share scales the new pairs.
     * (Scaled by the prefill share, a prefill-heavy fit made decode attention of wide
     * query groups compute-bound at the prefill's efficiency: +15-22% at batch 16.) */
    t->attn_decode.efficiency *= q->attention_decode;
    t->attn_decode.per_head_s /= q->attention_decode; /* its dispatch is the class's too */
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

/* The rows a fit sees, and which parameters it moves: the others keep `value`. */
typedef struct fit_data {
    const calib_step **rows;
    size_t m;
    const perf_profile *base;
    bool free[NPARAMS];
    double value[NPARAMS];       /* the parameters' values (the fixed ones' throughout) */
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

/* theta (the free parameters only): square roots of the times (non-negative), bounded
 * logs of the shares. */
static calib_steps_params params_of(const fit_data *d, const double *theta)
{
    double v[NPARAMS];
    size_t j = 0;
    for (int k = 0; k < NPARAMS; k++) {
        if (!d->free[k]) {
            v[k] = d->value[k];
            continue;
        }
        v[k] = IS_SHARE[k] ? share_of(theta[j]) : theta[j] * theta[j];
        j++;
    }
    return params_set(v);
}

static double predict_with(const fit_data *d, const calib_steps_params *q, size_t i)
{
    perf_profile p;
    calib_steps_adjust(d->base, q, &p);
    return calib_step_predict(d->rows[i], &p);
}

static double step_model(const double *theta, size_t i, void *data)
{
    const fit_data *d = data;
    calib_steps_params q = params_of(d, theta);
    return predict_with(d, &q, i);
}

/* Least squares of the free parameters from three starts; d->value gets the best.  The
 * rms of the relative residuals, or -1 when no start converged. */
static double fit_free(fit_data *d, const double *y, double host0)
{
    size_t nfree = 0;
    for (int k = 0; k < NPARAMS; k++)
        nfree += d->free[k];
    if (nfree == 0)
        return 0;
    double best = INFINITY, kept[NPARAMS];
    const double scales[] = { 1, 0.5, 2 };
    for (size_t s = 0; s < sizeof scales / sizeof scales[0]; s++) {
        const double start[NPARAMS] = { sqrt(fmax(host0, 1e-6)), 1e-3, 0, 0, 0, 0, 0, 1e-3 };
        double trial[NPARAMS];
        size_t j = 0;
        for (int k = 0; k < NPARAMS; k++)
            if (d->free[k])
                trial[j++] = IS_SHARE[k] ? variable_of(scales[s]) : start[k];
        double rms = calib_fit_relative(step_model, d, y, d->m, trial, nfree);
        if (rms >= 0 && rms < best) {
            best = rms;
            memcpy(kept, trial, nfree * sizeof *trial);
        }
    }
    if (!isfinite(best))
        return -1;
    calib_steps_params q = params_of(d, kept);
    calib_steps_params_get(&q, d->value);
    return best;
}

/* Standard errors of the free parameters at d->value, in their own units: s^2 (J'J)^-1
 * with J the relative residuals' derivatives (central differences; a share's in its log,
 * a time's in seconds), s^2 = RSS / (rows - free), through the singular values so that a
 * direction the rows do not see gives an infinite error to the parameters along it. */
static void standard_errors(const fit_data *d, const double *y, double se[NPARAMS])
{
    int idx[NPARAMS];
    size_t p = 0;
    for (int k = 0; k < NPARAMS; k++) {
        se[k] = NAN;
        if (d->free[k])
            idx[p++] = k;
    }
    if (p == 0)
        return;
    double *J = malloc(d->m * p * sizeof *J), e[NPARAMS];
    if (!J)
        return;
    double rss = 0;
    calib_steps_params q = params_set(d->value);
    for (size_t i = 0; i < d->m; i++) {
        double r = predict_with(d, &q, i) / y[i] - 1;
        rss += r * r;
    }
    for (size_t j = 0; j < p; j++) {
        int k = idx[j];
        double v = d->value[k];
        double h = IS_SHARE[k] ? 1e-4 : fmax(1e-4 * v, 1e-9);
        double up[NPARAMS], down[NPARAMS];
        memcpy(up, d->value, sizeof up);
        memcpy(down, d->value, sizeof down);
        if (IS_SHARE[k]) {
            up[k] = v * exp(h);
            down[k] = v * exp(-h);
        } else {
            up[k] = v + h;
            down[k] = fmax(v - h, 0);
        }
        calib_steps_params qu = params_set(up), qd = params_set(down);
        for (size_t i = 0; i < d->m; i++)
            J[i * p + j] = (predict_with(d, &qu, i) - predict_with(d, &qd, i))
                           / (y[i] * (IS_SHARE[k] ? 2 * h : up[k] - down[k]));
    }
    if (calib_fit_standard_errors(J, d->m, p, rss, e) == 0)
        for (size_t j = 0; j < p; j++) /* a share's: the share times its log's */
            se[idx[j]] = IS_SHARE[idx[j]] ? e[j] * d->value[idx[j]] : e[j];
    free(J);
}

/* Fits the rows, keeping at the profile's value each parameter the rows cannot determine
 * or that ran to its bound (calib_steps.h), until every free one is determined. */
static int fit_determined(fit_data *d, const double *y, const bool start_free[NPARAMS],
                          double se[NPARAMS], calib_param_state state[NPARAMS])
{
    calib_steps_params id = calib_steps_identity();
    perf_profile start;
    calib_steps_adjust(d->base, &id, &start);
    /* host work from the smallest step: what the table leaves of it, a start only */
    double host0 = 0;
    for (size_t i = 0; i < d->m; i++) {
        double left = d->rows[i]->seconds - calib_step_predict(d->rows[i], &start);
        host0 = i == 0 || left < host0 ? left : host0;
    }
    double identity[NPARAMS];
    calib_steps_params_get(&id, identity);
    size_t nfree = 0;
    for (int k = 0; k < NPARAMS; k++) {
        d->free[k] = start_free[k];
        d->value[k] = identity[k];
        state[k] = start_free[k] ? CALIB_PARAM_FITTED : CALIB_PARAM_UNDETERMINED;
        nfree += start_free[k];
    }
    if (d->m <= nfree)
        return -1;
    double bound = 0.9 * log(CALIB_STEPS_SHARE_MAX);
    for (int pass = 0; pass <= NPARAMS; pass++) {
        if (fit_free(d, y, host0) < 0)
            return -1;
        standard_errors(d, y, se);
        /* One at a time, the worst first (a share at its bound, then the largest error
         * for its value): with the worst gone, a parameter it was confounded with is
         * often determined. */
        int worst = -1;
        double worst_score = 1;
        for (int k = 0; k < NPARAMS; k++) {
            if (!d->free[k])
                continue;
            double v = d->value[k];
            double score = IS_SHARE[k] && fabs(log(v)) >= bound ? INFINITY
                           : v > 0 && isfinite(se[k])         ? se[k] / v
                                                               : 1e300;
            if (score >= worst_score) { /* a share's: its log's error of 1 or more */
                worst = k;
                worst_score = score;
            }
        }
        if (worst < 0)
            break;
        state[worst] = isinf(worst_score) ? CALIB_PARAM_AT_BOUND : CALIB_PARAM_UNDETERMINED;
        d->free[worst] = false;
        d->value[worst] = identity[worst];
    }
    /* the loop ends at its break, with se of the parameters as last fitted: each pass
     * drops one, so the last pass has none left to drop */
    return 0;
}

/* One model: the same name and the same shape (a steps file names its models; two
 * shapes under one name are two models). */
static bool same_model(const model_spec *a, const model_spec *b)
{
    return a == b || (!strcmp(a->name, b->name) && a->layers == b->layers
                      && a->hidden == b->hidden && a->heads == b->heads
                      && a->kv_heads == b->kv_heads && a->ffn == b->ffn && a->vocab == b->vocab);
}

/* The rows fitted: those not held out, and not of the model `left` (NULL: none). */
static size_t training_rows(const calib_step *rows, size_t n, const model_spec *left,
                            const calib_step **train, double *y)
{
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        if (!rows[i].held_out && !(left && same_model(rows[i].model, left))) {
            train[m] = &rows[i];
            y[m++] = rows[i].seconds;
        }
    return m;
}

/* Leave each model out in turn (see calib_steps_cv), each fold fitting the parameters
 * the whole fit determined (free). */
static void cross_validate(const calib_step *rows, size_t n, const perf_profile *base,
                           const bool free[NPARAMS], const calib_step **train, double *y,
                           calib_steps_cv *cv)
{
    *cv = (calib_steps_cv){ 0 };
    calib_steps_params id = calib_steps_identity();
    perf_profile table;
    calib_steps_adjust(base, &id, &table);
    size_t models = 0;
    for (size_t i = 0; i < n; i++) {
        bool seen = false;
        for (size_t j = 0; j < i && !seen; j++)
            seen = same_model(rows[j].model, rows[i].model);
        models += !seen;
    }
    if (models < 2)
        return;
    for (size_t i = 0; i < n; i++) {
        const model_spec *left = rows[i].model;
        bool seen = false;
        for (size_t j = 0; j < i && !seen; j++)
            seen = same_model(rows[j].model, left);
        if (seen)
            continue;
        fit_data d = { train, training_rows(rows, n, left, train, y), base, { 0 }, { 0 } };
        double se[NPARAMS];
        calib_param_state state[NPARAMS];
        if (fit_determined(&d, y, free, se, state) != 0)
            continue; /* a fold that cannot be fitted counts as none */
        calib_steps_params q = params_set(d.value);
        perf_profile fold;
        calib_steps_adjust(base, &q, &fold);
        for (size_t r = 0; r < n; r++)
            if (same_model(rows[r].model, left)) {
                cv->fitted_mae += fabs(calib_step_predict(&rows[r], &fold) / rows[r].seconds - 1);
                cv->profile_mae += fabs(calib_step_predict(&rows[r], &table) / rows[r].seconds - 1);
                cv->n++;
            }
        cv->folds++;
    }
    if (cv->n) {
        cv->fitted_mae /= cv->n;
        cv->profile_mae /= cv->n;
    }
}

size_t calib_steps_rows_needed(double fraction)
{
    size_t k = fraction > 0 ? (size_t)fmax(2, round(1 / fraction)) : 0;
    size_t n = CALIB_STEPS_MIN_ROWS;
    while (k && n - n / k < CALIB_STEPS_MIN_ROWS)
        n++;
    return n;
}

int calib_steps_fit_rows(const calib_step *rows, size_t n, const perf_profile *base,
                         calib_steps_fit *out, perf_profile *fitted, char *err,
                         size_t err_size)
{
    const calib_step **train = malloc((n + 1) * sizeof *train);
    double *y = malloc((n + 1) * sizeof *y);
    int status = -1;
    memset(out, 0, sizeof *out);
    if (!train || !y) {
        snprintf(err, err_size, "out of memory");
        goto done;
    }
    size_t m = training_rows(rows, n, NULL, train, y);
    if (m < CALIB_STEPS_MIN_ROWS) {
        snprintf(err, err_size, "%zu rows, %zu of them left to fit after the hold-out, for %d "
                 "parameters: the fit needs %d rows after the hold-out", n, m, NPARAMS,
                 CALIB_STEPS_MIN_ROWS);
        goto done;
    }
    calib_steps_params id = calib_steps_identity();
    perf_profile table;
    calib_steps_adjust(base, &id, &table);
    calib_steps_stats_of(rows, n, &table, false, &out->before);
    calib_steps_stats_of(rows, n, &table, true, &out->held_out_before);
    fit_data d = { train, m, base, { 0 }, { 0 } };
    const bool all[NPARAMS] = { true, true, true, true, true, true, true, true };
    if (fit_determined(&d, y, all, out->se, out->state) != 0) {
        snprintf(err, err_size, "the fit did not converge on %zu rows", m);
        goto done;
    }
    out->found = params_set(d.value);
    calib_steps_adjust(base, &out->found, fitted);
    calib_steps_stats_of(rows, n, fitted, false, &out->train);
    calib_steps_stats_of(rows, n, fitted, true, &out->held_out);
    bool determined[NPARAMS];
    for (int k = 0; k < NPARAMS; k++)
        determined[k] = out->state[k] == CALIB_PARAM_FITTED;
    cross_validate(rows, n, base, determined, train, y, &out->cv);
    if (out->cv.folds >= 2)
        out->accepted = out->cv.fitted_mae < out->cv.profile_mae;
    else if (out->held_out.n)
        out->accepted = out->held_out.mean_abs_rel < out->held_out_before.mean_abs_rel;
    else
        out->accepted = true; /* nothing unseen to judge by: the fit as it came */
    out->params = out->accepted ? out->found : id;
    if (!out->accepted)
        *fitted = table;
    status = 0;
done:
    free(train);
    free(y);
    return status;
}
