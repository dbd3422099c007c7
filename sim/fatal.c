#include "sim/fatal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

void sim_fatal(const char *format, ...)
{
    va_list args;
    va_start(args, format);
    fputs("fleetsim: fatal: ", stderr);
    vfprintf(stderr, format, args);
    fputc('\n', stderr);
    va_end(args);
    abort();
}
