/* Progress lines (see cli_progress.h). */
#include "lua/cli_progress.h"
#include "lua/cli_terminal.h"

#include <stdio.h>
#include <time.h>

/* Now, on a monotonic clock. */
static double wall_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

cli_progress cli_progress_start(void)
{
    double now = wall_s();
    return (cli_progress){ now, now, false };
}

void cli_progress_clear(cli_progress *d)
{
    if (d->printed)
        fputs("\r\033[K", cli_terminal_raw_stderr());
    d->printed = false;
}

/* "12.5 d", "3.2 h", "45 s": a duration a person reads at a glance. */
static const char *human_duration(double s, char *buf, size_t size)
{
    if (s >= 2 * 86400)
        snprintf(buf, size, "%.1f d", s / 86400);
    else if (s >= 2 * 3600)
        snprintf(buf, size, "%.1f h", s / 3600);
    else if (s >= 120)
        snprintf(buf, size, "%.1f min", s / 60);
    else
        snprintf(buf, size, "%.3g s", s);
    return buf;
}

void cli_progress_show_run(void *context, const run_progress *p)
{
    cli_progress *d = context;
    double now = wall_s();
    if (now - d->last_print_s < 0.5)
        return;
    d->last_print_s = now;
    d->printed = true;
    double elapsed = now - d->started_s;
    double done = (p->replication + p->sim_time_s / p->duration_s) / p->replications;
    double eta = done > 0 ? elapsed * (1 - done) / done : 0;
    char reached[32], total[32], left[32];
    fprintf(cli_terminal_raw_stderr(), "\r  replication %u/%u  simulated %s of %s  %.3g "
            "events/s  %3.0f%%  "
            "ETA %s   ", p->replication + 1, p->replications,
            human_duration(p->sim_time_s, reached, sizeof reached),
            human_duration(p->duration_s, total, sizeof total),
            elapsed > 0 ? (double)p->events / elapsed : 0, 100 * done,
            human_duration(eta, left, sizeof left));
}

void cli_progress_show_points(void *context, size_t done, size_t points)
{
    cli_progress *d = context;
    double now = wall_s();
    if (done < points && now - d->last_print_s < 0.5)
        return;
    d->last_print_s = now;
    d->printed = true;
    fprintf(cli_terminal_raw_stderr(), "\r  point %zu/%zu done   ", done, points);
}
