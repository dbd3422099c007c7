/* A scenario's claim and its verdict, judged by the simulation's own numbers:
 *
 *   claim = fs.claim { text = "GPUs use 3 to 8 times less energy than CPUs",
 *                      verdict = function(r) ... return "holds", "5.1x less" end }
 *
 * The loader checks the claim and keeps it with the scenario's sandbox (which then
 * lives as the scenario's runtime, as routing functions do); after the run the verdict
 * function is called once, in the state the file made (the sandbox is rewound first, so
 * the verdict sees nothing a replication left: lua/sandbox.h), with the results as
 * nested tables:
 *
 *   r.workload.chat.ttft_p99_s, r.pool.gpus.energy_kwh, r.job.pretrain.end_s, ...
 *                         the mean over replications of every summary.csv metric
 *   r.ci95_lo.<scope>.<subject>.<metric>, r.ci95_hi...   its Student-t 95% bounds
 *                         (absent with one replication)
 *   r.name, r.replications
 *   r.keys                the swept keys (a sweep), or { search key } (a search)
 *   r.points[i]           every point of a sweep (or probe of a search) in sweep.csv's
 *                         order, each shaped like r with values[key] its swept values
 *                         (numbers where they read as numbers); a plain run has one
 *                         point, r itself, whose values are empty.  A point is made
 *                         when read (thousands of points, each every metric three
 *                         times, did not fit the sandbox at once)
 *   r.search              { key, target, found, answer, point } after a search (point:
 *                         the probe at the answer); absent otherwise
 *
 * At the top level r holds the first point's metrics.  The function returns a verdict
 * word ("holds", "qualified" or "refuted") and a figure text saying what was measured.
 */
#ifndef FLEETSIM_LUA_CLAIM_H
#define FLEETSIM_LUA_CLAIM_H

#include <stdbool.h>
#include <stddef.h>

#include "lua/fields.h"
#include "sim/metrics.h"

/* Instructions the verdict function may use (it runs once). */
#define CLAIM_CALL_INSTRUCTIONS 50000000u

/* Reads scenario.claim from the object s: 1 when there is one (kept in the state), 0
 * when there is none, -1 on a mistake (the message in c). */
int claim_load(load_context *c, const fields_object *s);

/* Whether the scenario's runtime (scenario.runtime, a sandbox, or NULL) holds a claim. */
bool claim_present(void *runtime);

/* One point of the results: the swept keys' values as text (nkeys of them, may be 0). */
typedef struct claim_point {
    const char *const *values;
    const sim_metrics *metrics;
    unsigned replications;
} claim_point;

typedef struct claim_results {
    const char *name;
    const char *const *keys;   /* nkeys swept keys (or the search key) */
    size_t nkeys;
    const claim_point *points; /* at least one */
    size_t npoints;
    bool has_search, found;
    const char *search_target;
    long long answer;          /* a search along one key: its value found */
    bool grid;                 /* a grid search: keys are the grid's */
    size_t answer_point;       /* the point found (found only) */
} claim_results;

typedef struct claim_verdict {
    char text[512];    /* the claim */
    char word[16];     /* holds, qualified or refuted */
    double score;      /* 1, 0.5 or 0 */
    char figure[2048]; /* what the run measured, in the verdict's words (longer: cut,
                          ending " [...]") */
} claim_verdict;

/* Calls the verdict function on r: 0 with *out filled, or -1 with the message in err
 * ("file.lua:12: claim.verdict: ..."). */
int claim_judge(void *runtime, const claim_results *r, claim_verdict *out, char *err,
                size_t err_size);

#endif
