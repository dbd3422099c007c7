/* The arithmetic of `fleetsim validate`: a prediction's error against a published
 * figure, and per category the number predicted, the mean absolute percentage error
 * and the worst row.  Pure functions; the mapping from a row to a prediction is
 * lua/validate_predict.c's. */
#ifndef FLEETSIM_MODELS_VALIDATE_H
#define FLEETSIM_MODELS_VALIDATE_H

#include <stdbool.h>
#include <stddef.h>

/* predicted / published - 1 (0.10: 10% high); NaN when published is 0 or either is
 * not finite. */
double validate_error(double predicted, double published);

/* One row of the table, predicted or not.  Borrowed strings. */
typedef struct validate_result {
    const char *id, *category, *metric, *unit;
    double published;
    bool predicted;
    double value;       /* the prediction, in the row's unit, when predicted */
    double error;       /* validate_error(value, published) */
    const char *reason; /* why not predicted, otherwise NULL */
} validate_result;

/* A category's rows taken together. */
typedef struct validate_summary {
    char category[32];
    unsigned rows, predicted;
    double sum_abs_error;
    double worst_error;  /* the error of largest magnitude, signed */
    const char *worst_id; /* borrowed from the result; NULL when none predicted */
} validate_summary;

/* Adds r to s (a zeroed summary is empty). */
void validate_summary_add(validate_summary *s, const validate_result *r);

/* Mean absolute error of the predicted rows, as a fraction (0.12: 12%); NaN when none. */
double validate_summary_mape(const validate_summary *s);

/* Summaries of rows by category, in order of first appearance, at most max; returns
 * how many were filled (categories past max are left out). */
size_t validate_summarize(const validate_result *rows, size_t n, validate_summary *out,
                          size_t max);

#endif
