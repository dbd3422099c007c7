#include "sim/fatal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

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

void sim_out_of_memory(const char *format, ...)
{
    va_list args;
    va_start(args, format);
    fputs("fleetsim: ", stderr);
    vfprintf(stderr, format, args);
    fputs(": the run needs more memory than it could get (a smaller scenario, fewer --jobs, "
          "or --memory-limit to be told before it starts)\n", stderr);
    va_end(args);
    fflush(stdout);
    _exit(1); /* no atexit work: nothing half-made is flushed into a file */
}
