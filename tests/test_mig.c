/* MIG slices: the profile table of NVIDIA's MIG user guide, and a slice as a device. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "lua/catalog.h"
#include "models/mig.h"

static catalog cat;

static void setup(void)
{
    char err[512];
    cr_assert_eq(catalog_load(&cat, err, sizeof err), 0, "%s", err);
}
static void teardown(void) { catalog_release(&cat); }

TestSuite(mig, .init = setup, .fini = teardown);

static device_spec slice(const char *device, const char *profile, unsigned *n)
{
    const device_spec *whole = catalog_device(&cat, device);
    cr_assert_not_null(whole, "%s is in the catalog", device);
    device_spec d;
    char err[256];
    cr_assert_eq(mig_slice_device(whole, profile, &d, n, err, sizeof err), 0, "%s", err);
    return d;
}

Test(mig, a100_80gb_1g_10gb_is_a_seventh_with_an_eighth_of_the_memory)
{
    /* NVIDIA's MIG user guide: 1g.10gb (1/7 SMs, 1/8 memory, up to 7) */
    unsigned n;
    device_spec d = slice("A100-80GB-SXM", "1g.10gb", &n);
    const device_spec *whole = catalog_device(&cat, "A100-80GB-SXM");
    cr_expect_eq(n, 7);
    cr_expect_float_eq(d.memory_bytes, whole->memory_bytes / 8, 1);
    cr_expect_float_eq(d.bandwidth_bytes_per_s, whole->bandwidth_bytes_per_s / 8, 1);
    /* 14 of the 108 SMs: less than a seventh of the peak */
    cr_expect_float_eq(d.peak_flops[PREC_FP16], whole->peak_flops[PREC_FP16] * 14 / 108, 1);
    cr_expect_lt(7 * d.peak_flops[PREC_FP16], 0.91 * whole->peak_flops[PREC_FP16],
                 "98 of 108 SMs in MIG mode: 9.25%% lost");
    cr_expect_eq(d.nvlink_bytes_per_s, 0);
    cr_expect_str_eq(d.name, "A100-80GB-SXM MIG 1g.10gb");
    cr_expect_float_eq(d.usd_per_hour, whole->usd_per_hour / 7, 1e-12);
    device_release(&d);
}

Test(mig, slice_counts_and_memory_follow_the_table)
{
    static const struct { const char *device, *profile; unsigned n; double gb, bw_eighths; } rows[] = {
        { "A100-80GB-SXM", "2g.20gb", 3, 20, 2 }, { "A100-80GB-SXM", "3g.40gb", 2, 40, 4 },
        { "A100-80GB-SXM", "4g.40gb", 1, 40, 4 }, { "A100-80GB-SXM", "7g.80gb", 1, 80, 8 },
        { "A100-40GB-SXM", "1g.5gb", 7, 5, 1 },   { "A100-40GB-SXM", "3g.20gb", 2, 20, 4 },
        { "H100-SXM", "1g.10gb", 7, 10, 1 },      { "H100-SXM", "1g.20gb", 4, 20, 2 },
        { "H100-SXM", "3g.40gb", 2, 40, 4 },      { "H200-SXM", "1g.18gb", 7, 18, 1 },
        { "H200-SXM", "1g.35gb", 4, 35, 2 },      { "H200-SXM", "2g.35gb", 3, 35, 2 },
        { "H200-SXM", "3g.71gb", 2, 71, 4 },      { "H200-SXM", "4g.71gb", 1, 71, 4 },
        { "H200-SXM", "7g.141gb", 1, 141, 8 },
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        unsigned n;
        device_spec d = slice(rows[i].device, rows[i].profile, &n);
        const device_spec *whole = catalog_device(&cat, rows[i].device);
        cr_expect_eq(n, rows[i].n, "%s %s: %u a GPU", rows[i].device, rows[i].profile, n);
        /* the profile's GB read as the catalog reads a datasheet's (models/device.h) */
        cr_expect_float_eq(d.memory_bytes, rows[i].gb * 1073741824.0 * 79.22 / 80, 1, "%s %s",
                           rows[i].device, rows[i].profile);
        cr_expect_float_eq(d.bandwidth_bytes_per_s,
                           whole->bandwidth_bytes_per_s * rows[i].bw_eighths / 8, 1);
        device_release(&d);
    }
}

Test(mig, h100_full_slice_keeps_112_of_132_sms)
{
    unsigned n;
    device_spec d = slice("H100-SXM", "7g.80gb", &n);
    const device_spec *whole = catalog_device(&cat, "H100-SXM");
    cr_expect_float_eq(d.peak_flops[PREC_BF16] / whole->peak_flops[PREC_BF16], 112.0 / 132, 1e-12);
    cr_expect_float_eq(d.memory_bytes, whole->memory_bytes, 1);
    device_release(&d);
}

Test(mig, unknown_profile_or_device_lists_the_valid_ones)
{
    device_spec d;
    unsigned n;
    char err[256];
    cr_assert_eq(mig_slice_device(catalog_device(&cat, "A100-80GB-SXM"), "1g.5gb", &d, &n, err,
                                  sizeof err), -1);
    cr_expect_str_eq(err, "unknown MIG profile \"1g.5gb\" for A100-80GB-SXM (profiles: 1g.10gb, "
                          "1g.20gb, 2g.20gb, 3g.40gb, 4g.40gb, 7g.80gb)");
    cr_assert_eq(mig_slice_device(catalog_device(&cat, "T4"), "1g.10gb", &d, &n, err, sizeof err), -1);
    cr_expect(strstr(err, "MIG is not available on \"T4\"") && strstr(err, "H100-SXM"), "%s", err);
    cr_expect_null(mig_find("H200-SXM", "1g.10gb"));
    cr_expect_eq(mig_find("H200-SXM", "1g.35gb")->memory_slices, 2);
}
