/* Experiments' files as their points complete (see sweep_stream.h). */
#define _GNU_SOURCE /* O_DIRECTORY, O_CLOEXEC, openat, renameat, unlinkat, mkdirat */
#include "output/sweep_stream.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "output/atomic_file.h"
#include "output/csv_write.h"
#include "output/results.h"
#include "output/run_files.h"

struct sweep_stream {
    char *dir;
    int dir_fd;
    char staging[64];       /* ".points.tmp-<pid>-<n>", inside dir */
    size_t points;          /* folders made in it: 1 .. points */
    size_t nkeys;
    atomic_file *sweep, *diff;
};

static void write_keys_header(FILE *out, const char *const *keys, size_t nkeys)
{
    for (size_t k = 0; k < nkeys; k++)
        csv_write_text(out, keys[k], k == 0);
    fputs(nkeys ? "," : "", out);
}

static void write_row(FILE *out, const sweep_point_view *p, size_t nkeys, const sim_metric *m,
                      sim_ci ci)
{
    for (size_t k = 0; k < nkeys; k++)
        csv_write_text(out, p->values[k], k == 0);
    output_summary_fields(out, m, ci, nkeys == 0);
    fputc('\n', out);
}

static double sample(const sweep_point_view *p, size_t metric, unsigned r)
{
    return metric < p->samples_metrics && r < p->replications
               ? p->samples[metric * p->replications + r] : NAN;
}

/* The point's rows of sweep_diff.csv: each metric the first point has too, paired. */
static void write_diff_rows(FILE *out, const sweep_point_view *pt, const sweep_point_view *base,
                            size_t nkeys)
{
    for (size_t i = 0; i < pt->metrics->count; i++) {
        const sim_metric *m = &pt->metrics->items[i];
        const sim_metric *b = sim_metrics_find(base->metrics, m->scope, m->subject, m->name);
        if (!b)
            continue;
        size_t bi = (size_t)(b - base->metrics->items);
        sim_stat d;
        sim_stat_reset(&d);
        unsigned reps = pt->replications < base->replications ? pt->replications
                                                              : base->replications;
        for (unsigned r = 0; r < reps; r++) {
            double x = sample(pt, i, r), y = sample(base, bi, r);
            if (!isnan(x) && !isnan(y))
                sim_stat_add(&d, x - y);
        }
        write_row(out, pt, nkeys, m, sim_ci_student(&d, 0.95));
    }
}

sweep_stream *sweep_stream_open(const char *dir, const char *const *keys, size_t nkeys,
                                bool diff, char *err, size_t err_size)
{
    static unsigned long opened;
    sweep_stream *s = calloc(1, sizeof *s);
    if (!s || !(s->dir = strdup(dir))) {
        free(s);
        snprintf(err, err_size, "out of memory");
        return NULL;
    }
    s->nkeys = nkeys;
    s->dir_fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    int made = -1;
    for (int attempt = 0; s->dir_fd >= 0 && attempt < 100 && made != 0; attempt++) {
        snprintf(s->staging, sizeof s->staging, ".points.tmp-%ld-%lu", (long)getpid(),
                 opened++);
        made = mkdirat(s->dir_fd, s->staging, 0777);
        if (made != 0 && errno != EEXIST)
            break;
    }
    if (made != 0) {
        snprintf(err, err_size, "cannot create a folder in %s: %s", dir, strerror(errno));
        s->staging[0] = '\0';
        sweep_stream_abort(s);
        return NULL;
    }
    s->sweep = atomic_file_open(dir, "sweep.csv", err, err_size);
    if (s->sweep && diff)
        s->diff = atomic_file_open(dir, "sweep_diff.csv", err, err_size);
    if (!s->sweep || (diff && !s->diff)) {
        sweep_stream_abort(s);
        return NULL;
    }
    FILE *out = atomic_file_stream(s->sweep);
    write_keys_header(out, keys, nkeys);
    fputs(OUTPUT_SUMMARY_COLUMNS "\n", out);
    if (diff) {
        out = atomic_file_stream(s->diff);
        write_keys_header(out, keys, nkeys);
        fputs("scope,subject,metric,diff,unit,ci95_lo,ci95_hi,n\n", out);
    }
    return s;
}

int sweep_stream_point(sweep_stream *s, size_t k, const sweep_point_view *point,
                       const sweep_point_view *first, const sim_timeseries *ts,
                       double duration_s, char *err, size_t err_size)
{
    char name[32], path[8300];
    snprintf(name, sizeof name, "%zu", k);
    snprintf(path, sizeof path, "%s/%s/%s", s->dir, s->staging, name);
    if (k != s->points + 1) {
        snprintf(err, err_size, "point %zu written out of order (after %zu)", k, s->points);
        return -1;
    }
    if (mkdir(path, 0777) != 0) {
        snprintf(err, err_size, "cannot create folder %s: %s", path, strerror(errno));
        return -1;
    }
    s->points = k;
    if (output_summary_csv(path, point->metrics, err, err_size) != 0
        || (ts && output_timeseries_csv(path, ts, duration_s, err, err_size) != 0))
        return -1;
    FILE *out = atomic_file_stream(s->sweep);
    for (size_t i = 0; i < point->metrics->count; i++) {
        const sim_metric *m = &point->metrics->items[i];
        write_row(out, point, s->nkeys, m, sim_ci_student(&m->replications, 0.95));
    }
    if (s->diff && k > 1)
        write_diff_rows(atomic_file_stream(s->diff), point, first, s->nkeys);
    return 0;
}

static const char *const POINT_FILES[] = { "summary.csv", "timeseries.csv" };

/* Moves staging/<name>'s files into points/<name>, a folder already there (it holds
 * files of the user's own, which a run leaves), replacing a point's files of an earlier
 * run; 0, or -1 with errno set. */
static int move_files_into(int staging_fd, int points_fd, const char *name)
{
    int from = openat(staging_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    int to = openat(points_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    int status = from >= 0 && to >= 0 ? 0 : -1;
    for (size_t i = 0; status == 0 && i < sizeof POINT_FILES / sizeof POINT_FILES[0]; i++)
        if (renameat(from, POINT_FILES[i], to, POINT_FILES[i]) != 0 && errno != ENOENT)
            status = -1;
    int saved = errno;
    if (from >= 0)
        close(from);
    if (to >= 0)
        close(to);
    if (status == 0)
        unlinkat(staging_fd, name, AT_REMOVEDIR);
    errno = saved;
    return status;
}

/* Removes the staging folder and the folders still in it; frees s. */
static void release(sweep_stream *s)
{
    if (s->dir_fd >= 0 && s->staging[0])
        output_remove_points_folder(s->dir_fd, s->staging);
    if (s->dir_fd >= 0)
        close(s->dir_fd);
    free(s->dir);
    free(s);
}

void sweep_stream_abort(sweep_stream *s)
{
    if (!s)
        return;
    atomic_file_abort(s->sweep);
    atomic_file_abort(s->diff);
    release(s);
}

int sweep_stream_commit(sweep_stream *s, char *err, size_t err_size)
{
    int status = s->points ? output_make_inside(s->dir, "points", err, err_size) : 0;
    int points_fd = status == 0 ? openat(s->dir_fd, "points", O_RDONLY | O_DIRECTORY
                                         | O_NOFOLLOW | O_CLOEXEC) : -1;
    int staging_fd = openat(s->dir_fd, s->staging, O_RDONLY | O_DIRECTORY | O_NOFOLLOW
                                                   | O_CLOEXEC);
    if (status == 0 && s->points && (points_fd < 0 || staging_fd < 0)) {
        snprintf(err, err_size, "cannot open %s/points: %s", s->dir, strerror(errno));
        status = -1;
    }
    for (size_t k = 1; status == 0 && k <= s->points; k++) {
        char name[32];
        snprintf(name, sizeof name, "%zu", k);
        if (renameat(staging_fd, name, points_fd, name) != 0
            && ((errno != ENOTEMPTY && errno != EEXIST)
                || move_files_into(staging_fd, points_fd, name) != 0)) {
            snprintf(err, err_size, "cannot move a point's files to %s/points/%s: %s", s->dir,
                     name, strerror(errno));
            status = -1;
        }
    }
    if (points_fd >= 0)
        close(points_fd);
    if (staging_fd >= 0)
        close(staging_fd);
    atomic_file *sweep = s->sweep, *diff = s->diff;
    s->sweep = s->diff = NULL;
    if (status == 0)
        status = atomic_file_commit(sweep, err, err_size);
    else
        atomic_file_abort(sweep);
    if (status == 0 && diff)
        status = atomic_file_commit(diff, err, err_size);
    else
        atomic_file_abort(diff);
    release(s); /* what was not moved */
    return status;
}
