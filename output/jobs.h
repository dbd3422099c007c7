/* jobs.csv (`fleetsim run --records`): one row per training job, written as jobs
 * complete and, at each replication's end, for those that did not, under a temporary
 * name until the run completes. */
#ifndef FLEETSIM_OUTPUT_JOBS_H
#define FLEETSIM_OUTPUT_JOBS_H

#include <stddef.h>

#include "models/job_scheduler.h"

typedef struct jobs_writer jobs_writer;

/* Opens DIR/jobs.csv (temporarily) and writes the header; NULL with a message. */
jobs_writer *jobs_open(const char *dir, char *err, size_t err_size);

/* The job_record_fn to hand to job_scheduler_set_recorder, with the writer as its
 * context. */
void jobs_write(void *writer, const job_record *record);

/* Renames the file into place (0), or -1 with a message; frees w. */
int jobs_commit(jobs_writer *w, char *err, size_t err_size);

/* Removes the temporary file; frees w.  NULL-safe. */
void jobs_abort(jobs_writer *w);

#endif
