/* Durations on the command line, written as scenario files write them (fleetsim.units):
 * "250ms", "90s", "5m", "2h", "7d", "2w", "3y" (y = 365 d), also "min", "us", "ns"; a
 * plain number is seconds. */
#ifndef FLEETSIM_LUA_CLI_DURATION_H
#define FLEETSIM_LUA_CLI_DURATION_H

/* 0 with *seconds set, or -1 (nothing set) for text that is not a finite duration >= 0. */
int cli_duration_parse(const char *text, double *seconds);

#endif
