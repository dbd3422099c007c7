/* The arithmetic of `fleetsim validate`: a prediction's error against a published
 * figure, and per category (and per category and engine) the number predicted, the mean
 * absolute percentage error, the mean signed error (the bias) and the worst row.  Pure functions; the mapping from a row to a prediction is
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
    const char *engine; /* the engine the row ran under; NULL: none named */
} validate_result;

/* A category's rows taken together. */
typedef struct validate_summary {
    char category[32];
    char engine[32];     /* "" in a summary by category alone */
    unsigned rows, predicted;
    double sum_abs_error, sum_error;
    double worst_error;  /* the error of largest magnitude, signed */
    const char *worst_id; /* borrowed from the result; NULL when none predicted */
} validate_summary;

/* Adds r to s (a zeroed summary is empty). */
void validate_summary_add(validate_summary *s, const validate_result *r);

/* Mean absolute error of the predicted rows, as a fraction (0.12: 12%); NaN when none. */
double validate_summary_mape(const validate_summary *s);

/* Mean signed error of the predicted rows (the bias: above 0, too high); NaN when none. */
double validate_summary_bias(const validate_summary *s);

/* Summaries of rows by category (by_engine: by category and engine), in order of first
 * appearance, at most max; returns how many were filled (groups past max are left out). */
size_t validate_summarize(const validate_result *rows, size_t n, bool by_engine,
                          validate_summary *out, size_t max);

#endif
