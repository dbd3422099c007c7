/* From a row of a validation table (tests/validation/published.csv's columns) to the
 * figure the analytic model predicts for it, or the reason it predicts none. */
#ifndef FLEETSIM_LUA_VALIDATE_PREDICT_H
#define FLEETSIM_LUA_VALIDATE_PREDICT_H

#include <stdbool.h>
#include <stddef.h>

#include "models/catalog.h"

/* The cells of one row, as text (borrowed; "" when empty). */
typedef struct validate_row {
    const char *id, *category, *metric, *unit, *model, *device, *device_count, *precision,
        *kv_precision, *parallelism, *batch, *input_tokens, *output_tokens, *seq_len,
        *global_batch, *train_tokens, *engine;
    /* the configuration as data (tests/validation/README.md): the catalog engine that
     * stands for `engine` ("" the default), the weights' precision ("" not stated), and
     * "yes" for LoRA fine-tuning */
    const char *engine_profile, *weights, *lora;
    /* what the value is, how the load was driven, the value's unit, as data
     * (models/validate_load.h) */
    const char *measure, *load, *value_unit;
    /* the scale-out bandwidth a server of the measured cluster has between servers, Gb/s,
     * as data, shared by the server's GPUs (the device family's node, not a rack's NVLink
     * domain); "" or NULL: the catalog device's NICs */
    const char *network;
} validate_row;

typedef struct validate_prediction {
    bool predicted;
    double value;       /* in the row's unit */
    const char *engine; /* the catalog engine the row ran under (validate_engine_of) */
    char reason[400];   /* when not predicted: "no catalog model for 'BLOOM-176B'", ... */
} validate_prediction;

/* Row i of a table read with csv_table_read (output/csv_table.h), by its column names
 * ("" where a column is absent); the strings are the table's. */
struct csv_table;
validate_row validate_row_of(const struct csv_table *t, size_t i);

/* The catalog engine a row's engine cell names: its serving engine, or for a training
 * row its training framework (a static name; see lua/validate_predict.c's table). */
const char *validate_engine_of(const validate_row *row);

/* Checks what of row must parse (its parallelism cell, models/validate_plan.h): 0, or -1
 * with "parallelism: unknown key 'VP' in 'VP=2' (known: ...)" in err, to which the caller
 * adds the file and line.  A table with such a row is bad input, not a row to predict. */
int validate_row_check(const validate_row *row, char *err, size_t err_size);

/* Predicts row's figure with the default profile of its device, under its engine. */
void validate_predict(const catalog *cat, const validate_row *row, validate_prediction *out);

#endif
