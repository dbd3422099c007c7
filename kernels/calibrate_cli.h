/* `fleetsim calibrate`: measure this machine's GPU (or CPU), fit, and write a profile
 * (Lua) beside its raw samples (CSV); or refit a samples file.  sim/fleetsim.c
 * dispatches to it. */
#ifndef FLEETSIM_KERNELS_CALIBRATE_CLI_H
#define FLEETSIM_KERNELS_CALIBRATE_CLI_H

/* The help text of the command. */
extern const char calibrate_usage[];

/* argv[1] is "calibrate"; options start at argv[2].  Prints the comparison with the
 * catalog on stdout, progress on stderr.  Returns the exit status: 0, 1 for a run-time
 * failure (no such device, an unwritable file, a failed kernel), 2 for bad usage or a
 * bad samples file. */
int calibrate_main(int argc, char **argv);

#endif
