/* The pictures of a run folder: editable gnuplot scripts in DIR/plots/ written from
 * the CSVs the run produced (timeseries.csv, sweep.csv), and their renders: SVG, and PNG
 * when asked (a PNG costs four to five SVGs to encode, and the report needs none).
 * See README.md, "Pictures and the report". */
#ifndef FLEETSIM_OUTPUT_PLOTS_H
#define FLEETSIM_OUTPUT_PLOTS_H

#include <stdbool.h>
#include <stddef.h>

#include "output/plot_script.h"
#include "output/plot_sweep.h"

typedef struct plot_options {
    /* true (a run): write plots/NAME.gp anew from the CSVs, removing the scripts an
     * earlier run wrote that no longer apply (a script without fleetsim's first line is
     * the user's and is kept); false (`fleetsim plot`): leave the scripts as they are,
     * writing them only when plots/ holds none. */
    bool rewrite_scripts;
    bool png;               /* also render plots/NAME.png */
    const char *gnuplot;    /* the program; NULL: "gnuplot", looked up on PATH */
    const plot_limit *limits; /* SLOs drawn on a sweep's charts (nlimits; NULL: none) */
    size_t nlimits;
} plot_options;

enum { OUTPUT_PLOTS_NO_GNUPLOT = 1 };

/* Writes the scripts (per o; NULL: a run's defaults, SVG only), then renders every
 * plots/NAME.gp in one gnuplot process.  0 when all rendered; OUTPUT_PLOTS_NO_GNUPLOT
 * with a one-line note in err (the scripts are written, nothing rendered); -1 with a
 * message: a folder or file that cannot be written, or a script gnuplot refused (named,
 * with gnuplot's message; the other charts are rendered). */
int output_plots(const char *dir, const plot_options *o, char *err, size_t err_size);

/* The files DIR/plots/NAME.EXT (their NAMEs), sorted by name, into names (the
 * caller releases it with plot_list_release).  ext: "gp", "svg", ...  0, or -1 with
 * a message; no plots/ folder: an empty list. */
int output_plots_list(const char *dir, const char *ext, plot_list *names,
                      char *err, size_t err_size);

#endif
