/* Running the fleetsim binary (see cli.h). */
#include "cli.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scratch.h"

static int run(char **out, char **err, const char *env, const char *format, va_list ap)
{
    va_list again;
    va_copy(again, ap);
    int n = vsnprintf(NULL, 0, format, ap);
    size_t size = (size_t)n + 1;
    char *args = malloc(size);
    if (n < 0 || !args) {
        perror("cli_run");
        abort();
    }
    vsnprintf(args, size, format, again);
    va_end(again);
    size += strlen(env) + sizeof FLEETSIM_BIN + 1;
    char *command = malloc(size);
    if (!command) {
        perror("cli_run");
        abort();
    }
    snprintf(command, size, "%s%s %s", env, FLEETSIM_BIN, args);
    free(args);
    free(*out);
    free(*err);
    int status = scratch_run(command, out, err);
    free(command);
    return status;
}

int cli_run(char **out, char **err, const char *format, ...)
{
    va_list ap;
    va_start(ap, format);
    int status = run(out, err, "", format, ap);
    va_end(ap);
    return status;
}

int cli_run_env(char **out, char **err, const char *env, const char *format, ...)
{
    va_list ap;
    va_start(ap, format);
    int status = run(out, err, env, format, ap);
    va_end(ap);
    return status;
}
