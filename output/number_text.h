/* Numbers as a person reads them (issue 18, 5): 4 significant digits, no exponent for
 * everyday magnitudes, half-widths without floating-point noise, durations in the unit
 * that fits.  For the printed summary and messages; the CSV files keep full precision
 * in base units. */
#ifndef FLEETSIM_OUTPUT_NUMBER_TEXT_H
#define FLEETSIM_OUTPUT_NUMBER_TEXT_H

#include <stddef.h>

/* v with 4 significant digits: "0.01794", "17.94", "6878", "131773" (integers up to a
 * million whole), "217.1M", "3.9e-16"; "-" for NaN.  Returns buf. */
char *number_text(char *buf, size_t size, double v);

/* A 95% half-width beside its mean: 2 significant digits, "0" when it is below 1e-9 of
 * the mean (a constant measured through rounding), "-" for NaN.  Returns buf. */
char *half_width_text(char *buf, size_t size, double half, double mean);

/* A share in [0, 1] and its 95% half-width as a percentage: "94.22 +- 0.42%", or, when
 * the interval runs past 0 or 1 (few, scattered replications), the part of it a share
 * can take as a range: "46.3% (95% interval 0-100%)".  Returns buf. */
char *share_text(char *buf, size_t size, double share, double half);

/* The unit a value of `unit` reads best in and the factor to multiply it by: seconds as
 * "ms" below 1 s, "s" up to 3 h, "h" beyond (judged on |v|); any other unit unchanged,
 * "" for the dimensionless "1".  Returns the unit's text. */
const char *readable_unit(const char *unit, double v, double *factor);

/* value and unit together ("17.94 ms", "0.9841", "6878 tokens/s"). */
char *quantity_text(char *buf, size_t size, double v, const char *unit);

/* A duration in seconds as "45 s", "20 min", "2 h", "7 d", "3 y" (365 d, as scenario
 * files write it): the largest unit it is a
 * whole number of, else %g seconds. */
char *duration_text(char *buf, size_t size, double s);

#endif
