#include "output/plot_render.h"

#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sim/array.h"

extern char **environ;

#define DONE_MARK "fleetsim-rendered "

/* The command line of one gnuplot process: -e commands, each its own line (gnuplot
 * expands macros and parses `reset session` line by line). */
typedef struct argv_list {
    char **items;
    size_t count, capacity;
} argv_list;

static int argv_add(argv_list *a, const char *text)
{
    char **grown = sim_array_try_grow(a->items, &a->capacity, a->count + 2, sizeof *grown,
                                      SIZE_MAX);
    if (!grown)
        return -1;
    a->items = grown;
    if (!(a->items[a->count] = strdup(text)))
        return -1;
    a->items[++a->count] = NULL;
    return 0;
}

static void argv_release(argv_list *a)
{
    for (size_t i = 0; i < a->count; i++)
        free(a->items[i]);
    free(a->items);
}

/* text as a gnuplot single-quoted string into buf. */
static const char *quoted(char *buf, size_t size, const char *text)
{
    size_t n = 0;
    if (size < 3)
        return "''";
    buf[n++] = '\'';
    for (const char *p = text; *p && n + 3 < size; p++) {
        if (*p == '\'')
            buf[n++] = '\'';
        buf[n++] = *p;
    }
    buf[n++] = '\'';
    buf[n] = '\0';
    return buf;
}

/* gnuplot writes each render into a folder of this run's own, made by mkdtemp (mode
 * 0700, a fresh name): nothing planted in plots/ beforehand can be at the name gnuplot
 * opens, so it never writes through a link.  work is that folder, relative to the run
 * folder ("plots/.render-XXXXXX"). */
static void temp_name(char *buf, size_t size, const char *work, const char *name,
                      const char *ext)
{
    snprintf(buf, size, "%s/%s.%s", work, name, ext);
}

/* The commands that render one chart to one format. */
static int add_render(argv_list *a, const char *work, const char *name, const char *term,
                      const char *ext)
{
    char line[2048], q[1024], path[700];
    int bad = argv_add(a, "-e") || argv_add(a, "reset session");
    snprintf(line, sizeof line, "term = %s", quoted(q, sizeof q, term));
    bad = bad || argv_add(a, "-e") || argv_add(a, line);
    temp_name(path, sizeof path, work, name, ext);
    snprintf(line, sizeof line, "out = %s", quoted(q, sizeof q, path));
    bad = bad || argv_add(a, "-e") || argv_add(a, line);
    snprintf(path, sizeof path, "plots/%s.gp", name);
    snprintf(line, sizeof line, "load %s", quoted(q, sizeof q, path));
    bad = bad || argv_add(a, "-e") || argv_add(a, line);
    bad = bad || argv_add(a, "-e") || argv_add(a, "set output");
    snprintf(path, sizeof path, DONE_MARK "%s.%s", name, ext);
    snprintf(line, sizeof line, "print %s", quoted(q, sizeof q, path));
    return bad || argv_add(a, "-e") || argv_add(a, line) ? -1 : 0;
}

/* Runs gnuplot with argv; its stderr into *text (malloc'd).  The exit status, or -1
 * with errno set when it could not start. */
static int spawn(const char *program, char **argv, char **text)
{
    int fds[2];
    *text = NULL;
    if (pipe(fds) != 0)
        return -1;
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_adddup2(&actions, fds[1], 2);
    posix_spawn_file_actions_addclose(&actions, fds[0]);
    posix_spawn_file_actions_addclose(&actions, fds[1]);
    pid_t pid;
    int started = posix_spawnp(&pid, program, &actions, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&actions);
    close(fds[1]);
    if (started != 0) {
        close(fds[0]);
        errno = started;
        return -1;
    }
    size_t n = 0, cap = 4096;
    char *buf = malloc(cap);
    ssize_t got;
    while (buf && (got = read(fds[0], buf + n, cap - n - 1)) != 0) {
        if (got < 0) {
            if (errno == EINTR)
                continue;
            break;
        }
        n += (size_t)got;
        if (cap - n < 2) {
            char *grown = sim_array_try_grow(buf, &cap, n + 2, 1, 64u << 20);
            if (!grown) { /* over 64 MiB or out of memory */
                n = 0;  /* drain without keeping: the marks are lost, not the process */
                continue;
            }
            buf = grown;
        }
    }
    close(fds[0]);
    if (buf)
        buf[n] = '\0';
    *text = buf;
    int status;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR)
            return 127;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static bool marked(const char *text, const char *name, const char *ext)
{
    char mark[600];
    snprintf(mark, sizeof mark, DONE_MARK "%s.%s\n", name, ext);
    return text && strstr(text, mark) != NULL;
}

/* Renames the chart's temporary outputs into place when gnuplot finished them all,
 * otherwise removes them; whether it was finished.  Paths relative to dir. */
static bool settle(const char *dir, const char *work, const char *name, bool png,
                   const char *text,
                   char *err, size_t err_size, bool *failed)
{
    const char *exts[] = { "svg", "png" };
    bool done = marked(text, name, "svg") && (!png || marked(text, name, "png"));
    for (int i = 0; i < (png ? 2 : 1); i++) {
        char temp[800], final[800], tpath[4096], fpath[4096];
        temp_name(temp, sizeof temp, work, name, exts[i]);
        snprintf(final, sizeof final, "plots/%s.%s", name, exts[i]);
        snprintf(tpath, sizeof tpath, "%s/%s", dir, temp);
        snprintf(fpath, sizeof fpath, "%s/%s", dir, final);
        if (done && rename(tpath, fpath) != 0 && !*failed) {
            snprintf(err, err_size, "cannot write %s: %s", fpath, strerror(errno));
            *failed = true;
        }
        if (!done)
            unlink(tpath);
    }
    return done;
}

/* gnuplot's message without the marks, trimmed. */
static void message(char *err, size_t err_size, const char *dir, const char *name,
                    const char *text)
{
    size_t n = (size_t)snprintf(err, err_size, "%s/plots/%s.gp: gnuplot failed:", dir, name);
    for (const char *line = text ? text : ""; *line && n + 1 < err_size; ) {
        const char *end = strchr(line, '\n');
        size_t len = end ? (size_t)(end - line) : strlen(line);
        bool blank = strspn(line, " \t") >= len;
        if (!blank && strncmp(line, DONE_MARK, strlen(DONE_MARK)) != 0)
            n += (size_t)snprintf(err + n, err_size - n, "\n%.*s", (int)len, line);
        line += len + (end ? 1 : 0);
    }
}

static int render_into(const char *dir, const char *work, const plot_list *names,
                       const char *gnuplot, bool png, char *err, size_t err_size)
{
    const char *program = gnuplot ? gnuplot : "gnuplot";
    bool failed = false;
    size_t next = 0;
    while (next < names->count) {
        argv_list a = { 0 };
        char line[4200], q[4100];
        snprintf(line, sizeof line, "cd %s", quoted(q, sizeof q, dir));
        int bad = argv_add(&a, program) || argv_add(&a, "-e") || argv_add(&a, line);
        for (size_t i = next; !bad && i < names->count; i++)
            bad = add_render(&a, work, names->names[i], PLOT_TERM_SVG, "svg")
                  || (png && add_render(&a, work, names->names[i], PLOT_TERM_PNG, "png"));
        if (bad) {
            argv_release(&a);
            snprintf(err, err_size, "out of memory");
            return -1;
        }
        char *text;
        int status = spawn(program, a.items, &text);
        int saved = errno;
        argv_release(&a);
        if (status < 0) {
            free(text);
            if (saved == ENOENT)
                return PLOT_RENDER_NO_GNUPLOT;
            snprintf(err, err_size, "cannot run %s: %s", program, strerror(saved));
            return -1;
        }
        char note[256];
        bool rename_failed = false;
        while (next < names->count
               && settle(dir, work, names->names[next], png, text, note, sizeof note,
                         &rename_failed))
            next++;
        if (rename_failed && !failed) {
            snprintf(err, err_size, "%s", note);
            failed = true;
        }
        if (next < names->count) {  /* gnuplot stopped at this chart: report, go on */
            if (!failed)
                message(err, err_size, dir, names->names[next], status == 0 ? NULL : text);
            failed = true;
            next++;
        }
        free(text);
    }
    return failed ? -1 : 0;
}

int plot_render(const char *dir, const plot_list *names, const char *gnuplot, bool png,
                char *err, size_t err_size)
{
    char folder[4096];
    snprintf(folder, sizeof folder, "%s/plots/.render-XXXXXX", dir);
    if (!mkdtemp(folder)) {
        snprintf(err, err_size, "cannot write %s/plots: %s", dir, strerror(errno));
        return -1;
    }
    const char *work = folder + strlen(dir) + 1; /* "plots/.render-..." */
    int status = render_into(dir, work, names, gnuplot, png, err, err_size);
    rmdir(folder); /* every render in it was renamed into place or removed */
    return status;
}
