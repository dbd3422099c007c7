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
 * returns the exit status (128 + signal if killed).  *err holds the program's own lines
 * only: what a sanitizer printed (see scratch_take_sanitizer_lines) is moved to this
 * process's stderr, where the suite's log and tests/sanitizer_report.sh see it. */
int scratch_run(const char *command, char **out, char **err);

/* Removes from text, in place, the lines a sanitizer runtime writes: its own lines
 * ("==PID==..."), the rule of '=' above a report, and each report from its
 * "==PID==ERROR:" line to its "SUMMARY:" line; returns them (malloc'd, "" if none). */
char *scratch_take_sanitizer_lines(char *text);

/* A prefix for a command whose program is meant to die abnormally (os.exit inside a
 * worker, a forwarded signal): no exit-time leak check in it, whose report would say
 * nothing about fleetsim and whose thread-stopping can fail on a loaded machine.  The
 * other sanitizer options are kept; outside a sanitizer build it changes nothing. */
#define SCRATCH_NO_LEAK_CHECK "ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 "

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
