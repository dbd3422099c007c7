/* A CSV file read whole into memory, for the charts and the report (which read back
 * what the run wrote: a few thousand rows).  Fields are kept as text. */
#ifndef FLEETSIM_OUTPUT_CSV_TABLE_H
#define FLEETSIM_OUTPUT_CSV_TABLE_H

#include <stddef.h>

typedef struct csv_table {
    char **header;      /* columns names */
    char **cells;       /* rows x columns, row-major; a short row is padded with "" */
    size_t rows, columns;
    size_t *lines;      /* the line of the file each row starts on (the header's first is 1) */
} csv_table;

/* Reads path (its first row is the header) into t.  0; 1 when the file does not exist
 * (t is then empty); -1 with a message naming the file.  Release t in every case. */
int csv_table_read(const char *path, csv_table *t, char *err, size_t err_size);

void csv_table_release(csv_table *t);

/* The index of the column so named, or -1. */
long csv_table_column(const csv_table *t, const char *name);

/* The text of a cell ("" when empty); column may be -1 (absent): "". */
const char *csv_table_cell(const csv_table *t, size_t row, long column);

/* The line of the file where row begins (1-based, counting the header's; a quoted cell
 * may span lines), for messages that name it; 0 past the last row. */
size_t csv_table_line(const csv_table *t, size_t row);

/* The cell as a number; NaN when empty, absent or not a number. */
double csv_table_number(const csv_table *t, size_t row, long column);

#endif
