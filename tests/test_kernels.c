/* The CUDA probe: a vector addition on the device where there is one. */
#include <criterion/criterion.h>
#include <string.h>

#include "kernels/cuda_probe.h"

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
