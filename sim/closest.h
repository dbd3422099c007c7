/* "Did you mean": the known name closest to a misspelt one, by edit distance. */
#ifndef FLEETSIM_SIM_CLOSEST_H
#define FLEETSIM_SIM_CLOSEST_H

#include <stddef.h>

/* The candidate (NULL-ended) word most likely meant, in this order: one that equals it
 * but for case; the first that it begins, then the first that contains it (ignoring
 * case: "H100" means "H100-PCIe" or "H100-SXM", never "B200", which is closer by edits);
 * else the closest by edit distance, if within a third of the word's length (at least
 * 2 edits); else NULL. */
const char *closest_name(const char *word, const char *const *candidates);

/* Every name of that first rule that matches (up to 4), each between `quote`s (none for
 * 0) and joined
 * by ", " and " or ": "\"H100-PCIe\" or \"H100-SXM\"", written to buf; NULL when none. */
const char *closest_names_text(const char *word, const char *const *candidates, char quote,
                               char *buf, size_t size);

#endif
