/* Experiments: a scenario run at several points (a sweep's cross product, or a search's
 * probes), each point several replications, spread over processes (sim/tasks.h).
 *
 * A point is the scenario loaded again with "KEY=VALUE" overrides after the command
 * line's --set ones.  Its replications use the same random numbers at every point
 * (streams are keyed by seed, replication and source name), so differences between
 * points are paired.  Each (point, replication) is one task; results are merged in
 * point then replication order, so the results are the same for any number of
 * processes.  Under MPI every rank runs this alike; rank 0 writes.
 */
#ifndef FLEETSIM_LUA_EXPERIMENT_H
#define FLEETSIM_LUA_EXPERIMENT_H

#include <stdbool.h>
#include <stddef.h>

#include "lua/experiment_load.h"
#include "lua/sandbox.h"
#include "lua/scenario_load.h"
#include "models/run.h"
#include "models/scenario.h"
#include "sim/tasks.h"

/* Points a sweep may have (its cross product). */
#define EXPERIMENT_MAX_POINTS 100000u

/* Lua instructions the scenario file may run in all, over the loads of every point of a
 * sweep or search (each loads the file again): five files' worth of the sandbox's own
 * limit, some seconds of Lua.  A sweep whose first point shows it would need more is
 * refused before the others load. */
#define EXPERIMENT_LOAD_INSTRUCTIONS (5 * SANDBOX_INSTRUCTION_LIMIT)

typedef struct experiment_point {
    char **values;         /* each swept key's value as text (the search key's for a probe) */
    char **sets;           /* "KEY=VALUE" for each of them */
    scenario sc;           /* loaded while it is the experiment's held point */
    bool loaded;
    double duration_s;     /* of its scenario, for timeseries.csv */
    unsigned replications;
    run_results results;   /* merged over its replications */
    /* samples[i * replications + r]: metric i's (in results.metrics order) value in
     * replication r, NaN when it had none; for paired differences */
    double *samples;
    size_t samples_metrics; /* metrics there is room for */
    bool meets;             /* search: whether the probe meets every condition of the target */
    double measured[SEARCH_MAX_CONDITIONS]; /* search: each condition's metric's mean */
    double objective;       /* grid search: the objective metric's mean (NaN: none) */
    bool completed;         /* every replication merged, and judged */
} experiment_point;

typedef void (*experiment_progress_fn)(void *context, size_t point_done, size_t points);

struct experiment;

/* Called with each point in point order (a search's probes in the order planned), as soon
 * as it and every point before it have all their replications merged, its results whole
 * and a search's judgement of it made; after a search, the probes planned but never run
 * follow, empty.  0 to go on, or -1 with a message in err to stop the experiment
 * (EXPERIMENT_FAILED). */
typedef int (*experiment_point_fn)(void *context, const struct experiment *x, size_t point,
                                   char *err, size_t err_size);

typedef struct experiment_options {
    const char *file;
    bool unsafe;
    const char *const *sets;  /* --set overrides (with --seed and --replications), for every point */
    size_t nsets;
    sim_tasks_config tasks;   /* where the tasks run */
    experiment_progress_fn progress; /* NULL, or called as each point completes */
    void *progress_context;
    experiment_point_fn point_done;  /* NULL, or given each point as it completes */
    void *point_context;
    /* Keep every point's results to the end (a claim judges them all).  Otherwise, once
     * point_done has had a point, its results shrink to what a search reads (the
     * target's and the objective's metrics; nothing for a sweep), so that memory does
     * not grow with the points; the first point's stay whole (sweep_diff.csv pairs
     * every point with it). */
    bool keep_results;
} experiment_options;

typedef enum experiment_status {
    EXPERIMENT_OK = 0,
    EXPERIMENT_BAD_INPUT = 2, /* a bad value or key, a target on an unknown metric, a
                                 configuration the models refuse */
    EXPERIMENT_FAILED = 1,    /* a worker died */
} experiment_status;

typedef struct experiment {
    experiment_options options;
    experiment_spec spec;
    char *name;                    /* the scenario's name */
    const char **keys;             /* the swept keys (or the search key), in column order */
    size_t nkeys;
    experiment_point *points;      /* in sweep order, or in probe order for a search */
    size_t npoints;
    size_t capacity;
    uint64_t load_instructions;    /* run loading the points so far */
    size_t points_loaded;
    /* the file, run once and converted at each point where it is plain data
     * (lua/scenario_load.h); at most one point's scenario is loaded at a time */
    scenario_source *source;
    size_t held;                   /* the point loaded (SIZE_MAX: none) */
    size_t next_done;              /* the next point to give point_done (in point order) */
    bool target_resolved;          /* a search's metrics named, from the first point run */
    /* search: the answer */
    bool found;
    long long answer;
    size_t answer_point;           /* the point of the answer (a probe of it), when found */
    /* the metric each condition of the target names */
    char target_scope[SEARCH_MAX_CONDITIONS][128], target_subject[SEARCH_MAX_CONDITIONS][256];
    char objective_scope[128], objective_subject[256]; /* a grid search's objective */
} experiment;

/* Plans the experiment of spec (taken: released with x) on the scenario file: every
 * point of a sweep (the cross product, keys sorted by name, the last varying fastest),
 * or the search's first two probes, loaded and checked before anything runs (each is
 * loaded again where it runs: only one is held at a time); a plan
 * with neither is one point, the scenario itself.  EXPERIMENT_OK, or
 * EXPERIMENT_BAD_INPUT with the message in err ("FILE:LINE: sweep KEY=VALUE: ...",
 * "--sweep KEY=VALUE: ...").  Release x with experiment_release in either case. */
experiment_status experiment_plan(experiment *x, const experiment_options *options,
                                  experiment_spec *spec, char *err, size_t err_size);

/* Runs the plan: every point's replications, or the search's bisection (the smallest
 * integer value in [low, high] whose target metric, mean over replications, meets the
 * target, assuming that meeting it is monotone in the value), or a grid search's every
 * point (the answer: of those meeting the target, the one with the least, or most, of
 * the objective's mean; the first in grid order on a tie).  Results are in x->points;
 * err says what failed otherwise. */
experiment_status experiment_run(experiment *x, char *err, size_t err_size);

/* Loads point p's scenario into x->points[p].sc (loaded true), letting go of the one
 * loaded before: one is held at a time.  0, or -1 with the loader's message. */
int experiment_hold(experiment *x, size_t p, char *err, size_t err_size);

/* "pools.q.count=4, workloads.mm.arrivals.rate=3" */
void experiment_point_label(const experiment *x, size_t point, char *buf, size_t size);

void experiment_release(experiment *x);

#endif
