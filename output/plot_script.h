/* Pieces shared by the chart scripts fleetsim writes into DIR/plots/: the head every
 * script starts with, gnuplot string quoting, and writing a script whole or not at all.
 *
 * A script is run by gnuplot from the run folder (paths are relative to it).  It takes
 * the terminal and the output file from the variables `term` and `out` when they are
 * defined, so that `fleetsim plot` can render the same script to SVG and PNG, and
 * renders plots/NAME.svg when run by hand: cd DIR && gnuplot plots/NAME.gp. */
#ifndef FLEETSIM_OUTPUT_PLOT_SCRIPT_H
#define FLEETSIM_OUTPUT_PLOT_SCRIPT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* The first line of every script fleetsim writes: a script without it is the user's. */
#define PLOT_SCRIPT_MARK "# fleetsim chart"
/* The line of a script that report.html shows under its chart: what to read in it. */
#define PLOT_CAPTION_MARK "# caption: "
/* plots/constant.txt: series not drawn because they are constant, a line per chart. */
#define PLOT_CONSTANT_FILE "constant.txt"

/* The terminals of the two renders (the size is that of a laptop screen's half). */
#define PLOT_TERM_SVG "svg size 960,540 dynamic font 'Arial,12' background '#ffffff'"
#define PLOT_TERM_PNG "pngcairo size 960,540 font 'Arial,10' background '#ffffff'"

/* Whether the script open in f (read from its start) is one fleetsim wrote: its first
 * line is the mark.  A script without it is the user's: a new run leaves it in place. */
bool plot_script_is_fleetsims(FILE *f);

/* Writes text as a gnuplot single-quoted string (quotes doubled: no escapes apply). */
void plot_script_quote(FILE *out, const char *text);

/* Writes the head of a script: the mark, what it shows and how to render it again, the
 * terminal and output, the CSV settings, the title and axis labels. */
void plot_script_head(FILE *out, const char *name, const char *source_csv,
                      const char *title, const char *xlabel, const char *ylabel);

/* A chart's file name from free text: letters, digits, '-', '_' and '.' kept, any
 * other byte '_'; at most size - 1 bytes. */
void plot_script_name(char *buf, size_t size, const char *text);

/* Writes DIR/plots/NAME.gp through write(out, context), atomically.  0, or -1 with a
 * message. */
int plot_script_write(const char *dir, const char *name,
                      void (*write)(FILE *out, const void *context), const void *context,
                      char *err, size_t err_size);

/* A list of chart names (the NAME of plots/NAME.gp), owned strings. */
typedef struct plot_list {
    char **names;
    size_t count, capacity;
} plot_list;

/* Adds a copy of name; 0, or -1 when out of memory. */
int plot_list_add(plot_list *l, const char *name);
bool plot_list_has(const plot_list *l, const char *name);
/* Frees the names and empties the list (the struct itself is the caller's). */
void plot_list_release(plot_list *l);

/* plot_script_write, then the name added to `written`: 0, or -1 with a message. */
int plot_script_emit(const char *dir, const char *name,
                     void (*write)(FILE *out, const void *context), const void *context,
                     plot_list *written, char *err, size_t err_size);

#endif
