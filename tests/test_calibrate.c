/* Calibration: the fits on recorded and synthetic samples, the profile file, the
 * performance model under a profile, and the command on this machine (kernels/). */
#include <criterion/criterion.h>
#include <criterion/redirect.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <lauxlib.h>

#include "kernels/calib_fit.h"
#include "kernels/calib_profile.h"
#include "kernels/calib_sample.h"
#include "lua/cli.h"
#include "kernels/cuda_probe.h"
#include "lua/catalog.h"
#include "lua/profile_load.h"
#include "lua/sandbox.h"
#include "models/perf.h"
#include "models/profile.h"
#include "sim/rng.h"

#define DATA "tests/data/calibration/"

static bool near(double got, double want, double rel)
{
    return fabs(got - want) <= rel * fabs(want);
}

/* Refits a samples file against the catalog entry named (NULL: none). */
static void refit(const char *path, const char *entry, catalog *cat, calib_result *r,
                  calib_meta *meta)
{
    char err[512];
    calib_samples s;
    sim_gsl_quiet();
    cr_assert_eq(calib_samples_read(path, meta, &s, err, sizeof err), 0, "%s", err);
    cr_assert_eq(catalog_load(cat, err, sizeof err), 0, "%s", err);
    const device_spec *d = entry ? catalog_device(cat, entry) : NULL;
    cr_assert_eq(calib_result_build(&s, meta, d, r, err, sizeof err), 0, "%s", err);
    calib_samples_release(&s);
}

static const calib_fit_report *fit_named(const calib_result *r, const char *prefix)
{
    for (size_t i = 0; i < r->nfits; i++)
        if (!strncmp(r->fits[i].what, prefix, strlen(prefix)))
            return &r->fits[i];
    cr_assert_fail("no fit named '%s'", prefix);
    return NULL;
}

/* synthetic.csv: parameters known (make_synthetic.py), noise +-2%. */
Test(calibrate, fits_recover_known_parameters)
{
    static calib_result r;
    calib_meta meta;
    catalog cat;
    refit(DATA "synthetic.csv", "H200-SXM", &cat, &r, &meta);
    const device_profile *p = &r.profile;
    /* alpha-beta: bandwidth within 2%, latency within 5% */
    const calib_fit_report *h2d = fit_named(&r, "h2d_pinned");
    cr_expect(near(h2d->ab.bytes_per_s, 25e9, 0.02), "h2d %g B/s", h2d->ab.bytes_per_s);
    cr_expect(near(h2d->ab.alpha_s, 10e-6, 0.05), "h2d alpha %g s", h2d->ab.alpha_s);
    cr_expect_gt(h2d->ab.r2, 0.99);
    const calib_fit_report *d2h = fit_named(&r, "d2h_pinned");
    cr_expect(near(d2h->ab.bytes_per_s, 20e9, 0.02) && near(d2h->ab.alpha_s, 8e-6, 0.05));
    cr_expect(near(p->host_link_bytes_per_s, 25e9, 0.02));
    /* the ring: 4 devices, 30 us and 100 GB/s of algorithm bandwidth */
    cr_expect(near(p->link_bytes_per_s, 150e9, 0.02), "link %g", p->link_bytes_per_s);
    cr_expect(near(p->perf.link_latency_s, 5e-6, 0.05), "latency %g", p->perf.link_latency_s);
    /* saturation: 800 TFLOP/s and 48 tokens at half, within 3% and 5% */
    const calib_fit_report *free_fit = fit_named(&r, "gemm bf16 decode-like (m; n = k = 8192), free");
    cr_expect(free_fit->sat.nonlinear);
    cr_expect(near(free_fit->sat.peak, 800e12, 0.03), "peak %g", free_fit->sat.peak);
    cr_expect(near(free_fit->sat.half, 48, 0.05), "half %g", free_fit->sat.half);
    cr_expect_gt(free_fit->sat.r2, 0.99);
    cr_expect(near(p->perf.tokens_half, 48, 0.05), "tokens_half %g", p->perf.tokens_half);
    cr_expect(near(p->flops[PREC_BF16], 800e12, 0.03));
    cr_expect(near(p->perf.compute_efficiency, p->flops[PREC_BF16] / 989.5e12, 1e-9));
    cr_expect(near(p->launch_s, 2.5e-6, 0.03) && near(r.launch_sync_s, 8e-6, 0.03));
    cr_expect(near(p->flops[PREC_FP32], 60e12, 0.03), "a GPU's fp32 is its FMA rate");
    /* the largest triad: 3 us + bytes / 4 TB/s */
    double bytes = 3.0 * 4096 * pow(4, 9);
    cr_expect(near(p->bandwidth_bytes_per_s, bytes / (3e-6 + bytes / 4e12), 0.03));
    catalog_release(&cat);
}

Test(calibrate, fits_on_exact_points)
{
    double x[] = { 1, 2, 8, 32, 128 }, y[5], t[5];
    for (int i = 0; i < 5; i++) {
        y[i] = 5e11 * x[i] / (x[i] + 20);
        t[i] = 2e-6 + x[i] * 1e6 / 1e10;
    }
    calib_saturation s;
    cr_assert_eq(calib_fit_saturation(x, y, 5, &s), 0);
    cr_expect(near(s.peak, 5e11, 1e-6) && near(s.half, 20, 1e-6), "%g %g", s.peak, s.half);
    cr_expect(near(s.r2, 1, 1e-9));
    calib_alpha_beta ab;
    double bytes[5];
    for (int i = 0; i < 5; i++)
        bytes[i] = x[i] * 1e6;
    cr_assert_eq(calib_fit_alpha_beta(bytes, t, 5, &ab), 0);
    cr_expect(near(ab.alpha_s, 2e-6, 1e-6) && near(ab.bytes_per_s, 1e10, 1e-6));
    double falling[] = { 5, 4, 3, 2, 1 };
    cr_expect_eq(calib_fit_saturation(x, falling, 5, &s), -1, "a falling rate has no asymptote");
    cr_expect_eq(s.peak, 5, "the best rate stands in");
    double v[] = { 4, 1, 3, 2, 5 }, iqr;
    cr_expect_eq(calib_median(v, 5, &iqr), 3);
    cr_expect_eq(iqr, 2);
}

/* A real quick run of this machine's CPU, committed with the profile it gave: a refit
 * must give the same numbers (to the 6 digits the Lua file keeps). */
Test(calibrate, refit_of_recorded_cpu_run_matches_its_profile)
{
    static calib_result r;
    calib_meta meta;
    catalog cat;
    refit(DATA "cpu_quick.csv", "EPYC-9654", &cat, &r, &meta);
    device_profile recorded;
    char err[512];
    cr_assert_eq(profile_load_file(DATA "cpu_quick.lua", &recorded, err, sizeof err), 0, "%s", err);
    const device_profile *p = &r.profile;
    cr_expect(near(p->flops[PREC_FP32], recorded.flops[PREC_FP32], 1e-5));
    cr_expect(near(p->fp64_flops, recorded.fp64_flops, 1e-5));
    cr_expect(near(p->bandwidth_bytes_per_s, recorded.bandwidth_bytes_per_s, 1e-5));
    cr_expect(near(p->perf.tokens_half, recorded.perf.tokens_half, 1e-5));
    cr_expect(near(p->perf.compute_efficiency, recorded.perf.compute_efficiency, 1e-5));
    cr_expect_str_eq(recorded.catalog, "EPYC-9654");
    cr_expect_str_eq(recorded.kind, "cpu");
    /* sane for a CPU: tens of GB/s, tens of GFLOP/s or more, a small share of 96 cores */
    cr_expect(p->bandwidth_bytes_per_s > 1e9 && p->bandwidth_bytes_per_s < 1e12);
    cr_expect(p->flops[PREC_FP32] > 1e9 && p->flops[PREC_FP32] > p->fp64_flops);
    cr_expect(p->perf.compute_efficiency > 0 && p->perf.compute_efficiency < 1);
    catalog_release(&cat);
}

/* Writing a profile and reading it back gives the same numbers. */
Test(calibrate, profile_round_trip)
{
    static calib_result r;
    calib_meta meta;
    catalog cat;
    refit(DATA "synthetic.csv", "H200-SXM", &cat, &r, &meta);
    char path[] = "/tmp/fleetsim-profile-XXXXXX";
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    FILE *f = fdopen(fd, "w");
    cr_assert_eq(calib_result_write_lua(f, &r, &meta, catalog_device(&cat, "H200-SXM"),
                                        "synthetic.csv"), 0);
    fclose(f);
    device_profile back;
    char err[512];
    int status = profile_load_file(path, &back, err, sizeof err);
    unlink(path);
    cr_assert_eq(status, 0, "%s", err);
    const device_profile *p = &r.profile;
    for (int i = 0; i < PREC_COUNT; i++)
        cr_expect(near(back.flops[i], p->flops[i], 1e-5), "%s", precision_name((precision)i));
    cr_expect(near(back.bandwidth_bytes_per_s, p->bandwidth_bytes_per_s, 1e-5));
    cr_expect(near(back.link_bytes_per_s, p->link_bytes_per_s, 1e-5));
    cr_expect(near(back.host_link_bytes_per_s, p->host_link_bytes_per_s, 1e-5));
    cr_expect(near(back.host_link_latency_s, p->host_link_latency_s, 1e-5));
    cr_expect(near(back.launch_s, p->launch_s, 1e-5));
    cr_expect(near(back.perf.compute_efficiency, p->perf.compute_efficiency, 1e-5));
    cr_expect(near(back.perf.tokens_half, p->perf.tokens_half, 1e-5));
    cr_expect(near(back.perf.bandwidth_efficiency, p->perf.bandwidth_efficiency, 1e-5));
    cr_expect(near(back.perf.kernel_launch_s, p->perf.kernel_launch_s, 1e-5));
    cr_expect(near(back.perf.link_latency_s, p->perf.link_latency_s, 1e-5));
    cr_expect(isnan(back.perf.width_half), "a field the file lacks stays absent");
    cr_expect_str_eq(back.device, "Synthetic NVIDIA H200");
    cr_expect_str_eq(back.catalog, "H200-SXM");
    catalog_release(&cat);
}

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    cr_assert(f);
    fputs(text, f);
    fclose(f);
}

Test(calibrate, bad_profile_is_reported_with_its_key)
{
    char dir[] = "/tmp/fleetsim-profile-XXXXXX", path[128], err[512];
    cr_assert(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/bad.lua", dir);
    write_text(path, "return { achieved = { flops = { bf16 = -1 } } }\n");
    device_profile p;
    cr_expect_eq(profile_load_file(path, &p, err, sizeof err), -1);
    cr_expect(strstr(err, "bad.lua: achieved.flops.bf16"), "%s", err);
    write_text(path, "return { achieved = { bandwith_bytes_per_s = 1e9 } }\n");
    cr_expect_eq(profile_load_file(path, &p, err, sizeof err), -1);
    cr_expect(strstr(err, "bandwidth_bytes_per_s"), "suggests the key: %s", err);
    write_text(path, "return 42\n");
    cr_expect_eq(profile_load_file(path, &p, err, sizeof err), -1);
    cr_expect(strstr(err, "return a table"), "%s", err);
    write_text(path, "os.exit(3)\n");
    cr_expect_eq(profile_load_file(path, &p, err, sizeof err), -1, "the sandbox has no os");
    unlink(path);
    rmdir(dir);
}

/* ---- the performance model under a profile ---------------------------------------------- */

Test(calibrate, profile_moves_predictions_by_the_expected_amount)
{
    catalog cat;
    char err[512];
    cr_assert_eq(catalog_load(&cat, err, sizeof err), 0, "%s", err);
    const device_spec *h200 = catalog_device(&cat, "H200-SXM");
    const model_spec *m = catalog_model(&cat, "llama-2-7b");
    cr_assert(h200 && m);
    device_profile fast, slow;
    profile_init(&fast);
    fast.flops[PREC_FP16] = 600e12;
    fast.bandwidth_bytes_per_s = 4e12;
    fast.perf.tokens_half = 32;
    fast.perf.kernel_launch_s = 3e-6;
    slow = fast;
    slow.bandwidth_bytes_per_s = 2e12; /* half the bandwidth */
    device_spec d_fast = *h200, d_slow = *h200;
    perf_profile p_fast = perf_default_profile(h200), p_slow = p_fast;
    profile_apply(&fast, &d_fast, &p_fast);
    profile_apply(&slow, &d_slow, &p_slow);
    cr_expect_eq(d_fast.peak_flops[PREC_FP16], 600e12);
    cr_expect_eq(p_fast.compute_efficiency, 1, "the achieved peak includes the efficiency");
    cr_expect_eq(p_fast.bandwidth_efficiency, 1);
    cr_expect(near(d_fast.peak_flops[PREC_FP8], 1979e12, 1e-12),
              "unmeasured and no datasheet share: the datasheet stays");
    /* batch-1 decode is memory-bound: half the bandwidth doubles the time its products
     * and its attention stream memory; their kernel floors and the host's work stay */
    perf_setup sa = { .model = m, .device = &d_fast, .profile = &p_fast, .weights = PREC_FP16, .kv = PREC_FP16, .tp = 1 };
    perf_setup sb = { .model = m, .device = &d_slow, .profile = &p_slow, .weights = PREC_FP16, .kv = PREC_FP16, .tp = 1 };
    perf_batch one = { .decode_seqs = 1, .decode_context = 1024 };
    perf_breakdown oa, ob;
    perf_time a = perf_iteration(&sa, &one, &oa);
    perf_time b = perf_iteration(&sb, &one, &ob);
    cr_assert(!a.compute_bound && !b.compute_bound);
    const perf_op streams[] = { OP_QKV, OP_OUT_PROJ, OP_MLP_UP, OP_MLP_DOWN, OP_LM_HEAD,
                                OP_ATTN_DECODE };
    for (size_t i = 0; i < sizeof streams / sizeof streams[0]; i++) {
        const perf_op_time *x = &oa.op[streams[i]], *y = &ob.op[streams[i]];
        if (streams[i] != OP_ATTN_DECODE) /* at batch 1 its floor is the larger part */
            cr_expect_eq(x->bound, BOUND_MEMORY, "%s", perf_op_name(streams[i]));
        cr_expect(near(y->memory_s, 2 * x->memory_s, 1e-12), "%s", perf_op_name(streams[i]));
        cr_expect_eq(y->floor_s, x->floor_s, "%s", perf_op_name(streams[i]));
    }
    cr_expect_eq(a.host_s, b.host_s);
    cr_expect_gt(b.total_s, 1.5 * a.total_s, "%g against %g s", b.total_s, a.total_s);
    /* the profile's launch cost scales every kernel floor */
    perf_profile p_slower_launch = p_fast;
    p_slower_launch.kernel_launch_s = 6e-6;
    perf_setup sc = { .model = m, .device = &d_fast, .profile = &p_slower_launch, .weights = PREC_FP16, .kv = PREC_FP16, .tp = 1 };
    perf_breakdown oc;
    perf_iteration(&sc, &one, &oc);
    for (size_t i = 0; i < sizeof streams / sizeof streams[0]; i++)
        cr_expect(near(oc.op[streams[i]].floor_s, 2 * oa.op[streams[i]].floor_s, 1e-12), "%s",
                  perf_op_name(streams[i]));
    /* a prefill of 8 x 2048 tokens is compute-bound: 1.5 x the peak, 1/1.5 the time */
    device_profile faster = fast;
    faster.flops[PREC_FP16] = 900e12;
    device_spec d_faster = *h200;
    perf_profile p_faster = perf_default_profile(h200);
    profile_apply(&faster, &d_faster, &p_faster);
    perf_setup pfast = { .model = m, .device = &d_fast, .profile = &p_fast, .weights = PREC_FP16, .kv = PREC_FP16, .tp = 1 };
    perf_setup pfaster = { .model = m, .device = &d_faster, .profile = &p_faster, .weights = PREC_FP16, .kv = PREC_FP16, .tp = 1 };
    perf_time pa = perf_prefill(&pfast, 8, 2048);
    perf_time pb = perf_prefill(&pfaster, 8, 2048);
    cr_assert(pa.compute_bound && pb.compute_bound);
    cr_expect(near(pb.compute_s, pa.compute_s / 1.5, 1e-12));
    /* against the datasheet defaults: the table's share of 989.5 TFLOP/s against 600
     * achieved */
    perf_profile dflt = perf_default_profile(h200);
    perf_setup pdflt = { .model = m, .device = h200, .profile = &dflt, .weights = PREC_FP16, .kv = PREC_FP16, .tp = 1 };
    perf_time pd = perf_prefill(&pdflt, 8, 2048);
    cr_expect(near(pa.compute_s / pd.compute_s, 989.5e12 * dflt.compute_efficiency / 600e12, 1e-9),
              "%g", pa.compute_s / pd.compute_s);
    catalog_release(&cat);
}

Test(calibrate, profile_shares_scale_unmeasured_precisions)
{
    device_spec d = { 0 };
    d.peak_flops[PREC_FP16] = 1000e12;
    d.peak_flops[PREC_FP8] = 2000e12;
    d.bandwidth_bytes_per_s = 5e12;
    device_profile p;
    profile_init(&p);
    p.flops[PREC_FP16] = 700e12;
    p.perf.compute_efficiency = 0.7;
    p.perf.bandwidth_efficiency = 0.8; /* no achieved bandwidth: the share applies */
    perf_profile perf = { .compute_efficiency = 0.5, .tokens_half = 1, .width_half = 1,
                          .bandwidth_efficiency = 0.5, .devices_per_node = 1 };
    profile_apply(&p, &d, &perf);
    cr_expect(near(d.peak_flops[PREC_FP8], 1400e12, 1e-12));
    cr_expect_eq(perf.compute_efficiency, 1);
    cr_expect_eq(perf.bandwidth_efficiency, 0.8);
    cr_expect_eq(d.bandwidth_bytes_per_s, 5e12);
}

/* A pool's profile = "..." key, as lua/pool_load.c will read it. */
Test(calibrate, pool_profile_key)
{
    char dir[] = "/tmp/fleetsim-pool-XXXXXX", path[160], scenario[160], err[512] = "";
    cr_assert(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/h200.lua", dir);
    snprintf(scenario, sizeof scenario, "%s/fleet.lua", dir);
    write_text(path, "return { achieved = { bandwidth_bytes_per_s = 2e12 }, perf = { tokens_half = 7 } }\n");
    sandbox *sb = sandbox_create(false);
    lua_State *L = sandbox_state(sb);
    load_context c = { L, err, sizeof err, NULL, 0, scenario, false, 0, false, NULL };
    cr_assert_eq(luaL_dostring(L, "return { gpu = 'H200-SXM', profile = 'h200.lua' }"), LUA_OK);
    fields_object pool;
    cr_assert_eq(fields_object_open(&c, -1, "pools.a", "fleet.lua:3: ", NULL, "a pool", &pool), 0);
    snprintf(pool.where, sizeof pool.where, "fleet.lua:3: ");
    device_spec d = { 0 };
    perf_profile perf = { .compute_efficiency = 0.7, .tokens_half = 32, .width_half = 128,
                          .bandwidth_efficiency = 0.85, .kernel_launch_s = 4e-6,
                          .kernels_per_layer = 8, .link_latency_s = 10e-6,
                          .network_bytes_per_s = 50e9, .devices_per_node = 8,
                          .dp_overlap = 0.8 };
    cr_expect_eq(profile_load_convert(&c, &pool, &d, &perf), 1, "%s", err);
    cr_expect_eq(d.bandwidth_bytes_per_s, 2e12);
    cr_expect_eq(perf.tokens_half, 7);
    cr_expect_eq(perf.width_half, 128);
    lua_settop(L, 0);
    cr_assert_eq(luaL_dostring(L, "return { profile = '../elsewhere.lua' }"), LUA_OK);
    cr_assert_eq(fields_object_open(&c, -1, "pools.b", "fleet.lua:5: ", NULL, "a pool", &pool), 0);
    snprintf(pool.where, sizeof pool.where, "fleet.lua:5: ");
    cr_expect_eq(profile_load_convert(&c, &pool, &d, &perf), -1);
    cr_expect(strstr(err, "fleet.lua:5: pools.b.profile"), "%s", err);
    lua_settop(L, 0);
    cr_assert_eq(luaL_dostring(L, "return { gpu = 'H200-SXM' }"), LUA_OK);
    cr_assert_eq(fields_object_open(&c, -1, "pools.c", "", NULL, "a pool", &pool), 0);
    cr_expect_eq(profile_load_convert(&c, &pool, &d, &perf), 0, "no profile key");
    sandbox_free(sb);
    unlink(path);
    rmdir(dir);
}

/* ---- the command ----------------------------------------------------------------------- */

static int run_calibrate(const char **args, int n)
{
    char *argv[16] = { "fleetsim", "calibrate" };
    for (int i = 0; i < n; i++)
        argv[2 + i] = (char *)args[i];
    return cli_calibrate(2 + n, argv);
}

static bool stderr_has(const char *text)
{
    fflush(stderr);
    FILE *f = cr_get_redirected_stderr();
    char buf[4096];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = '\0';
    return strstr(buf, text) != NULL;
}

/* For real, in --quick mode: no timing assertions, only sane figures. */
Test(calibrate, cpu_quick_run, .timeout = 300)
{
    char dir[] = "/tmp/fleetsim-calibrate-XXXXXX", out[128], csv[128], err[512];
    cr_assert(mkdtemp(dir));
    snprintf(out, sizeof out, "%s/cpu.lua", dir);
    snprintf(csv, sizeof csv, "%s/cpu.csv", dir);
    sim_gsl_quiet();
    const char *args[] = { "--device", "cpu", "--quick", "-q", "-o", out };
    FILE *saved = stdout;
    stdout = fopen("/dev/null", "w"); /* the report */
    int status = run_calibrate(args, 6);
    fclose(stdout);
    stdout = saved;
    cr_assert_eq(status, 0);
    device_profile p;
    cr_assert_eq(profile_load_file(out, &p, err, sizeof err), 0, "%s", err);
    cr_expect_str_eq(p.kind, "cpu");
    cr_expect(p.bandwidth_bytes_per_s > 1e8 && p.bandwidth_bytes_per_s < 1e13,
              "bandwidth %g B/s", p.bandwidth_bytes_per_s);
    cr_expect(p.flops[PREC_FP32] > 1e8, "fp32 %g FLOP/s", p.flops[PREC_FP32]);
    cr_expect(p.fp64_flops > 1e8, "fp64 %g FLOP/s", p.fp64_flops);
    cr_expect(*p.catalog, "compared with a catalog entry");
    cr_expect(p.perf.compute_efficiency > 0, "a nonzero share of the datasheet peak");
    cr_expect(p.perf.tokens_half >= 0);
    /* the samples beside it refit to the same profile */
    char refit_out[160];
    snprintf(refit_out, sizeof refit_out, "%s/again.lua", dir);
    const char *again[] = { "--refit", csv, "-q", "-o", refit_out };
    stdout = fopen("/dev/null", "w");
    status = run_calibrate(again, 5);
    fclose(stdout);
    stdout = saved;
    cr_assert_eq(status, 0);
    device_profile q;
    cr_assert_eq(profile_load_file(refit_out, &q, err, sizeof err), 0, "%s", err);
    cr_expect(near(q.flops[PREC_FP32], p.flops[PREC_FP32], 1e-5));
    cr_expect(near(q.bandwidth_bytes_per_s, p.bandwidth_bytes_per_s, 1e-5));
    unlink(out);
    unlink(csv);
    unlink(refit_out);
    rmdir(dir);
}

Test(calibrate, cuda_without_a_device_says_so, .init = cr_redirect_stderr)
{
    char why[256];
    if (!kernels_cuda_built())
        cr_skip_test("built without nvcc");
    if (kernels_cuda_device_count(why, sizeof why) > 0)
        cr_skip_test("a CUDA device is present");
    const char *args[] = { "--device", "cuda", "--quick", "-o", "/tmp/never.lua" };
    cr_expect_eq(run_calibrate(args, 5), 1);
    cr_expect(stderr_has("no CUDA device to calibrate"));
    cr_expect_eq(access("/tmp/never.lua", F_OK), -1, "no profile written");
}

Test(calibrate, bad_usage_and_bad_samples, .init = cr_redirect_stderr)
{
    const char *device[] = { "--device", "tpu" };
    cr_expect_eq(run_calibrate(device, 2), 2);
    const char *both[] = { "--device", "cpu", "--refit", "x.csv" };
    cr_expect_eq(run_calibrate(both, 4), 2);
    char dir[] = "/tmp/fleetsim-calibrate-XXXXXX", path[128];
    cr_assert(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/bad.csv", dir);
    write_text(path, "kind,precision,threads,m,n,k,size_bytes,bytes,flops,repeat,seconds\n"
                     "copy,fp64,1,0,0,0,4096,8192,0,0,-1\n");
    const char *bad[] = { "--refit", path, "-q" };
    cr_expect_eq(run_calibrate(bad, 3), 2);
    cr_expect(stderr_has("bad.csv:2: seconds: expected a number from 1e-9 to 1e6, got '-1'"));
    /* a time past any measurement: a fit of it was inf, which the loader then refused */
    write_text(path, "kind,precision,threads,m,n,k,size_bytes,bytes,flops,repeat,seconds\n"
                     "copy,fp64,1,0,0,0,4096,8192,0,0,1e308\n");
    cr_expect_eq(run_calibrate(bad, 3), 2);
    cr_expect(stderr_has("bad.csv:2: seconds: expected a number from 1e-9 to 1e6, got '1e308'"));
    write_text(path, "kind,precision,threads,m,n,k,size_bytes,bytes,flops,repeat,seconds\n"
                     "gemm,fp32,1,1e300,4,4,4096,8192,0,0,1e-3\n");
    cr_expect_eq(run_calibrate(bad, 3), 2);
    cr_expect(stderr_has("bad.csv:2: m: expected a number from 0 to 1e9, got '1e300'"));
    unlink(path);
    rmdir(dir);
}
