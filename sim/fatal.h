/* Failures that are bugs, not bad input: a message naming the broken rule, then abort.
 * Bad input is the user's: it is reported through return codes and messages instead. */
#ifndef FLEETSIM_SIM_FATAL_H
#define FLEETSIM_SIM_FATAL_H

/* Prints "fleetsim: fatal: <message>" to stderr and aborts.  Never returns. */
_Noreturn void sim_fatal(const char *format, ...) __attribute__((format(printf, 1, 2)));

#endif
