/* Whether this build can reach a CUDA device, and a smoke test of one.  Built from
 * cuda_probe.cu when nvcc is found (make CUDA=auto|yes), from cuda_absent.c otherwise,
 * so callers never need #ifdefs. */
#ifndef FLEETSIM_KERNELS_CUDA_PROBE_H
#define FLEETSIM_KERNELS_CUDA_PROBE_H

#include <stdbool.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* True when the build includes the CUDA code. */
bool kernels_cuda_built(void);

/* CUDA runtime version the build was made with, as "13.0", or "none". */
const char *kernels_cuda_runtime_version(void);

/* Number of usable CUDA devices (>= 1), or 0 with the reason in why (no device, no
 * driver, CUDA not built). */
int kernels_cuda_device_count(char *why, size_t why_size);

/* Adds two vectors of n floats on device 0 and checks every element against the host;
 * 0 on success, else -1 with the failing CUDA call and its error string in why. */
int kernels_cuda_selftest(size_t n, char *why, size_t why_size);

#ifdef __cplusplus
}
#endif

#endif
