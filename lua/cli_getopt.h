/* What a command says of an option that getopt_long refused: one message for run, check,
 * estimate, calibrate and validate alike, naming the option as it was typed. */
#ifndef FLEETSIM_LUA_CLI_GETOPT_H
#define FLEETSIM_LUA_CLI_GETOPT_H

#include <getopt.h>

/* Prints "fleetsim COMMAND: ..." on stderr for getopt_long's `got` (':' a missing value,
 * '?' anything else) just returned over argv with the long options `longs`: the option
 * that needs a value; a long option given a value it takes none of (--csv=1); an unknown
 * short option inside a group (-xq names -x, not the word before); or the unknown word. */
void cli_getopt_refused(const char *command, int got, char **argv,
                        const struct option *longs);

#endif
