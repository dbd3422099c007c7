/* `fleetsim validate`'s output: each row predicted against published with its error,
 * then per category, and per category and engine, the rows predicted, the mean absolute
 * percentage error, the mean signed error (bias) and the worst row. */
#ifndef FLEETSIM_OUTPUT_VALIDATE_TEXT_H
#define FLEETSIM_OUTPUT_VALIDATE_TEXT_H

#include <stddef.h>
#include <stdio.h>

#include "models/validate.h"

/* The table, then the summary. */
void output_validate_text(FILE *f, const validate_result *rows, size_t n);

/* id,category,metric,unit,published,predicted,error_percent,reason rows, then
 * summary,CATEGORY,rows,predicted,mape_percent,worst_id,worst_error_percent,bias_percent
 * rows, then engine_summary,CATEGORY,ENGINE,... rows with the same fields. */
void output_validate_csv(FILE *f, const validate_result *rows, size_t n);

#endif
