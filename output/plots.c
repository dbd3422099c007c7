#include "output/plots.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "output/atomic_file.h"
#include "output/plot_render.h"
#include "output/plot_script.h"
#include "output/plot_sweep.h"
#include "output/plot_timeseries.h"
#include "sim/plain_file.h"

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int output_plots_list(const char *dir, const char *ext, plot_list *names, char *err,
                      size_t err_size)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/plots", dir);
    DIR *d = opendir(path);
    if (!d) {
        if (errno == ENOENT)
            return 0;
        snprintf(err, err_size, "cannot read folder %s: %s", path, strerror(errno));
        return -1;
    }
    struct dirent *entry;
    size_t n = strlen(ext);
    int status = 0;
    while (status == 0 && (entry = readdir(d))) {
        const char *name = entry->d_name;
        size_t len = strlen(name);
        if (name[0] == '.' || len <= n + 1 || name[len - n - 1] != '.'
            || strcmp(name + len - n, ext) != 0)
            continue;
        /* a pipe named NAME.gp would hold gnuplot's read for ever; what is not a plain
         * file among the renders is only not listed */
        struct stat st;
        int why = fstatat(dirfd(d), name, &st, 0) != 0 ? errno
                  : S_ISDIR(st.st_mode) ? EISDIR : !S_ISREG(st.st_mode) ? ENODEV : 0;
        if (why && strcmp(ext, "gp"))
            continue;
        if (why) {
            snprintf(err, err_size, "%s/%s: %s", path, name, sim_open_plain_why(why));
            status = -1;
            break;
        }
        char stem[512];
        snprintf(stem, sizeof stem, "%.*s", (int)(len - n - 1), name);
        if (plot_list_add(names, stem) != 0) {
            snprintf(err, err_size, "out of memory");
            status = -1;
        }
    }
    closedir(d);
    if (names->count > 1)
        qsort(names->names, names->count, sizeof *names->names, by_name);
    return status;
}

/* Whether plots/NAME.gp is one fleetsim wrote (its first line is the mark). */
static bool written_by_fleetsim(const char *dir, const char *name)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/plots/%s.gp", dir, name);
    FILE *f = sim_open_plain(path, "r");
    if (!f)
        return false;
    bool ours = plot_script_is_fleetsims(f);
    fclose(f);
    return ours;
}

/* A chart an earlier run wrote that this run has no data for goes, with its renders. */
static void remove_stale(const char *dir, const plot_list *before, const plot_list *now)
{
    static const char *const exts[] = { "gp", "svg", "png" };
    for (size_t i = 0; i < before->count; i++) {
        const char *name = before->names[i];
        if (plot_list_has(now, name) || !written_by_fleetsim(dir, name))
            continue;
        for (size_t e = 0; e < 3; e++) {
            char path[4096];
            snprintf(path, sizeof path, "%s/plots/%s.%s", dir, name, exts[e]);
            unlink(path);
        }
    }
}

int output_plots(const char *dir, const plot_options *o, char *err, size_t err_size)
{
    plot_options defaults = { .rewrite_scripts = true, .png = false, .gnuplot = NULL };
    if (!o)
        o = &defaults;
    plot_list before = { 0 }, written = { 0 }, scripts = { 0 };
    /* a link at plots/ would have the stale charts of another folder removed, and the
     * charts written there */
    int status = output_check_inside(dir, "plots", err, err_size);
    if (status == 0)
        status = output_plots_list(dir, "gp", &before, err, err_size);
    if (status == 0 && (o->rewrite_scripts || before.count == 0)) {
        status = plot_timeseries_scripts(dir, &written, err, err_size);
        if (status == 0)
            status = plot_sweep_scripts(dir, o->limits, o->nlimits, &written, err, err_size);
        if (status == 0)
            remove_stale(dir, &before, &written);
    }
    if (status == 0)
        status = output_plots_list(dir, "gp", &scripts, err, err_size);
    if (status == 0 && scripts.count > 0) {
        status = plot_render(dir, &scripts, o->gnuplot, o->png, err, err_size);
        if (status == PLOT_RENDER_NO_GNUPLOT) {
            snprintf(err, err_size, "%s not found: %s/plots/*.gp written; install gnuplot-nox "
                     "(make deps) and run fleetsim plot %s", o->gnuplot ? o->gnuplot : "gnuplot",
                     dir, dir);
            status = OUTPUT_PLOTS_NO_GNUPLOT;
        }
    }
    plot_list_release(&before);
    plot_list_release(&written);
    plot_list_release(&scripts);
    return status;
}
