/* Streaming trace reader on libcsv (see trace.h). */
#define _DEFAULT_SOURCE /* timegm */
#include "models/trace.h"

#include <csv.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "sim/array.h"
#include "sim/fatal.h"

#define CHUNK 65536
#define MAX_FIELD 256

/* One parsed row: the fields we use (copied; the block ids parsed), and how many
 * fields it had. */
typedef struct raw_row {
    char time[MAX_FIELD], prompt[MAX_FIELD], output[MAX_FIELD], session[MAX_FIELD];
    size_t fields;
    uint64_t row;
    bool nul;              /* a field held a NUL byte */
    uint64_t *ids;         /* the block ids, malloc'd (NULL: none); the row owns them */
    uint32_t nids;
    size_t ids_cap;
    bool ids_many;         /* more than TRACE_MAX_BLOCK_IDS */
    char bad_id[48];       /* the first id that is not one, or "" */
} raw_row;

struct trace_reader {
    trace_options options;
    FILE *file;            /* opened by name; NULL when reading options.fd */
    int64_t offset;        /* in options.fd, read with pread: the descriptor's own offset
                              is shared with every copy of it (forked workers) */
    struct csv_parser parser;
    bool header_done, eof;
    int time_col, prompt_col, output_col, session_col, blocks_col;
    size_t header_fields;
    /* the row being parsed */
    raw_row current;
    uint64_t row;
    /* rows parsed and not yet handed out */
    raw_row *ready;
    size_t nready, ready_head, ready_cap;
    double first_time, last_time;
    bool have_first;
    uint64_t skipped;
    int read_errno;          /* a failed read, reported at the next row */
    uint64_t *handed;        /* the ids of the record handed out last */
};

static void copy_field(char *dst, const void *s, size_t len)
{
    size_t n = len < MAX_FIELD - 1 ? len : MAX_FIELD - 1;
    memcpy(dst, s, n);
    dst[n] = '\0';
}

static bool id_separator(char c)
{
    return c == ' ' || c == '\t' || c == ',' || c == '\r' || c == '\n';
}

/* One id of a block-id field, [s, end): digits only, below 2^64; -1 if not one. */
static int parse_id(const char *s, const char *end, uint64_t *out)
{
    uint64_t v = 0;
    if (s == end)
        return -1;
    for (; s < end; s++) {
        if (*s < '0' || *s > '9' || v > (UINT64_MAX - (uint64_t)(*s - '0')) / 10)
            return -1;
        v = v * 10 + (uint64_t)(*s - '0');
    }
    *out = v;
    return 0;
}

/* A block-id field into r: ids between separators, inside one optional pair of
 * brackets.  Stops at the first bad id (kept for the message) or at too many. */
static void parse_ids(raw_row *r, const char *s, size_t len)
{
    const char *end = s + len;
    while (s < end && id_separator(*s))
        s++;
    while (end > s && id_separator(end[-1]))
        end--;
    if (end - s >= 2 && *s == '[' && end[-1] == ']') {
        s++;
        end--;
    }
    while (s < end) {
        if (id_separator(*s)) {
            s++;
            continue;
        }
        const char *token = s;
        while (s < end && !id_separator(*s))
            s++;
        uint64_t id;
        if (parse_id(token, s, &id) != 0) {
            copy_field(r->bad_id, token, (size_t)(s - token) < sizeof r->bad_id - 1
                                         ? (size_t)(s - token) : sizeof r->bad_id - 1);
            return;
        }
        if (r->nids == TRACE_MAX_BLOCK_IDS) {
            r->ids_many = true;
            return;
        }
        r->ids = sim_array_grow(r->ids, &r->ids_cap, r->nids + 1, sizeof *r->ids,
                                "a trace's block ids");
        r->ids[r->nids++] = id;
    }
}

static void on_field(void *s, size_t len, void *data)
{
    trace_reader *t = data;
    size_t i = t->current.fields++;
    if (memchr(s, '\0', len))
        t->current.nul = true;
    if (!t->header_done) {
        char name[MAX_FIELD];
        if (i == 0 && len >= 3 && !memcmp(s, "\xEF\xBB\xBF", 3)) { /* a UTF-8 byte-order mark */
            s = (char *)s + 3;
            len -= 3;
        }
        copy_field(name, s, len);
        if (!strcmp(name, t->options.time_column))
            t->time_col = (int)i;
        if (!strcmp(name, t->options.prompt_column))
            t->prompt_col = (int)i;
        if (!strcmp(name, t->options.output_column))
            t->output_col = (int)i;
        if (t->options.session_column && !strcmp(name, t->options.session_column))
            t->session_col = (int)i;
        if (t->options.blocks_column && !strcmp(name, t->options.blocks_column))
            t->blocks_col = (int)i;
        return;
    }
    if ((int)i == t->time_col)
        copy_field(t->current.time, s, len);
    if ((int)i == t->prompt_col)
        copy_field(t->current.prompt, s, len);
    if ((int)i == t->output_col)
        copy_field(t->current.output, s, len);
    if ((int)i == t->session_col)
        copy_field(t->current.session, s, len);
    if ((int)i == t->blocks_col)
        parse_ids(&t->current, s, len);
}

static void on_row(int terminator, void *data)
{
    (void)terminator;
    trace_reader *t = data;
    t->row++;
    t->current.row = t->row;
    if (!t->header_done) {
        t->header_done = true;
        t->header_fields = t->current.fields;
    } else {
        if (t->nready == t->ready_cap) {
            size_t cap = t->ready_cap ? 2 * t->ready_cap : 256;
            raw_row *grown = malloc(cap * sizeof *grown);
            if (!grown)
                sim_out_of_memory("out of memory reading a trace");
            for (size_t k = 0; k < t->nready; k++)
                grown[k] = t->ready[(t->ready_head + k) % t->ready_cap];
            free(t->ready);
            t->ready = grown;
            t->ready_cap = cap;
            t->ready_head = 0;
        }
        t->ready[(t->ready_head + t->nready++) % t->ready_cap] = t->current;
    }
    memset(&t->current, 0, sizeof t->current);
}

/* Parses the next chunk; false at the end of the file. */
static bool feed(trace_reader *t)
{
    if (t->eof)
        return false;
    char buf[CHUNK];
    size_t n;
    bool end;
    if (t->file) {
        n = fread(buf, 1, sizeof buf, t->file);
        if (n < sizeof buf && ferror(t->file))
            t->read_errno = errno ? errno : EIO;
        end = n < sizeof buf;
    } else {
        ssize_t got;
        do
            got = pread(t->options.fd, buf, sizeof buf, (off_t)t->offset);
        while (got < 0 && errno == EINTR);
        if (got < 0)
            t->read_errno = errno;
        n = got > 0 ? (size_t)got : 0;
        t->offset += (int64_t)n;
        end = got <= 0;
    }
    if (n > 0 && csv_parse(&t->parser, buf, n, on_field, on_row, t) != n)
        t->read_errno = EINVAL; /* libcsv out of memory or a strict-mode error */
    if (end) {
        csv_fini(&t->parser, on_field, on_row, t);
        t->eof = true;
    }
    return true;
}

trace_reader *trace_open(const trace_options *options, char *err, size_t err_size)
{
    trace_reader *t = calloc(1, sizeof *t);
    if (!t)
        sim_out_of_memory("out of memory opening a trace");
    t->options = *options;
    if (!(t->options.speedup > 0))
        t->options.speedup = 1;
    if (!t->options.block_tokens)
        t->options.block_tokens = TRACE_BLOCK_TOKENS;
    t->time_col = t->prompt_col = t->output_col = t->session_col = t->blocks_col = -1;
    if (options->fd <= 0 && !(t->file = fopen(options->path, "rb"))) {
        snprintf(err, err_size, "%s: cannot read the trace: %s", options->path, strerror(errno));
        free(t);
        return NULL;
    }
    csv_init(&t->parser, CSV_APPEND_NULL);
    while (!t->header_done && feed(t))
        ;
    const char *missing = t->time_col < 0 ? options->time_column
                        : t->prompt_col < 0 ? options->prompt_column
                        : t->output_col < 0 ? options->output_column
                        : options->session_column && t->session_col < 0 ? options->session_column
                        : options->blocks_column && t->blocks_col < 0 ? options->blocks_column
                        : NULL;
    if (!t->header_done || missing) {
        snprintf(err, err_size, "%s:row 1: no column \"%s\" in the header", options->path,
                 missing ? missing : options->time_column);
        trace_close(t);
        return NULL;
    }
    return t;
}

void trace_close(trace_reader *t)
{
    if (!t)
        return;
    if (t->file)
        fclose(t->file);
    csv_free(&t->parser);
    for (size_t k = 0; k < t->nready; k++)
        free(t->ready[(t->ready_head + k) % t->ready_cap].ids);
    free(t->ready);
    free(t->current.ids);
    free(t->handed);
    free(t);
}

uint64_t trace_skipped(const trace_reader *t) { return t->skipped; }

/* Seconds from a number or a "YYYY-MM-DD HH:MM:SS.fff" timestamp (UTC). */
static int parse_time(const char *text, double *out)
{
    char *end;
    double x = strtod(text, &end);
    if (*text && !*end && isfinite(x)) {
        *out = x;
        return 0;
    }
    struct tm tm = { 0 };
    int year, month, day, hour, minute;
    double seconds;
    if (sscanf(text, "%d-%d-%d %d:%d:%lf", &year, &month, &day, &hour, &minute, &seconds) != 6
        || month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || minute > 59
        || seconds < 0 || seconds >= 61)
        return -1;
    tm.tm_year = year - 1900;
    tm.tm_mon = month - 1;
    tm.tm_mday = day;
    tm.tm_hour = hour;
    tm.tm_min = minute;
    *out = (double)timegm(&tm) + seconds;
    return 0;
}

static int parse_count(const char *text, unsigned *out)
{
    char *end;
    errno = 0;
    long long v = strtoll(text, &end, 10);
    if (!*text || *end || errno || v < 0 || v > 100000000)
        return -1;
    *out = (unsigned)v;
    return 0;
}

/* A session's id as 64 bits (FNV-1a): equal texts, equal sessions; "" none. */
static uint64_t session_hash(const char *text)
{
    if (!*text)
        return 0;
    uint64_t h = 0xcbf29ce484222325ULL;
    for (const unsigned char *c = (const unsigned char *)text; *c; c++)
        h = (h ^ *c) * 0x100000001b3ULL;
    return h ? h : 1;
}

/* Checks a raw row; 0 and *out, or -1 with the message. */
static int convert(trace_reader *t, const raw_row *r, trace_record *out, char *err, size_t n)
{
    const trace_options *o = &t->options;
    if (r->nul) {
        snprintf(err, n, "%s:row %llu: a field holds a NUL byte", o->path,
                 (unsigned long long)r->row);
        return -1;
    }
    if (r->fields != t->header_fields) {
        snprintf(err, n, "%s:row %llu: %zu fields where the header has %zu", o->path,
                 (unsigned long long)r->row, r->fields, t->header_fields);
        return -1;
    }
    double time;
    if (parse_time(r->time, &time) != 0) {
        snprintf(err, n, "%s:row %llu: %s: expected seconds or a timestamp such as "
                 "\"2023-11-16 18:17:03.98\", got \"%s\"", o->path, (unsigned long long)r->row,
                 o->time_column, r->time);
        return -1;
    }
    const char *names[2] = { o->prompt_column, o->output_column };
    const char *texts[2] = { r->prompt, r->output };
    unsigned values[2];
    for (int k = 0; k < 2; k++) {
        if (parse_count(texts[k], &values[k]) != 0) {
            snprintf(err, n, "%s:row %llu: %s: expected a whole number of tokens >= 0, got \"%s\"",
                     o->path, (unsigned long long)r->row, names[k], texts[k]);
            return -1;
        }
    }
    if (*r->bad_id || r->ids_many) {
        if (r->ids_many)
            snprintf(err, n, "%s:row %llu: %s: more than %d block ids", o->path,
                     (unsigned long long)r->row, o->blocks_column, TRACE_MAX_BLOCK_IDS);
        else
            snprintf(err, n, "%s:row %llu: %s: expected block ids (whole numbers >= 0 "
                     "separated by spaces or commas), got \"%s\"", o->path,
                     (unsigned long long)r->row, o->blocks_column, r->bad_id);
        return -1;
    }
    uint64_t most = ((uint64_t)values[0] + o->block_tokens - 1) / o->block_tokens;
    if (r->nids > most) {
        snprintf(err, n, "%s:row %llu: %s: %u block ids of %u tokens for a prompt of %u "
                 "tokens, at most %llu", o->path, (unsigned long long)r->row, o->blocks_column,
                 r->nids, o->block_tokens, values[0], (unsigned long long)most);
        return -1;
    }
    if (t->have_first && time < t->last_time) {
        snprintf(err, n, "%s:row %llu: %s goes backwards (%.9g s before the previous row)",
                 o->path, (unsigned long long)r->row, o->time_column, t->last_time - time);
        return -1;
    }
    if (!t->have_first) {
        t->first_time = time;
        t->have_first = true;
    }
    t->last_time = time;
    out->time_s = (time - t->first_time) / o->speedup;
    out->prompt = values[0];
    out->output = values[1];
    out->row = r->row;
    out->session = t->session_col >= 0 ? session_hash(r->session) : 0;
    out->blocks = r->nids ? r->ids : NULL;
    out->nblocks = r->nids;
    return 0;
}

int trace_next(trace_reader *t, trace_record *out, char *err, size_t err_size)
{
    for (;;) {
        while (t->nready == 0) {
            if (t->read_errno) {
                snprintf(err, err_size, "%s:row %llu: cannot read the trace: %s",
                         t->options.path, (unsigned long long)t->row + 1, strerror(t->read_errno));
                return -1;
            }
            if (!feed(t))
                return 0;
        }
        raw_row r = t->ready[t->ready_head];
        t->ready_head = (t->ready_head + 1) % t->ready_cap;
        t->nready--;
        free(t->handed); /* the last record's ids: valid until this call */
        t->handed = r.ids;
        if (convert(t, &r, out, err, err_size) == 0)
            return 1;
        if (!t->options.skip_bad)
            return -1;
        t->skipped++;
    }
}

int trace_scan(const trace_options *options, trace_summary *out, char *err, size_t err_size)
{
    memset(out, 0, sizeof *out);
    trace_reader *t = trace_open(options, err, err_size);
    if (!t)
        return -1;
    trace_record r;
    int status;
    while ((status = trace_next(t, &r, err, err_size)) == 1) {
        out->rows++;
        out->prompt_tokens += r.prompt;
        out->output_tokens += r.output;
        out->duration_s = r.time_s;
        if (r.prompt > out->longest_prompt) {
            out->longest_prompt = r.prompt;
            out->longest_prompt_row = r.row;
        }
    }
    out->skipped = trace_skipped(t);
    trace_close(t);
    if (status == 0 && out->rows == 0) {
        snprintf(err, err_size, "%s: the trace has no rows", options->path);
        return -1;
    }
    return status;
}
