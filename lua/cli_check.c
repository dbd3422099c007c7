/* `fleetsim check`: a scenario loaded, and checked as run checks it before its first
 * event (every sweep point or search probe loaded, the memory estimate, the time series'
 * size, every model of a replication made), then printed as resolved.  Runs nothing. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lua/cli.h"
#include "lua/cli_options.h"
#include "lua/experiment.h"
#include "lua/scenario_load.h"
#include "models/run.h"
#include "models/scenario.h"
#include "output/scenario_text.h"

const char cli_check_usage[] =
    "usage: fleetsim check FILE.lua [--set KEY=VALUE]... [--sweep KEY=V1,V2]... [--seed N]\n"
    "                      [--replications N] [--memory-limit SIZE] [--unsafe]\n"
    "\n"
    "Loads the scenario and checks it as run would before its first event: every sweep\n"
    "point (or the search's first probes) loaded, the memory estimate, every model of a\n"
    "replication made.  Prints every value as the run would use it (base units: seconds,\n"
    "per second), the sweep's points and what loading them cost, and runs nothing.\n";

/* The run's own checks of one loaded scenario; at a point, the message names it. */
static int check_run(const char *file, const scenario *sc, const experiment *x, size_t point)
{
    char err[2048], label[1024];
    if (scenario_run_check(sc, err, sizeof err) == 0)
        return 0;
    if (x && x->nkeys) {
        experiment_point_label(x, point, label, sizeof label);
        fprintf(stderr, "%s: at %s %s: %s\n", file,
                x->spec.has_search ? "search probe" : "sweep point", label, err);
    } else {
        bool located = !strncmp(err, file, strlen(file));
        fprintf(stderr, "%s%s%s\n", located ? "" : file, located ? "" : ": ", err);
    }
    return -1;
}

static void print_points(const experiment *x)
{
    const search_spec *s = &x->spec.search;
    bool grid = x->spec.has_search && s->ngrid;
    printf("\n%s: %zu %s over", x->spec.has_search ? "search" : "sweep", x->npoints,
           x->spec.has_search && !grid ? "first probes" : x->npoints == 1 ? "point" : "points");
    for (size_t k = 0; k < x->nkeys; k++)
        printf(" %s", x->keys[k]);
    char label[1024];
    for (size_t p = 0; p < x->npoints; p++) {
        experiment_point_label(x, p, label, sizeof label);
        printf("\n  %zu: %s", p + 1, label);
    }
    if (grid)
        printf("\nthe answer: of the points with %s, the %s %s%s%s", s->target,
               s->maximise ? "most" : "least", s->objective_metric,
               s->objective_subject ? " of " : "", s->objective_subject ? s->objective_subject : "");
    printf("\nloading them ran %.3g million Lua instructions (a sweep or search may spend %.0f "
           "million)\n", (double)x->load_instructions / 1e6,
           (double)EXPERIMENT_LOAD_INSTRUCTIONS / 1e6);
}

int cli_check(int argc, char **argv)
{
    cli_options o;
    if (cli_options_parse(argc, argv, "check", &o) != 0) {
        cli_options_release(&o);
        return CLI_EXIT_BAD_INPUT;
    }
    char err[4096];
    scenario sc;
    experiment_spec spec;
    if (cli_options_load_experiment(&o, &sc, &spec) != 0) {
        cli_options_release(&o);
        return CLI_EXIT_BAD_INPUT;
    }
    int status = 0;
    bool varies = spec.naxes || spec.has_search;
    experiment x = { 0 };
    bool planned = status == 0 && varies; /* the plan takes the spec */
    if (planned) {
        experiment_options eo = { .file = o.file, .unsafe = o.unsafe, .sets = o.sets,
                                  .nsets = o.nsets, .tasks = { .jobs = 1 } };
        if (experiment_plan(&x, &eo, &spec, err, sizeof err) != EXPERIMENT_OK) {
            fprintf(stderr, "%s\n", err);
            status = CLI_EXIT_BAD_INPUT;
        }
        for (size_t p = 0; p < x.npoints && status == 0; p++) {
            if (experiment_hold(&x, p, err, sizeof err) != 0) { /* it loaded in the plan */
                fprintf(stderr, "%s\n", err);
                status = CLI_EXIT_BAD_INPUT;
            } else if (check_run(o.file, &x.points[p].sc, &x, p) != 0) {
                status = CLI_EXIT_BAD_INPUT;
            }
        }
    } else if (status == 0 && check_run(o.file, &sc, NULL, 0) != 0) {
        status = CLI_EXIT_BAD_INPUT;
    }
    if (status == 0) {
        output_scenario_text(stdout, &sc);
        if (varies)
            print_points(&x);
    }
    if (planned)
        experiment_release(&x);
    else
        experiment_load_release(&spec);
    scenario_release(&sc);
    cli_options_release(&o);
    return status;
}
