/* The tensor parallelism chosen for an SLO (models/slo_tp.h): which trial is kept, how
 * long a trial runs, and which workloads are tried at all, on hand-built cases. */
#include <criterion/criterion.h>
#include <math.h>

#include "models/slo_tp.h"

Test(slo_tp, the_first_in_the_ranking_that_meets_it_is_kept)
{
    tp_trial t[3] = {
        { .tp = 2, .attainment = 0.98, .meets = false },
        { .tp = 4, .attainment = 0.995, .meets = true },
        { .tp = 8, .attainment = 0.999, .meets = true },
    };
    cr_expect_eq(slo_tp_pick(t, 3), 1, "tp 8 has more within, but tp 4 is first to meet it");
    t[1].meets = false;
    cr_expect_eq(slo_tp_pick(t, 3), 2);
    t[2].meets = false;
    cr_expect_eq(slo_tp_pick(t, 3), 2, "none meets: the most requests within it");
    t[2].attainment = 0.98;
    t[1].attainment = 0.98;
    cr_expect_eq(slo_tp_pick(t, 3), 0, "a tie goes to the ranking's first");
    t[0].attainment = NAN; /* nothing completed */
    cr_expect_eq(slo_tp_pick(t, 3), 1);
}

/* One pool, two inference workloads on it when `both`; the first one's SLO and tp. */
typedef struct case_ {
    pool_spec pool;
    inference_spec w[2];
    scenario sc;
} case_;

static void make_case(case_ *c, bool both)
{
    *c = (case_){ 0 };
    c->pool.capacity.count = c->pool.capacity.max = c->pool.min = 48;
    c->pool.units_per_gpu = 1;
    c->w[0] = (inference_spec){ .tp_chosen = true, .slo_ttft_s = 1,
                                .arrivals = { ARRIVALS_POISSON, 50 } };
    c->w[1] = c->w[0];
    c->sc = (scenario){ .duration_s = 1800, .warmup_s = 300, .pools = &c->pool, .npools = 1,
                        .inferences = c->w, .ninferences = both ? 2 : 1 };
}

Test(slo_tp, a_trial_is_the_run_up_to_two_hundred_thousand_requests)
{
    case_ c;
    make_case(&c, false);
    c.sc.replications = 3;
    /* 1500 s measured at 40/s: 60000 requests a replication, 180000 in all: the run */
    c.w[0].arrivals.rate_per_s = 40;
    slo_tp_span s = slo_tp_trial_span(&c.sc, &c.w[0]);
    cr_expect_float_eq(s.end_s, 1800, 1e-9);
    cr_expect_eq(s.replications, 3);
    /* at 50/s, 75000 a replication: two of them */
    c.w[0].arrivals.rate_per_s = 50;
    s = slo_tp_trial_span(&c.sc, &c.w[0]);
    cr_expect_float_eq(s.end_s, 1800, 1e-9);
    cr_expect_eq(s.replications, 2);
    /* at 400/s, 600000 a replication: one, 300 s of warm-up and 500 s of requests */
    c.w[0].arrivals.rate_per_s = 400;
    s = slo_tp_trial_span(&c.sc, &c.w[0]);
    cr_expect_float_eq(s.end_s, 800, 1e-9);
    cr_expect_eq(s.replications, 1);
    /* at 5000/s, 40 s of requests: at least 300 s */
    c.w[0].arrivals.rate_per_s = 5000;
    cr_expect_float_eq(slo_tp_trial_span(&c.sc, &c.w[0]).end_s, 600, 1e-9);
    /* a rate that varies: the whole run, as many replications as the budget holds, */
    c.w[0].has_traffic = true;
    c.w[0].arrivals.rate_per_s = 50;
    s = slo_tp_trial_span(&c.sc, &c.w[0]);
    cr_expect_float_eq(s.end_s, 1800, 1e-9);
    cr_expect_eq(s.replications, 2);
    /* and none where one replication is past it (7.5 million requests) */
    c.w[0].arrivals.rate_per_s = 5000;
    cr_expect_eq(slo_tp_trial_span(&c.sc, &c.w[0]).replications, 0);
}

Test(slo_tp, only_a_chosen_tp_with_an_slo_on_a_fixed_pool_of_its_own_is_tried)
{
    case_ c;
    make_case(&c, false);
    cr_expect(slo_tp_applies(&c.sc, &c.w[0]));
    c.w[0].slo_ttft_s = 0;
    cr_expect(!slo_tp_applies(&c.sc, &c.w[0]), "no SLO");
    c.w[0].slo_tpot_s = 0.05;
    cr_expect(slo_tp_applies(&c.sc, &c.w[0]), "any limit is an SLO");
    c.w[0].tp_chosen = false;
    cr_expect(!slo_tp_applies(&c.sc, &c.w[0]), "tp given");
    make_case(&c, false);
    c.w[0].replicas_given = true;
    cr_expect(!slo_tp_applies(&c.sc, &c.w[0]), "replicas given");
    make_case(&c, false);
    c.pool.min = 8;
    cr_expect(!slo_tp_applies(&c.sc, &c.w[0]), "autoscaled");
    make_case(&c, false);
    c.pool.units_per_gpu = 7;
    cr_expect(!slo_tp_applies(&c.sc, &c.w[0]), "MIG slices: tp 1");
    make_case(&c, true);
    cr_expect(!slo_tp_applies(&c.sc, &c.w[0]), "a pool two models share");
    make_case(&c, false);
    c.w[0].has_traffic = true;
    c.w[0].traffic.kind = TRAFFIC_FUNCTION;
    cr_expect(!slo_tp_applies(&c.sc, &c.w[0]), "a Lua rate function");
}
