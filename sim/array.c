/* Growing arrays (see array.h). */
#include "sim/array.h"

#include <stdlib.h>

#include "sim/fatal.h"

void *sim_array_grow(void *items, size_t *cap, size_t need, size_t size, const char *what)
{
    if (need <= *cap)
        return items;
    size_t n = *cap ? *cap * 2 : 16;
    while (n < need)
        n *= 2;
    void *p = realloc(items, n * size);
    if (!p)
        sim_fatal("out of memory growing %s", what);
    *cap = n;
    return p;
}
