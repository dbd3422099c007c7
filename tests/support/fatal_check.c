/* expect_fatal (see fatal_check.h). */
#include "fatal_check.h"

#include <criterion/criterion.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

void expect_fatal(void (*body)(void *context), void *context, const char *message)
{
    int pipe_fds[2];
    cr_assert_eq(pipe(pipe_fds), 0);
    fflush(NULL);
    pid_t child = fork();
    cr_assert_neq(child, -1);
    if (child == 0) {
        close(pipe_fds[0]);
        dup2(pipe_fds[1], STDERR_FILENO);
        signal(SIGABRT, SIG_DFL);
        body(context);
        _exit(0); /* the body returned: no abort, which the parent reports */
    }
    close(pipe_fds[1]);
    char text[4096];
    size_t used = 0;
    ssize_t got;
    while (used + 1 < sizeof text && (got = read(pipe_fds[0], text + used, sizeof text - 1 - used)) > 0)
        used += (size_t)got;
    text[used] = 0;
    close(pipe_fds[0]);
    int status = 0;
    cr_assert_eq(waitpid(child, &status, 0), child);
    cr_expect(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT,
              "expected an abort, got status %d; stderr: %s", status, text);
    /* a sanitizer build may add its own report after the line: compare the line */
    cr_expect(!strncmp(text, message, strlen(message)), "stderr: %s\nexpected: %s", text,
              message);
}
