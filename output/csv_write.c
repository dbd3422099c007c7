#include "output/csv_write.h"

#include <csv.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

void csv_write_text(FILE *out, const char *text, bool first)
{
    if (!first)
        fputc(',', out);
    size_t n = strlen(text);
    bool plain = strcspn(text, ",\"\r\n") == n && (n == 0 || (text[0] != ' ' && text[n - 1] != ' '));
    if (plain)
        fputs(text, out);
    else
        csv_fwrite(out, text, n);
}

const char *csv_format_number(double value, char *buf, size_t size)
{
    if (isnan(value)) {
        snprintf(buf, size, "%s", "");
    } else if (isinf(value)) {
        snprintf(buf, size, "%s", value > 0 ? "inf" : "-inf");
    } else if (value == trunc(value) && fabs(value) < 1e15 && (value != 0 || !signbit(value))) {
        /* a whole number below 1e15: %.15g prints its digits, which read back exactly;
         * written here without printf (counts are most of the fields) */
        char digits[24];
        long long n = (long long)value;
        unsigned long long u = n < 0 ? 0ull - (unsigned long long)n : (unsigned long long)n;
        size_t k = sizeof digits;
        digits[--k] = '\0';
        do
            digits[--k] = (char)('0' + u % 10);
        while ((u /= 10) != 0);
        if (n < 0)
            digits[--k] = '-';
        size_t length = sizeof digits - k; /* with its '\0' */
        memcpy(buf, digits + k, length <= size ? length : 0);
        if (length > size && size)
            buf[0] = '\0';
    } else {
        /* the fewest digits from 15 that read back: 15 keep a decimal's digits whole
         * (0.1, 2.5e-05) and 17 always suffice; printf's correct rounding and strtod
         * decide, so files are exact and read as written */
        for (int precision = 15; precision <= 17; precision++) {
            snprintf(buf, size, "%.*g", precision, value);
            if (strtod(buf, NULL) == value)
                break;
        }
    }
    return buf;
}

void csv_write_number(FILE *out, double value, bool first)
{
    char buf[40];
    if (!first)
        fputc(',', out);
    fputs(csv_format_number(value, buf, sizeof buf), out);
}
