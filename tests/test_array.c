/* Growing arrays: capacities that double from 16, zero-filled growth, and a growth that
 * can fail without dying. */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdlib.h>

#include "sim/array.h"

Test(array, doubles_from_16_to_cover_the_need)
{
    size_t cap = 0;
    int *a = sim_array_grow(NULL, &cap, 1, sizeof *a, "a test array");
    cr_expect_eq(cap, 16);
    a[15] = 7;
    cr_expect_eq(sim_array_grow(a, &cap, 16, sizeof *a, "a test array"), a, "enough: unchanged");
    cr_expect_eq(cap, 16);
    a = sim_array_grow(a, &cap, 17, sizeof *a, "a test array");
    cr_expect_eq(cap, 32);
    a = sim_array_grow(a, &cap, 100, sizeof *a, "a test array");
    cr_expect_eq(cap, 128, "doubled until it covers the need");
    cr_expect_eq(a[15], 7, "kept");
    free(a);
}

Test(array, zeroed_growth_fills_only_the_new_places)
{
    size_t cap = 0;
    int *a = sim_array_grow_zeroed(NULL, &cap, 3, sizeof *a, "a test array");
    cr_assert_eq(cap, 16);
    for (size_t i = 0; i < cap; i++)
        cr_expect_eq(a[i], 0, "a[%zu]", i);
    for (size_t i = 0; i < cap; i++)
        a[i] = 5;
    a = sim_array_grow_zeroed(a, &cap, 40, sizeof *a, "a test array");
    cr_assert_eq(cap, 64);
    for (size_t i = 0; i < cap; i++)
        cr_expect_eq(a[i], i < 16 ? 5 : 0, "a[%zu]", i);
    free(a);
}

Test(array, try_grow_stops_at_its_limit_and_leaves_the_array)
{
    size_t cap = 0;
    char *text = sim_array_try_grow(NULL, &cap, 10, 1, 64);
    cr_assert_not_null(text);
    cr_expect_eq(cap, 16);
    text[0] = 'x';
    text = sim_array_try_grow(text, &cap, 64, 1, 64);
    cr_assert_not_null(text);
    cr_expect_eq(cap, 64, "the limit itself is allowed");
    cr_expect_null(sim_array_try_grow(text, &cap, 65, 1, 64), "past the limit");
    cr_expect_eq(cap, 64, "unchanged");
    cr_expect_eq(text[0], 'x', "still the caller's");
    cr_expect_null(sim_array_try_grow(text, &cap, SIZE_MAX / 2, 8, SIZE_MAX),
                   "more bytes than a size_t counts");
    cr_expect_eq(cap, 64);
    free(text);
}
