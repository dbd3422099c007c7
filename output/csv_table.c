#include "output/csv_table.h"

#include <csv.h>
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/array.h"
#include "sim/plain_file.h"

/* Fields of the row being read, and every row so far (a flat list of strings). */
typedef struct reader {
    char **fields;
    size_t nfields, capacity;
    size_t row_start;       /* index in fields where the current row begins */
    size_t columns;         /* set by the header row */
    size_t rows;            /* data rows */
    size_t *lines;          /* the line each data row starts on */
    size_t lines_capacity;
    size_t line;            /* the line being parsed (1-based) */
    bool failed;
    size_t nul_line;        /* the first line with a NUL byte in a cell, or 0 */
} reader;

static bool push(reader *r, char *field)
{
    if (!field) {
        r->failed = true;
        return false;
    }
    char **grown = sim_array_try_grow(r->fields, &r->capacity, r->nfields + 1, sizeof *grown,
                                      SIZE_MAX);
    if (!grown) {
        free(field);
        r->failed = true;
        return false;
    }
    r->fields = grown;
    r->fields[r->nfields++] = field;
    return true;
}

static void on_field(void *data, size_t n, void *context)
{
    reader *r = context;
    if (data && !r->nul_line && memchr(data, '\0', n)) /* C would read the cell cut there */
        r->nul_line = r->line;
    char *field = malloc(n + 1);
    if (field) {
        memcpy(field, data ? data : "", n);
        field[n] = '\0';
    }
    push(r, field);
}

/* Pads or cuts each data row to the header's width, so cells index as a matrix; notes
 * the line the row began on: the one that ends it less the line breaks inside its
 * (quoted) cells. */
static void on_row(int terminator, void *context)
{
    reader *r = context;
    size_t got = r->nfields - r->row_start;
    if (r->columns == 0) {
        r->columns = got;
    } else {
        size_t start = r->line;
        for (size_t i = r->row_start; i < r->nfields; i++)
            for (const char *c = strchr(r->fields[i], '\n'); c; c = strchr(c + 1, '\n'))
                start--;
        size_t *grown = sim_array_try_grow(r->lines, &r->lines_capacity, r->rows + 1,
                                           sizeof *grown, SIZE_MAX);
        if (!grown) {
            r->failed = true;
            return;
        }
        r->lines = grown;
        r->lines[r->rows] = start;
        while (got > r->columns)
            free(r->fields[r->row_start + --got]);
        r->nfields = r->row_start + got;
        while (got < r->columns && push(r, strdup("")))
            got++;
        r->rows++;
    }
    r->row_start = r->nfields;
}

int csv_table_read(const char *path, csv_table *t, char *err, size_t err_size)
{
    memset(t, 0, sizeof *t);
    FILE *in = sim_open_plain(path, "rb");
    if (!in) {
        if (errno == ENOENT)
            return 1;
        snprintf(err, err_size, "cannot read %s: %s", path, sim_open_plain_why(errno));
        return -1;
    }
    reader r = { .line = 1 };
    struct csv_parser parser;
    csv_init(&parser, CSV_APPEND_NULL);
    char buf[65536];
    size_t n;
    bool bad = false, first = true;
    while (!bad && (n = fread(buf, 1, sizeof buf, in)) > 0) {
        size_t at = 0;
        if (first && n >= 3 && !memcmp(buf, "\xef\xbb\xbf", 3))
            at = 3; /* a UTF-8 byte-order mark (spreadsheets write one) is not the header's */
        first = false;
        /* a line at a time, so that on_row knows the line it ends on */
        for (; !bad && at < n;) {
            const char *nl = memchr(buf + at, '\n', n - at);
            size_t len = nl ? (size_t)(nl - buf) + 1 - at : n - at;
            bad = csv_parse(&parser, buf + at, len, on_field, on_row, &r) != len;
            at += len;
            r.line += nl != NULL;
        }
    }
    bad = bad || ferror(in);
    if (!bad)
        csv_fini(&parser, on_field, on_row, &r);
    csv_free(&parser);
    fclose(in);
    if (bad || r.failed || r.nul_line) {
        if (r.nul_line && !r.failed)
            snprintf(err, err_size, "%s:%zu: a NUL byte in a cell (a table is text)", path,
                     r.nul_line);
        else
            snprintf(err, err_size, "cannot read %s: %s", path,
                     r.failed ? "out of memory" : csv_strerror(csv_error(&parser)));
        for (size_t i = 0; i < r.nfields; i++)
            free(r.fields[i]);
        free(r.fields);
        free(r.lines);
        return -1;
    }
    t->header = r.fields;
    t->lines = r.lines;
    t->cells = r.fields ? r.fields + r.columns : NULL;
    t->columns = r.columns;
    t->rows = r.rows;
    return 0;
}

void csv_table_release(csv_table *t)
{
    size_t n = t->columns * (t->rows + 1);
    for (size_t i = 0; t->header && i < n; i++)
        free(t->header[i]);
    free(t->header);
    free(t->lines);
    memset(t, 0, sizeof *t);
}

long csv_table_column(const csv_table *t, const char *name)
{
    for (size_t c = 0; c < t->columns; c++)
        if (!strcmp(t->header[c], name))
            return (long)c;
    return -1;
}

const char *csv_table_cell(const csv_table *t, size_t row, long column)
{
    if (column < 0 || (size_t)column >= t->columns || row >= t->rows)
        return "";
    return t->cells[row * t->columns + (size_t)column];
}

size_t csv_table_line(const csv_table *t, size_t row)
{
    return row < t->rows && t->lines ? t->lines[row] : 0;
}

double csv_table_number(const csv_table *t, size_t row, long column)
{
    const char *text = csv_table_cell(t, row, column);
    char *end;
    double x = strtod(text, &end);
    return *text && !*end ? x : NAN;
}
