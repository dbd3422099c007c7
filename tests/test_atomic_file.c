/* Files written whole or not at all (output/atomic_file.h), and never through a link
 * planted in the output folder (issue 17, finding 6). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "output/atomic_file.h"
#include "support/scratch.h"

static char *dir;

static void setup(void) { dir = scratch_dir(); }
static void teardown(void) { scratch_remove_dir(dir); }

TestSuite(atomic_file, .init = setup, .fini = teardown);

static void write_whole(const char *name, const char *text)
{
    char err[512];
    atomic_file *f = atomic_file_open(dir, name, err, sizeof err);
    cr_assert_not_null(f, "%s", err);
    fputs(text, atomic_file_stream(f));
    cr_assert_eq(atomic_file_commit(f, err, sizeof err), 0, "%s", err);
}

static void expect_regular_file(const char *name, const char *text)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    struct stat st;
    cr_assert_eq(lstat(path, &st), 0, "%s", path);
    cr_expect(S_ISREG(st.st_mode), "%s is not a plain file", path);
    char *got = scratch_read(path);
    cr_expect_str_eq(got, text);
    free(got);
}

/* Links at every temporary name this process would try first: none is followed, the
 * file they point to keeps its text, and the result is a plain file. */
Test(atomic_file, a_link_planted_at_the_temporary_name_is_not_followed)
{
    char *victim = scratch_file(dir, "victim", "precious\n");
    for (int k = -1; k < 10; k++) { /* -1: the name an earlier version used */
        char link_path[1024];
        if (k < 0)
            snprintf(link_path, sizeof link_path, "%s/.summary.csv.tmp-%ld", dir,
                     (long)getpid());
        else
            snprintf(link_path, sizeof link_path, "%s/.summary.csv.tmp-%ld-%d", dir,
                     (long)getpid(), k);
        cr_assert_eq(symlink(victim, link_path), 0);
    }
    write_whole("summary.csv", "a,b\n1,2\n");
    char *kept = scratch_read(victim);
    cr_expect_str_eq(kept, "precious\n", "the link's target was written through");
    free(kept);
    expect_regular_file("summary.csv", "a,b\n1,2\n");
    free(victim);
}

/* A link with the final name is replaced, not written through. */
Test(atomic_file, a_link_with_the_final_name_is_replaced)
{
    char *victim = scratch_file(dir, "victim", "precious\n");
    char link_path[1024];
    snprintf(link_path, sizeof link_path, "%s/summary.csv", dir);
    cr_assert_eq(symlink(victim, link_path), 0);
    write_whole("summary.csv", "x\n");
    char *kept = scratch_read(victim);
    cr_expect_str_eq(kept, "precious\n");
    free(kept);
    expect_regular_file("summary.csv", "x\n");
    free(victim);
}

Test(atomic_file, an_aborted_file_leaves_nothing)
{
    char err[512];
    atomic_file *f = atomic_file_open(dir, "t.csv", err, sizeof err);
    cr_assert_not_null(f, "%s", err);
    fputs("half", atomic_file_stream(f));
    atomic_file_abort(f);
    char command[1024];
    snprintf(command, sizeof command, "ls -A '%s'", dir);
    char *out, *errs;
    cr_assert_eq(scratch_run(command, &out, &errs), 0);
    cr_expect_str_eq(out, "", "left: %s", out);
    free(out);
    free(errs);
}

Test(atomic_file, a_missing_folder_is_a_message)
{
    char err[512], missing[1024];
    snprintf(missing, sizeof missing, "%s/none", dir);
    cr_expect_null(atomic_file_open(missing, "s.csv", err, sizeof err));
    cr_expect(strstr(err, "cannot write ") == err && strstr(err, "none/s.csv: No such file"),
              "%s", err);
}
