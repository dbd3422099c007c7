/* Readable numbers (see number_text.h). */
#include "output/number_text.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* The suffix and scale numbers from a million up read in: "217.1M". */
static double scale_of(double a, const char **suffix)
{
    *suffix = a >= 1e12 ? "T" : a >= 1e9 ? "G" : a >= 1e6 ? "M" : "";
    return a >= 1e12 ? 1e12 : a >= 1e9 ? 1e9 : a >= 1e6 ? 1e6 : 1;
}

char *number_text(char *buf, size_t size, double v)
{
    double a = fabs(v);
    const char *suffix;
    double scale = scale_of(a, &suffix);
    if (isnan(v))
        snprintf(buf, size, "-");
    else if (isinf(v))
        snprintf(buf, size, v > 0 ? "inf" : "-inf");
    else if (a < 1e6 && (v == floor(v) || a >= 1e4))
        snprintf(buf, size, "%.0f", v); /* counts whole, no exponent */
    else if (a >= 1e6 && a < 1e15)
        snprintf(buf, size, "%.4g%s", v / scale, suffix);
    else
        snprintf(buf, size, "%.4g", v);
    return buf;
}

char *half_width_text(char *buf, size_t size, double half, double mean)
{
    const char *suffix;
    double scale = scale_of(fabs(mean), &suffix); /* in the mean's scale: "45.4M +- 0.38M" */
    if (isnan(half))
        snprintf(buf, size, "-");
    else if (half <= 1e-9 * fabs(mean) || half == 0)
        snprintf(buf, size, "0");
    else if (half / scale >= 1e15 || half / scale < 1e-6)
        snprintf(buf, size, "%.2g%s", half / scale, suffix);
    else {
        double h = half / scale;
        int digits = (int)floor(log10(h)); /* two significant digits, no exponent */
        double unit = pow(10, digits - 1);
        h = round(h / unit) * unit;
        snprintf(buf, size, "%.*f%s", digits >= 1 ? 0 : 1 - digits, h, suffix);
    }
    return buf;
}

const char *readable_unit(const char *unit, double v, double *factor)
{
    *factor = 1;
    if (!strcmp(unit, "1"))
        return "";
    if (strcmp(unit, "s") || isnan(v))
        return unit;
    double a = fabs(v);
    if (a > 0 && a < 1) {
        *factor = 1e3;
        return "ms";
    }
    if (a >= 3 * 3600) {
        *factor = 1.0 / 3600;
        return "h";
    }
    return "s";
}

char *quantity_text(char *buf, size_t size, double v, const char *unit)
{
    double factor;
    const char *u = readable_unit(unit, v, &factor);
    char number[48];
    number_text(number, sizeof number, v * factor);
    snprintf(buf, size, "%s%s%s", number, *u && !isnan(v) ? " " : "", isnan(v) ? "" : u);
    return buf;
}

char *duration_text(char *buf, size_t size, double s)
{
    static const struct { double s; const char *unit; } units[] = {
        { 365 * 86400, "y" }, { 86400, "d" }, { 3600, "h" }, { 60, "min" }, { 1, "s" },
    };
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
        if (s >= units[i].s && fmod(s, units[i].s) == 0) {
            snprintf(buf, size, "%.0f %s", s / units[i].s, units[i].unit);
            return buf;
        }
    snprintf(buf, size, "%g s", s);
    return buf;
}

char *share_text(char *buf, size_t size, double share, double half)
{
    char value[32], a[32], b[32];
    number_text(value, sizeof value, 100 * share);
    if (isnan(half) || !(half > 1e-9 * fabs(share))) {
        snprintf(buf, size, "%s%%", value);
    } else if (share - half < 0 || share + half > 1) {
        number_text(a, sizeof a, 100 * fmax(share - half, 0));
        number_text(b, sizeof b, 100 * fmin(share + half, 1));
        snprintf(buf, size, "%s%% (95%% interval %s-%s%%)", value, a, b);
    } else {
        snprintf(buf, size, "%s +- %s%%", value,
                 half_width_text(a, sizeof a, 100 * half, 100 * share));
    }
    return buf;
}
