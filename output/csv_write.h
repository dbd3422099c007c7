/* Writing CSV fields: text quoted through libcsv when it needs quoting, numbers in the
 * shortest form that reads back to the same double (so files are exact and readable). */
#ifndef FLEETSIM_OUTPUT_CSV_WRITE_H
#define FLEETSIM_OUTPUT_CSV_WRITE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* Writes a text field, preceded by a comma unless first. */
void csv_write_text(FILE *out, const char *text, bool first);

/* Writes a number field: empty for NaN, "inf"/"-inf" for infinities. */
void csv_write_number(FILE *out, double value, bool first);

/* The shortest %g form of value that reads back exactly, into buf (>= 32 bytes). */
const char *csv_format_number(double value, char *buf, size_t size);

#endif
