/* The scenario API reference (docs/api.md) against the code: every key a loader accepts
 * (the NULL-ended _KEYS arrays and _KEYS macros of the loaders in lua/) and every
 * constructor of lua/fleetsim/init.lua must appear in code spans between the
 * api-reference markers, so the reference cannot fall behind the loaders.  Calibration
 * profiles are files of their own (docs/calibration.md), so lua/profile_load.c is left
 * out. */
#include <criterion/criterion.h>
#include <ctype.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/support/scratch.h"

#define API_REFERENCE "docs/api.md"

/* " tok1 tok2 ... ": every identifier inside a `code span` of text[begin, end). */
static char *code_words(const char *begin, const char *end)
{
    size_t cap = (size_t)(end - begin) * 2 + 2, n = 0;
    char *words = malloc(cap);
    cr_assert_not_null(words);
    words[n++] = ' ';
    bool in_code = false;
    for (const char *p = begin; p < end; p++) {
        if (*p == '`') { /* a span ends or starts: a word ends */
            in_code = !in_code;
            if (words[n - 1] != ' ')
                words[n++] = ' ';
            continue;
        }
        if (!in_code)
            continue;
        if (isalnum((unsigned char)*p) || *p == '_' || *p == '.')
            words[n++] = *p;
        else if (words[n - 1] != ' ')
            words[n++] = ' ';
    }
    if (words[n - 1] != ' ')
        words[n++] = ' ';
    words[n] = '\0';
    return words;
}

/* Whether word w is among words, alone or as the last part of a dotted name (fs.x). */
static bool has_word(const char *words, const char *w)
{
    char needle[128];
    snprintf(needle, sizeof needle, " %s ", w);
    if (strstr(words, needle))
        return true;
    snprintf(needle, sizeof needle, ".%s ", w);
    return strstr(words, needle) != NULL;
}

/* Checks each string literal in src[begin, end) against the words. */
static int check_literals(const char *file, const char *begin, const char *end,
                          const char *words)
{
    int checked = 0;
    for (const char *p = begin; p < end; p++) {
        if (*p != '"')
            continue;
        const char *close = strchr(p + 1, '"');
        if (!close || close > end)
            break;
        char key[128];
        snprintf(key, sizeof key, "%.*s", (int)(close - p - 1), p + 1);
        cr_expect(has_word(words, key), "%s: key '%s' is not in the API reference (%s)",
                  file, key, API_REFERENCE);
        checked++;
        p = close;
    }
    return checked;
}

Test(api_reference, every_loader_key_and_constructor_is_documented)
{
    char *reference = scratch_read(API_REFERENCE);
    cr_assert_not_null(reference, "no %s: run from the repository root", API_REFERENCE);
    const char *begin = strstr(reference, "<!-- api-reference:begin -->");
    const char *end = strstr(reference, "<!-- api-reference:end -->");
    cr_assert(begin && end && begin < end, "%s has no api-reference markers", API_REFERENCE);
    char *words = code_words(begin, end);

    int keys = 0;
    DIR *d = opendir("lua");
    cr_assert_not_null(d);
    struct dirent *e;
    while ((e = readdir(d))) {
        size_t n = strlen(e->d_name);
        if (n < 3 || strcmp(e->d_name + n - 2, ".c") || !strcmp(e->d_name, "profile_load.c"))
            continue;
        char path[512];
        snprintf(path, sizeof path, "lua/%s", e->d_name);
        char *src = scratch_read(path);
        cr_assert_not_null(src, "%s", path);
        for (char *p = src; (p = strstr(p, "_KEYS")); p += 5) {
            const char *line = p;
            while (line > src && line[-1] != '\n')
                line--;
            if (!strncmp(line, "#define", 7)) { /* the macro: until a line without '\' */
                const char *stop = p;
                while ((stop = strchr(stop, '\n')) && stop[-1] == '\\')
                    stop++;
                keys += check_literals(path, p, stop ? stop : p + strlen(p), words);
            } else if (!strncmp(p, "_KEYS[] = {", 11)) {
                const char *stop = strchr(p, '}');
                cr_assert_not_null(stop);
                keys += check_literals(path, p, stop, words);
            }
        }
        free(src);
    }
    closedir(d);
    cr_expect_gt(keys, 150, "found only %d keys: did the arrays change shape?", keys);

    char *init = scratch_read("lua/fleetsim/init.lua");
    cr_assert_not_null(init);
    int constructors = 0;
    for (char *p = init; (p = strstr(p, "= constructor(\"")); p++) {
        char name[64];
        if (sscanf(p, "= constructor(\"%63[^\"]", name) != 1)
            continue;
        char dotted[80];
        snprintf(dotted, sizeof dotted, "fs.%s", name);
        cr_expect(has_word(words, dotted), "constructor %s is not in the API reference (%s)",
                  dotted, API_REFERENCE);
        constructors++;
    }
    cr_expect_gt(constructors, 30);
    free(init);
    free(words);
    free(reference);
}
