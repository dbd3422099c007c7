/* Quantiles of a stream in bounded memory: a log-linear histogram.
 *
 * Each power of two is split into 128 equal buckets, so a bucket spans at most 1/128 of
 * its lower edge.  A quantile is interpolated within its bucket (its values taken as
 * spread evenly over it), so it moves with the data rather than snapping to a bucket's
 * midpoint, as identical percentiles across pools and replications with a +- 0 interval
 * did (issue 18); it stays inside the bucket, so every quantile is within 1/128 (0.79%)
 * of the exact order statistic (tested against them), and much closer where values are
 * dense.  Tracked range: 2^-30 (about 1e-9) to 2^40 (about 1.1e12); smaller values
 * (zero, negatives) and larger ones are counted apart and reported as the exact minimum
 * and maximum.  Buckets are allocated only across the range of values seen (128 per
 * factor of two, 8 bytes each): 12 KB for values spanning 1 ms to 10 s, at most 70 KB,
 * whatever the number of values.  The bucket index comes from the bits of the double,
 * with no logarithm.
 */
#ifndef FLEETSIM_SIM_HISTOGRAM_H
#define FLEETSIM_SIM_HISTOGRAM_H

#include <stddef.h>
#include <stdint.h>

typedef struct sim_histogram {
    uint64_t *counts;     /* counts[i] is bucket first_key + i */
    uint32_t first_key;
    uint32_t nkeys;
    uint64_t n;           /* all values, including under- and overflow */
    uint64_t underflow;   /* values below 2^-30 */
    uint64_t overflow;    /* values at or above 2^40 */
    double min, max;
} sim_histogram;

#define SIM_HISTOGRAM_REL_ERROR (1.0 / 128)

/* An empty histogram; release with sim_histogram_release (NULL is fine). */
void sim_histogram_init(sim_histogram *h);
void sim_histogram_release(sim_histogram *h);

/* Empties the histogram but keeps its buckets' memory (for per-bucket reuse). */
void sim_histogram_clear(sim_histogram *h);

/* Adds a value.  NaN is a bug in the caller and aborts.  Aborts if out of memory. */
void sim_histogram_add(sim_histogram *h, double x);

/* into += from. */
void sim_histogram_merge(sim_histogram *into, const sim_histogram *from);

/* The q-quantile (0 <= q <= 1) by the nearest-rank rule: the value of rank ceil(q n)
 * (at least 1) among the n values in ascending order, within SIM_HISTOGRAM_REL_ERROR,
 * interpolated within its bucket; q = 0 and q = 1 give the exact minimum and maximum.
 * NaN when empty. */
double sim_histogram_quantile(const sim_histogram *h, double q);

/* Bytes held by the buckets. */
size_t sim_histogram_memory_bytes(const sim_histogram *h);

#endif
