/* Log-linear histogram (see histogram.h). */
#include "sim/histogram.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim/fatal.h"

/* For a positive double, its top bits (exponent and the first 7 mantissa bits) are a
 * bucket key that grows with the value: 128 buckets per power of two. */
#define MANTISSA_SHIFT 45
#define KEY_LOW ((uint32_t)((1023u - 30u) << 7))  /* key of 2^-30 */
#define KEY_HIGH ((uint32_t)((1023u + 40u) << 7)) /* key of 2^40, first one past the range */
#define GROW_SLACK 64u                            /* extra keys per growth, half an octave */

static inline uint32_t key_of(double x)
{
    uint64_t bits;
    memcpy(&bits, &x, sizeof bits);
    return (uint32_t)(bits >> MANTISSA_SHIFT);
}

static double key_lower_edge(uint32_t key)
{
    uint64_t bits = (uint64_t)key << MANTISSA_SHIFT;
    double x;
    memcpy(&x, &bits, sizeof x);
    return x;
}

void sim_histogram_init(sim_histogram *h)
{
    *h = (sim_histogram){ .min = INFINITY, .max = -INFINITY };
}

void sim_histogram_release(sim_histogram *h)
{
    if (!h)
        return;
    free(h->counts);
    sim_histogram_init(h);
}

void sim_histogram_clear(sim_histogram *h)
{
    if (h->nkeys)
        memset(h->counts, 0, h->nkeys * sizeof *h->counts);
    h->n = h->underflow = h->overflow = 0;
    h->min = INFINITY;
    h->max = -INFINITY;
}

/* Widens the bucket array to cover keys [low, high), with some slack on each side that
 * grows, so that a slowly widening range reallocates rarely. */
static void cover(sim_histogram *h, uint32_t low, uint32_t high)
{
    if (h->nkeys) {
        uint32_t first = h->first_key, end = h->first_key + h->nkeys;
        if (low >= first && high <= end)
            return;
        low = low < first ? (low > KEY_LOW + GROW_SLACK ? low - GROW_SLACK : KEY_LOW) : first;
        high = high > end ? (high + GROW_SLACK < KEY_HIGH ? high + GROW_SLACK : KEY_HIGH) : end;
    }
    uint64_t *counts = calloc(high - low, sizeof *counts);
    if (!counts)
        sim_out_of_memory("out of memory growing a histogram to %u buckets", high - low);
    if (h->nkeys)
        memcpy(counts + (h->first_key - low), h->counts, h->nkeys * sizeof *counts);
    free(h->counts);
    h->counts = counts;
    h->first_key = low;
    h->nkeys = high - low;
}

void sim_histogram_add(sim_histogram *h, double x)
{
    if (isnan(x))
        sim_fatal("sim_histogram_add: NaN value (a model computed an undefined quantity)");
    h->n++;
    if (x < h->min)
        h->min = x;
    if (x > h->max)
        h->max = x;
    if (!(x >= 0x1p-30)) {
        h->underflow++;
        return;
    }
    if (x >= 0x1p40) {
        h->overflow++;
        return;
    }
    uint32_t key = key_of(x);
    if (key - h->first_key >= h->nkeys) /* unsigned: also catches key < first_key */
        cover(h, key, key + 1);
    h->counts[key - h->first_key]++;
}

void sim_histogram_merge(sim_histogram *into, const sim_histogram *from)
{
    if (from->n == 0)
        return;
    if (from->nkeys)
        cover(into, from->first_key, from->first_key + from->nkeys);
    for (uint32_t i = 0; i < from->nkeys; i++)
        into->counts[from->first_key - into->first_key + i] += from->counts[i];
    into->n += from->n;
    into->underflow += from->underflow;
    into->overflow += from->overflow;
    if (from->min < into->min)
        into->min = from->min;
    if (from->max > into->max)
        into->max = from->max;
}

double sim_histogram_quantile(const sim_histogram *h, double q)
{
    if (h->n == 0 || !(q >= 0 && q <= 1))
        return NAN;
    if (q == 0)
        return h->min;
    if (q == 1)
        return h->max;
    uint64_t rank = (uint64_t)ceil(q * (double)h->n);
    if (rank < 1)
        rank = 1;
    if (rank <= h->underflow)
        return h->min;
    uint64_t seen = h->underflow;
    for (uint32_t i = 0; i < h->nkeys; i++) {
        uint64_t c = h->counts[i];
        if (seen + c >= rank) {
            /* the values of a bucket taken as spread evenly over it: the j-th of c sits
             * at (j - 1/2) / c of its width, so quantiles move with the data instead of
             * snapping to bucket midpoints (one value: the midpoint) */
            uint32_t key = h->first_key + i;
            double low = key_lower_edge(key), high = key_lower_edge(key + 1);
            double at = low + (high - low) * ((double)(rank - seen) - 0.5) / (double)c;
            return at < h->min ? h->min : at > h->max ? h->max : at;
        }
        seen += c;
    }
    return h->max; /* the rank falls among the overflow values */
}

size_t sim_histogram_memory_bytes(const sim_histogram *h)
{
    return h->nkeys * sizeof *h->counts;
}
