/* Rendering chart scripts with gnuplot, run as a child process: all charts in one
 * process (its start costs more than a chart), each output under a temporary name until
 * gnuplot has finished it, so an interrupted render leaves no file that looks whole. */
#ifndef FLEETSIM_OUTPUT_PLOT_RENDER_H
#define FLEETSIM_OUTPUT_PLOT_RENDER_H

#include <stdbool.h>
#include <stddef.h>

#include "output/plot_script.h"

enum { PLOT_RENDER_NO_GNUPLOT = 1 };

/* Renders DIR/plots/NAME.gp into plots/NAME.svg, and plots/NAME.png when png, for every
 * name, running gnuplot from DIR (the scripts' paths are relative to it).  gnuplot is
 * the program, looked up on PATH; NULL means "gnuplot".
 * Returns 0 when every chart rendered; PLOT_RENDER_NO_GNUPLOT when the program is not
 * found (nothing rendered); -1 with a message otherwise: a script that fails is named
 * with gnuplot's message, and the charts after it are still rendered. */
int plot_render(const char *dir, const plot_list *names, const char *gnuplot, bool png,
                char *err, size_t err_size);

/* Starts the gnuplot processes a later plot_render of this process will use (one a
 * core, as it would start them), so that their start, which costs more than a chart,
 * runs beside whatever this process does before it renders.  Optional: plot_render
 * starts its own where none is waiting (another program, a forked child, all used).
 * Nothing happens when gnuplot is not found. */
void plot_render_warm(const char *gnuplot);

/* Ends the processes plot_render_warm started that no render took (they exit when their
 * input ends); a no-op when there are none. */
void plot_render_cool(void);

/* The processes plot_render_warm started that still wait for a render (0 in another
 * process than the one that started them). */
size_t plot_render_waiting(void);

#endif
