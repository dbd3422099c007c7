/* `fleetsim version`: the version and what this build can use (CUDA). */
#include <stdio.h>

#include "kernels/cuda_probe.h"
#include "lua/cli.h"
#include "sim/version.h"

int cli_version(int argc, char **argv)
{
    if (argc > 2) {
        fprintf(stderr, "fleetsim %s: takes no arguments, got '%s'\n", argv[1], argv[2]);
        return CLI_EXIT_BAD_INPUT;
    }
    char why[256] = "";
    printf("fleetsim %s\n", FLEETSIM_VERSION);
    if (!kernels_cuda_built()) {
        printf("cuda: not built\n");
        return 0;
    }
    int devices = kernels_cuda_device_count(why, sizeof why);
    printf("cuda: runtime %s, ", kernels_cuda_runtime_version());
    if (devices > 0)
        printf("%d device%s\n", devices, devices == 1 ? "" : "s");
    else
        printf("no device (%s)\n", why);
    return 0;
}
