/* Problems of a configuration, gathered all at once rather than the first met: what
 * serving_config_check and replica_config_check fill, and a create function reports
 * whole. */
#ifndef FLEETSIM_MODELS_CONFIG_PROBLEMS_H
#define FLEETSIM_MODELS_CONFIG_PROBLEMS_H

#include <stddef.h>

#define CONFIG_PROBLEMS_MAX 16

typedef struct config_problems {
    unsigned n;                            /* found (maybe more than kept) */
    char text[CONFIG_PROBLEMS_MAX][200];   /* the first CONFIG_PROBLEMS_MAX */
} config_problems;

/* Adds one, printf-style. */
void config_problem(config_problems *p, const char *format, ...)
    __attribute__((format(printf, 2, 3)));

/* The problems kept, in one line with "; " between them (and how many more were found),
 * into buf. */
void config_problems_join(const config_problems *p, char *buf, size_t size);

#endif
