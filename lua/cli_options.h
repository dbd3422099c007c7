/* The options that run and check share (--set, --seed, --sweep, -o, ...), the
 * scenario they load and the folder -o defaults to. */
#ifndef FLEETSIM_LUA_CLI_OPTIONS_H
#define FLEETSIM_LUA_CLI_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>

#include "lua/experiment_load.h"
#include "models/scenario.h"

typedef struct cli_options {
    const char *file;
    const char *output_dir;
    const char **sets;          /* "KEY=VALUE" overrides, in order (the strings are argv's) */
    size_t nsets;
    const char **sweeps;        /* --sweep KEY=V1,V2,... */
    size_t nsweeps;
    unsigned jobs;              /* --jobs N; 0 when not given */
    bool quiet;
    bool unsafe;
    bool records;
    bool no_plots;              /* --no-plots */
    bool png;                   /* --png: PNG renders of the charts beside the SVG */
    bool all;                   /* --all: the full summary table after the headline */
    double memory_limit_bytes;  /* --memory-limit; 0 when not given */
    char seed_set[48];          /* "seed=N", from --seed */
    char replications_set[48];  /* "replications=N", from --replications */
} cli_options;

/* Parses argv[2..] of `fleetsim COMMAND`; -1 after printing the mistake on stderr.
 * --help prints the command's help and exits 0.  Release the options either way. */
int cli_options_parse(int argc, char **argv, const char *command, cli_options *o);

/* Frees the lists (NULL-safe members; the options themselves are the caller's). */
void cli_options_release(cli_options *o);

/* Loads o->file with the overrides; -1 after printing the message. */
int cli_options_load(const cli_options *o, scenario *sc);

/* The folder when -o is not given: "out/<name>" with characters unsafe in file names
 * replaced by '_' (malloc'd; NULL when out of memory). */
char *cli_options_default_output_dir(const char *name);

/* Refuses, before anything runs, a run estimated to need more memory than the budget
 * (models/budget.h) at the experiment's points and processes; -1 after saying why. */
int cli_options_check_memory(const cli_options *o, const scenario *sc,
                             const experiment_spec *spec);

/* What run and check do first: loads o->file with its sweep or search, adds the --sweep
 * values and checks the memory budget.  0 (release sc and spec afterwards), or -1 after
 * printing why (nothing left to release). */
int cli_options_load_experiment(const cli_options *o, scenario *sc, experiment_spec *spec);

#endif
