/* The fleetsim command line: one file per command (lua/cli_<command>.c), dispatched by
 * lua/cli.c from a table.  Every command takes the whole argv (argv[1] is its name,
 * its options start at argv[2]), prints results on stdout and mistakes on stderr, and
 * returns the process's exit status. */
#ifndef FLEETSIM_LUA_CLI_H
#define FLEETSIM_LUA_CLI_H

enum {
    CLI_EXIT_OK = 0,
    CLI_EXIT_RUN_FAILURE = 1, /* the run could not be done: an unwritable folder, a full disk */
    CLI_EXIT_BAD_INPUT = 2,   /* bad usage or a bad scenario: nothing written */
};

/* The commands and their help texts (`fleetsim help COMMAND`). */
int cli_run(int argc, char **argv);
int cli_check(int argc, char **argv);
int cli_plot(int argc, char **argv);
int cli_estimate(int argc, char **argv);
int cli_calibrate(int argc, char **argv);
int cli_validate(int argc, char **argv);
int cli_version(int argc, char **argv);
extern const char cli_run_usage[], cli_check_usage[], cli_plot_usage[], cli_estimate_usage[],
    cli_calibrate_usage[], cli_validate_usage[];

/* Prints the help of a command (NULL: the overview) on stdout; CLI_EXIT_BAD_INPUT with
 * the overview on stderr for an unknown command. */
int cli_help(const char *command);

#endif
