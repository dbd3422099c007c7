/* A run's files (see run_files.h). */
#define _GNU_SOURCE /* O_DIRECTORY, O_NOFOLLOW, O_CLOEXEC, openat, unlinkat */
#include "output/run_files.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "output/atomic_file.h"
#include "output/plot_script.h"
#include "output/results.h"

void output_forget_run_files(const char *dir)
{
    static const char *const names[] = { "summary.csv", "timeseries.csv", "requests.csv",
                                         "jobs.csv" };
    char path[4096];
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        unlink(path);
    }
}

int output_run_files(const char *dir, const sim_metrics *metrics, const sim_timeseries *ts,
                     double duration_s, char *err, size_t err_size)
{
    if (output_summary_csv(dir, metrics, err, err_size) == 0
        && output_timeseries_csv(dir, ts, duration_s, err, err_size) == 0)
        return 0;
    output_forget_run_files(dir);
    return -1;
}

static const char *const RUN_CSVS[] = { "summary.csv", "timeseries.csv", "requests.csv",
                                        "jobs.csv", "sweep.csv", "sweep_diff.csv",
                                        "search.csv", "verdict.csv", "report.html",
                                        "scenario.txt", "headline.txt", "answer.csv" };

static bool ends_with(const char *name, const char *suffix)
{
    size_t n = strlen(name), k = strlen(suffix);
    return n > k && !strcmp(name + n - k, suffix);
}

/* Whether a name is all digits (a point folder: points/1, points/2, ...). */
static bool is_number(const char *name)
{
    if (!*name)
        return false;
    for (; *name; name++)
        if (*name < '0' || *name > '9')
            return false;
    return true;
}

/* The folder `name` inside the folder at at_fd, opened without following a link (a link
 * planted at plots/ or points/ must not lead the clearing elsewhere); NULL if absent,
 * a link or no folder. */
static DIR *open_inside(int at_fd, const char *name)
{
    int fd = openat(at_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return NULL;
    DIR *d = fdopendir(fd);
    if (!d)
        close(fd);
    return d;
}

static void remove_names(int at_fd, const char *const *names, size_t n)
{
    for (size_t i = 0; i < n; i++)
        unlinkat(at_fd, names[i], 0); /* a link of that name goes, not its target */
}

void output_remove_points_folder(int at_fd, const char *name)
{
    DIR *d = open_inside(at_fd, name);
    for (struct dirent *e; d && (e = readdir(d));) {
        if (!is_number(e->d_name))
            continue;
        DIR *point = open_inside(dirfd(d), e->d_name);
        if (point) {
            remove_names(dirfd(point), RUN_CSVS, sizeof RUN_CSVS / sizeof RUN_CSVS[0]);
            closedir(point);
        }
        unlinkat(dirfd(d), e->d_name, AT_REMOVEDIR);
    }
    if (d)
        closedir(d);
    unlinkat(at_fd, name, AT_REMOVEDIR); /* only when empty; never through a link */
}

/* Whether `name` is a temporary name (".<file>.tmp-PID-N": output/atomic_file.h) of one
 * of `files` (or, files NULL, of any file), left by a process that is gone. */
static bool dead_temporary(const char *name, const char *const *files, size_t n)
{
    const char *tmp = strstr(name, ".tmp-");
    long pid = 0;
    if (name[0] != '.' || !tmp || sscanf(tmp, ".tmp-%ld-", &pid) != 1 || pid <= 0)
        return false;
    bool ours = !files;
    for (size_t i = 0; i < n && !ours; i++)
        ours = strlen(files[i]) == (size_t)(tmp - name - 1)
               && !strncmp(name + 1, files[i], (size_t)(tmp - name - 1));
    return ours && kill((pid_t)pid, 0) != 0 && errno == ESRCH;
}

/* What runs whose process is gone (killed, or out of memory) left: the staging folders
 * (output/sweep_stream.h: ".points.tmp-PID-N") and the temporary names of a run's files
 * (".summary.csv.tmp-PID-N"); a live run's are left alone. */
static void remove_dead_staging(int top)
{
    DIR *d = fdopendir(dup(top));
    for (struct dirent *e; d && (e = readdir(d));) {
        long pid = 0;
        if (sscanf(e->d_name, ".points.tmp-%ld-", &pid) == 1 && pid > 0
            && kill((pid_t)pid, 0) != 0 && errno == ESRCH)
            output_remove_points_folder(dirfd(d), e->d_name);
        else if (dead_temporary(e->d_name, RUN_CSVS, sizeof RUN_CSVS / sizeof RUN_CSVS[0]))
            unlinkat(dirfd(d), e->d_name, 0);
    }
    if (d)
        closedir(d);
}

/* Whether plots/NAME.gp (name in the folder at at_fd) is a script fleetsim wrote; a
 * link, or what cannot be read, is not. */
static bool script_is_fleetsims(int at_fd, const char *name)
{
    int fd = openat(at_fd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0)
        return false;
    FILE *f = fdopen(fd, "r");
    if (!f) {
        close(fd);
        return false;
    }
    bool ours = plot_script_is_fleetsims(f);
    fclose(f);
    return ours;
}

void output_clear_run_folder(const char *dir)
{
    int top = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC); /* -o's links are the user's */
    if (top < 0)
        return;
    remove_names(top, RUN_CSVS, sizeof RUN_CSVS / sizeof RUN_CSVS[0]);
    DIR *d = open_inside(top, "plots");
    for (struct dirent *e; d && (e = readdir(d));) {
        /* the renders and the list of constant series go; a script only if fleetsim
         * wrote it (the user's own, plots/NAME.gp without the mark, stays to be
         * rendered with the new run's data) */
        if ((ends_with(e->d_name, ".gp") && script_is_fleetsims(dirfd(d), e->d_name))
            || ends_with(e->d_name, ".svg") || ends_with(e->d_name, ".png")
            || !strcmp(e->d_name, PLOT_CONSTANT_FILE) || dead_temporary(e->d_name, NULL, 0))
            unlinkat(dirfd(d), e->d_name, 0);
        /* a render folder an interrupted run left (plots/.render-XXXXXX, gnuplot's own
         * files only) */
        DIR *render = !strncmp(e->d_name, ".render-", 8) ? open_inside(dirfd(d), e->d_name)
                                                         : NULL;
        for (struct dirent *r; render && (r = readdir(render));)
            if (ends_with(r->d_name, ".svg") || ends_with(r->d_name, ".png"))
                unlinkat(dirfd(render), r->d_name, 0);
        if (render) {
            closedir(render);
            unlinkat(dirfd(d), e->d_name, AT_REMOVEDIR);
        }
    }
    if (d)
        closedir(d);
    unlinkat(top, "plots", AT_REMOVEDIR); /* only when empty; never through a link */
    output_remove_points_folder(top, "points");
    remove_dead_staging(top);
    close(top);
}

int output_check_run_folder(const char *dir, char *err, size_t err_size)
{
    if (output_check_inside(dir, "plots", err, err_size) != 0
        || output_check_inside(dir, "points", err, err_size) != 0)
        return -1;
    char path[4096];
    snprintf(path, sizeof path, "%s/points", dir);
    DIR *d = opendir(path); /* a folder, checked above, or absent */
    int status = 0;
    for (struct dirent *e; status == 0 && d && (e = readdir(d));) {
        char rel[300];
        snprintf(rel, sizeof rel, "points/%s", e->d_name);
        if (is_number(e->d_name))
            status = output_check_inside(dir, rel, err, err_size);
    }
    if (d)
        closedir(d);
    return status;
}
