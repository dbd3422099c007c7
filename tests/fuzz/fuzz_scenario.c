/* libFuzzer harness: a scenario file's text, with --set overrides, through the loader.
 *
 * Leading lines of the input of the form "--set KEY=VALUE" (Lua comments, so a seed stays
 * a valid scenario) become overrides, at most MAX_SETS of them; the whole input is the
 * file.  The file sits in a folder with small traces beside it (trace.csv, nodes.csv,
 * tasks.csv, jobs.csv), so that scenarios naming them reach the trace readers too.  A
 * finding is a crash, a sanitizer report, a leak or a timeout; refusals are expected. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "lua/scenario_load.h"
#include "output/scenario_text.h"
#include "tests/fuzz/fuzz_support.h"

#define MAX_SETS 8
#define MAX_SET_LENGTH 256

static const char trace_csv[] =
    "TIMESTAMP,ContextTokens,GeneratedTokens\n"
    "2023-11-16 18:15:46.6805900,374,44\n"
    "2023-11-16 18:15:50.9951690,396,109\n"
    "2023-11-16 18:15:51.2300000,879,1\n";
static const char nodes_csv[] =
    "sn,cpu_milli,memory_mib,gpu,model\n"
    "n1,96000,786432,8,V100M32\n"
    "n2,64000,262144,2,T4\n";
static const char tasks_csv[] =
    "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,"
    "deletion_time,scheduled_time\n"
    "t1,8000,30000,1,500,,LS,Running,10,400,12\n"
    "t2,4000,1000,2,1000,V100M32,BE,Succeeded,20,900,25\n"
    "t3,1000,500,0,0,,BE,Pending,30,60,\n";
static const char jobs_csv[] = "at_s,gpus,duration_s,priority\n0,4,3600,1\n60,2,600,0\n";

/* The first rows of a shipped trace, as traces/<name> beside the scenario, so that the
 * shipped scenarios load as they are (run from the repository's root). */
static void copy_head(const char *name, int rows)
{
    char from[256], text[65536];
    snprintf(from, sizeof from, "scenarios/traces/%s", name);
    FILE *f = fopen(from, "r");
    size_t n = 0;
    for (int row = 0; f && row < rows && fgets(text + n, (int)(sizeof text - n), f); row++)
        n += strlen(text + n);
    if (f)
        fclose(f);
    char to[256];
    snprintf(to, sizeof to, "traces/%s", name);
    fuzz_write(to, (const uint8_t *)text, n);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    char traces[512];
    snprintf(traces, sizeof traces, "%s/traces", fuzz_work_dir());
    mkdir(traces, 0777);
    copy_head("azure_llm_2023_conv.csv", 200);
    copy_head("azure_llm_2023_code.csv", 200);
    copy_head("openb_node_list_gpu_node.csv", 60);
    copy_head("openb_pod_list_default.csv", 200);
    fuzz_write("trace.csv", (const uint8_t *)trace_csv, sizeof trace_csv - 1);
    fuzz_write("nodes.csv", (const uint8_t *)nodes_csv, sizeof nodes_csv - 1);
    fuzz_write("tasks.csv", (const uint8_t *)tasks_csv, sizeof tasks_csv - 1);
    fuzz_write("jobs.csv", (const uint8_t *)jobs_csv, sizeof jobs_csv - 1);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static char set_text[MAX_SETS][MAX_SET_LENGTH];
    const char *sets[MAX_SETS];
    size_t nsets = 0, at = 0;
    while (nsets < MAX_SETS && size - at > 6 && !memcmp(data + at, "--set ", 6)) {
        const uint8_t *start = data + at + 6;
        const uint8_t *end = memchr(start, '\n', size - at - 6);
        size_t n = end ? (size_t)(end - start) : size - at - 6;
        if (n >= MAX_SET_LENGTH || memchr(start, '\0', n))
            break;
        memcpy(set_text[nsets], start, n);
        set_text[nsets][n] = '\0';
        sets[nsets] = set_text[nsets];
        nsets++;
        at += 6 + n + (end ? 1 : 0);
    }
    const char *path = fuzz_write("scenario.lua", data, size);
    /* the loader alone: no tp trials (each a simulated run) */
    scenario_load_options options = { .sets = sets, .nsets = nsets, .no_tp_trials = true };
    scenario sc;
    experiment_spec spec;
    char err[2048];
    if (scenario_load_experiment(path, &options, &sc, &spec, err, sizeof err) == 0) {
        static FILE *sink;
        if (!sink)
            sink = fopen("/dev/null", "w");
        if (sink)
            output_scenario_text(sink, &sc);
        scenario_release(&sc);
        experiment_load_release(&spec);
    } else if (getenv("FUZZ_VERBOSE")) {
        fprintf(stderr, "%s\n", err);
    }
    return 0;
}
