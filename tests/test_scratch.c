/* The test helpers themselves: a child's stderr as the tests judge it holds fleetsim's
 * lines only, whatever a sanitizer runtime printed around them. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

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
    /* its noise goes to the suite's log: it says what it is */
    int status = scratch_run("{ printf '==42==a sanitizer line made by test_scratch.c\\n"
                             "fleetsim: message\\n' >&2; exit 3; }", &out, &err);
    cr_expect_eq(status, 3);
    cr_expect_str_eq(err, "fleetsim: message\n");
    cr_expect_str_eq(out, "");
    free(out);
    free(err);
}
