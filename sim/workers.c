/* Forked workers and their pipes (see workers.h).
 *
 * Each worker has two pipes: tasks (parent to worker: a task number) and results
 * (worker to parent: task number, size, bytes).  Closing a worker's task pipe tells it
 * to exit.  A child closes the pipe ends of the workers forked before it, so each
 * worker sees the end of its own task pipe only when the parent closes it.
 */
#define _DEFAULT_SOURCE /* kill, strsignal */
#include "sim/workers.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sim/fatal.h"
#include "sim/interrupt.h"

typedef struct worker {
    pid_t pid;
    int task_fd;    /* parent writes; -1 once closed */
    int result_fd;  /* parent reads; -1 once closed */
    size_t task;    /* the task it is running */
    bool busy;
} worker;

typedef struct pending {
    unsigned char *data;
    size_t size;
    bool ready;
} pending;

/* Whole reads and writes: 1 done, 0 end of file before any byte, -1 error or cut short. */
static int read_all(int fd, void *buf, size_t n)
{
    size_t got = 0;
    while (got < n) {
        ssize_t r = read(fd, (char *)buf + got, n - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return r == 0 && got == 0 ? 0 : -1;
        got += (size_t)r;
    }
    return 1;
}

static int write_all(int fd, const void *buf, size_t n)
{
    size_t done = 0;
    while (done < n) {
        ssize_t w = write(fd, (const char *)buf + done, n - done);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        done += (size_t)w;
    }
    return 0;
}

static void close_fd(int *fd)
{
    if (*fd >= 0)
        close(*fd);
    *fd = -1;
}

/* The worker's life: tasks in, results out, until its task pipe closes. */
static _Noreturn void worker_main(int task_fd, int result_fd, sim_task_run_fn run,
                                  sim_task_exit_fn worker_exit, void *context)
{
    uint64_t task;
    int got;
    while ((got = read_all(task_fd, &task, sizeof task)) == 1) {
        sim_wire result = { 0 };
        run(context, (size_t)task, &result);
        uint64_t header[2] = { task, result.size };
        if (write_all(result_fd, header, sizeof header) != 0
            || write_all(result_fd, result.data, result.size) != 0)
            _exit(3); /* the parent stopped listening */
        sim_wire_release(&result);
    }
    if (worker_exit)
        worker_exit(context);
    _exit(got == 0 ? 0 : 3);
}

static void name_task(sim_task_describe_fn describe, void *context, size_t task, char *buf,
                      size_t size)
{
    if (describe)
        describe(context, task, buf, size);
    else
        snprintf(buf, size, "task %zu", task);
}

/* "died from signal 9 (Killed)", "exited with status 3". */
static void describe_exit(int status, char *buf, size_t size)
{
    if (WIFSIGNALED(status))
        snprintf(buf, size, "died from signal %d (%s)", WTERMSIG(status),
                 strsignal(WTERMSIG(status)));
    else if (WIFEXITED(status))
        snprintf(buf, size, "exited with status %d", WEXITSTATUS(status));
    else
        snprintf(buf, size, "stopped");
}

static pid_t reap(pid_t pid, int *status)
{
    pid_t r;
    while ((r = waitpid(pid, status, 0)) < 0 && errno == EINTR)
        ;
    return r;
}

static int start_workers(worker *w, unsigned n, sim_task_run_fn run,
                         sim_task_exit_fn worker_exit, void *context, char *err,
                         size_t err_size)
{
    fflush(NULL); /* a child must not write the parent's buffered output again */
    for (unsigned i = 0; i < n; i++) {
        int tasks[2], results[2];
        if (pipe(tasks) != 0) {
            snprintf(err, err_size, "cannot start worker processes: %s", strerror(errno));
            return -1;
        }
        if (pipe(results) != 0) {
            snprintf(err, err_size, "cannot start worker processes: %s", strerror(errno));
            close(tasks[0]);
            close(tasks[1]);
            return -1;
        }
        pid_t pid = fork();
        if (pid < 0) {
            snprintf(err, err_size, "cannot start worker processes: %s", strerror(errno));
            close(tasks[0]), close(tasks[1]), close(results[0]), close(results[1]);
            return -1;
        }
        if (pid == 0) {
            for (unsigned j = 0; j < i; j++) {
                close_fd(&w[j].task_fd);
                close_fd(&w[j].result_fd);
            }
            close(tasks[1]);
            close(results[0]);
            signal(SIGPIPE, SIG_DFL);
            sim_interrupt_reset_in_child();
            worker_main(tasks[0], results[1], run, worker_exit, context);
        }
        close(tasks[0]);
        close(results[1]);
        w[i] = (worker){ pid, tasks[1], results[0], 0, false };
    }
    return 0;
}

/* A round of tasks in progress. */
typedef struct task_round {
    worker *w;
    unsigned n;
    size_t ntasks, next_task, next_merge;
    pending *results;
    sim_task_describe_fn describe;
    void *context;
    char *err;
    size_t err_size;
    sim_tasks_status status;
} task_round;

/* Worker i is gone (its pipe broke or ended early): waits for it and says how. */
static void worker_lost(task_round *r, unsigned i, const char *when)
{
    char what[256], how[128];
    int st = 0;
    close_fd(&r->w[i].task_fd);
    close_fd(&r->w[i].result_fd);
    reap(r->w[i].pid, &st);
    r->w[i].pid = -1;
    r->w[i].busy = false;
    name_task(r->describe, r->context, r->w[i].task, what, sizeof what);
    describe_exit(st, how, sizeof how);
    snprintf(r->err, r->err_size, "a worker process %s %s %s", how, when, what);
    r->status = SIM_TASKS_WORKER_FAILED;
}

/* Hands worker i the next task, or closes its task pipe when none is left. */
static void dispatch(task_round *r, unsigned i)
{
    worker *w = &r->w[i];
    if (r->next_task >= r->ntasks) {
        w->busy = false;
        close_fd(&w->task_fd);
        return;
    }
    uint64_t t = r->next_task;
    w->task = r->next_task++;
    w->busy = true;
    if (write_all(w->task_fd, &t, sizeof t) != 0)
        worker_lost(r, i, "before");
}

/* Reads worker i's result (it is ready to be read) and gives it its next task. */
static void receive(task_round *r, unsigned i)
{
    worker *w = &r->w[i];
    uint64_t header[2];
    unsigned char *data = NULL;
    bool whole = read_all(w->result_fd, header, sizeof header) == 1 && header[0] == w->task
                 && header[1] < ((uint64_t)1 << 40);
    if (whole && header[1] > 0) {
        if (!(data = malloc((size_t)header[1])))
            sim_out_of_memory("out of memory receiving a result of %llu bytes",
                      (unsigned long long)header[1]);
        whole = read_all(w->result_fd, data, (size_t)header[1]) == 1;
    }
    if (!whole) {
        free(data);
        worker_lost(r, i, "while running");
        return;
    }
    r->results[w->task] = (pending){ data, (size_t)header[1], true };
    dispatch(r, i);
}

/* Merges the results that are next in task order. */
static void merge_ready(task_round *r, sim_task_merge_fn merge)
{
    while (r->status == SIM_TASKS_OK && r->next_merge < r->ntasks
           && r->results[r->next_merge].ready) {
        pending *p = &r->results[r->next_merge];
        if (merge(r->context, r->next_merge, p->data, p->size, r->err, r->err_size) != 0)
            r->status = SIM_TASKS_MERGE_FAILED;
        free(p->data);
        *p = (pending){ NULL, 0, false };
        r->next_merge++;
    }
}

/* Closes every pipe and waits for every worker; a worker still running when the round
 * stopped early is killed. */
static void finish(task_round *r)
{
    char how[128];
    for (unsigned i = 0; i < r->n; i++) {
        worker *w = &r->w[i];
        close_fd(&w->task_fd);
        close_fd(&w->result_fd);
        if (w->pid <= 0)
            continue;
        if (r->status != SIM_TASKS_OK)
            kill(w->pid, SIGKILL);
        int st = 0;
        reap(w->pid, &st);
        if (r->status == SIM_TASKS_OK && !(WIFEXITED(st) && WEXITSTATUS(st) == 0)) {
            describe_exit(st, how, sizeof how);
            snprintf(r->err, r->err_size, "a worker process %s after its last task", how);
            r->status = SIM_TASKS_WORKER_FAILED;
        }
    }
}

sim_tasks_status sim_workers_run(unsigned jobs, size_t ntasks, sim_task_describe_fn describe,
                                 sim_task_exit_fn worker_exit, sim_task_run_fn run,
                                 sim_task_merge_fn merge, void *context, char *err,
                                 size_t err_size)
{
    unsigned n = jobs < ntasks ? jobs : (unsigned)ntasks;
    task_round r = { calloc(n + 1, sizeof *r.w), n, ntasks, 0, 0, calloc(ntasks + 1, sizeof *r.results),
                describe, context, err, err_size, SIM_TASKS_OK };
    struct pollfd *fds = calloc(n + 1, sizeof *fds);
    unsigned *which = calloc(n + 1, sizeof *which);
    if (!r.w || !r.results || !fds || !which)
        sim_out_of_memory("out of memory starting %u workers", n);
    for (unsigned i = 0; i < n; i++)
        r.w[i] = (worker){ -1, -1, -1, 0, false };
    /* A worker that dies must not kill the parent when it writes to its pipe. */
    struct sigaction ignore = { .sa_handler = SIG_IGN }, saved;
    sigemptyset(&ignore.sa_mask);
    sigaction(SIGPIPE, &ignore, &saved);

    sim_interrupt_defer(true); /* a signal is forwarded to the workers below */
    if (start_workers(r.w, n, run, worker_exit, context, err, err_size) != 0)
        r.status = SIM_TASKS_WORKER_FAILED;
    for (unsigned i = 0; i < n && r.status == SIM_TASKS_OK; i++)
        dispatch(&r, i);
    while (r.status == SIM_TASKS_OK && r.next_merge < ntasks) {
        int sig = sim_interrupt_signal();
        if (sig) { /* forwarded; finish() then reaps them */
            for (unsigned i = 0; i < n; i++)
                if (r.w[i].pid > 0)
                    kill(r.w[i].pid, sig);
            snprintf(err, err_size, "interrupted by %s", sim_interrupt_name(sig));
            r.status = SIM_TASKS_WORKER_FAILED;
            break;
        }
        unsigned nfds = 0;
        for (unsigned i = 0; i < n; i++)
            if (r.w[i].busy) {
                fds[nfds] = (struct pollfd){ .fd = r.w[i].result_fd, .events = POLLIN };
                which[nfds++] = i;
            }
        if (nfds == 0)
            sim_fatal("workers: task %zu is neither running nor done", r.next_merge);
        if (poll(fds, nfds, -1) < 0) {
            if (errno == EINTR)
                continue;
            snprintf(err, err_size, "waiting for worker processes: %s", strerror(errno));
            r.status = SIM_TASKS_WORKER_FAILED;
            break;
        }
        for (unsigned k = 0; k < nfds && r.status == SIM_TASKS_OK; k++)
            if (fds[k].revents)
                receive(&r, which[k]);
        merge_ready(&r, merge);
    }
    finish(&r);
    sim_interrupt_defer(false);
    sigaction(SIGPIPE, &saved, NULL);
    for (size_t t = 0; t < ntasks; t++)
        free(r.results[t].data);
    free(r.results);
    free(fds);
    free(which);
    free(r.w);
    return r.status;
}
