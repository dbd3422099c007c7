/* Loading a scenario file: runs it in the sandbox, applies --set overrides to the table
 * it returns, and turns that table into a checked `scenario` (models/scenario.h).
 *
 * Every mistake gives one message, "file.lua:12: path.to.key: what is wrong" (or
 * "--set KEY=VALUE: ..." for an override, or "file.lua: ..." for the whole file), and
 * nothing is run.  Lua errors raised by the scenario's own code keep their traceback.
 */
#ifndef FLEETSIM_LUA_SCENARIO_LOAD_H
#define FLEETSIM_LUA_SCENARIO_LOAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lua/experiment_load.h"
#include "models/scenario.h"

typedef struct scenario_load_options {
    bool unsafe;              /* lift the sandbox (trusted files only) */
    const char *const *sets;  /* "KEY=VALUE" overrides, applied in order */
    size_t nsets;
    /* The instructions the file may run (0: the sandbox's own limit), and where to say
     * how many it ran (NULL: nowhere); an experiment shares one budget over its points. */
    uint64_t instruction_budget;
    uint64_t *instructions_run;
    /* Leave out the trials that choose a tp for an SLO (models/slo_tp.h: each a run of
     * the workload): tp stays the throughput ranking's.  For harnesses that exercise
     * the loader alone (the fuzzer), where a load must take milliseconds. */
    bool no_tp_trials;
} scenario_load_options;

/* 0 with *out filled (release with scenario_release), or -1 with the message in err. */
int scenario_load(const char *path, const scenario_load_options *options, scenario *out,
                  char *err, size_t err_size);

/* The same, and the file's sweep and search into *experiment (release it with
 * experiment_load_release; empty on failure). */
int scenario_load_experiment(const char *path, const scenario_load_options *options,
                             scenario *out, experiment_spec *experiment, char *err,
                             size_t err_size);

/* A scenario file loaded again and again with other overrides (an experiment's points).
 * The first load runs the file; when the table it returns is plain data (tables without
 * metatables, strings, numbers, booleans: no function that could keep state between
 * calls), the state is kept and each later load applies its --set overrides to that
 * table, converts it and puts the overrides back, without running the file again
 * (the overrides never reach the file's code: they change the table it returned).
 * Otherwise each load runs the file afresh, as scenario_load does.  Either way a load
 * gives the scenario scenario_load would, with the same messages. */
typedef struct scenario_source scenario_source;

/* NULL when out of memory. */
scenario_source *scenario_source_open(const char *path);

/* As scenario_load(path, options, ...); options->instructions_run counts the file's
 * instructions on the first load, only the conversion's on a reused one. */
int scenario_source_load(scenario_source *src, const scenario_load_options *options,
                         scenario *out, char *err, size_t err_size);

/* Whether loads convert the kept table (known after the first load). */
bool scenario_source_reused(const scenario_source *src);

void scenario_source_close(scenario_source *src);

#endif
