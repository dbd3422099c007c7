/* `fleetsim estimate --model-file FILE` (issue 21): catalog entries from a Lua file run in
 * the sandbox, checked as the built-in catalog is, with no scenario. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support/cli.h"
#include "tests/support/scratch.h"

static char *dir;
static char *out, *err;

static void setup(void) { dir = scratch_dir(); out = err = NULL; }
static void teardown(void)
{
    scratch_remove_dir(dir);
    free(out);
    free(err);
}

TestSuite(model_file, .init = setup, .fini = teardown);

/* 4 layers of 512 (8 heads, gated 2048), 32000 tokens, untied: by hand 4 x (4 x 512^2
 * attention + 3 x 512 x 2048 MLP + 2 x 512 norms) + 2 x 32000 x 512 + 512 = 49,549,824 */
Test(model_file, a_custom_model_and_device_need_no_scenario)
{
    char *file = scratch_file(dir, "my.lua",
        "local fs = require \"fleetsim\"\n"
        "fs.models.mine = { layers = 4, hidden = 512, heads = 8, kv_heads = 8, ffn = 2048,\n"
        "                   gated = true, vocab = 32000 }\n"
        "fs.devices[\"my-gpu\"] = { kind = \"gpu\", tflops = { fp32 = 10, fp16 = 100 },\n"
        "  memory = \"16GB\", bandwidth_gbs = 500, idle_w = 20, tdp_w = 200,\n"
        "  scale_up = { devices = 4, gbs = 200 } }\n");
    cr_expect_eq(cli_run(&out, &err, "estimate --model-file %s --model mine --gpu H100-SXM --csv",
                         file), 0, "%s", err);
    cr_expect(strstr(out, "params,49549824,") != NULL, "%s", out);
    cr_expect_eq(cli_run(&out, &err, "estimate --model-file %s --model mine --gpu my-gpu --csv",
                         file), 0, "%s", err);
    cr_expect(strstr(out, "weights_gb,0.0990996") != NULL, "2 bytes a parameter: %s", out);
    /* the built-in catalog is still there beside the file's entries */
    cr_expect_eq(cli_run(&out, &err, "estimate --model-file %s --model llama-3-8b --gpu my-gpu --gpus 2 --tp 2",
                         file), 0, "%s", err);
    free(file);
}

Test(model_file, a_bad_entry_names_the_file_line_key_and_value_and_exits_2)
{
    char *file = scratch_file(dir, "bad.lua",
        "local fs = require \"fleetsim\"\n"
        "fs.devices.g = { kind = \"gpu\", tflops = { fp32 = 1 }, memory = \"lots\",\n"
        "  bandwidth_gbs = 1, idle_w = 1, tdp_w = 2 }\n");
    char expected[1024];
    snprintf(expected, sizeof expected, "fleetsim estimate: --model-file: %s:3: devices.g.memory: "
             "expected a size such as \"80GB\", got \"lots\"\n", file);
    cr_expect_eq(cli_run(&out, &err, "estimate --model-file %s --model llama-3-8b --gpu g", file),
                 2);
    cr_expect_str_eq(err, expected);
    free(file);
    file = scratch_file(dir, "key.lua",
        "local fs = require \"fleetsim\"\n"
        "fs.models.m = { layers = 2, hidden = 64, heads = 4, kv_heads = 4, ffn = 256,\n"
        "  vocab = 100, expert = 8 }\n");
    cr_expect_eq(cli_run(&out, &err, "estimate --model-file %s --model m --gpu T4", file), 2);
    cr_expect(strstr(err, "key.lua:3: models.m") != NULL, "%s", err);
    cr_expect(strstr(err, "experts") != NULL, "did you mean: %s", err);
    free(file);
    /* the sandbox: no os library */
    file = scratch_file(dir, "os.lua", "os.execute(\"true\")\n");
    cr_expect_eq(cli_run(&out, &err, "estimate --model-file %s --model m --gpu T4", file), 2);
    cr_expect(strstr(err, "os.lua:1:") != NULL, "%s", err);
    free(file);
    cr_expect_eq(cli_run(&out, &err, "estimate --model-file %s/none.lua --model m --gpu T4", dir),
                 2);
    cr_expect(strstr(err, "cannot read") != NULL, "%s", err);
}
