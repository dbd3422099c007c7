/* The CUDA probe: a vector addition on the device where there is one; the CUDA operator
 * profile. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/calib_ops.h"
#include "kernels/cuda_probe.h"
#include "models/perf.h"

Test(kernels, cuda_vector_add_matches_the_host)
{
    char why[256] = "";
    if (!kernels_cuda_built())
        cr_skip_test("built without CUDA");
    if (kernels_cuda_device_count(why, sizeof why) == 0)
        cr_skip_test("no CUDA device: %s", why);
    cr_expect_eq(kernels_cuda_selftest(1 << 20, why, sizeof why), 0, "%s", why);
}

Test(kernels, absent_device_is_reported_not_crashed)
{
    char why[256] = "";
    int n = kernels_cuda_device_count(why, sizeof why);
    cr_expect_geq(n, 0);
    if (n == 0)
        cr_expect_gt(strlen(why), 0, "a missing device must come with a reason");
}

/* The CUDA operator profile (kernels/calib_ops_cuda.cu) of a small decoder: every operator
 * class sampled, and the operator fit takes them (where there is a device; elsewhere the
 * call says why and appends nothing). */
Test(kernels, cuda_operator_profile_samples_every_class_and_fits, .timeout = 600)
{
    model_spec m = { .name = "small", .layers = 2, .hidden = 1024, .heads = 16, .kv_heads = 4,
                     .ffn = 2816, .vocab = 16000, .gated = true, .context = 4096 };
    calib_options o = { .quick = true };
    calib_samples samples = { 0 };
    calib_meta meta = { 0 };
    char err[512] = "", why[256] = "";
    if (!kernels_cuda_built() || kernels_cuda_device_count(why, sizeof why) == 0) {
        cr_expect_eq(calib_ops_cuda_run(&o, &m, &samples, &meta, err, sizeof err), -1);
        cr_expect_gt(strlen(err), 0, "a refusal must come with a reason");
        cr_expect_eq(samples.count, 0);
        cr_skip_test("no CUDA device: %s", *why ? why : err);
    }
    cr_assert_eq(calib_ops_cuda_run(&o, &m, &samples, &meta, err, sizeof err), 0, "%s", err);
    cr_expect_str_eq(meta.kind, "gpu");
    const char *kinds[] = { "op_gemm", "op_attn_decode", "op_attn_prefill", "op_norm", "op_rope",
                            "op_act", "op_add", "op_embed", "op_reshape", "op_sample" };
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
        size_t n = 0;
        for (size_t i = 0; i < samples.count; i++)
            n += !strcmp(samples.items[i].kind, kinds[k]) && samples.items[i].seconds > 0;
        cr_expect_gt(n, 0, "no %s samples", kinds[k]);
    }
    device_spec gpu = { .name = "gpu", .bandwidth_bytes_per_s = 3e12 };
    calib_ops_result *ops = calloc(1, sizeof *ops);
    cr_assert_eq(calib_ops_fit_all(&samples, perf_family_of(&gpu), ops, err, sizeof err), 0,
                 "%s", err);
    cr_expect_lt(ops->fits[0].rms_rel, 0.25, "gemm fit rms %g", ops->fits[0].rms_rel);
    free(ops);
    calib_samples_release(&samples);
}
