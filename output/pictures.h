/* What follows a run's CSVs, and `fleetsim plot DIR`: the chart scripts and their
 * renders (output/plots.h), then report.html (output/report.h), with the messages a
 * person reads. */
#ifndef FLEETSIM_OUTPUT_PICTURES_H
#define FLEETSIM_OUTPUT_PICTURES_H

#include <stdbool.h>
#include <stdio.h>

#include "output/plot_sweep.h"

/* Writes DIR/plots/ and DIR/report.html (limits: SLOs drawn on a sweep's charts,
 * nlimits of them, NULL when none; output/plot_sweep.h).  rewrite_scripts: true after a run (scripts
 * from the new CSVs), false for `fleetsim plot` (the scripts as the user left them;
 * scenario_name NULL keeps the report's name).  A missing gnuplot prints a one-line
 * note on messages and still writes the scripts and the report: 0.  -1 after printing
 * "fleetsim: <what failed>" on messages (the report is still written when it can be).
 * png: the charts are also rendered to plots/NAME.png. */
int output_pictures(const char *dir, const char *scenario_name, const char *description,
                    bool rewrite_scripts, bool png, const plot_limit *limits, size_t nlimits,
                    FILE *messages);

/* Starts ahead what drawing the charts will need (the gnuplot processes, whose start
 * costs more than a chart), to run beside the simulation; output_pictures_cool ends
 * what was not used.  Optional: output_pictures works without it. */
void output_pictures_warm(void);
void output_pictures_cool(void);

#endif
