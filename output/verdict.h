/* A claim's verdict as a run leaves it (issue 9): one line at the end of the printed
 * summary, and verdict.csv in the run's folder, which report.html shows.
 *
 *   verdict: <claim> -- <figure> -- <holds|qualified|refuted>
 *
 * verdict.csv has the columns claim,verdict,score,figure (score 1, 0.5 or 0), one row:
 * the text lives beside summary.csv, whose columns stay those of a metric.
 */
#ifndef FLEETSIM_OUTPUT_VERDICT_H
#define FLEETSIM_OUTPUT_VERDICT_H

#include <stddef.h>
#include <stdio.h>

void output_verdict_line(FILE *out, const char *claim, const char *figure, const char *word);

/* Writes DIR/verdict.csv whole or not at all; 0, or -1 with the message in err. */
int output_verdict_csv(const char *dir, const char *claim, const char *word, double score,
                       const char *figure, char *err, size_t err_size);

/* Removes a verdict.csv left by an earlier run into the folder (a run without a claim
 * must not show an old verdict). */
void output_verdict_forget(const char *dir);

/* An HTML section for report.html from DIR/verdict.csv; nothing when there is none. */
void output_verdict_html(FILE *out, const char *dir);

#endif
