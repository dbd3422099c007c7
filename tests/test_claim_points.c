/* r.points made as they are read (issue 40, item 9): a sweep of 3,000 points with a
 * claim ran every point, then r.points, every point's metrics three times over, did not
 * fit the sandbox's memory and the computed sweep was lost.  Here 10,000 points of 300
 * metrics each (about 400 MB made at once, past the sandbox's 256 MB; each point's
 * allocations are charged to the verdict's budget of instructions as any are, about
 * 2,500 a point here) are walked by a verdict, in order, with r.points[1] still r. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lua/claim.h"
#include "lua/scenario_load.h"
#include "support/scratch.h"

#define POINTS 10000
#define METRICS 300

static const char *const SCENARIO =
    "local fs = require \"fleetsim\"\n"
    "return fs.scenario { name = \"many\", duration = \"1h\",\n"
    "  pools = { q = fs.dedicated { count = 4 } },\n"
    "  workloads = { w = fs.service { arrivals = fs.poisson { rate = 1 },\n"
    "    service = fs.exponential { mean = 1 }, pool = \"q\" } },\n"
    "  claim = fs.claim { text = \"every point is read\", verdict = function(r)\n"
    "    local sum, walked, metric = 0, 0, 0\n"
    "    for i, p in ipairs(r.points) do\n"
    "      sum = sum + p.values.n\n"
    "      metric = metric + p.pool.q.m299\n"
    "    end\n"
    "    for k, p in pairs(r.points) do walked = walked + k; if k == 3 then break end end\n"
    "    local same = r.points[1] == r and r.points[7] == r.points[7]\n"
    "    return (same and #r.points == 10000) and \"holds\" or \"refuted\",\n"
    "           string.format(\"%d %d %d %s\", sum, walked, metric, r.points[10001])\n"
    "  end } }\n";

Test(claim_points, a_verdict_walks_more_points_than_the_sandbox_holds_at_once, .timeout = 120)
{
    char *dir = scratch_dir();
    char *path = scratch_file(dir, "many.lua", SCENARIO), err[1024];
    scenario sc;
    scenario_load_options options = { 0 };
    cr_assert_eq(scenario_load(path, &options, &sc, err, sizeof err), 0, "%s", err);
    sim_metrics metrics;
    sim_metrics_init(&metrics);
    for (int m = 0; m < METRICS; m++) {
        char name[16];
        snprintf(name, sizeof name, "m%d", m);
        sim_metrics_add(&metrics, "pool", "q", name, "1", m);
    }
    static char values[POINTS][8];
    static const char *value_of[POINTS];
    static claim_point points[POINTS];
    for (int i = 0; i < POINTS; i++) {
        snprintf(values[i], sizeof values[i], "%d", i + 1);
        value_of[i] = values[i];
        points[i] = (claim_point){ .values = &value_of[i], .metrics = &metrics,
                                   .replications = 1 };
    }
    const char *keys[] = { "n" };
    claim_results r = { .name = "many", .keys = keys, .nkeys = 1, .points = points,
                        .npoints = POINTS };
    claim_verdict v;
    cr_assert_eq(claim_judge(sc.runtime, &r, &v, err, sizeof err), 0, "%s", err);
    cr_expect_str_eq(v.word, "holds", "%s", v.figure);
    /* 1 + ... + 10000; pairs walks 1, 2, 3; 299 from each point; nothing past the last */
    cr_expect_str_eq(v.figure, "50005000 6 2990000 nil");
    sim_metrics_release(&metrics);
    scenario_release(&sc);
    free(path);
    scratch_remove_dir(dir);
}
