/* Numbers in the CSV files: the fewest digits from 15 that read back to the same double
 * (output/csv_write.h), whole numbers written without printf (issue 37, item 3): the
 * same text as printf's %.15g for them, checked against that definition and by hand. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "output/csv_write.h"
#include <gsl/gsl_rng.h>

#include "sim/rng.h"

/* The definition: %.15g, %.16g or %.17g, the first that reads back. */
static void by_definition(double v, char *buf, size_t size)
{
    for (int precision = 15; precision <= 17; precision++) {
        snprintf(buf, size, "%.*g", precision, v);
        if (strtod(buf, NULL) == v)
            return;
    }
}

Test(csv_write, whole_numbers_by_hand)
{
    char buf[40];
    const struct { double v; const char *text; } cases[] = {
        { 0, "0" }, { -0.0, "-0" }, { 7, "7" }, { -7, "-7" }, { 16886, "16886" },
        { 1e14, "100000000000000" }, { 999999999999999, "999999999999999" },
        { -999999999999999, "-999999999999999" }, { 1e15, "1e+15" },
        { 1234567890123456, "1234567890123456" }, { 0.1, "0.1" }, { 2.5e-05, "2.5e-05" },
        { 1.0 / 3, "0.3333333333333333" }, { NAN, "" }, { INFINITY, "inf" },
        { -INFINITY, "-inf" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        cr_expect_str_eq(csv_format_number(cases[i].v, buf, sizeof buf), cases[i].text,
                         "case %zu", i);
}

Test(csv_write, every_kind_of_value_reads_as_the_definition_writes_it)
{
    gsl_rng *rng = sim_rng_stream(37, 0, "csv numbers");
    char fast[40], slow[40];
    for (int i = 0; i < 200000; i++) {
        double u = gsl_rng_uniform(rng), v;
        switch (i % 5) {
        case 0: v = floor(u * 1e6); break;                     /* counts */
        case 1: v = -floor(u * pow(10, 1 + i % 16)); break;    /* large, negative */
        case 2: v = u * pow(10, (i % 40) - 20); break;         /* any magnitude */
        case 3: v = round(u * 1000) / 1000; break;             /* short decimals */
        default: v = (double)(long long)(u * 9.007199254740992e15); break;
        }
        csv_format_number(v, fast, sizeof fast);
        by_definition(v, slow, sizeof slow);
        cr_assert_str_eq(fast, slow, "value %.17g", v);
        cr_assert_eq(strtod(fast, NULL), v, "%s reads back", fast);
    }
    gsl_rng_free(rng);
}
