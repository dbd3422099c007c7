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

/* The verdict.csv of `fleetsim run SCENARIO EXTRA`, read whole. */
static char *verdict_with(const char *scenario, const char *sub, const char *extra)
{
    cr_assert_eq(cli_run(&out, &err, "run %s -q --no-plots -o %s/%s %s", scenario, dir, sub,
                         extra), 0, "%s", err);
    char path[512];
    snprintf(path, sizeof path, "%s/%s/verdict.csv", dir, sub);
    char *v = scratch_read(path);
    cr_assert_not_null(v);
    return v;
}

static char *verdict_of(const char *scenario, const char *sub)
{
    return verdict_with(scenario, sub, "");
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

/* The TPOT in ms of a way in the verdict's figure ("h200 48 GPUs, ... TPOT 43 ms"). */
static double tpot_of(const char *v, const char *way)
{
    char key[32];
    snprintf(key, sizeof key, "%s ", way);
    for (const char *p = strstr(v, key); p; p = strstr(p + 1, key))
        if (p == v || !(isalnum((unsigned char)p[-1]) || p[-1] == '_'))
            return after(p, "TPOT");
    return -1;
}

/* Where the experts' all-to-alls cross the network between boxes, what they cost is the
 * engine's: the 2024 engine (vllm-2024) sends every routed copy in 16 bits, so replicas
 * over two boxes meet the SLO no sooner than one box, or never, and decode slower where
 * they do; the default engine sends fp8 and one copy a remote node (DeepEP), so the same
 * two-box replicas need no more GPUs than under the 2024 engine, and decode faster at
 * the same count.  A 16-GPU replica inside the rack's NVLink domain needs no more GPUs
 * than 8-GPU boxes under either. */
Test(moe_scenarios, experts_across_boxes_pay_the_network_as_their_engine_sends,
     .timeout = 240)
{
    char *old = verdict_with("scenarios/moe_platforms.lua", "moe_2024",
                             "--set workloads.on_h200.engine=vllm-2024 "
                             "--set workloads.on_h200_x2.engine=vllm-2024");
    double h200 = after(old, "h200"), x2 = after(old, "h200_x2"), nvl72 = after(old, "nvl72");
    cr_assert_gt(h200, 0, "%s", old);
    cr_assert_gt(nvl72, 0, "%s", old);
    cr_expect(x2 < 0 || x2 >= h200, "h200 %g, h200_x2 %g: %s", h200, x2, old);
    cr_expect(x2 < 0 || tpot_of(old, "h200_x2") > tpot_of(old, "h200"),
              "TPOT %g ms in one box, %g over two: %s", tpot_of(old, "h200"),
              tpot_of(old, "h200_x2"), old);
    cr_expect_leq(nvl72, h200, "%s", old);
    char *v = verdict_of("scenarios/moe_platforms.lua", "moe");
    double x2_now = after(v, "h200_x2");
    cr_assert_gt(x2_now, 0, "%s", v);
    cr_expect_leq(x2_now, x2 < 0 ? 64 : x2, "%s", v);
    if (x2 == x2_now)
        cr_expect_lt(tpot_of(v, "h200_x2"), tpot_of(old, "h200_x2"), "%s\n%s", v, old);
    cr_expect_leq(after(v, "nvl72"), after(v, "h200"), "%s", v);
    free(old);
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
