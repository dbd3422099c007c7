/* "Did you mean": the known name closest to a misspelt one, by edit distance. */
#ifndef FLEETSIM_SIM_CLOSEST_H
#define FLEETSIM_SIM_CLOSEST_H

/* The closest of the NULL-ended candidates to word, or NULL if none is within a third of
 * the word's length (at least 2 edits). */
const char *closest_name(const char *word, const char *const *candidates);

#endif
