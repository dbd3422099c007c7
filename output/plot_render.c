#include "output/plot_render.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdbool.h>
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

/* A pipe whose ends no program started later inherits (a forked child that does not
 * exec still holds them): a gnuplot started ahead (warm below) sees the end of its
 * commands only when every copy of the write end is closed. */
static int cloexec_pipe(int fds[2])
{
    if (pipe(fds) != 0)
        return -1;
    fcntl(fds[0], F_SETFD, FD_CLOEXEC);
    fcntl(fds[1], F_SETFD, FD_CLOEXEC);
    return 0;
}

/* Starts gnuplot with argv, its stderr into a pipe (*fd, the read end), its stdin from
 * a pipe (*in, the write end) when in is not NULL, else from /dev/null.  0, or -1 with
 * errno set when it could not start. */
static int spawn_start(const char *program, char **argv, pid_t *pid, int *fd, int *in)
{
    int fds[2], input[2] = { -1, -1 };
    if (cloexec_pipe(fds) != 0)
        return -1;
    if (in && cloexec_pipe(input) != 0) {
        int saved = errno;
        close(fds[0]);
        close(fds[1]);
        errno = saved;
        return -1;
    }
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    if (in)
        posix_spawn_file_actions_adddup2(&actions, input[0], 0);
    else
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_adddup2(&actions, fds[1], 2);
    /* the signal mask of the caller's caller: start_share blocks SIGINT and SIGTERM
     * around the start, which gnuplot must not keep */
    posix_spawnattr_t attributes;
    posix_spawnattr_init(&attributes);
    sigset_t mask;
    if (sigprocmask(SIG_SETMASK, NULL, &mask) == 0) {
        sigdelset(&mask, SIGINT);
        sigdelset(&mask, SIGTERM);
        posix_spawnattr_setsigmask(&attributes, &mask);
        posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSIGMASK);
    }
    int started = posix_spawnp(pid, program, &actions, &attributes, argv, environ);
    posix_spawnattr_destroy(&attributes);
    posix_spawn_file_actions_destroy(&actions);
    close(fds[1]);
    if (in)
        close(input[0]);
    if (started != 0) {
        close(fds[0]);
        if (in)
            close(input[1]);
        errno = started;
        return -1;
    }
    *fd = fds[0];
    if (in)
        *in = input[1];
    return 0;
}

/* What one gnuplot process wrote on stderr, as it comes. */
typedef struct spawn_text {
    char *buf;
    size_t n, cap;
} spawn_text;

/* Reads what is there on fd into t; false at the end (or an error). */
static bool read_some(int fd, spawn_text *t)
{
    if (!t->buf) {
        t->cap = 4096;
        t->buf = malloc(t->cap);
    }
    char scratch[4096];
    char *into = t->buf ? t->buf + t->n : scratch;
    size_t room = t->buf ? t->cap - t->n - 1 : sizeof scratch;
    ssize_t got = read(fd, into, room);
    if (got < 0)
        return errno == EINTR;
    if (got == 0)
        return false;
    if (!t->buf)
        return true; /* out of memory: drained without keeping (the marks are lost) */
    t->n += (size_t)got;
    if (t->cap - t->n < 2) {
        char *grown = sim_array_try_grow(t->buf, &t->cap, t->n + 2, 1, 64u << 20);
        if (grown)
            t->buf = grown;
        else
            t->n = 0; /* over 64 MiB: drain without keeping, not the process */
    }
    return true;
}

/* The gnuplots rendering now.  SIGINT or SIGTERM during a render ends fleetsim (what
 * is being written stays under its temporary name, which the next run into the folder
 * removes), and they go with it: left alone, a script in an endless loop would spin on
 * for ever, and even a sound one would go on writing into the folder.  A signal's
 * handler is process-wide, hence these variables. */
enum { WATCHED_MAX = 8 };
static volatile sig_atomic_t watched[WATCHED_MAX]; /* pids, 0 for none */

static void watch_pid(pid_t pid, bool add)
{
    for (int i = 0; i < WATCHED_MAX; i++)
        if (watched[i] == (add ? 0 : pid)) {
            watched[i] = add ? pid : 0;
            return;
        }
}

static void end_with_the_renders(int sig)
{
    for (int i = 0; i < WATCHED_MAX; i++)
        if (watched[i] > 0)
            kill((pid_t)watched[i], SIGKILL);
    struct sigaction fall = { .sa_handler = SIG_DFL };
    sigemptyset(&fall.sa_mask);
    sigaction(sig, &fall, NULL);
    raise(sig); /* the default action: the exit status says which signal */
}

/* Takes SIGINT and SIGTERM for end_with_the_renders during a render (a signal ignored,
 * as under nohup, stays ignored); `restore` puts the handlers saved back. */
static void watch_renders(struct sigaction saved[2], bool restore)
{
    static const int signals[2] = { SIGINT, SIGTERM };
    struct sigaction take = { .sa_handler = end_with_the_renders };
    sigemptyset(&take.sa_mask);
    for (int i = 0; i < 2; i++) {
        if (!restore)
            sigaction(signals[i], NULL, &saved[i]);
        if (saved[i].sa_handler != SIG_IGN)
            sigaction(signals[i], restore ? &saved[i] : &take, NULL);
    }
}

/* Waits for the process; its exit status. */
static int spawn_wait(pid_t pid)
{
    int status;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR) {
            watch_pid(pid, false);
            return 127;
        }
    watch_pid(pid, false);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static char *text_done(spawn_text *t)
{
    if (t->buf)
        t->buf[t->n] = '\0';
    return t->buf;
}

static int start_share(const char *program, char **argv, pid_t *pid, int *fd);

/* Runs gnuplot with argv (a warm one where one waits: start_share); its stderr into
 * *text (malloc'd).  The exit status, or -1 with errno set when it could not start. */
static int spawn(const char *program, char **argv, char **text)
{
    pid_t pid;
    int fd;
    *text = NULL;
    if (start_share(program, argv, &pid, &fd) != 0)
        return -1;
    spawn_text t = { 0 };
    while (read_some(fd, &t))
        ;
    close(fd);
    *text = text_done(&t);
    return spawn_wait(pid);
}

static bool marked(const char *text, const char *name, const char *ext)
{
    char mark[600];
    snprintf(mark, sizeof mark, DONE_MARK "%s.%s\n", name, ext);
    return text && strstr(text, mark) != NULL;
}

/* Whether a render is whole: gnuplot reports no failed write (a full disk, a file-size
 * limit) and prints its mark after a truncated file as after a whole one, so the file's
 * own end is read: an SVG's closing tag (then only white space), a PNG's IEND chunk. */
static bool render_whole(const char *path, const char *ext)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return false;
    unsigned char tail[64];
    size_t n = 0;
    if (fseek(f, -(long)sizeof tail, SEEK_END) != 0)
        rewind(f); /* shorter than the tail */
    n = fread(tail, 1, sizeof tail, f);
    fclose(f);
    if (!strcmp(ext, "png")) {
        static const unsigned char iend[] = { 'I', 'E', 'N', 'D', 0xae, 0x42, 0x60, 0x82 };
        return n >= sizeof iend && !memcmp(tail + n - sizeof iend, iend, sizeof iend);
    }
    while (n > 0 && (tail[n - 1] == '\n' || tail[n - 1] == '\r' || tail[n - 1] == ' '
                     || tail[n - 1] == '\t'))
        n--;
    return n >= 6 && !memcmp(tail + n - 6, "</svg>", 6);
}

/* Renames the chart's temporary outputs into place when gnuplot finished them all and
 * each is whole, otherwise removes them; whether it was finished.  Paths relative to
 * dir. */
static bool settle(const char *dir, const char *work, const char *name, bool png,
                   const char *text,
                   char *err, size_t err_size, bool *failed)
{
    const char *exts[] = { "svg", "png" };
    bool done = marked(text, name, "svg") && (!png || marked(text, name, "png"));
    for (int i = 0; done && i < (png ? 2 : 1); i++) {
        char temp[800], tpath[4096];
        temp_name(temp, sizeof temp, work, name, exts[i]);
        snprintf(tpath, sizeof tpath, "%s/%s", dir, temp);
        if (!render_whole(tpath, exts[i])) {
            done = false;
            if (!*failed && access(tpath, F_OK) != 0) /* the script chose its own output */
                snprintf(err, err_size, "%s/plots/%s.gp made no %s file where it was "
                         "asked: a chart script takes its terminal and output from the "
                         "variables term and out (set terminal @term; set output out), as "
                         "the scripts fleetsim writes do (or the folder refused the file)",
                         dir, name, exts[i]);
            else if (!*failed)
                snprintf(err, err_size, "cannot write %s/plots/%s.%s: gnuplot's render is "
                         "incomplete (a full disk or a file-size limit?)", dir, name, exts[i]);
            *failed = true;
        }
    }
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

/* The command line that renders charts [from, to) in one gnuplot; 0, or -1 out of
 * memory (a released). */
static int chart_argv(argv_list *a, const char *program, const char *dir, const char *work,
                      const plot_list *names, size_t from, size_t to, bool png)
{
    char line[4200], q[4100];
    snprintf(line, sizeof line, "cd %s", quoted(q, sizeof q, dir));
    int bad = argv_add(a, program) || argv_add(a, "-e") || argv_add(a, line);
    for (size_t i = from; !bad && i < to; i++)
        bad = add_render(a, work, names->names[i], PLOT_TERM_SVG, "svg")
              || (png && add_render(a, work, names->names[i], PLOT_TERM_PNG, "png"));
    if (bad)
        argv_release(a);
    return bad ? -1 : 0;
}

/* A gnuplot's outcome: its exit status (-1: it could not start, errno in saved) and
 * what it wrote on stderr (malloc'd). */
typedef struct run_outcome {
    int status, saved;
    char *text;
} run_outcome;

/* Renders charts [from, to): settles what a gnuplot finished, reports the chart it
 * stopped at and starts another from the next, until every chart had its try.  first,
 * when not NULL, is the outcome of a gnuplot already run over the whole range (taken
 * over).  The first failure's message goes into err; *failed says there was one. */
static int render_range(const char *dir, const char *work, const plot_list *names, size_t from,
                        size_t to, const char *program, bool png, run_outcome *first,
                        char *err, size_t err_size, bool *failed)
{
    size_t next = from;
    while (next < to) {
        run_outcome run;
        if (first) {
            run = *first;
            first = NULL;
        } else {
            argv_list a = { 0 };
            if (chart_argv(&a, program, dir, work, names, next, to, png) != 0) {
                snprintf(err, err_size, "out of memory");
                return -1;
            }
            run.status = spawn(program, a.items, &run.text);
            run.saved = errno;
            argv_release(&a);
        }
        if (run.status < 0) {
            free(run.text);
            if (run.saved == ENOENT)
                return PLOT_RENDER_NO_GNUPLOT;
            snprintf(err, err_size, "cannot run %s: %s", program, strerror(run.saved));
            return -1;
        }
        char note[1024]; /* a message with the folder's path and the chart's name */
        bool rename_failed = false;
        while (next < to
               && settle(dir, work, names->names[next], png, run.text, note, sizeof note,
                         &rename_failed))
            next++;
        if (rename_failed && !*failed) {
            snprintf(err, err_size, "%s", note);
            *failed = true;
        }
        if (next < to) {  /* gnuplot stopped at this chart: report, go on */
            if (!*failed)
                message(err, err_size, dir, names->names[next],
                        run.status == 0 ? NULL : run.text);
            *failed = true;
            next++;
        }
        free(run.text);
    }
    return 0;
}

/* Gnuplot processes at once: one a core, at most RENDER_PROCESSES, and no more than
 * there are charts.  Each renders a contiguous share; the files are the same as one
 * process's. */
enum { RENDER_PROCESSES = 4 };

static size_t render_processes(size_t charts)
{
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    size_t k = cores > 1 ? (size_t)cores : 1;
    if (k > RENDER_PROCESSES)
        k = RENDER_PROCESSES;
    return k < charts ? k : charts;
}

/* ---- gnuplots started ahead --------------------------------------------------------- */

/* A gnuplot's start (about 10 ms: loading its libraries) costs more than a chart.
 * plot_render_warm starts the processes a render will want while the simulation runs,
 * each waiting for its commands on stdin; a render takes one where it would start one,
 * and writes it the same commands as its command line would hold.  A gnuplot reading
 * commands from a pipe goes on after an error where one given them with -e stops, so
 * each command is followed by a check that stops it the same way (the exit status and
 * the marks then read as a started one's would). */
typedef struct warm_process {
    pid_t pid;
    int in, err; /* its commands' pipe (write end), its stderr (read end) */
} warm_process;

static struct {
    warm_process p[RENDER_PROCESSES];
    size_t n;
    pid_t owner;       /* who started them: a forked child does not take its parent's */
    char program[512];
} warm;

/* The commands of a command line (argv: program, then -e COMMAND pairs) as lines to
 * write, each followed by the check; NULL out of memory or past PIPE_BUF bytes (then a
 * fresh gnuplot takes them on its command line).  A write of at most PIPE_BUF bytes
 * into an empty pipe never waits (a pipe holds at least that much, however small the
 * system makes it), so the render never waits on a gnuplot that waits on the render
 * to read its stderr.  Two charts' commands take about 1 KB. */
#define WARM_TEXT_MAX PIPE_BUF
static const char WARM_CHECK[] = "if (GPVAL_ERRNO != 0) { exit status 1 }\n";

static char *warm_text(char **argv, size_t *length)
{
    size_t n = 0;
    for (size_t i = 1; argv[i] && argv[i + 1]; i += 2)
        n += strlen(argv[i + 1]) + 1 + strlen(WARM_CHECK);
    if (n > WARM_TEXT_MAX)
        return NULL;
    char *text = malloc(n + 1), *at = text;
    for (size_t i = 1; text && argv[i] && argv[i + 1]; i += 2)
        at += sprintf(at, "%s\n%s", argv[i + 1], WARM_CHECK);
    *length = n;
    return text;
}

/* Writes all of text to fd, SIGPIPE ignored meanwhile (a gnuplot that died is an
 * error here, not the end of fleetsim); 0, or -1. */
static int write_all(int fd, const char *text, size_t n)
{
    struct sigaction ignore = { .sa_handler = SIG_IGN }, saved;
    sigemptyset(&ignore.sa_mask);
    sigaction(SIGPIPE, &ignore, &saved);
    int status = 0;
    while (n > 0) {
        ssize_t wrote = write(fd, text, n);
        if (wrote < 0 && errno == EINTR)
            continue;
        if (wrote <= 0) {
            status = -1;
            break;
        }
        text += wrote;
        n -= (size_t)wrote;
    }
    sigaction(SIGPIPE, &saved, NULL);
    return status;
}

/* Ends a warm process that will not be used: the end of its commands, then its exit. */
static void warm_end(warm_process *w, bool wait)
{
    close(w->in);  /* the end of its (no) commands: it exits */
    close(w->err); /* unread: it was given nothing to report */
    if (wait)
        while (waitpid(w->pid, NULL, 0) < 0 && errno == EINTR)
            ;
}

void plot_render_cool(void)
{
    bool ours = warm.owner == getpid();
    while (warm.n > 0)
        warm_end(&warm.p[--warm.n], ours); /* a forked child's copies: only closed */
}

size_t plot_render_waiting(void) { return warm.owner == getpid() ? warm.n : 0; }

void plot_render_warm(const char *gnuplot)
{
    const char *program = gnuplot ? gnuplot : "gnuplot";
    plot_render_cool();
    if (strlen(program) >= sizeof warm.program)
        return;
    snprintf(warm.program, sizeof warm.program, "%s", program);
    warm.owner = getpid();
    char *argv[] = { (char *)program, NULL };
    for (size_t k = render_processes(RENDER_PROCESSES); warm.n < k; warm.n++) {
        warm_process *w = &warm.p[warm.n];
        if (spawn_start(program, argv, &w->pid, &w->err, &w->in) != 0)
            break; /* not found, or no process to spare: renders start their own */
    }
}

/* Starts the commands of argv in a gnuplot: one started ahead where there is one (of
 * the same program, this process's), else a new one.  0, or -1 with errno set. */
static int start_unwatched(const char *program, char **argv, pid_t *pid, int *fd)
{
    while (warm.n > 0 && warm.owner == getpid() && !strcmp(warm.program, program)) {
        warm_process w = warm.p[--warm.n];
        size_t n;
        char *text = warm_text(argv, &n);
        bool fed = text && write_all(w.in, text, n) == 0;
        free(text);
        if (!fed) {
            warm_end(&w, true);
            if (!text)
                break; /* too long for the pipe: a command line takes it */
            continue;  /* it died: the next, or a new one */
        }
        close(w.in); /* the end of its commands: it exits after them */
        *pid = w.pid;
        *fd = w.err;
        return 0;
    }
    return spawn_start(program, argv, pid, fd, NULL);
}

/* start_unwatched, the gnuplot then watched: SIGINT and SIGTERM held off from before it
 * is given its charts until it is in the list a signal kills, so that none comes between
 * (spawn_start leaves them unblocked in gnuplot). */
static int start_share(const char *program, char **argv, pid_t *pid, int *fd)
{
    sigset_t block, was;
    sigemptyset(&block);
    sigaddset(&block, SIGINT);
    sigaddset(&block, SIGTERM);
    sigprocmask(SIG_BLOCK, &block, &was);
    int started = start_unwatched(program, argv, pid, fd);
    if (started == 0)
        watch_pid(*pid, true);
    sigprocmask(SIG_SETMASK, &was, NULL);
    return started;
}

/* Starts a gnuplot on each share, reads their stderr as it comes (poll: none can
 * block the others on a full pipe), and waits for them all. */
static int render_shares(const char *dir, const char *work, const plot_list *names,
                         const char *program, bool png, size_t k, const size_t *bounds,
                         run_outcome *out)
{
    pid_t pids[RENDER_PROCESSES];
    struct pollfd fds[RENDER_PROCESSES];
    spawn_text texts[RENDER_PROCESSES];
    for (size_t i = 0; i < k; i++) {
        texts[i] = (spawn_text){ 0 };
        fds[i] = (struct pollfd){ .fd = -1, .events = POLLIN };
        out[i] = (run_outcome){ .status = -1 };
        argv_list a = { 0 };
        if (chart_argv(&a, program, dir, work, names, bounds[i], bounds[i + 1], png) != 0) {
            out[i].saved = ENOMEM;
            continue;
        }
        if (start_share(program, a.items, &pids[i], &fds[i].fd) != 0) {
            out[i].saved = errno;
            fds[i].fd = -1;
        }
        argv_release(&a);
    }
    size_t open = 0;
    for (size_t i = 0; i < k; i++)
        open += fds[i].fd >= 0;
    while (open > 0) {
        if (poll(fds, (nfds_t)k, -1) < 0) {
            if (errno == EINTR)
                continue;
            break;
        }
        for (size_t i = 0; i < k; i++)
            if (fds[i].fd >= 0 && fds[i].revents && !read_some(fds[i].fd, &texts[i])) {
                close(fds[i].fd);
                fds[i].fd = -1; /* poll ignores a negative descriptor */
                open--;
            }
    }
    for (size_t i = 0; i < k; i++) {
        if (fds[i].fd >= 0) { /* poll failed: read the rest in turn */
            while (read_some(fds[i].fd, &texts[i]))
                ;
            close(fds[i].fd);
        }
        if (out[i].saved == 0) {
            out[i].text = text_done(&texts[i]);
            out[i].status = spawn_wait(pids[i]);
        } else {
            free(texts[i].buf);
        }
    }
    return 0;
}

static int render_into(const char *dir, const char *work, const plot_list *names,
                       const char *gnuplot, bool png, char *err, size_t err_size)
{
    const char *program = gnuplot ? gnuplot : "gnuplot";
    bool failed = false;
    size_t k = render_processes(names->count);
    if (k <= 1) {
        int status = render_range(dir, work, names, 0, names->count, program, png, NULL, err,
                                  err_size, &failed);
        return status ? status : failed ? -1 : 0;
    }
    size_t bounds[RENDER_PROCESSES + 1];
    for (size_t i = 0; i <= k; i++)
        bounds[i] = names->count * i / k;
    run_outcome out[RENDER_PROCESSES];
    render_shares(dir, work, names, program, png, k, bounds, out);
    int status = 0;
    for (size_t i = 0; i < k; i++) { /* in order: the first failure is the one reported */
        if (status == 0)
            status = render_range(dir, work, names, bounds[i], bounds[i + 1], program, png,
                                  &out[i], err, err_size, &failed);
        else
            free(out[i].text);
    }
    return status ? status : failed ? -1 : 0;
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
    struct sigaction saved[2];
    watch_renders(saved, false);
    int status = render_into(dir, work, names, gnuplot, png, err, err_size);
    watch_renders(saved, true);
    rmdir(folder); /* every render in it was renamed into place or removed */
    return status;
}
