/* Suggestions for misspelt names (see closest.h). */
#include "sim/closest.h"

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

const char *closest_name(const char *word, const char *const *candidates)
{
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
    return best_distance <= allowed ? best : NULL;
}

