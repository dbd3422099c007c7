/* A run's files (see run_files.h). */
#include "output/run_files.h"

#include <stdio.h>
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
