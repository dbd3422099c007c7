/* Job traces (at_s, gpus, duration_s[, priority]) read with libcsv (see training.h). */
#include <csv.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/training.h"
#include "sim/array.h"

enum { COL_AT, COL_GPUS, COL_DURATION, COL_PRIORITY, NCOLS };
static const char *const COLUMNS[NCOLS] = { "at_s", "gpus", "duration_s", "priority" };

typedef struct reader {
    const char *path;
    char *err;
    size_t err_size;
    int failed;
    uint64_t row;          /* rows finished, the header included */
    size_t field;          /* index of the next field in the row */
    int column_at[NCOLS];  /* field index of each column, -1 if absent */
    char value[NCOLS][64];
    bool seen[NCOLS];
    job_trace *out;
    size_t cap;
} reader;

static int fail(reader *r, const char *column, const char *format, const char *value)
{
    if (!r->failed) {
        char what[160];
        snprintf(what, sizeof what, format, value);
        snprintf(r->err, r->err_size, "%s:row %llu: %s: %s", r->path,
                 (unsigned long long)(r->row + 1), column, what);
    }
    r->failed = 1;
    return -1;
}

static void on_field(void *s, size_t len, void *data)
{
    reader *r = data;
    size_t i = r->field++;
    if (r->failed)
        return;
    if (r->row == 0) {
        for (int c = 0; c < NCOLS; c++)
            if (strlen(COLUMNS[c]) == len && !memcmp(s, COLUMNS[c], len))
                r->column_at[c] = (int)i;
        return;
    }
    for (int c = 0; c < NCOLS; c++)
        if (r->column_at[c] == (int)i) {
            size_t n = len < sizeof r->value[c] - 1 ? len : sizeof r->value[c] - 1;
            memcpy(r->value[c], s, n);
            r->value[c][n] = '\0';
            r->seen[c] = true;
        }
}

static int parse_number(reader *r, int c, double *out)
{
    const char *text = r->value[c];
    char *end;
    errno = 0;
    *out = strtod(text, &end);
    if (!r->seen[c] || !*text)
        return fail(r, COLUMNS[c], "missing value%s", "");
    if (*end || errno || !isfinite(*out))
        return fail(r, COLUMNS[c], "expected a number, got \"%s\"", text);
    return 0;
}

/* A column grown to hold row n: every column grows from the same capacity, so to the
 * same one (at_s last, which updates the reader's). */
static void *grow_column(void *column, size_t cap, size_t n, size_t size)
{
    return sim_array_grow(column, &cap, n + 1, size, "a job trace");
}

static void add_row(reader *r)
{
    double at, gpus, duration, priority = 0;
    if (parse_number(r, COL_AT, &at) || parse_number(r, COL_GPUS, &gpus)
        || parse_number(r, COL_DURATION, &duration)
        || (r->column_at[COL_PRIORITY] >= 0 && parse_number(r, COL_PRIORITY, &priority)))
        return;
    job_trace *t = r->out;
    if (at < 0)
        fail(r, "at_s", "expected a time >= 0, got %s", r->value[COL_AT]);
    else if (t->n && at < t->at_s[t->n - 1])
        fail(r, "at_s", "%s comes before the previous row's arrival; expected rows in order",
             r->value[COL_AT]);
    else if (gpus < 1 || gpus != floor(gpus) || gpus > 1e6)
        fail(r, "gpus", "expected a positive integer, got %s", r->value[COL_GPUS]);
    else if (duration < 0)
        fail(r, "duration_s", "expected a duration >= 0, got %s", r->value[COL_DURATION]);
    else if (priority != floor(priority) || fabs(priority) > 1e9)
        fail(r, "priority", "expected an integer, got %s", r->value[COL_PRIORITY]);
    if (r->failed)
        return;
    if (t->n == r->cap) {
        t->gpus = grow_column(t->gpus, r->cap, t->n, sizeof *t->gpus);
        t->duration_s = grow_column(t->duration_s, r->cap, t->n, sizeof *t->duration_s);
        if (r->column_at[COL_PRIORITY] >= 0)
            t->priority = grow_column(t->priority, r->cap, t->n, sizeof *t->priority);
        t->at_s = sim_array_grow(t->at_s, &r->cap, t->n + 1, sizeof *t->at_s, "a job trace");
    }
    t->at_s[t->n] = at;
    t->gpus[t->n] = (unsigned)gpus;
    t->duration_s[t->n] = duration;
    if (t->priority)
        t->priority[t->n] = (int)priority;
    t->n++;
}

static void on_row(int terminator, void *data)
{
    reader *r = data;
    if (!r->failed && r->row == 0) {
        for (int c = 0; c < COL_PRIORITY; c++)
            if (r->column_at[c] < 0)
                fail(r, COLUMNS[c], "no such column in the header (expected at_s, gpus, "
                     "duration_s and optionally priority)%s", "");
    } else if (!r->failed && r->field > 0) {
        add_row(r);
    }
    r->row++;
    r->field = 0;
    memset(r->seen, 0, sizeof r->seen);
}

int job_trace_read(const char *path, job_trace *out, char *err, size_t err_size)
{
    *out = (job_trace){ 0 };
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(err, err_size, "%s: %s", path, strerror(errno));
        return -1;
    }
    reader r = { .path = path, .err = err, .err_size = err_size, .out = out,
                 .column_at = { -1, -1, -1, -1 } };
    struct csv_parser parser;
    csv_init(&parser, CSV_APPEND_NULL);
    char buf[65536];
    size_t n;
    while (!r.failed && (n = fread(buf, 1, sizeof buf, f)) > 0)
        if (csv_parse(&parser, buf, n, on_field, on_row, &r) != n)
            fail(&r, "row", "%s", csv_strerror(csv_error(&parser)));
    if (!r.failed && ferror(f))
        snprintf(err, err_size, "%s: %s", path, strerror(errno)), r.failed = 1;
    if (!r.failed)
        csv_fini(&parser, on_field, on_row, &r);
    if (!r.failed && r.row == 0)
        snprintf(err, err_size, "%s: empty file; expected a header at_s,gpus,duration_s", path),
            r.failed = 1;
    csv_free(&parser);
    fclose(f);
    if (r.failed) {
        job_trace_release(out);
        return -1;
    }
    return 0;
}
