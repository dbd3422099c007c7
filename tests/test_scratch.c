/* The test helpers themselves: a child's stderr as the tests judge it holds fleetsim's
 * lines only, whatever a sanitizer runtime printed around them. */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "support/scratch.h"

/* The line LeakSanitizer printed before fleetsim's message when a worker died on a
 * loaded machine (issue 24), then a leak report after it. */
Test(scratch, sanitizer_lines_are_taken_out_of_a_childs_stderr)
{
    char text[] =
        "==13076==Unable to get registers from thread 13074.\n"
        "fleetsim: a worker process exited with status 7 while running replication 2\n"
        "\n"
        "=================================================================\n"
        "==13070==ERROR: LeakSanitizer: detected memory leaks\n"
        "\n"
        "Direct leak of 16 byte(s) in 1 object(s) allocated from:\n"
        "    #0 0x7f in malloc\n"
        "\n"
        "SUMMARY: AddressSanitizer: 16 byte(s) leaked in 1 allocation(s).\n"
        "fleetsim: a second line of its own\n";
    char *taken = scratch_take_sanitizer_lines(text);
    cr_expect_str_eq(text, "fleetsim: a worker process exited with status 7 while running "
                           "replication 2\n\nfleetsim: a second line of its own\n");
    cr_expect(strstr(taken, "==13076==Unable to get registers") == taken, "%s", taken);
    cr_expect(strstr(taken, "Direct leak of 16 byte(s)") != NULL, "%s", taken);
    cr_expect(strstr(taken, "SUMMARY: AddressSanitizer: 16 byte(s)") != NULL, "%s", taken);
    free(taken);
}

/* Lines that merely look alike stay: '=' inside a message, "==" without a number. */
Test(scratch, the_programs_own_lines_stay)
{
    char text[] = "a == b\n==x== not a pid\nfleetsim: x = 1\n==\n";
    char *taken = scratch_take_sanitizer_lines(text);
    cr_expect_str_eq(text, "a == b\n==x== not a pid\nfleetsim: x = 1\n==\n");
    cr_expect_str_eq(taken, "");
    free(taken);
}

/* Through a real child: what it wrote on stderr reaches the test without the noise. */
Test(scratch, scratch_run_hands_back_the_programs_lines)
{
    char *out, *err;
    /* its noise goes to this process's stderr (the suite's log, where a sanitizer report
     * is found): caught here in a file, to check it and keep it out of make test */
    char *dir = scratch_dir(), path[512];
    snprintf(path, sizeof path, "%s/stderr", dir);
    fflush(stderr);
    int saved = dup(STDERR_FILENO), fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    cr_assert(saved >= 0 && fd >= 0);
    dup2(fd, STDERR_FILENO);
    int status = scratch_run("{ printf '==42==a sanitizer line made by test_scratch.c\\n"
                             "fleetsim: message\\n' >&2; exit 3; }", &out, &err);
    fflush(stderr);
    dup2(saved, STDERR_FILENO);
    close(saved);
    close(fd);
    char *noise = scratch_read(path);
    cr_expect_eq(status, 3);
    cr_expect_str_eq(err, "fleetsim: message\n");
    cr_expect_str_eq(out, "");
    cr_expect(noise && strstr(noise, "==42==a sanitizer line made by test_scratch.c\n"),
              "the sanitizer's line reached the log: %s", noise ? noise : "(no file)");
    free(noise);
    scratch_remove_dir(dir);
    free(out);
    free(err);
}
