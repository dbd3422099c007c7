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
                        const calib_ops_fit *fits, size_t nfits,
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
            "floor_s = %.6g },\n", t->attn_decode.efficiency, t->attn_decode.width_half,
            t->attn_decode.floor_s);
    fprintf(out, "    attention_prefill = { cached_efficiency = %.6g, new_efficiency = %.6g, "
            "floor_s = %.6g },\n", t->attn_prefill.cached_efficiency,
            t->attn_prefill.new_efficiency, t->attn_prefill.floor_s);
    fprintf(out, "    host = { base_s = %.6g, per_seq_s = %.6g },\n", t->host.base_s,
            t->host.per_seq_s);
    if (nfits) {
        fprintf(out, "    fits = { -- rms and worst of (fit - median) / median over the shapes\n");
        for (size_t i = 0; i < nfits; i++)
            fprintf(out, "      { what = \"%s\", points = %zu, rms_rel = %.4g, worst_rel = %.4g },\n",
                    fits[i].what, fits[i].points, fits[i].rms_rel, fits[i].worst_rel);
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
        stats(out, "before", &steps->before);
        stats(out, "train", &steps->train);
        stats(out, "held_out", &steps->held_out);
        fprintf(out, "    },\n");
    }
    fprintf(out, "  },\n");
    return ferror(out) ? -1 : 0;
}
