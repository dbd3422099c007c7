/* The memory a run will need, estimated from its scenario before anything runs, so that
 * a scenario too big for the machine is refused with the part that is too big named,
 * not found out by swapping.
 *
 * The estimate is an upper bound built from the sizes of the things a run keeps: the
 * time series (16 bytes a cell, one table per sweep point held whole), each GPU or unit
 * of a pool, requests that can wait at once (a plain queue
 * growing under overload up to its queue_limit, inference requests up to max_wait's
 * worth of arrivals), every training job of a stream (the scheduler keeps them all),
 * a task replay's trace, the values of the scenario's lists (each sweep point loaded
 * holds its own); times the processes that hold a replication at once (--jobs).
 * It is rough by design (tens of percent), and errs high.
 */
#ifndef FLEETSIM_MODELS_BUDGET_H
#define FLEETSIM_MODELS_BUDGET_H

#include <stdbool.h>
#include <stddef.h>

#include "models/scenario.h"

typedef struct run_memory {
    double total_bytes;
    double largest_bytes;   /* the biggest part ... */
    char largest[256];      /* ... in words: "the time series: 2.1e+06 cells x 3 points" */
} run_memory;

/* The estimate for sc run at `points` sweep points (1 for a plain run), with
 * `processes` replications held at once (--jobs N: N; else 1).  A sweep's points
 * stream (lua/experiment.h): a point is loaded in one process at a time and, once its
 * files are written, keeps only its values and what a search reads, the first kept
 * whole; keeps_points says every point's results are kept whole to the end instead
 * (a claim judges them all). */
void run_memory_estimate(const scenario *sc, size_t points, unsigned processes,
                         bool keeps_points, run_memory *out);

/* The default budget: half the machine's physical memory (8 GiB if unknown). */
double run_memory_default_budget_bytes(void);

/* "8GB", "512MiB", "2e9" (bytes), or "none" (no budget: INFINITY).  0, or -1 when
 * the text is none of these. */
int run_memory_parse(const char *text, double *bytes);

/* 0 when the estimate fits the budget; else -1 with a message in err naming the
 * estimate, the budget and the largest part. */
int run_memory_check(const run_memory *m, double budget_bytes, char *err, size_t err_size);

#endif
