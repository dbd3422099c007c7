/* The built-in autoscaling policy as a function of what it sees (models/autoscale.h),
 * without an engine: target tracking's arithmetic, the bounds, the cooldown after a
 * rise and the delay before a fall, each against a hand-computed count. */
#include <criterion/criterion.h>
#include <math.h>

#include "models/autoscale.h"

static const autoscaler_spec UTIL = { .enabled = true, .metric = AUTOSCALE_UTILIZATION,
                                      .target = 0.6, .interval_s = 30, .cooldown_s = 120,
                                      .scale_in_delay_s = 300 };

static autoscale_view view(double now, unsigned active, double utilization)
{
    return (autoscale_view){ .now_s = now, .active = active, .min = 1, .max = 10,
                             .utilization = utilization };
}

Test(autoscale, target_tracking_asks_for_the_replicas_that_bring_the_metric_to_its_target)
{
    /* 4 replicas 90% busy at a 60% target: 4 x 0.9 / 0.6 = 6 */
    autoscale_view v = view(0, 4, 0.9);
    cr_expect_float_eq(autoscale_desired(&UTIL, &v), 6, 1e-12);
    /* exactly at the target: no extra replica from rounding (4 x 0.6 / 0.6 = 4) */
    v.utilization = 0.6;
    cr_expect_float_eq(autoscale_desired(&UTIL, &v), 4, 1e-12);
    /* the queue metric: 25 outstanding at 4 per replica = 7 */
    autoscaler_spec queue = UTIL;
    queue.metric = AUTOSCALE_QUEUE;
    queue.target = 4;
    v.outstanding = 25;
    cr_expect_float_eq(autoscale_desired(&queue, &v), 7, 1e-12);
    /* the cache metric: 3 replicas 80% committed at 50%: 3 x 0.8 / 0.5 = 4.8 -> 5 */
    autoscaler_spec kv = UTIL;
    kv.metric = AUTOSCALE_KV_CACHE;
    kv.target = 0.5;
    autoscale_view c = view(0, 3, 0);
    c.kv_cache = 0.8;
    cr_expect_float_eq(autoscale_desired(&kv, &c), 5, 1e-12);
}

Test(autoscale, with_no_replica_demand_asks_for_a_first_one)
{
    autoscale_view v = view(0, 0, 0);
    cr_expect_float_eq(autoscale_desired(&UTIL, &v), 0, 0);
    v.pending = 3;
    cr_expect_float_eq(autoscale_desired(&UTIL, &v), 1, 0);
    v.pending = 0;
    v.spilled = 1; /* an overflow pool's missed demand */
    cr_expect_float_eq(autoscale_desired(&UTIL, &v), 1, 0);
    v.spilled = 0;
    v.provisioning = 3; /* keeps what is on order */
    cr_expect_float_eq(autoscale_desired(&UTIL, &v), 3, 0);
}

Test(autoscale, the_bounds_clamp_the_answer)
{
    autoscale_view v = view(0, 4, 0);
    cr_expect_eq(autoscale_clamp(&v, 0), 1);
    cr_expect_eq(autoscale_clamp(&v, NAN), 1);
    cr_expect_eq(autoscale_clamp(&v, 7), 7);
    cr_expect_eq(autoscale_clamp(&v, 25), 10);
}

Test(autoscale, a_rise_waits_for_the_cooldown)
{
    autoscale_memory m = autoscale_memory_start();
    autoscale_view v = view(0, 4, 0.9); /* wants 6 */
    cr_expect_eq(autoscale_decide(&UTIL, &v, 4, &m), 6);
    cr_expect_float_eq(m.last_scale_out_s, 0, 0);
    /* 60 s later, 6 active at 100%: wants 10, but the 120 s cooldown holds 6 */
    v = view(60, 6, 1.0);
    cr_expect_eq(autoscale_decide(&UTIL, &v, 6, &m), 6);
    /* at 120 s it may rise */
    v.now_s = 120;
    cr_expect_eq(autoscale_decide(&UTIL, &v, 6, &m), 10);
}

Test(autoscale, a_fall_waits_for_the_metric_to_stay_low)
{
    autoscale_memory m = autoscale_memory_start();
    autoscale_view v = view(0, 6, 0.2); /* wants 2 */
    cr_expect_eq(autoscale_decide(&UTIL, &v, 6, &m), 6);
    cr_expect_float_eq(m.low_since_s, 0, 0);
    v.now_s = 299;
    cr_expect_eq(autoscale_decide(&UTIL, &v, 6, &m), 6);
    /* a busy moment in between restarts the delay */
    autoscale_view busy = view(200, 6, 0.6);
    autoscale_memory interrupted = m;
    cr_expect_eq(autoscale_decide(&UTIL, &busy, 6, &interrupted), 6);
    cr_expect(isnan(interrupted.low_since_s));
    /* low for the whole 300 s: down to 2 */
    v.now_s = 300;
    cr_expect_eq(autoscale_decide(&UTIL, &v, 6, &m), 2);
    cr_expect(isnan(m.low_since_s));
}
