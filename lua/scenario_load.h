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

#endif
