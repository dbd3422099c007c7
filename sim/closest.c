/* Suggestions for misspelt names (see closest.h). */
#include "sim/closest.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

static size_t edit_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la > 64 || lb > 64)
        return 99;
    size_t row[65];
    for (size_t j = 0; j <= lb; j++)
        row[j] = j;
    for (size_t i = 1; i <= la; i++) {
        size_t diagonal = row[0];
        row[0] = i;
        for (size_t j = 1; j <= lb; j++) {
            size_t above = row[j];
            size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
            size_t best = diagonal + cost;
            if (row[j] + 1 < best)
                best = row[j] + 1;
            if (row[j - 1] + 1 < best)
                best = row[j - 1] + 1;
            row[j] = best;
            diagonal = above;
        }
    }
    return row[lb];
}

static char lower(char ch) { return ch >= 'A' && ch <= 'Z' ? (char)(ch - 'A' + 'a') : ch; }

/* The rules before edit distance, as (candidate, word) tests, in order. */
static bool same_ignoring_case(const char *candidate, const char *word)
{
    for (; *word && lower(*word) == lower(*candidate); word++, candidate++)
        ;
    return !*word && !*candidate;
}

static bool begins_ignoring_case(const char *candidate, const char *word)
{
    for (; *word && lower(*word) == lower(*candidate); word++, candidate++)
        ;
    return !*word;
}

static bool contains_ignoring_case(const char *candidate, const char *word)
{
    if (strlen(word) < 2) /* one letter is in too many names to mean one */
        return false;
    for (; *candidate; candidate++)
        if (begins_ignoring_case(candidate, word))
            return true;
    return false;
}

static bool (*const RULES[])(const char *, const char *) = {
    same_ignoring_case, begins_ignoring_case, contains_ignoring_case,
};

/* The matches of the first rule that has any, in the candidates' order (up to max in
 * out; returns how many), else the closest by edit distance. */
static size_t matches(const char *word, const char *const *candidates, const char **out,
                      size_t max)
{
    for (size_t r = 0; *word && r < sizeof RULES / sizeof RULES[0]; r++) {
        size_t n = 0;
        for (const char *const *k = candidates; *k && n < max; k++)
            if (RULES[r](*k, word))
                out[n++] = *k;
        if (n)
            return n;
    }
    size_t n = 0;
    const char *best = NULL;
    size_t best_distance = 99;
    for (const char *const *k = candidates; *k; k++) {
        size_t d = edit_distance(word, *k);
        if (d < best_distance) {
            best_distance = d;
            best = *k;
        }
    }
    size_t allowed = strlen(word) / 3 > 2 ? strlen(word) / 3 : 2;
    if (best && best_distance <= allowed && max > 0)
        out[n++] = best;
    return n;
}

const char *closest_name(const char *word, const char *const *candidates)
{
    const char *best = NULL;
    return matches(word, candidates, &best, 1) ? best : NULL;
}

const char *closest_names_text(const char *word, const char *const *candidates, char quote,
                               char *buf, size_t size)
{
    const char *found[4];
    size_t n = matches(word, candidates, found, 4);
    if (!n || !size)
        return NULL;
    size_t used = 0;
    char q[2] = { quote, 0 };
    buf[0] = 0;
    for (size_t i = 0; i < n && used < size; i++) {
        const char *sep = i == 0 ? "" : i + 1 == n ? " or " : ", ";
        int w = snprintf(buf + used, size - used, "%s%s%s%s", sep, q, found[i], q);
        used += w > 0 ? (size_t)w : 0;
    }
    return buf;
}
