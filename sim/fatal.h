/* Failures that are bugs, not bad input: a message naming the broken rule, then abort.
 * Bad input is the user's: it is reported through return codes and messages instead. */
#ifndef FLEETSIM_SIM_FATAL_H
#define FLEETSIM_SIM_FATAL_H

/* Prints "fleetsim: fatal: <message>" to stderr and aborts.  Never returns. */
_Noreturn void sim_fatal(const char *format, ...) __attribute__((format(printf, 1, 2)));

/* Out of memory is neither a bug nor bad input: the run could not get what it needs.
 * Prints "fleetsim: <message>: the run needs more memory than it could get (a smaller
 * scenario, fewer --jobs, or --memory-limit to be told before it starts)" to stderr
 * and exits with status 1, the run-time failure; no result file is complete (each is
 * written under a temporary name first).  Never returns. */
_Noreturn void sim_out_of_memory(const char *format, ...) __attribute__((format(printf, 1, 2)));

#endif
