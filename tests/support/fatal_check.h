/* Tests of the bug path (sim_fatal): the body runs in a child whose stderr is captured,
 * so the expected "fleetsim: fatal: ..." line is checked, not printed into make test's
 * output where it reads like a real crash (issue 18, 13). */
#ifndef FLEETSIM_TESTS_FATAL_CHECK_H
#define FLEETSIM_TESTS_FATAL_CHECK_H

/* Runs body(context) in a child process; asserts that it aborts (SIGABRT) and that its
 * stderr is exactly `message` ("fleetsim: fatal: ...\n"). */
void expect_fatal(void (*body)(void *context), void *context, const char *message);

#endif
