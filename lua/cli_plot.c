/* `fleetsim plot`: a run folder's charts rendered again, as edited, and its report. */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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
    const char *dir = NULL, *stray = NULL; /* the first word it does not take */
    bool png = false;
    for (int i = 2; i < argc && !stray; i++) {
        if (!strcmp(argv[i], "--png"))
            png = true;
        else if (argv[i][0] != '-' && !dir)
            dir = argv[i];
        else
            stray = argv[i];
    }
    if (stray || !dir) {
        char said[300] = "";
        if (stray)
            snprintf(said, sizeof said, ", got '%.250s'", stray);
        fprintf(stderr, "fleetsim plot: expected one run folder, and --png or nothing%s "
                "(see fleetsim help plot)\n", said);
        return CLI_EXIT_BAD_INPUT;
    }
    /* a folder a run wrote: not a missing one (it said it could not write report.html,
     * exit 1) nor one of something else (it wrote an empty report, exit 0) */
    struct stat st;
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
        fprintf(stderr, "fleetsim plot: %s: no such folder\n", dir);
        return CLI_EXIT_BAD_INPUT;
    }
    static const char *const results[] = { "summary.csv", "timeseries.csv", "sweep.csv",
                                           "search.csv" };
    bool any = false;
    for (size_t i = 0; i < sizeof results / sizeof results[0] && !any; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, results[i]);
        any = access(path, R_OK) == 0;
    }
    plot_list scripts = { 0 };
    char err[512];
    any = any || (output_plots_list(dir, "gp", &scripts, err, sizeof err) == 0
                  && scripts.count > 0);
    plot_list_release(&scripts);
    if (!any) {
        fprintf(stderr, "fleetsim plot: %s holds no run's results (summary.csv, "
                "timeseries.csv, sweep.csv, search.csv or plots/*.gp): give the folder a "
                "run wrote (its -o)\n", dir);
        return CLI_EXIT_BAD_INPUT;
    }
    return output_pictures(dir, NULL, NULL, false, png || has_png(dir), NULL, 0, stderr) == 0
               ? 0
               : CLI_EXIT_RUN_FAILURE;
}
