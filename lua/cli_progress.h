/* The progress line of a run on stderr (only on a terminal, at most twice a second). */
#ifndef FLEETSIM_LUA_CLI_PROGRESS_H
#define FLEETSIM_LUA_CLI_PROGRESS_H

#include <stdbool.h>
#include <stddef.h>

#include "models/run.h"

typedef struct cli_progress {
    double started_s;
    double last_print_s;
    bool printed;           /* a line is on the terminal: cli_progress_clear removes it */
} cli_progress;

/* A display started now. */
cli_progress cli_progress_start(void);

/* run_options.progress: "replication 1/3  simulated 2.1 h of 1.0 d ... ETA 12 s". */
void cli_progress_show_run(void *display, const run_progress *p);

/* experiment_options.progress: "point 3/8 done". */
void cli_progress_show_points(void *display, size_t done, size_t points);

/* Erases the line if one was printed. */
void cli_progress_clear(cli_progress *d);

#endif
