/* Messages for the options getopt_long refuses (see cli_getopt.h). */
#include "lua/cli_getopt.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

/* Whether word ("NAME=VALUE") is a long option of `longs` whose value is val. */
static int long_option_given_value(const char *word, int val, const struct option *longs)
{
    const char *eq = strchr(word, '=');
    for (const struct option *o = longs; eq && o->name; o++)
        if (o->val == val && !o->flag && strlen(o->name) == (size_t)(eq - word)
            && !strncmp(o->name, word, (size_t)(eq - word)))
            return 1;
    return 0;
}

void cli_getopt_refused(const char *command, int got, char **argv,
                        const struct option *longs)
{
    /* getopt_long has moved optind past a whole word, but not past a group of short
     * options it stopped inside: only optopt names that one */
    const char *word = argv[optind - 1];
    if (got == ':')
        fprintf(stderr, "fleetsim %s: %s needs a value\n", command, word);
    else if (optopt && !strncmp(word, "--", 2) && long_option_given_value(word + 2, optopt, longs))
        fprintf(stderr, "fleetsim %s: --%.*s takes no value, got '%s'\n", command,
                (int)(strchr(word, '=') - word - 2), word + 2, word);
    else if (optopt > 0 && optopt < 128 && isprint(optopt))
        fprintf(stderr, "fleetsim %s: unknown option '-%c' (see fleetsim help %s)\n", command,
                optopt, command);
    else if (optopt) /* a short option still: a byte of a multibyte letter, say */
        fprintf(stderr, "fleetsim %s: unknown option: byte 0x%02x after '-' (see fleetsim help "
                "%s)\n", command, (unsigned)(unsigned char)optopt, command);
    else
        fprintf(stderr, "fleetsim %s: unknown option '%s' (see fleetsim help %s)\n", command,
                word, command);
}
