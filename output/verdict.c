/* verdict.csv and the verdict line (see verdict.h). */
#include "output/verdict.h"

#include <stdio.h>
#include <unistd.h>

#include "output/atomic_file.h"
#include "output/csv_table.h"
#include "output/csv_write.h"
#include "output/html_text.h"

void output_verdict_line(FILE *out, const char *claim, const char *figure, const char *word)
{
    fprintf(out, "verdict: %s -- %s -- %s\n", claim, figure, word);
}

int output_verdict_csv(const char *dir, const char *claim, const char *word, double score,
                       const char *figure, char *err, size_t err_size)
{
    atomic_file *f = atomic_file_open(dir, "verdict.csv", err, err_size);
    if (!f)
        return -1;
    FILE *out = atomic_file_stream(f);
    fputs("claim,verdict,score,figure\n", out);
    csv_write_text(out, claim, true);
    csv_write_text(out, word, false);
    csv_write_number(out, score, false);
    csv_write_text(out, figure, false);
    fputc('\n', out);
    return atomic_file_commit(f, err, err_size);
}

void output_verdict_forget(const char *dir)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/verdict.csv", dir);
    unlink(path); /* absent is the usual case */
}

void output_verdict_html(FILE *out, const char *dir)
{
    char path[4096], err[512];
    snprintf(path, sizeof path, "%s/verdict.csv", dir);
    csv_table t;
    if (csv_table_read(path, &t, err, sizeof err) != 0 || t.rows < 1) {
        csv_table_release(&t);
        return;
    }
    const char *claim = csv_table_cell(&t, 0, csv_table_column(&t, "claim"));
    const char *word = csv_table_cell(&t, 0, csv_table_column(&t, "verdict"));
    const char *figure = csv_table_cell(&t, 0, csv_table_column(&t, "figure"));
    fputs("<h2>Claim</h2>\n<p class=\"claim\">", out);
    html_escape(out, claim);
    fputs("</p>\n<p class=\"verdict\"><strong>", out);
    html_escape(out, word);
    fputs("</strong>: ", out);
    html_escape(out, figure);
    fputs("</p>\n", out);
    csv_table_release(&t);
}
