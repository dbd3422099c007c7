/* Calibration samples in memory and as CSV (see calib_sample.h). */
#include "kernels/calib_sample.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sim/array.h"
#include "sim/plain_file.h"

static const char HEADER[] = "kind,precision,threads,m,n,k,size_bytes,bytes,flops,repeat,seconds";
enum { FIELDS = 11 };

int calib_samples_add(calib_samples *list, const calib_sample *s)
{
    calib_sample *items = sim_array_try_grow(list->items, &list->capacity, list->count + 1,
                                             sizeof *items, SIZE_MAX);
    if (!items)
        return -1;
    list->items = items;
    list->items[list->count++] = *s;
    return 0;
}

void calib_samples_release(calib_samples *list)
{
    free(list->items);
    memset(list, 0, sizeof *list);
}

int calib_samples_write(FILE *out, const calib_meta *meta, const calib_samples *list)
{
    fprintf(out, "# fleetsim calibration samples (fleetsim calibrate --refit FILE redoes the fit)\n");
    fprintf(out, "# device: %s\n# kind: %s\n# host: %s\n# date: %s\n# threads: %u\n# quick: %s\n",
            meta->device, meta->kind, meta->host, meta->date, meta->threads,
            meta->quick ? "true" : "false");
    if (*meta->blas)
        fprintf(out, "# blas: %s\n", meta->blas);
    if (*meta->model)
        fprintf(out, "# model: %s\n", meta->model);
    if (meta->memory_bytes > 0)
        fprintf(out, "# memory_bytes: %.17g\n", meta->memory_bytes);
    if (meta->cache_bytes > 0)
        fprintf(out, "# cache_bytes: %.17g\n", meta->cache_bytes);
    if (meta->copy_bytes_per_s > 0)
        fprintf(out, "# copy_bytes_per_s: %.17g\n", meta->copy_bytes_per_s);
    fprintf(out, "%s\n", HEADER);
    for (size_t i = 0; i < list->count; i++) {
        const calib_sample *s = &list->items[i];
        /* %.17g: a refit from the file sees the very numbers the first fit saw */
        fprintf(out, "%s,%s,%u,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%u,%.17g\n", s->kind,
                s->precision, s->threads, s->m, s->n, s->k, s->size_bytes, s->bytes, s->flops,
                s->repeat, s->seconds);
    }
    return ferror(out) ? -1 : 0;
}

static void strip(char *s)
{
    size_t n = strlen(s);
    while (n && (s[n - 1] == '\n' || s[n - 1] == '\r' || s[n - 1] == ' '))
        s[--n] = '\0';
}

/* A byte count of a meta line: a positive number under 1e16, else 0 (not known). */
static double meta_bytes(const char *value)
{
    char *end;
    double v = strtod(value, &end);
    return *value && !*end && isfinite(v) && v > 0 && v < 1e16 ? v : 0;
}

static void read_meta_line(const char *line, calib_meta *meta)
{
    const char *colon = strchr(line, ':');
    if (!colon)
        return;
    size_t key = (size_t)(colon - line);
    const char *value = colon + 1 + (colon[1] == ' ');
#define META_IS(name) (key == strlen(name) && !strncmp(line, name, key))
    if (META_IS("device"))
        snprintf(meta->device, sizeof meta->device, "%s", value);
    else if (META_IS("kind"))
        snprintf(meta->kind, sizeof meta->kind, "%s", value);
    else if (META_IS("host"))
        snprintf(meta->host, sizeof meta->host, "%s", value);
    else if (META_IS("date"))
        snprintf(meta->date, sizeof meta->date, "%s", value);
    else if (META_IS("blas"))
        snprintf(meta->blas, sizeof meta->blas, "%s", value);
    else if (META_IS("threads"))
        meta->threads = (unsigned)strtoul(value, NULL, 10);
    else if (META_IS("model"))
        snprintf(meta->model, sizeof meta->model, "%s", value);
    else if (META_IS("quick"))
        meta->quick = !strcmp(value, "true");
    else if (META_IS("memory_bytes"))
        meta->memory_bytes = meta_bytes(value);
    else if (META_IS("cache_bytes"))
        meta->cache_bytes = meta_bytes(value);
    else if (META_IS("copy_bytes_per_s"))
        meta->copy_bytes_per_s = meta_bytes(value);
#undef META_IS
}

/* A finite number >= 0 filling the whole field. */
static int parse_number(const char *field, double *out)
{
    char *end;
    errno = 0;
    *out = strtod(field, &end);
    return *field && !*end && !errno && isfinite(*out) && *out >= 0 ? 0 : -1;
}

static int parse_row(char *line, calib_sample *s, char *why, size_t why_size)
{
    static const char *const names[FIELDS] = { "kind", "precision", "threads", "m", "n", "k",
                                               "size_bytes", "bytes", "flops", "repeat",
                                               "seconds" };
    char *field[FIELDS];
    size_t n = 0;
    for (char *p = line; n < FIELDS; n++) {
        field[n] = p;
        char *comma = strchr(p, ',');
        if (!comma) {
            n++;
            break;
        }
        *comma = '\0';
        p = comma + 1;
    }
    if (n != FIELDS || strchr(field[FIELDS - 1], ',')) {
        snprintf(why, why_size, "expected %d fields (%s)", FIELDS, HEADER);
        return -1;
    }
    memset(s, 0, sizeof *s);
    if (!*field[0] || strlen(field[0]) >= sizeof s->kind || strlen(field[1]) >= sizeof s->precision) {
        snprintf(why, why_size, "kind or precision empty or too long: '%s', '%s'", field[0], field[1]);
        return -1;
    }
    snprintf(s->kind, sizeof s->kind, "%s", field[0]);
    snprintf(s->precision, sizeof s->precision, "%s", field[1]);
    /* Bounds past anything a device measures, so that a fit's arithmetic stays finite
     * (a time of 1e308 s made a reference rate of 1e-310 and an error of inf, which the
     * profile's loader then refused): threads, the shape's dimensions, bytes (a
     * petabyte), operations (1e18) and seconds (1 ns to 1e6 s, as --steps bounds them). */
    static const char *const max[FIELDS] = { "", "", "1e6", "1e9", "1e9", "1e9", "1e15",
                                             "1e15", "1e18", "1e9", "1e6" };
    double v[FIELDS];
    for (size_t i = 2; i < FIELDS; i++) {
        const char *min = i == FIELDS - 1 ? "1e-9" : "0";
        if (parse_number(field[i], &v[i]) != 0 || v[i] < strtod(min, NULL)
            || v[i] > strtod(max[i], NULL)) {
            snprintf(why, why_size, "%s: expected a number from %s to %s, got '%s'", names[i],
                     min, max[i], field[i]);
            return -1;
        }
    }
    if (v[2] != floor(v[2]) || v[9] != floor(v[9])) {
        snprintf(why, why_size, "threads and repeat must be whole numbers, got '%s' and '%s'",
                 field[2], field[9]);
        return -1;
    }
    s->threads = (unsigned)v[2];
    s->m = v[3], s->n = v[4], s->k = v[5];
    s->size_bytes = v[6], s->bytes = v[7], s->flops = v[8];
    s->repeat = (unsigned)v[9];
    s->seconds = v[10];
    return 0;
}

int calib_samples_read(const char *path, calib_meta *meta, calib_samples *list, char *err,
                       size_t err_size)
{
    memset(meta, 0, sizeof *meta);
    memset(list, 0, sizeof *list);
    FILE *in = sim_open_plain(path, "r");
    if (!in) {
        snprintf(err, err_size, "cannot open '%s': %s", path, sim_open_plain_why(errno));
        return -1;
    }
    char *line = NULL, why[256];
    size_t size = 0, number = 0;
    bool header = false;
    int status = 0;
    while (status == 0 && getline(&line, &size, in) != -1) {
        number++;
        strip(line);
        if (line[0] == '#') {
            if (!header)
                read_meta_line(line + 1 + (line[1] == ' '), meta);
            continue;
        }
        if (!*line)
            continue;
        if (!header) {
            header = true;
            if (strcmp(line, HEADER)) {
                snprintf(err, err_size, "%s:%zu: expected the header '%s', got '%.80s'", path,
                         number, HEADER, line);
                status = -1;
            }
            continue;
        }
        calib_sample s;
        if (parse_row(line, &s, why, sizeof why) != 0) {
            snprintf(err, err_size, "%s:%zu: %s", path, number, why);
            status = -1;
        } else if (calib_samples_add(list, &s) != 0) {
            snprintf(err, err_size, "%s:%zu: out of memory", path, number);
            status = -1;
        }
    }
    free(line);
    fclose(in);
    if (status == 0 && list->count == 0) {
        snprintf(err, err_size, "%s: no samples", path);
        status = -1;
    }
    if (status == 0 && !*meta->kind)
        snprintf(meta->kind, sizeof meta->kind, "cpu");
    if (status != 0)
        calib_samples_release(list);
    return status;
}
