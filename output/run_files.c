/* A run's files (see run_files.h). */
#include "output/run_files.h"

#include <dirent.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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
                                        "scenario.txt", "headline.txt" };

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

static void remove_names(const char *dir, const char *const *names, size_t n)
{
    char path[4096];
    for (size_t i = 0; i < n; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        unlink(path);
    }
}

void output_clear_run_folder(const char *dir)
{
    char path[4096];
    remove_names(dir, RUN_CSVS, sizeof RUN_CSVS / sizeof RUN_CSVS[0]);
    snprintf(path, sizeof path, "%s/plots", dir);
    DIR *d = opendir(path);
    for (struct dirent *e; d && (e = readdir(d));) {
        if (ends_with(e->d_name, ".gp") || ends_with(e->d_name, ".svg")
            || ends_with(e->d_name, ".png")) {
            char file[4352];
            snprintf(file, sizeof file, "%s/%s", path, e->d_name);
            unlink(file);
        }
    }
    if (d)
        closedir(d);
    rmdir(path); /* only when empty */
    snprintf(path, sizeof path, "%s/points", dir);
    d = opendir(path);
    for (struct dirent *e; d && (e = readdir(d));) {
        if (!is_number(e->d_name))
            continue;
        char point[4352];
        snprintf(point, sizeof point, "%s/%s", path, e->d_name);
        remove_names(point, RUN_CSVS, sizeof RUN_CSVS / sizeof RUN_CSVS[0]);
        rmdir(point);
    }
    if (d)
        closedir(d);
    rmdir(path);
}
