/* Durations on the command line (see cli_duration.h). */
#include "lua/cli_duration.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int cli_duration_parse(const char *text, double *seconds)
{
    /* a divisor for the sub-units, so that "250ms" is exactly 250 / 1000, as units.lua */
    static const struct { const char *unit; double times, div; } units[] = {
        { "", 1, 1 }, { "s", 1, 1 }, { "ns", 1, 1e9 }, { "us", 1, 1e6 }, { "ms", 1, 1e3 },
        { "m", 60, 1 }, { "min", 60, 1 }, { "h", 3600, 1 }, { "d", 86400, 1 },
        { "w", 7 * 86400, 1 }, { "y", 365 * 86400, 1 },
    };
    char *end;
    double x = strtod(text, &end);
    if (end == text || !isfinite(x) || x < 0)
        return -1;
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
        if (!strcmp(end, units[i].unit)) {
            double s = x * units[i].times / units[i].div;
            if (!isfinite(s)) /* 1e308d: past any duration a double holds */
                return -1;
            *seconds = s;
            return 0;
        }
    return -1;
}
