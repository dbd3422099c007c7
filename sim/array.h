/* Growing arrays: the one place that doubles a capacity and dies on a failed realloc. */
#ifndef FLEETSIM_SIM_ARRAY_H
#define FLEETSIM_SIM_ARRAY_H

#include <stddef.h>

/* items, grown if need be so that it holds `need` elements of `size` bytes (capacity
 * doubling from 16, *cap updated); out of memory is fatal, with `what` in the message.
 * New elements are not initialised. */
void *sim_array_grow(void *items, size_t *cap, size_t need, size_t size, const char *what);

#endif
