/* requests.csv (`fleetsim run --records`): one row per inference request that ended,
 * written as the run goes (memory does not grow with the requests), under a temporary
 * name until the run completes. */
#ifndef FLEETSIM_OUTPUT_RECORDS_H
#define FLEETSIM_OUTPUT_RECORDS_H

#include <stddef.h>

#include "models/serving.h"

typedef struct records_writer records_writer;

/* Opens DIR/requests.csv (temporarily) and writes the header; NULL with a message. */
records_writer *records_open(const char *dir, char *err, size_t err_size);

/* The request_record_fn to hand to the run, with the writer as its context. */
void records_write(void *writer, const request_record *record);

/* Renames the file into place (0), or -1 with a message; frees w. */
int records_commit(records_writer *w, char *err, size_t err_size);

/* Removes the temporary file; frees w.  NULL-safe. */
void records_abort(records_writer *w);

#endif
