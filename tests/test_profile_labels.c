/* What an output says about a calibration profile (issue 43): estimate --profile names the
 * operator classes the profile priced and the memory it measured; the spread of the
 * measurements reaches the profile and the band estimate prints. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/perf.h"
#include "models/profile.h"
#include "tests/support/cli.h"
#include "tests/support/scratch.h"

#define RECORDED "tests/data/calibration/torch_ops_cpu.csv"

/* The recorded PyTorch operators (tools/torch_ops.py --processes 2 on the development
 * machine, 25.3 GB of memory) refitted: the profile keeps the machine's memory, and
 * estimate prices every layer operator from its table, says so, and holds the cache in
 * the measured memory rather than the catalog CPU's 768 GB. */
Test(profile_labels, estimate_names_the_profiles_operators_and_memory)
{
    char *dir = scratch_dir(), *out = NULL, *err = NULL, path[512];
    int rc = cli_run(&out, &err, "calibrate --refit " RECORDED " -o %s/ops.lua", dir);
    cr_assert_eq(rc, 0, "%s", err);
    snprintf(path, sizeof path, "%s/ops.lua", dir);
    char *lua = scratch_read(path);
    cr_expect(lua && strstr(lua, "memory_bytes = 2.52762e+10,"), "%s", lua ? lua : "none");
    free(lua);
    rc = cli_run(&out, &err, "estimate --model llama-3-8b --gpu EPYC-9654 --profile %s", path);
    cr_assert_eq(rc, 0, "%s", err);
    cr_expect(strstr(out, "operators: the profile's table, fitted at model fa (GEMMs, attention,"),
              "%s", out);
    cr_expect(strstr(out, "memory 25.3 GB: the measured machine's"), "%s", out);
    cr_expect(!strstr(out, "no operator measurements"), "%s", out);
    cr_expect(!strstr(out, "687.9 GB usable"), "the catalog's memory: %s", out);
    cr_expect(strstr(out, "  qkv_proj ") && strstr(out, "the profile's (measured)\n"), "%s", out);
    cr_expect(!strstr(out, "operators (cuBLAS"), "a GPU engine's kernels named: %s", out);
    free(out);
    free(err);
    scratch_remove_dir(dir);
}

/* A profile of device figures alone (no operator table, no memory) says that the
 * operators are the family's shares of its peaks and the memory the catalog's. */
Test(profile_labels, a_profile_without_operators_says_what_stays_the_catalogs)
{
    char *out = NULL, *err = NULL;
    int rc = cli_run(&out, &err, "estimate --model llama-3-8b --gpu EPYC-9654 --profile "
                     "kernels/profiles/epyc-2vcpu.lua");
    cr_assert_eq(rc, 0, "%s", err);
    cr_expect(strstr(out, "achieved peaks and bandwidth the profile's; the operators the "
                     "catalog's"), "%s", out);
    cr_expect(strstr(out, "memory: the catalog's (the profile did not measure it)"), "%s", out);
    cr_expect(!strstr(out, "measured spread"), "%s", out);
    free(out);
    free(err);
}

/* Five GEMM shapes, three repeats each at 0.9, 1.0 and 1.1 of the shape's time: the
 * quartiles (linear between order statistics) are 0.95 and 1.05, a spread of 0.1 at every
 * shape, so the class's is 0.1; estimate's band is half of it where GEMMs are all the step
 * (+-5.0%), less where other classes without a spread take time. */
Test(profile_labels, the_spread_of_the_repeats_reaches_the_profile_and_the_band)
{
    char *dir = scratch_dir(), *out = NULL, *err = NULL, path[512];
    char text[8192];
    size_t used = snprintf(text, sizeof text,
                           "# fleetsim calibration samples\n# device: AMD EPYC\n# kind: cpu\n"
                           "# model: g\n# memory_bytes: 64e9\n"
                           "kind,precision,threads,m,n,k,size_bytes,bytes,flops,repeat,seconds\n");
    const double tokens[] = { 1, 4, 16, 64, 256 }, k = 1024, n = 1024;
    for (size_t i = 0; i < 5; i++) {
        double T = tokens[i], bytes = 4 * (k * n + T * k + T * n), flops = 2 * T * k * n;
        double t = 1e-5 + fmax(flops / 50e9, bytes / 10e9);
        for (int r = 0; r < 3; r++)
            used += snprintf(text + used, sizeof text - used,
                             "op_gemm,fp32,1,%g,%g,%g,%.17g,%.17g,%.17g,%d,%.17g\n", T, n, k,
                             bytes, bytes, flops, r, t * (0.9 + 0.1 * r));
    }
    char *samples = scratch_file(dir, "g.csv", text);
    int rc = cli_run(&out, &err, "calibrate --refit %s -o %s/g.lua", samples, dir);
    cr_assert_eq(rc, 0, "%s", err);
    snprintf(path, sizeof path, "%s/g.lua", dir);
    char *lua = scratch_read(path);
    cr_expect(lua && strstr(lua, "gemm = 0.1,"), "%s", lua ? lua : "none");
    cr_expect(lua && strstr(lua, "memory_bytes = 6.4e+10,"), "%s", lua ? lua : "none");
    free(lua);
    rc = cli_run(&out, &err, "estimate --model llama-3-8b --gpu EPYC-9654 --profile %s", path);
    cr_assert_eq(rc, 0, "%s", err);
    const char *band = strstr(out, "measured spread     +-");
    cr_assert(band, "%s", out);
    double first = 0, decode = 0;
    cr_expect_eq(sscanf(band, "measured spread     +-%lf%% on the first token, +-%lf%%", &first,
                        &decode), 2, "%s", band);
    cr_expect(first > 4 && first <= 5.0001 && decode > 4 && decode <= 5.0001,
              "bands %g%% and %g%%: GEMMs most of the step, nothing above 5%%", first, decode);
    cr_expect(strstr(band, "interquartile range: gemm 5.0%)"), "%s", band);
    free(samples);
    free(out);
    free(err);
    scratch_remove_dir(dir);
}

/* The band of a step, by hand: 3 ms of GEMMs at a spread of 0.1, 1 ms of decode attention
 * at 0.2, 1 ms of norms (a pass) at 0.05 and 1 ms of host work (not an operator):
 * (0.3 + 0.2 + 0.05) / 6 ms = 0.091667. */
Test(profile_labels, a_steps_spread_weighs_each_class_by_its_time)
{
    device_profile p;
    profile_init(&p);
    p.spread[SPREAD_GEMM] = 0.1;
    p.spread[SPREAD_ATTN_DECODE] = 0.2;
    p.spread[SPREAD_PASSES] = 0.05;
    perf_breakdown ops = { 0 };
    ops.op[OP_QKV].time_s = 1e-3;
    ops.op[OP_MLP_UP].time_s = 2e-3;
    ops.op[OP_ATTN_DECODE].time_s = 1e-3;
    ops.op[OP_NORM].time_s = 1e-3;
    ops.op[OP_HOST].time_s = 1e-3;
    double got = profile_step_spread(&p, &ops, 6e-3);
    cr_expect(fabs(got - 0.55 / 6) < 1e-12, "spread %.9g, by hand %.9g", got, 0.55 / 6);
    cr_expect_eq(profile_step_spread(&p, &ops, 0), 0);
}
