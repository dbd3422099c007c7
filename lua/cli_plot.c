/* `fleetsim plot`: a run folder's charts rendered again, as edited, and its report. */
#include <stdio.h>
#include <string.h>

#include "lua/cli.h"
#include "output/pictures.h"

const char cli_plot_usage[] =
    "usage: fleetsim plot DIR\n"
    "\n"
    "Renders the chart scripts of a run folder, DIR/plots/*.gp, as they are (edited or\n"
    "added by hand) into plots/NAME.svg and NAME.png, with gnuplot, then writes\n"
    "DIR/report.html again.  A folder without scripts gets them from its CSVs first.\n";

/* `fleetsim plot DIR`: renders the scripts in DIR/plots as they are, then report.html. */
int cli_plot(int argc, char **argv)
{
    if (argc == 3 && (!strcmp(argv[2], "-h") || !strcmp(argv[2], "--help")))
        return cli_help("plot");
    if (argc != 3 || argv[2][0] == '-') {
        fprintf(stderr, "fleetsim plot: expected one run folder (see fleetsim help plot)\n");
        return CLI_EXIT_BAD_INPUT;
    }
    return output_pictures(argv[2], NULL, NULL, false, NULL, 0, stderr) == 0 ? 0 : CLI_EXIT_RUN_FAILURE;
}
