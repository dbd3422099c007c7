/* `fleetsim plot`: a run folder's charts rendered again, as edited, and its report. */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "lua/cli.h"
#include "output/pictures.h"
#include "output/plots.h"

const char cli_plot_usage[] =
    "usage: fleetsim plot DIR [--png]\n"
    "\n"
    "Renders the chart scripts of a run folder, DIR/plots/*.gp, as they are (edited or\n"
    "added by hand) into plots/NAME.svg with gnuplot, then writes DIR/report.html\n"
    "again.  A folder without scripts gets them from its CSVs first.  PNG renders too\n"
    "(plots/NAME.png) with --png, or when the folder already holds some (a run with\n"
    "--png): they are kept up to date with the scripts.\n";

/* Whether DIR/plots holds a PNG render already. */
static bool has_png(const char *dir)
{
    plot_list pngs = { 0 };
    char err[512];
    bool any = output_plots_list(dir, "png", &pngs, err, sizeof err) == 0 && pngs.count > 0;
    plot_list_release(&pngs);
    return any;
}

/* `fleetsim plot DIR [--png]`: renders the scripts in DIR/plots as they are, then
 * report.html. */
int cli_plot(int argc, char **argv)
{
    if (argc == 3 && (!strcmp(argv[2], "-h") || !strcmp(argv[2], "--help")))
        return cli_help("plot");
    const char *dir = NULL;
    bool png = false, bad = argc < 3 || argc > 4;
    for (int i = 2; i < argc && !bad; i++) {
        if (!strcmp(argv[i], "--png"))
            png = true;
        else if (argv[i][0] != '-' && !dir)
            dir = argv[i];
        else
            bad = true;
    }
    if (bad || !dir) {
        fprintf(stderr, "fleetsim plot: expected one run folder, and --png or nothing "
                "(see fleetsim help plot)\n");
        return CLI_EXIT_BAD_INPUT;
    }
    return output_pictures(dir, NULL, NULL, false, png || has_png(dir), NULL, 0, stderr) == 0
               ? 0
               : CLI_EXIT_RUN_FAILURE;
}
