/* Running the fleetsim binary from a test: `FLEETSIM_BIN ARGS` through scratch_run, which
 * captures its output and keeps a sanitizer's lines out of *err (tests/support/scratch.h). */
#ifndef FLEETSIM_TESTS_CLI_H
#define FLEETSIM_TESTS_CLI_H

/* The binary under test: the Makefile passes the build's own (build/san/fleetsim under
 * SAN=1). */
#ifndef FLEETSIM_BIN
#define FLEETSIM_BIN "build/fleetsim"
#endif

/* Runs `FLEETSIM_BIN ARGS`, ARGS made printf-style from format.  *out and *err are freed
 * (NULL is fine) and replaced by the run's stdout and stderr, which the caller frees after
 * its last run.  Returns the exit status (128 + signal if killed). */
__attribute__((format(printf, 3, 4)))
int cli_run(char **out, char **err, const char *format, ...);

/* The same with env before the binary in the shell command: assignments such as
 * "PATH=/nonexistent " or SCRATCH_NO_LEAK_CHECK. */
__attribute__((format(printf, 4, 5)))
int cli_run_env(char **out, char **err, const char *env, const char *format, ...);

#endif
