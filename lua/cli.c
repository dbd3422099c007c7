/* fleetsim's main program: the table of commands, help, and the process's set-up (GSL
 * without aborts, MPI ranks).  Each command lives in its own file (lua/cli.h). */
#include "lua/cli.h"
#include "lua/cli_terminal.h"

#include <stdio.h>
#include <string.h>

#include "sim/mpi_tasks.h"
#include "sim/rng.h"

static const char overview[] =
    "usage: fleetsim <command> [options]\n"
    "\n"
    "commands:\n"
    "  run FILE.lua     run a scenario and write its results\n"
    "  check FILE.lua   load and check a scenario, print it resolved, run nothing\n"
    "  plot DIR         render a run folder's chart scripts (plots/*.gp) again, as edited,\n"
    "                   and rewrite its report.html\n"
    "  estimate         memory, latency, throughput and training time of a model on a\n"
    "                   device (fleetsim help estimate)\n"
    "  calibrate        measure this machine's GPU (or CPU) and write a profile\n"
    "                   (fleetsim help calibrate)\n"
    "  validate         the model's predictions against published measurements\n"
    "                   (fleetsim help validate)\n"
    "  version          print the version and what this build can use\n"
    "  help [COMMAND]   print this message, or a command's options\n"
    "\n"
    "Exit status: 0 success, 1 run-time failure (e.g. an unwritable folder), 2 bad usage\n"
    "or a bad scenario.\n";

/* One row per command; aliases share a function. */
typedef struct cli_command {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *usage; /* NULL: the overview */
} cli_command;

static int help_command(int argc, char **argv) { return cli_help(argc > 2 ? argv[2] : NULL); }

static const cli_command commands[] = {
    { "run", cli_run, cli_run_usage },
    { "check", cli_check, cli_check_usage },
    { "estimate", cli_estimate, cli_estimate_usage },
    { "calibrate", cli_calibrate, cli_calibrate_usage },
    { "plot", cli_plot, cli_plot_usage },
    { "validate", cli_validate, cli_validate_usage },
    { "version", cli_version, NULL },
    { "--version", cli_version, NULL },
    { "help", help_command, NULL },
    { "--help", help_command, NULL },
    { "-h", help_command, NULL },
};
enum { NCOMMANDS = sizeof commands / sizeof commands[0] };

static const cli_command *find_command(const char *name)
{
    for (size_t i = 0; i < NCOMMANDS; i++)
        if (!strcmp(commands[i].name, name))
            return &commands[i];
    return NULL;
}

int cli_help(const char *command)
{
    const cli_command *c = command && command[0] != '-' ? find_command(command) : NULL;
    if (command && !c) {
        fprintf(stderr, "fleetsim: no command '%s'\n\n%s", command, overview);
        return CLI_EXIT_BAD_INPUT;
    }
    fputs(c && c->usage ? c->usage : overview, stdout);
    return CLI_EXIT_OK;
}

int main(int argc, char **argv)
{
    sim_gsl_quiet(); /* GSL reports errors through return codes, never aborts */
    sim_mpi_start(&argc, &argv);
    if (sim_mpi_rank() != 0) { /* rank 0 speaks for the job */
        if (!freopen("/dev/null", "w", stdout) || !freopen("/dev/null", "w", stderr))
            return CLI_EXIT_RUN_FAILURE;
    } else {
        cli_terminal_install(); /* scenario text never reaches the terminal raw */
    }
    int status;
    const cli_command *c = argc < 2 ? NULL : find_command(argv[1]);
    if (argc < 2) {
        fputs(overview, stderr);
        status = CLI_EXIT_BAD_INPUT;
    } else if (!c) {
        fprintf(stderr, "fleetsim: unknown command '%s'\n\n%s", argv[1], overview);
        status = CLI_EXIT_BAD_INPUT;
    } else {
        status = c->run(argc, argv);
    }
    sim_mpi_stop();
    return status;
}
