/* Node and task lists of a GPU cluster trace on libcsv (see cluster_trace.h). */
#include "models/cluster_trace.h"

#include <csv.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/array.h"
#include "sim/fatal.h"

#define CHUNK 65536
#define MAX_FIELD 128
#define MAX_COLUMNS 16
#define MAX_TIME_S 1e12 /* 30,000 years: anything larger is a unit mistake */

/* One file read as a table: the wanted columns found by name in the header, then each
 * row handed to a converter with those columns' texts (NULL for an absent column). */
typedef int (*row_fn)(void *context, const char *const *fields, uint64_t row, char *err,
                      size_t err_size);

typedef struct table_reader {
    const char *path;
    const char *const *names;     /* wanted columns */
    const bool *required;
    size_t ncolumns;
    int position[MAX_COLUMNS];    /* header position of each wanted column, or -1 */
    char text[MAX_COLUMNS][MAX_FIELD];
    bool too_long[MAX_COLUMNS];
    size_t fields, header_fields;
    uint64_t row;
    bool header_done, failed;
    row_fn convert;
    void *context;
    char *err;
    size_t err_size;
} table_reader;

static void on_field(void *s, size_t len, void *data)
{
    table_reader *r = data;
    size_t i = r->fields++;
    if (r->failed)
        return;
    for (size_t c = 0; c < r->ncolumns; c++) {
        if (!r->header_done) {
            if (r->position[c] < 0 && len == strlen(r->names[c]) && !memcmp(s, r->names[c], len))
                r->position[c] = (int)i;
        } else if (r->position[c] == (int)i) {
            size_t n = len < MAX_FIELD - 1 ? len : MAX_FIELD - 1;
            memcpy(r->text[c], s, n);
            r->text[c][n] = '\0';
            r->too_long[c] = len >= MAX_FIELD;
        }
    }
}

static void on_row(int terminator, void *data)
{
    (void)terminator;
    table_reader *r = data;
    r->row++;
    size_t fields = r->fields;
    r->fields = 0;
    if (r->failed)
        return;
    if (r->row > CLUSTER_MAX_ROWS + 1) { /* the arrays are kept whole: bound them */
        snprintf(r->err, r->err_size, "%s:row %llu: more than %llu rows, the limit of a "
                 "cluster trace", r->path, (unsigned long long)r->row,
                 (unsigned long long)CLUSTER_MAX_ROWS);
        r->failed = true;
        return;
    }
    if (!r->header_done) {
        r->header_done = true;
        r->header_fields = fields;
        for (size_t c = 0; c < r->ncolumns && !r->failed; c++) {
            if (r->required[c] && r->position[c] < 0) {
                snprintf(r->err, r->err_size, "%s:row 1: no column \"%s\" in the header",
                         r->path, r->names[c]);
                r->failed = true;
            }
        }
        return;
    }
    if (fields != r->header_fields) {
        snprintf(r->err, r->err_size, "%s:row %llu: %zu fields where the header has %zu",
                 r->path, (unsigned long long)r->row, fields, r->header_fields);
        r->failed = true;
        return;
    }
    const char *texts[MAX_COLUMNS];
    for (size_t c = 0; c < r->ncolumns; c++) {
        texts[c] = r->position[c] < 0 ? NULL : r->text[c];
        if (texts[c] && r->too_long[c]) {
            snprintf(r->err, r->err_size, "%s:row %llu: %s: longer than %d characters",
                     r->path, (unsigned long long)r->row, r->names[c], MAX_FIELD - 1);
            r->failed = true;
            return;
        }
    }
    if (r->convert(r->context, texts, r->row, r->err, r->err_size) != 0)
        r->failed = true;
}

/* Reads the file at path; required[c] says which wanted columns must be present.
 * 0, or -1 with the message in err. */
static int table_read(const char *path, const char *const *names, const bool *required,
                      size_t ncolumns, row_fn convert, void *context, char *err,
                      size_t err_size)
{
    table_reader r = { .path = path, .names = names, .required = required, .ncolumns = ncolumns,
                       .convert = convert, .context = context, .err = err,
                       .err_size = err_size };
    for (size_t c = 0; c < ncolumns; c++)
        r.position[c] = -1;
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(err, err_size, "%s: cannot read the file: %s", path, strerror(errno));
        return -1;
    }
    struct csv_parser parser;
    csv_init(&parser, CSV_APPEND_NULL);
    char buf[CHUNK];
    int status = 0;
    for (;;) {
        size_t n = fread(buf, 1, sizeof buf, f);
        if (n > 0 && csv_parse(&parser, buf, n, on_field, on_row, &r) != n) {
            snprintf(err, err_size, "%s:row %llu: malformed CSV: %s", path,
                     (unsigned long long)r.row + 1, csv_strerror(csv_error(&parser)));
            status = -1;
            break;
        }
        if (n < sizeof buf) {
            if (ferror(f)) {
                snprintf(err, err_size, "%s: cannot read the file", path);
                status = -1;
                break;
            }
            csv_fini(&parser, on_field, on_row, &r);
            break;
        }
        if (r.failed)
            break;
    }
    csv_free(&parser);
    fclose(f);
    if (status == 0 && r.failed)
        status = -1;
    if (status == 0 && r.row <= 1) {
        snprintf(err, err_size, "%s: the file has no rows", path);
        status = -1;
    }
    return status;
}

/* ---- numbers ---- */

/* A whole number in [0, max]: 0, or -1 with "file:row N: column: ..." written. */
static int parse_whole(const char *path, uint64_t row, const char *column, const char *text,
                       uint32_t max, uint32_t *out, char *err, size_t err_size)
{
    char *end;
    errno = 0;
    long long v = strtoll(text, &end, 10);
    if (!*text || *end || errno || v < 0 || v > (long long)max) {
        snprintf(err, err_size, "%s:row %llu: %s: expected a whole number from 0 to %lu, "
                 "got \"%s\"", path, (unsigned long long)row, column, (unsigned long)max, text);
        return -1;
    }
    *out = (uint32_t)v;
    return 0;
}

/* Seconds in [0, MAX_TIME_S]. */
static int parse_time(const char *path, uint64_t row, const char *column, const char *text,
                      double *out, char *err, size_t err_size)
{
    char *end;
    double v = strtod(text, &end);
    if (!*text || *end || !isfinite(v) || v < 0 || v > MAX_TIME_S) {
        snprintf(err, err_size, "%s:row %llu: %s: expected a time in seconds >= 0, got \"%s\"",
                 path, (unsigned long long)row, column, text);
        return -1;
    }
    *out = v;
    return 0;
}

static char *dup_text(const char *s)
{
    char *copy = strdup(s);
    if (!copy)
        sim_out_of_memory("out of memory reading a cluster trace");
    return copy;
}

/* ---- nodes ---- */

enum { N_SN, N_CPU, N_MEMORY, N_GPU, N_MODEL, N_COLUMNS };
static const char *const NODE_COLUMNS[N_COLUMNS] = { "sn", "cpu_milli", "memory_mib", "gpu",
                                                     "model" };
static const bool NODE_REQUIRED[N_COLUMNS] = { false, true, true, true, false };

typedef struct list_context {
    const char *path;
    cluster_trace *trace;
    size_t capacity;
} list_context;

static int convert_node(void *context, const char *const *f, uint64_t row, char *err, size_t n)
{
    list_context *c = context;
    cluster_node node = { 0 };
    if (parse_whole(c->path, row, "cpu_milli", f[N_CPU], UINT32_MAX, &node.cpu_milli, err, n)
        || parse_whole(c->path, row, "memory_mib", f[N_MEMORY], UINT32_MAX, &node.memory_mib,
                       err, n)
        || parse_whole(c->path, row, "gpu", f[N_GPU], CLUSTER_MAX_GPUS_PER_NODE, &node.gpus,
                       err, n))
        return -1;
    char name[32];
    snprintf(name, sizeof name, "row %llu", (unsigned long long)row);
    node.name = dup_text(f[N_SN] ? f[N_SN] : name);
    node.model = dup_text(f[N_MODEL] ? f[N_MODEL] : "");
    cluster_trace *t = c->trace;
    t->nodes = sim_array_grow(t->nodes, &c->capacity, t->nnodes + 1, sizeof *t->nodes,
                              "a cluster trace");
    t->nodes[t->nnodes++] = node;
    return 0;
}

/* ---- tasks ---- */

enum { T_CPU, T_MEMORY, T_NUM_GPU, T_GPU_MILLI, T_SPEC, T_PHASE, T_CREATION, T_DELETION,
       T_SCHEDULED, T_COLUMNS };
static const char *const TASK_COLUMNS[T_COLUMNS] = {
    "cpu_milli", "memory_mib", "num_gpu", "gpu_milli", "gpu_spec", "pod_phase",
    "creation_time", "deletion_time", "scheduled_time",
};
static const bool TASK_REQUIRED[T_COLUMNS] = { true, true, true, true, false, false, true, true,
                                               false };
static const char *const PHASE_NAMES[] = { "Running", "Succeeded", "Failed", "Pending" };

const char *cluster_phase_name(cluster_phase p) { return PHASE_NAMES[p]; }

static int parse_phase(const char *path, uint64_t row, const char *text, cluster_phase *out,
                       char *err, size_t n)
{
    if (!text || !*text) {
        *out = PHASE_RUNNING;
        return 0;
    }
    for (int p = PHASE_RUNNING; p <= PHASE_PENDING; p++) {
        if (!strcmp(text, PHASE_NAMES[p])) {
            *out = (cluster_phase)p;
            return 0;
        }
    }
    snprintf(err, n, "%s:row %llu: pod_phase: expected Running, Succeeded, Failed or Pending, "
             "got \"%s\"", path, (unsigned long long)row, text);
    return -1;
}

/* num_gpu and gpu_milli must describe one of the three kinds of request. */
static int check_gpu_request(const char *path, uint64_t row, const cluster_task *t,
                             const char *milli_text, char *err, size_t n)
{
    const char *problem = NULL;
    char why[96];
    if (t->num_gpu == 0 && t->gpu_milli != 0)
        problem = "expected 0 when num_gpu is 0";
    else if (t->num_gpu > 0 && (t->gpu_milli == 0 || t->gpu_milli > CLUSTER_GPU_MILLI))
        problem = "expected 1 to 1000 thousandths of a GPU";
    else if (t->num_gpu > 1 && t->gpu_milli != CLUSTER_GPU_MILLI) {
        snprintf(why, sizeof why, "a task on %u GPUs takes them whole: expected 1000",
                 (unsigned)t->num_gpu);
        problem = why;
    }
    if (!problem)
        return 0;
    snprintf(err, n, "%s:row %llu: gpu_milli: %s, got \"%s\"", path, (unsigned long long)row,
             problem, milli_text);
    return -1;
}

static int convert_task(void *context, const char *const *f, uint64_t row, char *err, size_t n)
{
    list_context *c = context;
    const char *p = c->path;
    cluster_task t = { .row = row };
    double created, deleted, scheduled = 0;
    if (parse_whole(p, row, "cpu_milli", f[T_CPU], UINT32_MAX, &t.cpu_milli, err, n)
        || parse_whole(p, row, "memory_mib", f[T_MEMORY], UINT32_MAX, &t.memory_mib, err, n)
        || parse_whole(p, row, "num_gpu", f[T_NUM_GPU], CLUSTER_MAX_GPUS_PER_NODE, &t.num_gpu,
                       err, n)
        || parse_whole(p, row, "gpu_milli", f[T_GPU_MILLI], UINT32_MAX, &t.gpu_milli, err, n)
        || check_gpu_request(p, row, &t, f[T_GPU_MILLI], err, n)
        || parse_phase(p, row, f[T_PHASE], &t.phase, err, n)
        || parse_time(p, row, "creation_time", f[T_CREATION], &created, err, n)
        || parse_time(p, row, "deletion_time", f[T_DELETION], &deleted, err, n))
        return -1;
    t.scheduled = f[T_SCHEDULED] && *f[T_SCHEDULED];
    if (t.scheduled
        && parse_time(p, row, "scheduled_time", f[T_SCHEDULED], &scheduled, err, n) != 0)
        return -1;
    if (t.scheduled && scheduled < created) {
        snprintf(err, n, "%s:row %llu: scheduled_time: %.17g is before creation_time %.17g", p,
                 (unsigned long long)row, scheduled, created);
        return -1;
    }
    double start = t.scheduled ? scheduled : created;
    if (deleted < start) {
        snprintf(err, n, "%s:row %llu: deletion_time: %.17g is before %s %.17g", p,
                 (unsigned long long)row, deleted, t.scheduled ? "scheduled_time" : "creation_time",
                 start);
        return -1;
    }
    t.arrival_s = created;
    t.duration_s = deleted - start;
    t.gpu_spec = f[T_SPEC] && *f[T_SPEC] ? dup_text(f[T_SPEC]) : NULL;
    cluster_trace *trace = c->trace;
    trace->tasks = sim_array_grow(trace->tasks, &c->capacity, trace->ntasks + 1,
                                  sizeof *trace->tasks, "a cluster trace");
    trace->tasks[trace->ntasks++] = t;
    return 0;
}

int cluster_trace_read(const char *nodes_path, const char *tasks_path, cluster_trace *out,
                       char *err, size_t err_size)
{
    memset(out, 0, sizeof *out);
    list_context nodes = { nodes_path, out, 0 }, tasks = { tasks_path, out, 0 };
    if (table_read(nodes_path, NODE_COLUMNS, NODE_REQUIRED, N_COLUMNS, convert_node, &nodes,
                   err, err_size) != 0
        || table_read(tasks_path, TASK_COLUMNS, TASK_REQUIRED, T_COLUMNS, convert_task, &tasks,
                      err, err_size) != 0)
        return -1;
    return 0;
}

void cluster_trace_release(cluster_trace *t)
{
    if (!t)
        return;
    for (size_t i = 0; i < t->nnodes; i++) {
        free(t->nodes[i].name);
        free(t->nodes[i].model);
    }
    for (size_t i = 0; i < t->ntasks; i++)
        free(t->tasks[i].gpu_spec);
    free(t->nodes);
    free(t->tasks);
    memset(t, 0, sizeof *t);
}

bool cluster_task_accepts(const cluster_task *task, const char *model)
{
    if (!task->gpu_spec)
        return true;
    size_t len = strlen(model);
    for (const char *s = task->gpu_spec; *s;) {
        const char *bar = strchr(s, '|');
        size_t n = bar ? (size_t)(bar - s) : strlen(s);
        if (n == len && !memcmp(s, model, n))
            return true;
        s += n + (bar != NULL);
    }
    return false;
}
