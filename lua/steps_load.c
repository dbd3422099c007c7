/* Files of measured steps (see steps_load.h). */
#include "lua/steps_load.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/plain_file.h"

#define MAX_COLUMNS 64

static const char *const REQUIRED[] = { "model", "device", "precision", "tp", "batch",
                                        "prefill_tokens", "decode_tokens", "mean_context",
                                        "seconds", NULL };
static const char *const SHAPE[] = { "layers", "hidden", "heads", "kv_heads", "ffn", "vocab",
                                     NULL };

void steps_release(steps_file *f)
{
    for (size_t i = 0; i < f->nmodels; i++)
        model_release(&f->models[i]);
    free(f->models);
    free(f->rows);
    memset(f, 0, sizeof *f);
}

static void set_shape(model_spec *m, const unsigned *v)
{
    m->layers = v[0], m->hidden = v[1], m->heads = v[2], m->kv_heads = v[3], m->ffn = v[4];
    m->vocab = v[5];
    m->gated = true;
    m->context = 1u << 20;
}

static int check_shape(const model_spec *m, char *why, size_t size)
{
    if (!m->layers || !m->hidden || !m->heads || !m->kv_heads || !m->ffn || !m->vocab)
        snprintf(why, size, "every one of layers, hidden, heads, kv_heads, ffn, vocab must be "
                 "a whole number from 1");
    else if (m->hidden % m->heads || m->heads % m->kv_heads)
        snprintf(why, size, "heads must divide hidden and kv_heads divide heads");
    else
        return 0;
    return -1;
}

int steps_parse_shape(const char *text, model_spec *m, char *err, size_t err_size)
{
    memset(m, 0, sizeof *m);
    const char *colon = strchr(text, ':');
    unsigned v[6] = { 0 };
    char why[200] = "";
    if (!colon || colon == text) {
        snprintf(err, err_size, "'%s': expected NAME:layers=L,hidden=H,heads=A,kv_heads=G,"
                 "ffn=F,vocab=V", text);
        return -1;
    }
    for (const char *p = colon + 1; *p;) {
        size_t k = 0, len = strcspn(p, "=");
        while (SHAPE[k] && (strlen(SHAPE[k]) != len || strncmp(SHAPE[k], p, len)))
            k++;
        char *end;
        long x = p[len] == '=' ? strtol(p + len + 1, &end, 10) : -1;
        if (!SHAPE[k] || x < 1 || x > 1 << 24 || (*end && *end != ',')) {
            snprintf(err, err_size, "'%s': expected key=value with a key of layers, hidden, "
                     "heads, kv_heads, ffn, vocab and a whole number from 1, at '%s'", text, p);
            return -1;
        }
        v[k] = (unsigned)x;
        p = *end ? end + 1 : end;
    }
    set_shape(m, v);
    if (check_shape(m, why, sizeof why) != 0) {
        snprintf(err, err_size, "'%s': %s", text, why);
        return -1;
    }
    m->name = strndup(text, (size_t)(colon - text));
    return m->name ? 0 : -1;
}

/* ---- the file --------------------------------------------------------------------------- */

typedef struct reader {
    const char *path;
    unsigned line;
    char *cell[MAX_COLUMNS];
    size_t ncells;
    long col[16];            /* REQUIRED then SHAPE, -1 when absent */
    size_t *model_index;     /* per row, into the models (which move as they grow) */
    char *err;
    size_t err_size;
} reader;

static void split(reader *r, char *line)
{
    line[strcspn(line, "\r\n")] = 0;
    r->ncells = 0;
    for (char *p = line; r->ncells < MAX_COLUMNS;) {
        r->cell[r->ncells++] = p;
        char *comma = strchr(p, ',');
        if (!comma)
            break;
        *comma = 0;
        p = comma + 1;
    }
}

static const char *cell(const reader *r, long col)
{
    return col >= 0 && (size_t)col < r->ncells ? r->cell[col] : "";
}

static int fail(reader *r, const char *column, const char *value, const char *expected)
{
    snprintf(r->err, r->err_size, "%s:%u: %s: expected %s, got '%s'", r->path, r->line, column,
             expected, value);
    return -1;
}

/* The number in column c (index into REQUIRED, then SHAPE), in [min, max], whole if asked. */
static int number(reader *r, size_t c, double min, double max, bool whole, double *out)
{
    const char *name = c < 9 ? REQUIRED[c] : SHAPE[c - 9];
    const char *text = cell(r, r->col[c]);
    char *end, expected[96];
    errno = 0;
    double x = strtod(text, &end);
    snprintf(expected, sizeof expected, "%s from %g%s", whole ? "a whole number" : "a number",
             min, max < 1e30 ? "" : " up");
    if (!*text || *end || errno || !(x >= min && x <= max) || (whole && x != floor(x)))
        return fail(r, name, text, expected);
    *out = x;
    return 0;
}

static const model_spec *model_of(reader *r, const catalog *cat, steps_file *f)
{
    const char *name = cell(r, r->col[0]);
    bool shaped = r->col[9] >= 0;
    unsigned v[6];
    for (size_t k = 0; shaped && k < 6; k++) {
        double x;
        if (number(r, 9 + k, 1, 1 << 24, true, &x) != 0)
            return NULL;
        v[k] = (unsigned)x;
    }
    for (size_t i = 0; i < f->nmodels; i++)
        if (!strcmp(f->models[i].name, name)) {
            const model_spec *m = &f->models[i];
            if (shaped && (m->layers != v[0] || m->hidden != v[1] || m->heads != v[2]
                           || m->kv_heads != v[3] || m->ffn != v[4] || m->vocab != v[5])) {
                fail(r, "model", name, "one shape per model name (an earlier row gave "
                     "another)");
                return NULL;
            }
            return m;
        }
    const model_spec *known = catalog_model(cat, name);
    if (!known && !shaped) {
        fail(r, "model", name, "a catalog model, or the shape columns layers, hidden, heads, "
             "kv_heads, ffn, vocab");
        return NULL;
    }
    model_spec *m = &f->models[f->nmodels];
    if (shaped) {
        memset(m, 0, sizeof *m);
        set_shape(m, v);
        char why[200];
        if (check_shape(m, why, sizeof why) != 0) {
            fail(r, "heads", cell(r, r->col[11]), why);
            return NULL;
        }
    } else {
        *m = *known;
    }
    m->name = strdup(name);
    if (!m->name) {
        snprintf(r->err, r->err_size, "out of memory");
        return NULL;
    }
    f->nmodels++;
    return m;
}

static int set_device(reader *r, const catalog *cat, const device_profile *profile,
                      steps_file *f)
{
    const char *name = cell(r, r->col[1]);
    const device_spec *d = catalog_device(cat, name);
    if (!d && profile && *profile->catalog)
        d = catalog_device(cat, profile->catalog);
    if (!d)
        return fail(r, "device", name, profile ? "a catalog device (the profile names no "
                    "catalog entry to stand for it)" : "a catalog device, or --profile with "
                    "the device it was measured on");
    snprintf(f->device_name, sizeof f->device_name, "%s", name);
    f->device = *d;
    f->perf = perf_default_profile(d);
    if (profile) {
        char why[512];
        if (profile_check_kind(profile, d, why, sizeof why) != 0)
            return fail(r, "device", name, why);
        profile_apply(profile, &f->device, &f->perf);
    }
    if (!f->perf.has_operators) { /* the device's family stands for its operators */
        f->perf.operators = *(f->perf.family ? f->perf.family : perf_family_of(d));
        f->perf.has_operators = true;
    }
    return 0;
}

static int read_row(reader *r, const catalog *cat, const device_profile *profile,
                    steps_file *f)
{
    calib_step *s = &f->rows[f->count];
    memset(s, 0, sizeof *s);
    s->line = r->line;
    const char *device = cell(r, r->col[1]);
    if (f->count == 0 && set_device(r, cat, profile, f) != 0)
        return -1;
    if (strcmp(device, f->device_name))
        return fail(r, "device", device, "the device of the file's first row (one device per "
                    "file)");
    s->device = &f->device;
    if (!(s->model = model_of(r, cat, f)))
        return -1;
    r->model_index[f->count] = (size_t)(s->model - f->models);
    if (precision_parse(cell(r, r->col[2]), &s->weights) != 0)
        return fail(r, "precision", cell(r, r->col[2]), "fp32, tf32, fp16, bf16, fp8, int8, "
                    "int4 or fp4");
    double tp;
    if (number(r, 3, 1, 1024, true, &tp) || number(r, 4, 1, 1e7, true, &s->batch)
        || number(r, 5, 0, 1e9, true, &s->prefill_tokens)
        || number(r, 6, 0, s->batch, true, &s->decode_tokens)
        || number(r, 7, 0, 1e9, false, &s->mean_context)
        || number(r, 8, 1e-9, 1e6, false, &s->seconds))
        return -1;
    s->tp = (unsigned)tp;
    if (s->prefill_tokens > 0 && s->decode_tokens >= s->batch)
        return fail(r, "prefill_tokens", cell(r, r->col[5]), "0 when every sequence of the "
                    "batch decodes (prefill sequences are batch - decode_tokens)");
    if (s->prefill_tokens == 0 && s->decode_tokens < s->batch)
        return fail(r, "decode_tokens", cell(r, r->col[6]), "the batch when no prompt tokens "
                    "are processed");
    f->count++;
    return 0;
}

int steps_load(const char *path, const catalog *cat, const device_profile *profile,
               steps_file *out, char *err, size_t err_size)
{
    memset(out, 0, sizeof *out);
    FILE *in = sim_open_plain(path, "r");
    if (!in) {
        snprintf(err, err_size, "cannot read '%s': %s", path, sim_open_plain_why(errno));
        return -1;
    }
    reader r = { .path = path, .err = err, .err_size = err_size };
    char line[4096];
    size_t capacity = 0;
    int status = 0;
    bool header = false;
    while (status == 0 && fgets(line, sizeof line, in)) {
        r.line++;
        if (line[0] == '#' || line[strspn(line, " \t\r\n")] == 0)
            continue;
        if (strchr(line, '"')) {
            status = fail(&r, "line", "\"", "plain comma-separated cells (no quotes)");
            break;
        }
        split(&r, line);
        if (!header) {
            header = true;
            for (size_t c = 0; c < 15; c++) {
                const char *name = c < 9 ? REQUIRED[c] : SHAPE[c - 9];
                r.col[c] = -1;
                for (size_t k = 0; k < r.ncells; k++)
                    if (!strcmp(r.cell[k], name))
                        r.col[c] = (long)k;
                if (r.col[c] < 0 && c < 9)
                    status = fail(&r, "header", name, "a column of this name (docs/"
                                  "calibration.md lists the columns)");
            }
            for (size_t c = 10; c < 15 && status == 0; c++)
                if ((r.col[c] < 0) != (r.col[9] < 0))
                    status = fail(&r, "header", SHAPE[c - 9], "all six shape columns or none");
            continue;
        }
        if (out->count == capacity) {
            capacity = capacity ? 2 * capacity : 64;
            calib_step *rows = realloc(out->rows, capacity * sizeof *rows);
            model_spec *models = realloc(out->models, capacity * sizeof *models);
            size_t *index = realloc(r.model_index, capacity * sizeof *index);
            if (rows)
                out->rows = rows;
            if (models)
                out->models = models;
            if (index)
                r.model_index = index;
            if (!rows || !models || !index) {
                snprintf(err, err_size, "out of memory");
                status = -1;
                break;
            }
        }
        status = read_row(&r, cat, profile, out);
    }
    fclose(in);
    for (size_t i = 0; status == 0 && i < out->count; i++)
        out->rows[i].model = &out->models[r.model_index[i]];
    free(r.model_index);
    if (status == 0 && out->count == 0) {
        snprintf(err, err_size, "%s: no steps (expected a header row, then one row per "
                 "measured step)", path);
        status = -1;
    }
    return status;
}
