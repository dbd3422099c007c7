/* Growing arrays: the one place that doubles a capacity. */
#ifndef FLEETSIM_SIM_ARRAY_H
#define FLEETSIM_SIM_ARRAY_H

#include <stddef.h>

/* items, grown if need be so that it holds `need` elements of `size` bytes (capacity
 * doubling from 16, *cap updated); out of memory is fatal, with `what` in the message.
 * New elements are not initialised. */
void *sim_array_grow(void *items, size_t *cap, size_t need, size_t size, const char *what);

/* The same, with the new elements (from the old *cap to the new one) zero-filled: for
 * an array indexed by a sparse key, whose empty places read as NULL or 0. */
void *sim_array_grow_zeroed(void *items, size_t *cap, size_t need, size_t size,
                            const char *what);

/* The same as sim_array_grow for a caller that reports the failure or carries on
 * without: NULL when out of memory or when the doubled capacity would pass `max` elements,
 * with items still valid (the caller still owns it) and *cap unchanged.  need > 0. */
void *sim_array_try_grow(void *items, size_t *cap, size_t need, size_t size, size_t max);

#endif
