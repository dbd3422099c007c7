/* Determinism: fresh runs of tests/reference/cases.txt give the bytes of the golden
 * files under tests/reference/ (written by make golden), with one process and with
 * --jobs 2.  A difference means results moved: intended (a model changed: make golden,
 * and say why) or not (a bug). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support/cli.h"
#include "support/scratch.h"

static char *dir;

static void setup(void) { dir = scratch_dir(); }
static void teardown(void) { scratch_remove_dir(dir); }

TestSuite(golden, .init = setup, .fini = teardown, .timeout = 120);

/* The first line where two texts differ, for the message. */
static int first_difference(const char *a, const char *b)
{
    int line = 1;
    for (; *a && *a == *b; a++, b++)
        line += *a == '\n';
    return line;
}

static void expect_same_files(const char *name, const char *out)
{
    static const char *const files[] = { "summary.csv", "timeseries.csv" };
    for (int i = 0; i < 2; i++) {
        char golden_path[512], fresh_path[512];
        snprintf(golden_path, sizeof golden_path, "tests/reference/%s/%s", name, files[i]);
        snprintf(fresh_path, sizeof fresh_path, "%s/%s", out, files[i]);
        char *golden = scratch_read(golden_path), *fresh = scratch_read(fresh_path);
        cr_assert(golden, "%s is missing (make golden)", golden_path);
        cr_assert(fresh, "%s was not written", fresh_path);
        cr_expect(!strcmp(golden, fresh), "%s differs from %s from line %d", fresh_path,
                  golden_path, first_difference(golden, fresh));
        free(golden);
        free(fresh);
    }
}

/* Runs every case with the extra arguments and compares; returns how many ran. */
static int run_cases(const char *extra)
{
    FILE *f = fopen("tests/reference/cases.txt", "r");
    cr_assert(f, "tests/reference/cases.txt is missing");
    char line[1024];
    int cases = 0;
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = '\0';
        if (line[0] == '#' || line[0] == '\0')
            continue;
        char name[128];
        int at = 0;
        cr_assert_eq(sscanf(line, "%127s %n", name, &at), 1);
        char out[512], args[2048], *o = NULL, *e = NULL;
        snprintf(out, sizeof out, "%s/%s", dir, name);
        snprintf(args, sizeof args, "run %s %s -q --no-plots -o %s", line + at, extra, out);
        int status = cli_run(&o, &e, "%s", args);
        cr_expect_eq(status, 0, "%s: %s", args, e);
        free(o);
        free(e);
        if (status == 0)
            expect_same_files(name, out);
        cases++;
    }
    fclose(f);
    return cases;
}

Test(golden, fresh_runs_give_the_golden_bytes) { cr_expect_geq(run_cases(""), 5); }

/* Replications spread over two processes merge to the same bytes as one process. */
Test(golden, two_processes_give_the_golden_bytes) { cr_expect_geq(run_cases("--jobs 2"), 5); }
