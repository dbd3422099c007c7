/* `fleetsim estimate` speed: every catalog model on every catalog device, in process,
 * and one whole command (start, catalog load, analysis, output). */
#include <stdio.h>
#include <stdlib.h>

#include "bench.h"
#include "lua/catalog.h"
#include "models/estimate.h"

#ifndef FLEETSIM_BIN
#define FLEETSIM_BIN "build/fleetsim"
#endif

void bench_estimate_table(int quick)
{
    (void)quick;
    catalog cat;
    char err[512];
    if (catalog_load(&cat, err, sizeof err) != 0) {
        printf("WARNING: %s\n", err);
        return;
    }
    double start = bench_now_s();
    size_t pairs = 0;
    for (size_t i = 0; i < cat.nmodels; i++) {
        for (size_t j = 0; j < cat.ndevices; j++) {
            estimate_request req = { .gpus = 8, .prec = PREC_FP16, .batch = 8, .prompt = 512,
                                     .output = 256 };
            estimate_result r;
            estimate_run(&cat.models[i], &cat.devices[j], &req, &r, err, sizeof err);
            pairs++;
        }
    }
    double in_process = (bench_now_s() - start) / (double)pairs;
    catalog_release(&cat);
    char command[256];
    snprintf(command, sizeof command, "%s estimate --model llama-3.1-405b --gpu H100-SXM "
             "--gpus 16384 > /dev/null", FLEETSIM_BIN);
    start = bench_now_s();
    int status = system(command);
    double whole = bench_now_s() - start;
    printf("fleetsim estimate: %zu model-device pairs\n", pairs);
    printf("  per estimate, in process      %.3g ms\n", 1e3 * in_process);
    printf("  one whole command (405B, 16,384 GPUs)  %.3g ms%s\n", 1e3 * whole,
           status ? "  WARNING: the command failed" : "");
}
