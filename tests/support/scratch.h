/* Test helpers: scratch files and running the fleetsim binary. */
#ifndef FLEETSIM_TESTS_SCRATCH_H
#define FLEETSIM_TESTS_SCRATCH_H

#include <stddef.h>

/* A new empty folder under /tmp (the test removes it with scratch_remove_dir). */
char *scratch_dir(void);

/* Writes text to dir/name; returns the path (malloc'd). */
char *scratch_file(const char *dir, const char *name, const char *text);

/* rm -r dir, and frees it. */
void scratch_remove_dir(char *dir);

/* Runs the command with /bin/sh, stdout and stderr captured (malloc'd, NUL-ended);
 * returns the exit status (128 + signal if killed). */
int scratch_run(const char *command, char **out, char **err);

/* The contents of a file (malloc'd), or NULL. */
char *scratch_read(const char *path);

/* The value and interval of a row of summary.csv: "scope,subject,metric,...". */
typedef struct summary_row {
    double value, ci_low, ci_high, n;
    int found;
} summary_row;
summary_row scratch_summary_row(const char *csv, const char *scope, const char *subject,
                                const char *metric);

#endif
