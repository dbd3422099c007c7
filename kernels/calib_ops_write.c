/* The operator table as the Lua block of a profile (see calib_ops.h). */
#include "kernels/calib_ops.h"

#include <math.h>

#include "kernels/calib_steps.h"

static const char *const PASS_NAMES[PASS_COUNT] = {
    [PASS_NORM] = "norm", [PASS_ROPE] = "rope", [PASS_ACT] = "act", [PASS_ADD] = "add",
    [PASS_EMBED] = "embed", [PASS_RESHAPE] = "reshape", [PASS_SAMPLE] = "sample",
};

static void stats(FILE *out, const char *name, const calib_steps_stats *s)
{
    fprintf(out, "      %s = { rows = %zu, r2 = %.6f, rms_rel = %.4g, mean_abs_rel = %.4g, "
            "worst_rel = %.4g },\n", name, s->n, s->r2, s->rms_rel, s->mean_abs_rel, s->worst_rel);
}

int calib_ops_write_lua(FILE *out, const perf_family *t, precision prec, const char *model,
                        const double spread[SPREAD_CLASSES], const calib_ops_result *fits,
                        const struct calib_steps_fit *steps, const char *steps_file)
{
    fprintf(out, "  operators = { -- this device's operator table (docs/calibration.md)\n");
    fprintf(out, "    model = \"%s\", precision = \"%s\",\n", model ? model : "",
            precision_name(prec));
    fprintf(out, "    peak_flops = %.6g, bandwidth_bytes_per_s = %.6g,\n", t->peak_flops,
            t->bandwidth_bytes_per_s);
    fprintf(out, "    gemm = { efficiency = %.6g, tokens_half = %.6g, bandwidth_efficiency = %.6g, "
            "overlap = %.6g, floor_s = %.6g", t->gemm.efficiency, t->gemm.tokens_half,
            t->gemm.bandwidth_efficiency, t->gemm.overlap, t->gemm.floor_s);
    if (t->gemm.vector_bandwidth_efficiency > 0)
        fprintf(out, ", vector_bandwidth_efficiency = %.6g", t->gemm.vector_bandwidth_efficiency);
    fprintf(out, " },\n");
    fprintf(out, "    pass = {\n");
    for (int i = 0; i < PASS_COUNT; i++)
        fprintf(out, "      %s = { efficiency = %.6g, tokens_half = %.6g, floor_s = %.6g },\n",
                PASS_NAMES[i], t->pass[i].efficiency, t->pass[i].tokens_half, t->pass[i].floor_s);
    fprintf(out, "    },\n    attention_decode = { efficiency = %.6g, width_half = %.6g, "
            "floor_s = %.6g", t->attn_decode.efficiency, t->attn_decode.width_half,
            t->attn_decode.floor_s);
    if (t->attn_decode.per_head_s > 0 || t->attn_decode.score_accesses > 0)
        fprintf(out, ", per_head_s = %.6g, score_accesses = %.6g", t->attn_decode.per_head_s,
                t->attn_decode.score_accesses);
    fprintf(out, " },\n");
    fprintf(out, "    attention_prefill = { cached_efficiency = %.6g, new_efficiency = %.6g, "
            "floor_s = %.6g },\n", t->attn_prefill.cached_efficiency,
            t->attn_prefill.new_efficiency, t->attn_prefill.floor_s);
    fprintf(out, "    host = { base_s = %.6g, per_seq_s = %.6g },\n", t->host.base_s,
            t->host.per_seq_s);
    bool any = false;
    for (int c = 0; spread && c < SPREAD_CLASSES; c++)
        any |= spread[c] > 0;
    if (any) {
        fprintf(out, "    spread = { -- (q3 - q1) / median of a shape's repeats, the median "
                     "over the class's shapes\n     ");
        for (int c = 0; c < SPREAD_CLASSES; c++)
            if (spread[c] > 0)
                fprintf(out, " %s = %.4g,", profile_spread_names[c], spread[c]);
        fprintf(out, "\n    },\n");
    }
    if (fits && fits->nfits) {
        fprintf(out, "    fits = { -- rms and worst of (fit - median) / median over the shapes\n");
        for (size_t i = 0; i < fits->nfits; i++) {
            const calib_ops_fit *f = &fits->fits[i];
            fprintf(out, "      { what = \"%s\", points = %zu, rms_rel = %.4g, worst_rel = %.4g, "
                    "spread = %.4g },\n", f->what, f->points, f->rms_rel, f->worst_rel,
                    f->spread);
        }
        fprintf(out, "    },\n");
    }
    if (fits && fits->nceilings) {
        fprintf(out, "    ceilings = { -- streams fitted faster than the memory's bandwidth "
                     "(memory_share: its share of the reference; cache_bytes: the last-level "
                     "cache, 0 not known)\n");
        for (size_t i = 0; i < fits->nceilings; i++) {
            const calib_ops_ceiling *c = &fits->ceilings[i];
            fprintf(out, "      { what = \"%s\", fitted = %.4g, memory_share = %.4g, "
                    "largest_bytes = %.6g, cache_bytes = %.6g, verdict = \"%s\" },\n", c->what,
                    c->efficiency, fits->memory_bytes_per_s / t->bandwidth_bytes_per_s,
                    c->largest_bytes, fits->cache_bytes,
                    !c->capped ? "the cache holds it"
                    : fits->cache_bytes > 0 ? "capped at 1: beyond the cache"
                                            : "capped at 1: no cache size to explain it");
        }
        fprintf(out, "    },\n");
    }
    if (steps) {
        const calib_steps_params *q = &steps->params;
        fprintf(out, "    steps = { -- fitted to measured steps (fleetsim calibrate --steps)\n"
                     "      file = \"%s\",\n", steps_file ? steps_file : "");
        fprintf(out, "      host_s = %.6g, host_per_seq_s = %.6g, gemm_compute = %.6g, "
                "gemm_bandwidth = %.6g,\n      attention_prefill = %.6g, attention_decode = %.6g, "
                "passes = %.6g, kernel_s = %.6g,\n", q->host_s, q->host_per_seq_s, q->gemm_compute,
                q->gemm_bandwidth, q->attention_prefill, q->attention_decode, q->passes, q->kernel_s);
        double found[CALIB_STEPS_NPARAMS];
        calib_steps_params_get(&steps->found, found);
        fprintf(out, "      accepted = %s, -- %s\n", steps->accepted ? "true" : "false",
                steps->accepted ? "the values above are the fit's"
                                : "the fit predicted the unseen no better: the table's values");
        fprintf(out, "      found = {");
        for (int k = 0; k < CALIB_STEPS_NPARAMS; k++) {
            fprintf(out, " %s = { %.6g, ", calib_steps_param_names[k], found[k]);
            if (steps->state[k] == CALIB_PARAM_FITTED)
                fprintf(out, "se = %.3g },", steps->se[k]);
            else
                fprintf(out, "kept = \"%s\" },", steps->state[k] == CALIB_PARAM_AT_BOUND
                                                    ? "at its bound" : "not determined");
        }
        fprintf(out, " },\n");
        stats(out, "before", &steps->before);
        stats(out, "train", &steps->train);
        stats(out, "held_out_before", &steps->held_out_before);
        stats(out, "held_out", &steps->held_out);
        if (steps->cv.folds)
            fprintf(out, "      leave_one_model_out = { folds = %zu, rows = %zu, fitted_mae = "
                    "%.4g, table_mae = %.4g },\n", steps->cv.folds, steps->cv.n,
                    steps->cv.fitted_mae, steps->cv.profile_mae);
        fprintf(out, "    },\n");
    }
    fprintf(out, "  },\n");
    return ferror(out) ? -1 : 0;
}
