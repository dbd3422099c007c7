/* A pure-decode run's cost in closed form (perf.h): the sum of its iterations, the
 * crossing of its two rooflines worked out once, and where an arrival cuts it. */
#include "models/perf.h"

#include <math.h>

/* The first k past the crossing of the two lines, where they cross (db != 0). */
static double crossing_of(const decode_cost *c, double da, double db)
{
    return c->crossing_known ? c->crossing : fmax(ceil(da / db), 0);
}

decode_cost decode_cost_settled(decode_cost c)
{
    double db = c.compute1 - c.memory1, da = c.memory0 - c.compute0;
    if (db != 0) {
        c.crossing = crossing_of(&c, da, db);
        c.crossing_known = true;
    }
    return c;
}

decode_cost perf_decode_cost_of(const perf_decode_shape *shape, double seqs, double context)
{
    if (!(shape->host_hidden_s > 0)) /* in series: fixed_s holds the host work too */
        return (decode_cost){ .memory0 = shape->attention_s_per_token * context,
                              .memory1 = shape->attention_s_per_token * seqs,
                              .fixed = shape->fixed_s };
    /* max(GPU, hidden host) + exposed host: the GPU's line against the host's constant */
    return (decode_cost){ .compute0 = shape->host_hidden_s,
                          .memory0 = shape->fixed_s + shape->attention_s_per_token * context,
                          .memory1 = shape->attention_s_per_token * seqs,
                          .fixed = shape->host_exposed_s };
}

decode_cost perf_decode_cost(const perf_setup *s, double seqs, double context)
{
    perf_decode_shape shape = perf_decode_shape_of(s, seqs);
    return perf_decode_cost_of(&shape, seqs, context);
}

/* sum over k = from..to-1 of (a + b k) */
static double linear_sum(double a, double b, double from, double to)
{
    double n = to - from;
    return n <= 0 ? 0 : a * n + b * (from + to - 1) * n / 2;
}

double decode_cost_sum(const decode_cost *c, double n)
{
    if (n <= 0)
        return 0;
    double total = c->fixed * n;
    double db = c->compute1 - c->memory1, da = c->memory0 - c->compute0;
    /* compute(k) >= memory(k) exactly when db k >= da */
    if (db == 0) {
        total += da <= 0 ? linear_sum(c->compute0, c->compute1, 0, n)
                         : linear_sum(c->memory0, c->memory1, 0, n);
        return total;
    }
    double split = fmin(crossing_of(c, da, db), n);
    if (db > 0) { /* memory-bound first, compute-bound from split on */
        total += linear_sum(c->memory0, c->memory1, 0, split);
        total += linear_sum(c->compute0, c->compute1, split, n);
    } else {      /* compute-bound first */
        total += linear_sum(c->compute0, c->compute1, 0, split);
        total += linear_sum(c->memory0, c->memory1, split, n);
    }
    return total;
}

/* Bisection for the largest n in (lo, hi) with sum(n) <= elapsed, given sum(lo) <= elapsed
 * (or lo = 0) and sum(hi) = sum_hi > elapsed; sum(n + 1) into *next. */
static double iterations_bisect(const decode_cost *c, double elapsed, double lo, double hi,
                                double sum_hi, double *next)
{
    while (hi - lo > 1) {
        double mid = floor((lo + hi) / 2), sum = decode_cost_sum(c, mid);
        if (sum <= elapsed)
            lo = mid;
        else
            hi = mid, sum_hi = sum;
    }
    *next = hi == lo + 1 ? sum_hi : decode_cost_sum(c, lo + 1);
    return lo;
}

/* Where the run's time reaches `elapsed`, in the reals: iterations from `from` on cost
 * fixed + a + b k each, and the run's first `from` took `before`.  The sum over k = from
 * .. from + m - 1 is (fixed + a + b (from - 1/2)) m + b m^2 / 2, solved for m in the form
 * that stays exact as b goes to 0. */
static double iterations_reaching(double fixed, double a, double b, double from, double before,
                                  double elapsed)
{
    double p = fixed + a + b * (from - 0.5), rest = elapsed - before;
    double root = sqrt(p * p + 2 * b * rest);
    return from + (p + root > 0 ? 2 * rest / (p + root) : 0);
}

double decode_cost_cut(const decode_cost *c, double elapsed, double max_n, double total,
                       double *next)
{
    *next = NAN;
    if (total <= elapsed)
        return max_n;
    /* sum(n) never decreases with n when no coefficient is negative (every operation in
     * it is then monotone, rounding included), so the answer is where it crosses
     * `elapsed`: estimated in closed form on the roofline's side that holds there, then
     * confirmed (or bracketed and bisected) with sum() itself, so that it is the very
     * integer bisection finds (a bisection from 0 otherwise, or for a run whose length
     * is not a whole number) */
    if (!(c->compute0 >= 0 && c->compute1 >= 0 && c->memory0 >= 0 && c->memory1 >= 0
          && c->fixed >= 0) || !(max_n == floor(max_n) && max_n < 0x1p52))
        return iterations_bisect(c, elapsed, 0, max_n, total, next);
    if (!(elapsed >= 0)) { /* sum(0) = 0 > elapsed: bisection's lo stays 0 */
        *next = decode_cost_sum(c, 1);
        return 0;
    }
    double db = c->compute1 - c->memory1, da = c->memory0 - c->compute0;
    bool memory_first = db > 0 || (db == 0 && da > 0);
    double a = memory_first ? c->memory0 : c->compute0, b = memory_first ? c->memory1 : c->compute1;
    double estimate = iterations_reaching(c->fixed, a, b, 0, 0, elapsed);
    if (db != 0) {
        double split = fmin(crossing_of(c, da, db), max_n);
        if (estimate > split) { /* past the crossing: the other side's line from there */
            double before = (c->fixed + a - b / 2) * split + b * split * split / 2;
            a = memory_first ? c->compute0 : c->memory0;
            b = memory_first ? c->compute1 : c->memory1;
            estimate = iterations_reaching(c->fixed, a, b, split, before, elapsed);
        }
    }
    /* the sum is exact at whole numbers, so the estimate's floor misses only by
     * rounding, where a bisection of what is left settles it */
    double n = isfinite(estimate) ? fmin(fmax(floor(estimate), 0), max_n - 1) : 0;
    double sum = decode_cost_sum(c, n);
    if (sum > elapsed) /* (n > 0: sum(0) = 0 <= elapsed) */
        return iterations_bisect(c, elapsed, 0, n, sum, next);
    double after = decode_cost_sum(c, n + 1);
    if (after > elapsed) {
        *next = after;
        return n;
    }
    return iterations_bisect(c, elapsed, n + 1, max_n, total, next);
}

double decode_cost_iterations_within(const decode_cost *c, double elapsed, double max_n)
{
    double next;
    return decode_cost_cut(c, elapsed, max_n, decode_cost_sum(c, max_n), &next);
}
