/* The CUDA probe of a build without nvcc (see cuda_probe.h). */
#include "kernels/cuda_probe.h"

#include <stdio.h>

bool kernels_cuda_built(void) { return false; }

const char *kernels_cuda_runtime_version(void) { return "none"; }

int kernels_cuda_device_count(char *why, size_t why_size)
{
    snprintf(why, why_size, "built without CUDA (no nvcc found; see make CUDA=yes)");
    return 0;
}

int kernels_cuda_selftest(size_t n, char *why, size_t why_size)
{
    (void)n;
    snprintf(why, why_size, "built without CUDA");
    return -1;
}
