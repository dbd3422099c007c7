/* Operator tables and engine fits (kernels/calib_steps.h, kernels/calib_ops.h): the fit
 * recovers known parameters from synthetic step times; a profile of the wrong device kind
 * is refused; calibrate never loses a measurement to a missing folder. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "kernels/calib_ops.h"
#include "kernels/calib_steps.h"
#include "kernels/cuda_probe.h"
#include "lua/profile_load.h"
#include "models/perf.h"
#include "models/profile.h"
#include "tests/support/cli.h"
#include "tests/support/scratch.h"

/* A 2-core CPU of round figures, with a table of round constants and real floors. */
static device_spec cpu_device(void)
{
    device_spec d = { 0 };
    d.name = "TEST-CPU";
    d.is_cpu = true;
    for (int i = 0; i < PREC_COUNT; i++)
        d.peak_flops[i] = 100e9;
    d.bandwidth_bytes_per_s = 20e9;
    d.memory_bytes = 64e9;
    return d;
}

static perf_profile table_profile(const device_spec *d)
{
    perf_profile p = perf_default_profile(d);
    perf_family t = *p.family;
    t.gemm = (perf_gemm_constants){ .efficiency = 0.9, .bandwidth_efficiency = 0.8,
                                    .overlap = 0.2, .floor_s = 1e-6, .tokens_half = 8 };
    for (int i = 0; i < PASS_COUNT; i++)
        t.pass[i] = (perf_pass_constants){ 0.5, 4, 1e-6 };
    t.attn_decode = (perf_attn_decode_constants){ .efficiency = 0.6, .width_half = 2,
                                                    .floor_s = 2e-6 };
    t.attn_prefill = (perf_attn_prefill_constants){ 0.3, 0.3, 3e-6 };
    p.operators = t;
    p.has_operators = true;
    p.compute_efficiency = t.gemm.efficiency;
    p.bandwidth_efficiency = t.gemm.bandwidth_efficiency;
    p.kernel_launch_s = t.gemm.floor_s;
    return p;
}

static model_spec shape(unsigned layers, unsigned hidden, unsigned heads, unsigned kv,
                        unsigned ffn, unsigned vocab)
{
    model_spec m = { .name = "m", .layers = layers, .hidden = hidden, .heads = heads,
                     .kv_heads = kv, .ffn = ffn, .vocab = vocab, .gated = true,
                     .context = 1 << 20 };
    return m;
}

/* An engine off the table in every parameter, and the two models its steps are timed at
 * (2 layers of hidden 1024 with groups of 4; 6 layers of 512 without groups). */
#define ENGINE { .host_s = 2e-3, .host_per_seq_s = 1e-4, .gemm_compute = 0.6, \
                 .gemm_bandwidth = 0.8, .attention_prefill = 0.5, .attention_decode = 0.7, \
                 .passes = 0.4, .kernel_s = 5e-6 }
#define FIT_MODELS shape(2, 1024, 16, 4, 2816, 16000), shape(6, 512, 8, 8, 1408, 8000)

/* The grid of steps both models are timed at (prefill 64-1024 tokens; decode batch 1-16
 * at context 128-2048), their seconds what the table adjusted by truth predicts; the
 * row count. */
static size_t synthetic_steps(const perf_profile *base, const calib_steps_params *truth,
                              const model_spec models[2], const device_spec *d,
                              calib_step rows[64])
{
    perf_profile engine;
    calib_steps_adjust(base, truth, &engine);
    size_t n = 0;
    for (size_t m = 0; m < 2; m++) {
        for (double p = 64; p <= 1024; p *= 4)
            rows[n++] = (calib_step){ &models[m], d, PREC_FP32, 1, 1, p, 0, 0, 0, 0, false };
        for (double b = 1; b <= 16; b *= 4)
            for (double c = 128; c <= 2048; c *= 4)
                rows[n++] = (calib_step){ &models[m], d, PREC_FP32, 1, b, 0, b, c, 0, 0, false };
    }
    for (size_t i = 0; i < n; i++)
        rows[i].seconds = calib_step_predict(&rows[i], &engine);
    return n;
}

/* calib_steps_fit_rows on the rows, which must succeed. */
static void fit_ok(const calib_step *rows, size_t n, const perf_profile *base,
                   calib_steps_fit *fit, perf_profile *fitted)
{
    char err[256];
    cr_assert_eq(calib_steps_fit_rows(rows, n, base, fit, fitted, err, sizeof err), 0, "%s", err);
}

Test(calib_steps, the_fit_recovers_known_engine_parameters_from_synthetic_steps)
{
    device_spec d = cpu_device();
    perf_profile base = table_profile(&d);
    model_spec models[] = { FIT_MODELS };
    const calib_steps_params truth = ENGINE;
    calib_step rows[64];
    size_t n = synthetic_steps(&base, &truth, models, &d, rows);
    calib_steps_hold_out(rows, n, 0.25);
    calib_steps_fit fit;
    perf_profile fitted;
    fit_ok(rows, n, &base, &fit, &fitted);
    const calib_steps_params *q = &fit.params;
    const double got[] = { q->host_s, q->host_per_seq_s, q->gemm_compute, q->gemm_bandwidth,
                           q->attention_prefill, q->attention_decode, q->passes, q->kernel_s };
    const double want[] = { 2e-3, 1e-4, 0.6, 0.8, 0.5, 0.7, 0.4, 5e-6 };
    for (size_t k = 0; k < 8; k++)
        cr_expect(fabs(got[k] / want[k] - 1) < 1e-3, "parameter %zu: fitted %g, true %g", k,
                  got[k], want[k]);
    cr_expect_lt(fit.held_out.worst_rel, 1e-4);
    cr_expect_gt(fit.held_out.n, 0);
    cr_expect_gt(fabs(fit.before.worst_rel), 0.1); /* the table alone was off */
    for (int k = 0; k < CALIB_STEPS_NPARAMS; k++) /* exact rows: every one determined */
        cr_expect(fit.state[k] == CALIB_PARAM_FITTED && fit.se[k] < 1e-3 * want[k],
                  "parameter %s: state %d, error %g", calib_steps_param_names[k], fit.state[k],
                  fit.se[k]);
    cr_expect(fit.accepted);
    cr_expect_eq(fit.cv.folds, 2);
    /* one model's nine rows pin the engine less well than both models' eighteen, but
     * a model left out is still predicted ten times better than by the table */
    cr_expect_lt(fit.cv.fitted_mae, 0.1 * fit.cv.profile_mae, "left out: fitted %g, table %g",
                 fit.cv.fitted_mae, fit.cv.profile_mae);
}

/* Steps in which the memory passes cost nothing (their share a million times the
 * table's: faster than any memory) do not identify that share: the fit reports it as
 * run to its bound and keeps the profile's share of 1 instead of a share of 16 (a noisy
 * CI run once wrote a share of 2e12, which the loader refused; issue 43 saw three shares
 * at 15.98 of the bound 16). */
Test(calib_steps, a_share_that_runs_to_its_bound_is_reported_and_kept_at_the_profiles_value)
{
    device_spec d = cpu_device();
    perf_profile base = table_profile(&d);
    model_spec models[] = { FIT_MODELS };
    calib_steps_params truth = ENGINE;
    truth.passes = 1e6;
    calib_step rows[64];
    size_t n = synthetic_steps(&base, &truth, models, &d, rows);
    calib_steps_fit fit;
    perf_profile fitted;
    fit_ok(rows, n, &base, &fit, &fitted);
    cr_expect_eq(fit.state[6], CALIB_PARAM_AT_BOUND, "passes: state %d", fit.state[6]);
    cr_expect_eq(fit.found.passes, 1.0);
    cr_expect(isnan(fit.se[6]));
    const double shares[] = { fit.found.gemm_compute, fit.found.gemm_bandwidth,
                              fit.found.attention_prefill, fit.found.attention_decode };
    for (size_t k = 0; k < 4; k++)
        cr_expect(shares[k] < 0.9 * CALIB_STEPS_SHARE_MAX && shares[k] > 1 / (0.9 * CALIB_STEPS_SHARE_MAX),
                  "share %zu: %g", k, shares[k]);
}

/* Decode steps alone cannot tell the prefill attention's share: no row runs it.  The fit
 * says so (an infinite error), keeps the profile's share, and still fits the rows. */
Test(calib_steps, a_share_no_row_exercises_is_reported_as_not_determined)
{
    device_spec d = cpu_device();
    perf_profile base = table_profile(&d);
    model_spec models[] = { FIT_MODELS };
    const calib_steps_params truth = ENGINE;
    calib_step all[64], rows[64];
    size_t n = synthetic_steps(&base, &truth, models, &d, all), m = 0;
    for (size_t i = 0; i < n; i++)
        if (all[i].prefill_tokens == 0)
            rows[m++] = all[i];
    calib_steps_fit fit;
    perf_profile fitted;
    fit_ok(rows, m, &base, &fit, &fitted);
    cr_expect_eq(fit.state[4], CALIB_PARAM_UNDETERMINED, "prefill: state %d", fit.state[4]);
    cr_expect_eq(fit.found.attention_prefill, 1.0);
    cr_expect(isnan(fit.se[4]));
    cr_expect(fit.accepted);
    cr_expect_lt(fabs(fit.train.worst_rel), 1e-3, "the decode rows are still fitted: %g",
                 fit.train.worst_rel);
}

/* Two models run by engines that differ (one as the table says, one with host work and
 * shares far from it): fitted to either, the engine predicts the other worse than the
 * table alone does on average over the two folds, so the fit is not kept and the
 * profile gets the table's values (a recorded case of the acceptance rule). */
Test(calib_steps, a_fit_that_predicts_the_left_out_model_worse_than_the_table_is_not_kept)
{
    device_spec d = cpu_device();
    perf_profile base = table_profile(&d);
    model_spec models[] = { FIT_MODELS };
    models[0].name = "like-the-table", models[1].name = "another-engine";
    const calib_steps_params other = { .host_s = 5e-3, .host_per_seq_s = 3e-4,
                                       .gemm_compute = 0.3, .gemm_bandwidth = 0.4,
                                       .attention_prefill = 0.25, .attention_decode = 0.35,
                                       .passes = 0.2, .kernel_s = 2e-5 };
    calib_step rows[64];
    size_t n = synthetic_steps(&base, &other, models, &d, rows);
    calib_steps_params id = calib_steps_identity();
    perf_profile table;
    calib_steps_adjust(&base, &id, &table);
    for (size_t i = 0; i < n; i++)
        if (rows[i].model == &models[0])
            rows[i].seconds = calib_step_predict(&rows[i], &table);
    calib_steps_hold_out(rows, n, 0.25);
    calib_steps_fit fit;
    perf_profile fitted;
    fit_ok(rows, n, &base, &fit, &fitted);
    cr_expect_eq(fit.cv.folds, 2);
    cr_expect_eq(fit.cv.n, n);
    cr_expect_gt(fit.cv.fitted_mae, fit.cv.profile_mae);
    cr_expect_not(fit.accepted);
    cr_expect_eq(fit.params.host_s, 0);
    cr_expect_eq(fit.params.gemm_compute, 1);
    cr_expect_eq(fitted.operators.gemm.efficiency, table.operators.gemm.efficiency);
    cr_expect_eq(fitted.host_s, 0);
}

/* calibrate_hold_out keeps n - floor(n / 4) rows at 0.25: 13 rows leave 10, 12 leave 9. */
Test(calib_steps, the_rows_to_measure_count_the_hold_out)
{
    cr_expect_eq(calib_steps_rows_needed(0.25), 13);
    cr_expect_eq(calib_steps_rows_needed(0), 10);
    cr_expect_eq(calib_steps_rows_needed(0.5), 19);
    cr_expect_eq(calib_steps_rows_needed(0.1), 11);
}

Test(calib_steps, every_fourth_row_is_held_out)
{
    calib_step rows[8] = { 0 };
    calib_steps_hold_out(rows, 8, 0.25);
    for (size_t i = 0; i < 8; i++)
        cr_expect_eq(rows[i].held_out, i == 3 || i == 7, "row %zu", i);
}

Test(calib_steps, a_decode_step_costs_what_the_table_says_by_hand)
{
    /* one layer, one sequence, context 0: every GEMM streams its weights (memory-bound),
     * plus floors; checked against the formulas of perf_constants.h worked by hand */
    device_spec d = cpu_device();
    perf_profile p = table_profile(&d);
    for (int i = 0; i < PASS_COUNT; i++)
        p.operators.pass[i].efficiency = 0; /* passes off: GEMMs, attention floor, host */
    model_spec m = shape(1, 64, 1, 1, 64, 64);
    calib_step s = { &m, &d, PREC_FP32, 1, 1, 0, 1, 0, 0, 0, false };
    /* qkv 64x192, out 64x64, up 64x128, down 64x64, lm head 64x64; T = 1 */
    double t = 0;
    const double kn[][2] = { { 64, 192 }, { 64, 64 }, { 64, 128 }, { 64, 64 }, { 64, 64 } };
    for (size_t i = 0; i < 5; i++) {
        double K = kn[i][0], N = kn[i][1];
        double c = 2 * K * N / (100e9 * 0.9 * (1.0 / 9)), mem = 4 * (K * N + K + N) / (20e9 * 0.8);
        t += 1e-6 + fmax(c, mem) + 0.2 * fmin(c, mem);
    }
    t += 2e-6; /* the decode attention's floor (no context) */
    cr_expect(fabs(calib_step_predict(&s, &p) / t - 1) < 1e-12, "predicted %.9g, by hand %.9g",
              calib_step_predict(&s, &p), t);
}

/* The decode attention's time of one decode step (batch 4 at context 2048) with shares q. */
static perf_op_time decode_attention_with(const perf_profile *base, const model_spec *m,
                                          const device_spec *d, calib_steps_params q)
{
    perf_profile p;
    calib_steps_adjust(base, &q, &p);
    perf_setup setup = { .model = m, .device = d, .profile = &p, .weights = PREC_FP32,
                         .kv = PREC_FP32, .tp = 1 };
    perf_batch b = { .decode_seqs = 4, .decode_context = 4 * 2048 };
    perf_breakdown ops;
    perf_iteration(&setup, &b, &ops);
    return ops.op[OP_ATTN_DECODE];
}

Test(calib_steps, the_decode_share_scales_the_decode_kernels_compute_and_the_prefill_share_does_not)
{
    /* 16 query heads on one kv head: 4 x 16 x 16 = 1024 flops against 128 bytes of cache
     * a token, compute-bound at the table's 0.3 of 100 GFLOP/s (34 ns) against 128 B at
     * 20 GB/s x 0.6 x 4/6 (16 ns).  The compute term's efficiency is fitted from decode
     * samples (calib_ops_fit), so the decode share owns it: halving that share doubles
     * the compute part; a prefill share of 1/4 leaves the decode step alone. */
    device_spec d = cpu_device();
    perf_profile p = table_profile(&d);
    model_spec m = shape(1, 256, 16, 1, 256, 64);
    perf_op_time one = decode_attention_with(&p, &m, &d, calib_steps_identity());
    cr_assert_eq(one.bound, BOUND_COMPUTE);
    double by_hand = 2048 * 4 * 1024 / (100e9 * 0.3);
    cr_expect(fabs(one.compute_s / by_hand - 1) < 1e-9, "compute %.9g s, by hand %.9g s",
              one.compute_s, by_hand);
    calib_steps_params q = calib_steps_identity();
    q.attention_prefill = 0.25;
    perf_op_time prefill = decode_attention_with(&p, &m, &d, q);
    cr_expect_eq(prefill.time_s, one.time_s);
    q = calib_steps_identity();
    q.attention_decode = 0.5;
    perf_op_time half = decode_attention_with(&p, &m, &d, q);
    cr_expect(fabs(half.compute_s / (2 * one.compute_s) - 1) < 1e-12,
              "compute %.9g s at share 0.5, %.9g s at 1", half.compute_s, one.compute_s);
}

Test(calib_steps, a_cpu_profile_is_refused_for_a_gpu_and_the_reverse)
{
    device_profile p;
    profile_init(&p);
    snprintf(p.kind, sizeof p.kind, "cpu");
    snprintf(p.device, sizeof p.device, "AMD EPYC");
    device_spec gpu = { .name = "H100-SXM" }, cpu = { .name = "EPYC-9654", .is_cpu = true };
    char msg[512];
    cr_expect_eq(profile_check_kind(&p, &gpu, msg, sizeof msg), -1);
    cr_expect(strstr(msg, "measured on a cpu ('AMD EPYC'), not a gpu like 'H100-SXM'"), "%s", msg);
    cr_expect_eq(profile_check_kind(&p, &cpu, msg, sizeof msg), 0);
    snprintf(p.kind, sizeof p.kind, "gpu");
    cr_expect_eq(profile_check_kind(&p, &cpu, msg, sizeof msg), -1);
    cr_expect_eq(profile_check_kind(&p, &gpu, msg, sizeof msg), 0);
}

Test(calib_steps, estimate_refuses_a_cpu_profile_for_a_gpu)
{
    char *out = NULL, *err = NULL;
    int rc = cli_run(&out, &err, "estimate --model llama-3-8b --gpu H100-SXM --profile "
                     "kernels/profiles/epyc-2vcpu.lua");
    cr_expect_eq(rc, 2);
    cr_expect(strstr(err, "epyc-2vcpu.lua: measured on a cpu"), "%s", err);
    free(out);
    free(err);
}

Test(calib_steps, calibrate_makes_the_missing_folder_before_measuring_and_keeps_the_samples)
{
    char *dir = scratch_dir(), *out = NULL, *err = NULL, path[512];
    int rc = cli_run(&out, &err, "calibrate --device cpu --quick --operators-only --threads 1 "
                     "-q --model t:layers=1,hidden=64,heads=4,kv_heads=2,ffn=128,vocab=256 "
                     "-o %s/new/deeper/t.lua", dir);
    cr_expect_eq(rc, 0, "%s", err);
    snprintf(path, sizeof path, "%s/new/deeper/t.csv", dir);
    char *csv = scratch_read(path);
    cr_expect(csv && strstr(csv, "\nop_gemm,fp32,1,1,128,64,"), "samples: %s", csv ? csv : "none");
    cr_expect(csv && strstr(csv, "\n# model: t\n"), "samples: %s", csv ? csv : "none");
    snprintf(path, sizeof path, "%s/new/deeper/t.lua", dir);
    char *lua = scratch_read(path);
    cr_expect(lua && strstr(lua, "operators = {"), "profile: %s", lua ? lua : "none");
    free(csv);
    free(lua);
    /* a refit of those samples keeps the model's name in the profile and the report */
    rc = cli_run(&out, &err, "calibrate --refit %s/new/deeper/t.csv -o %s/again.lua", dir, dir);
    cr_expect_eq(rc, 0, "%s", err);
    cr_expect(strstr(out, "operators of t "), "%s", out);
    snprintf(path, sizeof path, "%s/again.lua", dir);
    lua = scratch_read(path);
    cr_expect(lua && strstr(lua, "model = \"t\""), "profile: %s", lua ? lua : "none");
    free(lua);
    /* a folder that cannot be made: refused at once, nothing measured */
    free(scratch_file(dir, "plain", "x\n"));
    rc = cli_run(&out, &err, "calibrate --device cpu --quick -o %s/plain/sub/p.lua", dir);
    cr_expect_eq(rc, 1);
    cr_expect(strstr(err, "cannot create the folder") && strstr(err, "(nothing measured)"), "%s",
              err);
    free(out);
    free(err);
    scratch_remove_dir(dir);
}

Test(calib_steps, a_bad_steps_row_names_file_line_column_and_value_and_writes_nothing)
{
    char *dir = scratch_dir(), *out = NULL, *err = NULL, path[512], want[600];
    char *steps = scratch_file(dir, "steps.csv",
        "# measured\n"
        "model,device,precision,tp,batch,prefill_tokens,decode_tokens,mean_context,seconds\n"
        "llama-3-8b,H100-SXM,fp16,1,4,0,4,512,0.012\n"
        "llama-3-8b,H100-SXM,fp16,1,4,0,4,1024,-1\n");
    int rc = cli_run(&out, &err, "calibrate --steps %s -o %s/engine.lua", steps, dir);
    cr_expect_eq(rc, 2);
    snprintf(want, sizeof want, "%s:4: seconds: expected a number from 1e-09, got '-1'", steps);
    cr_expect(strstr(err, want), "%s", err);
    snprintf(path, sizeof path, "%s/engine.lua", dir);
    struct stat st;
    cr_expect_neq(stat(path, &st), 0, "a profile was written");
    free(steps);
    free(out);
    free(err);
    scratch_remove_dir(dir);
}

/* Twelve rows at the default hold-out of 0.25 leave 9 to fit; the fit needs 10, which 13
 * measured rows leave (issue 43: the message had said "measure at least 10 shapes"). */
Test(calib_steps, too_few_rows_are_counted_with_the_hold_out)
{
    char *dir = scratch_dir(), *out = NULL, *err = NULL, text[4096], path[512];
    size_t used = snprintf(text, sizeof text, "model,device,precision,tp,batch,prefill_tokens,"
                           "decode_tokens,mean_context,seconds\n");
    for (int i = 0; i < 12; i++)
        used += snprintf(text + used, sizeof text - used,
                         "llama-3-8b,H100-SXM,fp16,1,%d,0,%d,512,%g\n", i + 1, i + 1, 0.01 + 1e-4 * i);
    char *steps = scratch_file(dir, "steps.csv", text);
    int rc = cli_run(&out, &err, "calibrate --steps %s -o %s/engine.lua", steps, dir);
    cr_expect_eq(rc, 2);
    cr_expect(strstr(err, "12 rows, 9 left to fit after holding out 0.25 of them (--holdout); "
                     "the fit needs 10: measure at least 13 step shapes"), "%s", err);
    snprintf(path, sizeof path, "%s/engine.lua", dir);
    struct stat st;
    cr_expect_neq(stat(path, &st), 0, "a profile was written");
    free(steps);
    free(out);
    free(err);
    scratch_remove_dir(dir);
}

/* A one-token product runs the matrix-vector kernel, which streams the weights at its own
 * rate (OpenBLAS's sgemv about 10% under its sgemm at 4 tokens on the development CPU).
 * Samples made by the table's GEMM formula with the vector kernel at half the matrix
 * stream give both rates back, and the profile file carries the vector one. */
Test(calib_steps, the_operator_fit_recovers_the_vector_kernels_stream_and_the_file_keeps_it)
{
    const double peak = 100e9, matrix_bw = 10e9, vector_bw = 5e9, floor = 2e-6;
    const double eff = 0.9, half = 8;
    calib_samples samples = { 0 };
    const int tokens[] = { 1, 2, 4, 8, 16, 64, 256, 1024 };
    const int widths[][2] = { { 1024, 1536 }, { 1024, 5632 }, { 2816, 1024 } };
    for (size_t w = 0; w < 3; w++)
        for (size_t t = 0; t < sizeof tokens / sizeof tokens[0]; t++) {
            double T = tokens[t], K = widths[w][0], N = widths[w][1];
            double bytes = 4 * (K * N + T * K + T * N), flops = 2 * T * K * N;
            double c = flops / (peak * eff * T / (T + half));
            double m = bytes / (T <= 1 ? vector_bw : matrix_bw);
            calib_sample s = { .kind = "op_gemm", .precision = "fp32", .threads = 1,
                               .m = T, .n = N, .k = K, .size_bytes = bytes, .bytes = bytes,
                               .flops = flops, .seconds = floor + fmax(c, m) };
            cr_assert_eq(calib_samples_add(&samples, &s), 0);
        }
    device_spec d = cpu_device();
    calib_ops_result *ops = calloc(1, sizeof *ops);
    char err[256];
    cr_assert_eq(calib_ops_fit_all(&samples, perf_family_of(&d), ops, err, sizeof err), 0, "%s",
                 err);
    const perf_family *t = &ops->table;
    double vector = t->gemm.vector_bandwidth_efficiency * t->bandwidth_bytes_per_s;
    cr_expect(fabs(vector / vector_bw - 1) < 0.02, "vector stream %g, true %g", vector, vector_bw);
    cr_expect(fabs(t->gemm.efficiency * t->peak_flops / (peak * eff) - 1) < 0.02,
              "compute %g", t->gemm.efficiency * t->peak_flops);
    cr_expect_lt(ops->fits[0].worst_rel, 0.02, "gemm fit worst %g", ops->fits[0].worst_rel);
    /* the table's one-token product (in 16-bit: 2 bytes an element) streams at the vector
     * rate, two tokens at the matrix rate */
    double K = 1024, N = 1536;
    double one = perf_family_gemm_s(t, 1, K, N), two = perf_family_gemm_s(t, 2, K, N);
    double want_one = floor + fmax(2 * (K * N + K + N) / vector_bw,
                                   2 * K * N / (peak * eff / (1 + half)));
    double want_two = floor + fmax(2 * (K * N + 2 * K + 2 * N) / matrix_bw, /* compute-bound */
                                   4 * K * N / (peak * eff * 2 / (2 + half)));
    cr_expect(fabs(one / want_one - 1) < 0.03, "one token %g s, by hand %g s", one, want_one);
    cr_expect(fabs(two / want_two - 1) < 0.03, "two tokens %g s, by hand %g s", two, want_two);

    char *dir = scratch_dir(), path[512];
    snprintf(path, sizeof path, "%s/p.lua", dir);
    FILE *f = fopen(path, "w");
    cr_assert(f);
    fprintf(f, "return {\n  format = 1, device = \"TEST-CPU\", kind = \"cpu\",\n");
    cr_assert_eq(calib_ops_write_lua(f, t, PREC_FP32, "m", NULL, NULL, NULL, NULL), 0);
    fprintf(f, "}\n");
    fclose(f);
    device_profile back;
    cr_assert_eq(profile_load_file(path, &back, err, sizeof err), 0, "%s", err);
    cr_expect(fabs(back.perf.operators.gemm.vector_bandwidth_efficiency
                   / t->gemm.vector_bandwidth_efficiency - 1) < 1e-5);
    scratch_remove_dir(dir);
    free(ops);
    calib_samples_release(&samples);
}

/* calibrate --model on a CUDA device where there is none: refused before anything is
 * measured, the reason given, no profile written. */
Test(calib_steps, operators_on_a_missing_cuda_device_are_refused_and_nothing_is_written)
{
    char why[256];
    if (kernels_cuda_device_count(why, sizeof why) > 0)
        cr_skip_test("a CUDA device is here: the profile would run");
    char *dir = scratch_dir(), *out = NULL, *err = NULL, path[512];
    int rc = cli_run(&out, &err, "calibrate --device cuda --model t:layers=2,hidden=256,"
                     "heads=4,kv_heads=2,ffn=512,vocab=1000 --operators-only -o %s/p.lua", dir);
    cr_expect_eq(rc, 1);
    cr_expect(strstr(err, "--device cuda: no such CUDA device") && strstr(err, "nothing measured"),
              "%s", err);
    snprintf(path, sizeof path, "%s/p.lua", dir);
    struct stat st;
    cr_expect_neq(stat(path, &st), 0, "a profile was written");
    free(out);
    free(err);
    scratch_remove_dir(dir);
}

/* A device and profile priced by an operator table as `estimate --profile` applies one:
 * the device's fp32 peak and bandwidth are the table's references. */
static void priced_by(const calib_ops_result *ops, device_spec *d, perf_profile *p)
{
    *d = cpu_device();
    d->peak_flops[PREC_FP32] = ops->table.peak_flops;
    d->bandwidth_bytes_per_s = ops->table.bandwidth_bytes_per_s;
    *p = perf_default_profile(d);
    p->operators = ops->table;
    p->has_operators = true;
    p->compute_efficiency = ops->table.gemm.efficiency;
    p->bandwidth_efficiency = ops->table.gemm.bandwidth_efficiency;
    p->kernel_launch_s = ops->table.gemm.floor_s;
}

/* calibrate --quick times 81 of the full operator grid's 157 shapes (a subset: recorded
 * from this machine, both runs at fit-a's shapes, tools/calibrate_loop.sh's first model).
 * Fitted to the full run's samples at the quick shapes alone, the table predicts the
 * decoder steps of tools/calibrate_loop.sh's grid (prefill 64-1024, decode batch 1-16 x
 * context 128-2048) within a stated tolerance of the table fitted to every shape
 * (docs/calibration.md): the quick grid's parameters differ (its GEMM weight stream 1.3
 * against 1.0, a tokens_half of nothing against 11), the steps they price much less. */
Test(calib_steps, the_quick_grid_prices_steps_as_the_full_grid_does)
{
    calib_meta meta;
    calib_samples full, quick, subset = { 0 };
    char err[256];
    cr_assert_eq(calib_samples_read("tests/data/calibration/ops_fit_a_full.csv", &meta, &full,
                                    err, sizeof err), 0, "%s", err);
    cr_assert_eq(calib_samples_read("tests/data/calibration/ops_fit_a_quick.csv", &meta, &quick,
                                    err, sizeof err), 0, "%s", err);
    for (size_t i = 0; i < full.count; i++) {
        const calib_sample *s = &full.items[i];
        bool in_quick = false;
        for (size_t j = 0; j < quick.count && !in_quick; j++) {
            const calib_sample *q = &quick.items[j];
            in_quick = !strcmp(q->kind, s->kind) && q->m == s->m && q->n == s->n && q->k == s->k;
        }
        if (in_quick)
            cr_assert_eq(calib_samples_add(&subset, s), 0);
    }
    device_spec cpu = cpu_device();
    calib_ops_result *a = calloc(1, sizeof *a), *b = calloc(1, sizeof *b);
    cr_assert_eq(calib_ops_fit_all(&full, perf_family_of(&cpu), a, err, sizeof err), 0, "%s", err);
    cr_assert_eq(calib_ops_fit_all(&subset, perf_family_of(&cpu), b, err, sizeof err), 0, "%s", err);
    device_spec da, db;
    perf_profile pa, pb;
    priced_by(a, &da, &pa);
    priced_by(b, &db, &pb);
    model_spec m = shape(2, 1024, 16, 4, 2816, 16000);
    double ss = 0, worst = 0;
    size_t n = 0;
    for (double p = 64; p <= 1024; p *= 4) {
        calib_step s = { &m, &da, PREC_FP32, 1, 1, p, 0, 0, 0, 0, false }, t = s;
        t.device = &db;
        double e = calib_step_predict(&t, &pb) / calib_step_predict(&s, &pa) - 1;
        ss += e * e, worst = fmax(worst, fabs(e)), n++;
    }
    for (double batch = 1; batch <= 16; batch *= 4)
        for (double c = 128; c <= 2048; c *= 4) {
            calib_step s = { &m, &da, PREC_FP32, 1, batch, 0, batch, c, 0, 0, false }, t = s;
            t.device = &db;
            double e = calib_step_predict(&t, &pb) / calib_step_predict(&s, &pa) - 1;
            ss += e * e, worst = fmax(worst, fabs(e)), n++;
        }
    /* the tolerance: half the +-15% a calibrated step may miss by at any point (issue
     * 43's target), and half of that again as a mean; recorded: rms 2.7%, worst 5.8% */
    cr_expect_lt(worst, 0.075, "quick against full: worst %.2f%% of a step", 100 * worst);
    cr_expect_lt(sqrt(ss / n), 0.0375, "quick against full: rms %.2f%%", 100 * sqrt(ss / n));
    free(a);
    free(b);
    calib_samples_release(&full);
    calib_samples_release(&quick);
    calib_samples_release(&subset);
}

/* kernels/calibrate_h200.sh's host side, replayed from samples this machine's CPU
 * recorded (tools/torch_ops.py and tools/torch_steps.py at tools/calibrate_loop.sh's four
 * models): the operator refit, the split into fit and check models, the steps fit and the
 * three checks on the models the fit never saw run as on a GPU, and give the errors they
 * gave when recorded (a golden run: the fit is deterministic).  The samples predate the
 * copy bandwidth's line, so no stream is judged against memory. */
Test(calib_steps, the_gpu_sessions_pipeline_replays_recorded_samples, .timeout = 120)
{
    char *dir = scratch_dir(), *out = NULL, *err = NULL, command[1024], path[512];
    snprintf(command, sizeof command, "OUT=%s WORK=%s/work FLEETSIM=%s RECORDED=%s "
             "CATALOG=EPYC-9654 sh kernels/calibrate_h200.sh", dir, dir, FLEETSIM_BIN,
             "tests/data/calibration/replay");
    int rc = scratch_run(command, &out, &err);
    snprintf(path, sizeof path, "%s/session.log", dir);
    char *log = scratch_read(path);
    cr_assert(log, "no session.log: %s", err);
    cr_expect_eq(rc, 0, "%s", log);
    cr_expect(strstr(log, "0 stage(s) failed"), "%s", log);
    /* the operator table alone, then the fitted engine, on the check models */
    const char *alone = strstr(log, "== check-torch-ops");
    const char *fitted = strstr(log, "== check-fitted");
    cr_assert(alone && fitted, "%s", log);
    cr_expect(strstr(alone, "all        24 steps  mean |error|   2.7%  worst   -9.5%"), "%s", alone);
    cr_expect(strstr(fitted, "all        24 steps  mean |error|   5.2%  worst  +10.0%"), "%s", fitted);
    cr_expect(strstr(log, "leaving one model out (2 folds, 24 rows): fitted 2.6%, operator "
                     "table alone 4.7% mean |error|"), "%s", log);
    snprintf(path, sizeof path, "%s/h200.tgz", dir);
    char *tgz = scratch_read(path);
    cr_expect(tgz, "no h200.tgz");
    free(tgz);
    free(log);
    free(out);
    free(err);
    scratch_remove_dir(dir);
}

/* The GEMM series an operator fit needs for its references: 1,024 x 2,048 products of 1 to
 * 256 tokens in fp32, bound by a peak of `peak` and a stream of `bw` (the reference
 * bandwidth: the one-token product's). */
static void add_gemm_references(calib_samples *samples, double peak, double bw)
{
    const int tokens[] = { 1, 2, 4, 8, 16, 64, 256 };
    for (size_t t = 0; t < sizeof tokens / sizeof tokens[0]; t++) {
        double T = tokens[t], K = 1024, N = 2048;
        double bytes = 4 * (K * N + T * K + T * N), flops = 2 * T * K * N;
        calib_sample s = { .kind = "op_gemm", .precision = "fp32", .threads = 1, .m = T,
                           .n = N, .k = K, .size_bytes = bytes, .bytes = bytes, .flops = flops,
                           .seconds = 2e-6 + fmax(flops / peak, bytes / bw) };
        cr_assert_eq(calib_samples_add(samples, &s), 0);
    }
}

/* GEMM samples streaming at 10 GB/s (the reference) beside norms that move their bytes at
 * 30 GB/s, up to 8 MB a shape, on a machine whose memory copies at 15 GB/s: the norms run
 * at twice what memory gives.  With a 16 MB cache the cache explains it and the share
 * stays; with a 4 MB cache, or none known, it is capped at the memory's (1.5 of the
 * reference); with no memory bandwidth measured nothing is judged (issue 43: pass
 * efficiencies at 5-45x the bandwidth). */
Test(calib_steps, a_stream_faster_than_memory_is_explained_by_the_cache_or_capped)
{
    const double peak = 100e9, bw = 10e9, fast = 30e9;
    calib_samples samples = { 0 };
    add_gemm_references(&samples, peak, bw);
    for (double T = 16; T <= 1024; T *= 4) {
        double bytes = 8 * T * 1024; /* up to 8.4 MB */
        calib_sample s = { .kind = "op_norm", .precision = "fp32", .threads = 1, .m = T,
                           .n = 1024, .size_bytes = bytes, .bytes = bytes,
                           .seconds = 1e-6 + bytes / fast };
        cr_assert_eq(calib_samples_add(&samples, &s), 0);
    }
    device_spec d = cpu_device();
    calib_ops_result *ops = calloc(1, sizeof *ops);
    char err[256];
    const double caches[] = { 16e6, 4e6, 0, 16e6 }, memory[] = { 15e9, 15e9, 15e9, 0 };
    for (size_t c = 0; c < 4; c++) {
        cr_assert_eq(calib_ops_fit_all(&samples, perf_family_of(&d), ops, err, sizeof err), 0,
                     "%s", err);
        double reference = ops->table.bandwidth_bytes_per_s;
        cr_expect(fabs(reference / bw - 1) < 0.05, "reference %g", reference);
        double norm = ops->table.pass[PASS_NORM].efficiency;
        cr_expect(norm > 2.5, "the norm's share as fitted: %g", norm);
        calib_ops_check_ceilings(ops, &samples, caches[c], memory[c]);
        const calib_ops_ceiling *hit = NULL;
        for (size_t i = 0; i < ops->nceilings; i++)
            if (!strcmp(ops->ceilings[i].what, "norm"))
                hit = &ops->ceilings[i];
        if (c == 3) {
            cr_expect_not(hit, "judged without a memory bandwidth");
            cr_expect_eq(ops->table.pass[PASS_NORM].efficiency, norm);
            continue;
        }
        cr_assert(hit, "the norm is not listed (cache %g)", caches[c]);
        cr_expect_eq(hit->largest_bytes, 8.0 * 1024 * 1024);
        cr_expect_eq(hit->capped, c == 1 || c == 2, "cache %g", caches[c]);
        cr_expect_eq(ops->table.pass[PASS_NORM].efficiency,
                     c == 0 ? norm : memory[c] / reference);
    }
    free(ops);
    calib_samples_release(&samples);
}

/* Eager attention (tools/torch_steps.py: a batched product, a scale, a softmax, a second
 * product) pays a dispatch per sequence and kv head, and its scores' round trips through
 * memory, which grow with the query heads a kv head serves.  Decode samples made that way
 * at two query groups (4 and 1, the calibration loop's fit models) give both costs back;
 * samples of one group cannot tell the scores from the cache and leave them out; the
 * table then prices a step's decode attention with them (by hand below). */
Test(calib_steps, eager_attentions_dispatch_and_scores_are_fitted_across_query_groups)
{
    /* scores of fp32 (4 bytes), read or written 10 times each */
    const double peak = 100e9, bw = 10e9, floor = 50e-6, per_head = 3e-6, accesses = 10;
    const double hd = 64;
    calib_samples two = { 0 }, one = { 0 };
    for (int g = 0; g < 2; g++) {
        double group = g ? 1 : 4, kv = g ? 12 : 4;
        for (int b = 1; b <= 16; b *= 4)
            for (int ctx = 128; ctx <= 2048; ctx *= 4) {
                double m = b * kv, cache = 2 * m * ctx * hd * 4;
                double t = floor + m * per_head + (cache + 4 * accesses * m * group * ctx) / bw;
                calib_sample s = { .kind = "op_attn_decode", .precision = "fp32",
                                   .threads = 1, .m = m, .n = ctx, .k = group,
                                   .size_bytes = cache, .bytes = cache,
                                   .flops = 4 * hd * group * m * ctx, .seconds = t };
                cr_assert_eq(calib_samples_add(&two, &s), 0);
                if (g == 0)
                    cr_assert_eq(calib_samples_add(&one, &s), 0);
            }
    }
    add_gemm_references(&two, peak, bw);
    add_gemm_references(&one, peak, bw);
    device_spec d = cpu_device();
    calib_ops_result *ops = calloc(1, sizeof *ops);
    char err[256];
    cr_assert_eq(calib_ops_fit_all(&two, perf_family_of(&d), ops, err, sizeof err), 0, "%s", err);
    perf_family t = ops->table;
    const perf_attn_decode_constants *a = &t.attn_decode;
    double ref = t.bandwidth_bytes_per_s;
    cr_expect(fabs(ref / bw - 1) < 0.05, "reference %g", ref);
    cr_expect(fabs(a->per_head_s / per_head - 1) < 0.05, "per head %g s", a->per_head_s);
    cr_expect(fabs(a->score_accesses / accesses - 1) < 0.05, "accesses %g", a->score_accesses);
    double stream = ref * a->efficiency * 1024 / (1024 + a->width_half);
    cr_expect(fabs(stream / bw - 1) < 0.05, "the cache's stream %g", stream);
    for (size_t i = 0; i < ops->nfits; i++)
        if (!strcmp(ops->fits[i].what, "attention_decode"))
            cr_expect_lt(ops->fits[i].worst_rel, 0.02, "decode fit worst %g",
                         ops->fits[i].worst_rel);

    /* a step's decode attention with the table: 16 sequences at 2,048 tokens of a model of
     * 14 query heads over 2 kv heads (check-a's), one layer, fp32; the table's stream
     * exactly bw, its floor and compute as fitted */
    t.attn_decode.width_half = 0;
    t.attn_decode.efficiency = bw / ref;
    t.attn_prefill.cached_efficiency = 1e6; /* the products free: memory alone */
    t.gemm.floor_s = 1e-9; /* the table's floors, not the launch */
    model_spec m = { .name = "check-a", .layers = 1, .hidden = 896, .heads = 14,
                     .kv_heads = 2, .ffn = 2432, .vocab = 12000, .gated = true };
    device_spec dev = d;
    dev.bandwidth_bytes_per_s = ref;
    perf_profile p = perf_default_profile(&dev);
    p.operators = t;
    p.has_operators = true;
    p.compute_efficiency = t.gemm.efficiency; /* the table as it is (no scaling) */
    p.bandwidth_efficiency = t.gemm.bandwidth_efficiency;
    p.kernel_launch_s = t.gemm.floor_s;
    perf_setup setup = { .model = &m, .device = &dev, .profile = &p, .weights = PREC_FP32,
                         .kv = PREC_FP32, .tp = 1 };
    perf_batch batch = { .decode_seqs = 16, .decode_context = 16 * 2048.0 };
    perf_breakdown ops_time;
    perf_iteration(&setup, &batch, &ops_time);
    double cache = 2 * 2 * hd * 4 * 16 * 2048, scores = 4.0 * 14 * 16 * 2048; /* fp32 */
    double want = a->floor_s + 16 * 2 * a->per_head_s + (cache + a->score_accesses * scores) / bw;
    double got = ops_time.op[OP_ATTN_DECODE].time_s;
    cr_expect(fabs(got / want - 1) < 1e-6, "decode attention %g s, by hand %g s", got, want);

    /* the profile file carries both */
    char *dir = scratch_dir(), path[512];
    snprintf(path, sizeof path, "%s/p.lua", dir);
    FILE *f = fopen(path, "w");
    cr_assert(f);
    fprintf(f, "return {\n  format = 1, device = \"TEST-CPU\", kind = \"cpu\",\n");
    cr_assert_eq(calib_ops_write_lua(f, &ops->table, PREC_FP32, "m", NULL, NULL, NULL, NULL), 0);
    fprintf(f, "}\n");
    fclose(f);
    device_profile back;
    cr_assert_eq(profile_load_file(path, &back, err, sizeof err), 0, "%s", err);
    cr_expect(fabs(back.perf.operators.attn_decode.per_head_s / a->per_head_s - 1) < 1e-5);
    cr_expect(fabs(back.perf.operators.attn_decode.score_accesses / a->score_accesses - 1) < 1e-5);
    scratch_remove_dir(dir);

    cr_expect_lt(ops->score_log_se, 0.05, "the scores' log error %g", ops->score_log_se);

    /* one query group: the scores are the cache's share, not a parameter */
    cr_assert_eq(calib_ops_fit_all(&one, perf_family_of(&d), ops, err, sizeof err), 0, "%s", err);
    cr_expect_eq(ops->table.attn_decode.score_accesses, 0);
    cr_expect(isnan(ops->score_log_se));
    cr_expect(fabs(ops->table.attn_decode.per_head_s / per_head - 1) < 0.05, "per head %g s",
              ops->table.attn_decode.per_head_s);

    /* five shapes: the form without the dispatch, still fitted (the fallback's 0.7 would
     * be no finding) */
    calib_samples five = { 0 };
    for (size_t i = 0, n = 0; i < one.count; i++)
        if (strcmp(one.items[i].kind, "op_attn_decode") || n++ < 5)
            cr_assert_eq(calib_samples_add(&five, &one.items[i]), 0);
    cr_assert_eq(calib_ops_fit_all(&five, perf_family_of(&d), ops, err, sizeof err), 0, "%s",
                 err);
    bool fitted = false;
    for (size_t i = 0; i < ops->nfits; i++)
        fitted |= !strcmp(ops->fits[i].what, "attention_decode") && ops->fits[i].points == 5;
    cr_expect(fitted, "no decode fit on five shapes");
    cr_expect_eq(ops->table.attn_decode.per_head_s, 0);
    calib_samples_release(&five);

    /* two groups whose times hold no scores, measured with a spread of 3% either way: the
     * fit cannot pin their bytes (any share small enough fits the noise) and leaves them
     * out, the rest as fitted */
    calib_samples none = { 0 };
    for (size_t i = 0; i < two.count; i++) {
        calib_sample s = two.items[i];
        if (!strcmp(s.kind, "op_attn_decode"))
            s.seconds = (floor + s.m * per_head + s.bytes / bw) * (i % 3 == 0   ? 1.03
                                                                   : i % 3 == 1 ? 0.97
                                                                                : 1);
        cr_assert_eq(calib_samples_add(&none, &s), 0);
    }
    cr_assert_eq(calib_ops_fit_all(&none, perf_family_of(&d), ops, err, sizeof err), 0, "%s",
                 err);
    cr_expect_eq(ops->table.attn_decode.score_accesses, 0);
    cr_expect(!(ops->score_log_se < 1), "the scores' log error %g", ops->score_log_se);
    /* the dispatch still found, within what 3% on 18 shapes leaves of it (a seventh to a
     * fifth of the smallest shapes' times) */
    cr_expect(fabs(ops->table.attn_decode.per_head_s / per_head - 1) < 0.25, "per head %g s",
              ops->table.attn_decode.per_head_s);
    calib_samples_release(&none);
    free(ops);
    calib_samples_release(&two);
    calib_samples_release(&one);
}
