/* `fleetsim version`: the version and what this build can use (CUDA). */
#include <stdio.h>

#include "kernels/cuda_probe.h"
#include "lua/cli.h"
#include "sim/version.h"

int cli_version(int argc, char **argv)
{
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
