/* Issue 21's scenarios, run as a user would: what each verdict states must follow from
 * the model (the NVLink domain, fp4's tensor cores), not from the scenario's wording. */
#include <criterion/criterion.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support/cli.h"
#include "support/scratch.h"

static char *dir, *out, *err;

static void setup(void)
{
    dir = scratch_dir();
    out = err = NULL;
}

static void teardown(void)
{
    scratch_remove_dir(dir);
    free(out);
    free(err);
}

TestSuite(moe_scenarios, .init = setup, .fini = teardown);

/* The verdict.csv of `fleetsim run SCENARIO`, read whole. */
static char *verdict_of(const char *scenario, const char *sub)
{
    cr_assert_eq(cli_run(&out, &err, "run %s -q --no-plots -o %s/%s", scenario, dir, sub), 0,
                 "%s", err);
    char path[512];
    snprintf(path, sizeof path, "%s/%s/verdict.csv", dir, sub);
    char *v = scratch_read(path);
    cr_assert_not_null(v);
    return v;
}

/* The number after "NAME " in the verdict's figure ("h200 48 GPUs"); -1 if absent. */
static double after(const char *text, const char *name)
{
    char key[64];
    snprintf(key, sizeof key, "%s ", name);
    for (const char *p = strstr(text, key); p; p = strstr(p + 1, key)) {
        if (p != text && (isalnum((unsigned char)p[-1]) || p[-1] == '_'))
            continue; /* "h200 " inside "on_h200 " */
        double v;
        if (sscanf(p + strlen(key), "%lf", &v) == 1)
            return v;
    }
    return -1;
}

Test(moe_scenarios, experts_across_boxes_need_more_gpus_than_within_an_nvlink_domain,
     .timeout = 180)
{
    char *v = verdict_of("scenarios/moe_platforms.lua", "moe");
    double h200 = after(v, "h200"), x2 = after(v, "h200_x2"), nvl72 = after(v, "nvl72");
    cr_assert_gt(h200, 0, "%s", v);
    cr_assert_gt(nvl72, 0, "%s", v);
    /* the same H200s with replicas over two boxes pay the all-to-alls on the network (the
     * half of each token's copies bound for the other box): they meet the SLO no sooner,
     * or never, and decode slower where they do */
    cr_expect(x2 < 0 || x2 >= h200, "h200 %g, h200_x2 %g: %s", h200, x2, v);
    const char *one = strstr(v, "h200 "), *two = strstr(v, "h200_x2 ");
    cr_assert(one && two, "%s", v);
    double tpot_one = after(one, "TPOT"), tpot_two = after(two, "TPOT");
    cr_expect(x2 < 0 || tpot_two > tpot_one, "TPOT %g ms in one box, %g over two: %s", tpot_one,
              tpot_two, v);
    /* a 16-GPU replica inside the rack's domain needs no more GPUs than 8-GPU boxes */
    cr_expect_leq(nvl72, h200, "%s", v);
    free(v);
}

Test(moe_scenarios, fp4_weights_carry_more_traffic_than_fp8_on_b200, .timeout = 180)
{
    char *v = verdict_of("scenarios/fp4_vs_fp8.lua", "fp4");
    double fp8 = after(v, "fp8 up to"), fp4 = after(v, "fp4 up to");
    cr_assert_gt(fp8, 0, "%s", v);
    cr_expect_gt(fp4, fp8, "%s", v);
    cr_expect(strstr(v, "holds") != NULL, "%s", v);
    free(v);
}
