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
    } else {
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
