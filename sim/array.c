/* Growing arrays (see array.h). */
#include "sim/array.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sim/fatal.h"

void *sim_array_try_grow(void *items, size_t *cap, size_t need, size_t size, size_t max)
{
    if (need <= *cap)
        return items;
    if (size && max > SIZE_MAX / size)
        max = SIZE_MAX / size;
    size_t n = *cap ? *cap : 8;
    do {
        if (n > max / 2)
            return NULL;
        n *= 2;
    } while (n < need);
    void *p = realloc(items, n * size);
    if (p)
        *cap = n;
    return p;
}

void *sim_array_grow(void *items, size_t *cap, size_t need, size_t size, const char *what)
{
    void *p = sim_array_try_grow(items, cap, need, size, SIZE_MAX);
    if (!p && need > 0)
        sim_out_of_memory("out of memory growing %s", what);
    return p;
}

void *sim_array_grow_zeroed(void *items, size_t *cap, size_t need, size_t size,
                            const char *what)
{
    size_t old = *cap;
    unsigned char *p = sim_array_grow(items, cap, need, size, what);
    if (*cap > old)
        memset(p + old * size, 0, (*cap - old) * size);
    return p;
}
