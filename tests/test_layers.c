/* The layers (README.md, "Layout"): no file includes a header from a higher layer, and
 * models/ has no include cycle; tests/layers.sh checks both, and fails on a tree that
 * breaks either. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "support/scratch.h"

static char *dir, *out, *err;

static void setup(void) { dir = scratch_dir(); out = err = NULL; }
static void teardown(void)
{
    scratch_remove_dir(dir);
    free(out);
    free(err);
}

TestSuite(layers, .init = setup, .fini = teardown);

static int check(const char *root)
{
    char command[1024];
    snprintf(command, sizeof command, "sh tests/layers.sh '%s'", root);
    free(out), free(err);
    return scratch_run(command, &out, &err);
}

/* A small tree of the five layers whose files include downwards only. */
static void write_tree(void)
{
    const char *folders[] = { "sim", "models", "kernels", "output", "lua" };
    char path[1024];
    for (int i = 0; i < 5; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, folders[i]);
        cr_assert_eq(mkdir(path, 0777), 0);
    }
    free(scratch_file(dir, "sim/engine.h", "#include <stdio.h>\n"));
    free(scratch_file(dir, "models/a.h", "#include \"sim/engine.h\"\n"));
    free(scratch_file(dir, "models/a.c", "#include \"models/a.h\"\n#include \"models/b.h\"\n"));
    free(scratch_file(dir, "models/b.h", "#include \"sim/engine.h\"\n"));
    free(scratch_file(dir, "kernels/k.c", "#include \"models/a.h\"\n"));
    free(scratch_file(dir, "output/o.c", "#include \"kernels/k.h\"\n#include \"models/a.h\"\n"));
    free(scratch_file(dir, "lua/cli.c", "#include \"output/o.h\"\n"));
}

Test(layers, the_projects_tree_keeps_them)
{
    cr_expect_eq(check("."), 0, "%s%s", out, err);
}

Test(layers, a_tree_that_keeps_them_passes)
{
    write_tree();
    cr_expect_eq(check(dir), 0, "%s%s", out, err);
}

Test(layers, an_include_from_a_higher_layer_fails_with_its_line)
{
    write_tree();
    free(scratch_file(dir, "kernels/k.c", "#include \"models/a.h\"\n#include \"lua/catalog.h\"\n"));
    cr_expect_eq(check(dir), 1);
    cr_expect(strstr(out, "kernels/k.c:2: includes from lua/, a higher layer than kernels/")
              != NULL, "%s", out);
}

Test(layers, an_include_cycle_in_models_fails)
{
    write_tree();
    free(scratch_file(dir, "models/b.c", "#include \"models/b.h\"\n#include \"models/a.h\"\n"));
    cr_expect_eq(check(dir), 1);
    cr_expect(strstr(out, "include each other in a cycle") != NULL, "%s", out);
}
