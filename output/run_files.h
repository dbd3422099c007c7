/* The files of one run in its folder: summary.csv and timeseries.csv, each whole or not
 * at all (output/atomic_file.h). */
#ifndef FLEETSIM_OUTPUT_RUN_FILES_H
#define FLEETSIM_OUTPUT_RUN_FILES_H

#include <stddef.h>

#include "sim/metrics.h"
#include "sim/timeseries.h"

/* Writes DIR/summary.csv and DIR/timeseries.csv (the buckets of a run of duration_s).
 * On a failure (a full disk) every file of a run is removed, the per-item records
 * (requests.csv, jobs.csv) too, so nothing left in the folder, not even an earlier
 * run's summary, passes for this run's results; -1 with the reason in err. */
int output_run_files(const char *dir, const sim_metrics *metrics, const sim_timeseries *ts,
                     double duration_s, char *err, size_t err_size);

/* Removes a run's files from DIR (those above); missing ones are no error. */
void output_forget_run_files(const char *dir);

/* Removes from DIR every file any earlier run could have written there: the CSVs of a
 * run, a sweep or a search (summary, timeseries, requests, jobs, sweep, sweep_diff,
 * search, verdict), report.html, the charts in plots/ (the scripts fleetsim wrote, every
 * render .svg and .png, constant.txt, and the render folders plots/.render-* an
 * interrupted run left) and the point folders points/<k>/, then those folders if they
 * are left empty.  Nothing else is touched (a folder given with -o may hold the user's
 * own files, and plots/ the user's own scripts, those without fleetsim's first line), so
 * a run that writes next leaves the folder holding one run's results only.  plots/ and
 * points/ are opened without following links: a link there is left alone, and what it
 * points to too. */
void output_clear_run_folder(const char *dir);

/* Removes the folder `name` inside the folder at_fd when it holds only point folders
 * (1, 2, ...) of a run's files: those files and folders go, anything else stays (and
 * with it the folder).  Never follows a link. */
void output_remove_points_folder(int at_fd, const char *name);

/* 0 when DIR's plots/, points/ and points/<k>/ are folders or absent; -1 with a message
 * when one is a link or a file (a run checks before it starts, so that nothing is
 * cleared or written through it). */
int output_check_run_folder(const char *dir, char *err, size_t err_size);

#endif
