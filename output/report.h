/* report.html: one self-contained page about a run folder, which opens with no network
 * and no other file: the scenario's name and description, the summary table (from
 * summary.csv), the charts of plots/ inlined as SVG (run charts, then sweep charts), and
 * the list of the folder's files.  XHTML-compatible HTML5: it parses as XML too. */
#ifndef FLEETSIM_OUTPUT_REPORT_H
#define FLEETSIM_OUTPUT_REPORT_H

#include <stddef.h>

/* Writes DIR/report.html atomically.  scenario_name NULL (`fleetsim plot`): the name and
 * description are those of the report being replaced, else the subject of summary.csv's
 * "run" row, else the folder's name; description may be NULL (none).  0, or -1 with a
 * message. */
int output_report(const char *dir, const char *scenario_name, const char *description,
                  char *err, size_t err_size);

#endif
