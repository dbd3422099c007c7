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
    t.attn_decode = (perf_attn_decode_constants){ 0.6, 2, 2e-6 };
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

Test(calib_steps, the_fit_recovers_known_engine_parameters_from_synthetic_steps)
{
    device_spec d = cpu_device();
    perf_profile base = table_profile(&d);
    model_spec models[] = { shape(2, 1024, 16, 4, 2816, 16000), shape(6, 512, 8, 8, 1408, 8000) };
    const calib_steps_params truth = { .host_s = 2e-3, .host_per_seq_s = 1e-4,
                                       .gemm_compute = 0.6, .gemm_bandwidth = 0.8,
                                       .attention_prefill = 0.5, .attention_decode = 0.7,
                                       .passes = 0.4, .kernel_s = 5e-6 };
    calib_step rows[64];
    size_t n = synthetic_steps(&base, &truth, models, &d, rows);
    calib_steps_hold_out(rows, n, 0.25);
    calib_steps_fit fit;
    perf_profile fitted;
    char err[256];
    cr_assert_eq(calib_steps_fit_rows(rows, n, &base, &fit, &fitted, err, sizeof err), 0, "%s", err);
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
}

/* Steps in which the memory passes cost nothing (their share a thousand times the
 * table's) do not identify that share: the fit keeps it within its bound instead of
 * running away (a noisy CI run once wrote a share of 2e12, which the loader refused). */
Test(calib_steps, an_unidentified_share_stays_within_its_bound)
{
    device_spec d = cpu_device();
    perf_profile base = table_profile(&d);
    model_spec models[] = { shape(2, 1024, 16, 4, 2816, 16000), shape(6, 512, 8, 8, 1408, 8000) };
    const calib_steps_params truth = { .host_s = 2e-3, .host_per_seq_s = 1e-4,
                                       .gemm_compute = 0.6, .gemm_bandwidth = 0.8,
                                       .attention_prefill = 0.5, .attention_decode = 0.7,
                                       .passes = 1e6, .kernel_s = 5e-6 };
    calib_step rows[64];
    size_t n = synthetic_steps(&base, &truth, models, &d, rows);
    calib_steps_fit fit;
    perf_profile fitted;
    char err[256];
    cr_assert_eq(calib_steps_fit_rows(rows, n, &base, &fit, &fitted, err, sizeof err), 0, "%s", err);
    const calib_steps_params *q = &fit.params;
    const double shares[] = { q->gemm_compute, q->gemm_bandwidth, q->attention_prefill,
                              q->attention_decode, q->passes };
    for (size_t k = 0; k < 5; k++)
        cr_expect(shares[k] <= CALIB_STEPS_SHARE_MAX && shares[k] >= 1 / CALIB_STEPS_SHARE_MAX,
                  "share %zu: %g", k, shares[k]);
    cr_expect_lt(fabs(fit.train.worst_rel), 0.05, "the steps are still fitted: %g (passes %g)",
                 fit.train.worst_rel, q->passes);
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
    cr_assert_eq(calib_ops_write_lua(f, t, PREC_FP32, "m", NULL, 0, NULL, NULL), 0);
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
