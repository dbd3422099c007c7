/* The experiment a scenario asks for, besides its own run: a sweep over values of some
 * keys and a search for the smallest value of a key that meets a target.
 *
 *   sweep = { ["pools.edge.count"] = { 4, 8, 16 }, ["workloads.chat.arrivals.rate"] = { 10, 20 } },
 *   search = fs.search { key = "pools.edge.count", target = "ttft_p99_s <= 0.2",
 *                        low = 1, high = 64, subject = "chat" },
 *
 * Values stay text, as --set takes them: a point of the experiment is the scenario
 * loaded again with "KEY=VALUE" overrides (lua/experiment.h).
 */
#ifndef FLEETSIM_LUA_EXPERIMENT_LOAD_H
#define FLEETSIM_LUA_EXPERIMENT_LOAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lua/fields.h"

/* One swept key and its values. */
typedef struct sweep_axis {
    char *key;       /* "pools.edge.count" */
    char **values;   /* as text: "4", "2h", "true" */
    size_t nvalues;
    char *origin;    /* "file.lua:3: sweep" or "--sweep": what messages about a value start with */
    bool zip;        /* in sweep.zip: moves in lockstep with the other zipped keys */
} sweep_axis;

typedef enum search_op { SEARCH_LE, SEARCH_LT, SEARCH_GE, SEARCH_GT } search_op;

/* One condition of a search's target, "METRIC OP NUMBER". */
typedef struct search_condition {
    char *text;       /* as written, "ttft_p99_s <= 1" */
    char *metric;     /* "ttft_p99_s" */
    search_op op;
    double threshold;
} search_condition;

/* The most conditions a target joins with "and". */
#define SEARCH_MAX_CONDITIONS 8

/* fs.search: the smallest integer value of key in [low, high] whose metrics (means over
 * the replications) meet every condition of its target ("ttft_p99_s <= 1 and
 * tpot_p99_s <= 0.05", each "METRIC OP NUMBER"); or, with a grid, the point of the grid
 * (the cross product of several keys' values, as a sweep's) that meets it with the
 * least (or most) of an objective metric: Vidur-Search's and DistServe's "cheapest
 * configuration within the SLO". */
typedef struct search_spec {
    char *key;
    char *target;     /* the text, "ttft_p99_s <= 0.2 and tpot_p99_s <= 0.05" */
    search_condition conds[SEARCH_MAX_CONDITIONS];
    size_t nconds;
    char *subject;    /* NULL: any subject */
    char *scope;      /* NULL: any scope */
    int64_t low, high;
    int64_t step;     /* values low, low + step, ..., high (GPUs in servers of 8) */
    bool largest;     /* find = "largest": the largest value meeting the target (the
                         highest rate a fleet sustains); else the smallest */
    /* grid = { ["KEY"] = { values }, ... }: every point is run (no bisection); key,
       low, high, step and find are then absent */
    sweep_axis *grid;  /* sorted by key, as a sweep's axes */
    size_t ngrid;
    char *objective;   /* the text given, "cost_usd" or "cost_usd of gpus"; NULL: none */
    char *objective_metric;  /* "cost_usd" */
    char *objective_subject; /* "gpus", or NULL: the metric's only subject, else the run's */
    bool maximise;     /* maximise = ...: the most of it; minimise = ...: the least */
    char where[FIELD_PATH_MAX]; /* "file.lua:12: " of the fs.search, for messages */
} search_spec;

typedef struct experiment_spec {
    sweep_axis *axes;  /* sorted by key */
    size_t naxes;
    bool has_search;
    search_spec search;
} experiment_spec;

/* Empty; release with experiment_load_release (NULL-safe, frees every string). */
void experiment_load_init(experiment_spec *spec);
void experiment_load_release(experiment_spec *spec);

/* Reads the sweep and search keys of the scenario object s (absent: nothing to do). */
int experiment_load_read(load_context *c, const fields_object *s, experiment_spec *out);

/* --sweep KEY=v1,v2,...: replaces the axis of KEY or adds one, keeping the axes sorted.
 * 0, or -1 with "--sweep TEXT: ..." in err. */
int experiment_load_add_sweep(experiment_spec *spec, const char *text, char *err,
                              size_t err_size);

/* "<=", "<", ">=", ">"; and whether value meets op threshold (NaN never does). */
const char *experiment_load_search_op_text(search_op op);
bool experiment_load_search_meets(search_op op, double value, double threshold);

#endif
