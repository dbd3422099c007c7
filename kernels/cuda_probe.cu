// The CUDA probe (see cuda_probe.h): device count and a checked vector addition.
#include "kernels/cuda_probe.h"

#include <cstdio>
#include <cstdlib>
#include <vector>

#include <cuda_runtime.h>

// Evaluates a CUDA call; on failure writes "call: error string" into why and returns -1.
#define CUDA_TRY(call)                                                                 \
    do {                                                                               \
        cudaError_t status_ = (call);                                                  \
        if (status_ != cudaSuccess) {                                                  \
            snprintf(why, why_size, "%s: %s", #call, cudaGetErrorString(status_));     \
            return -1;                                                                 \
        }                                                                              \
    } while (0)

extern "C" bool kernels_cuda_built(void) { return true; }

extern "C" const char *kernels_cuda_runtime_version(void)
{
    static char version[16];
    snprintf(version, sizeof version, "%d.%d", CUDART_VERSION / 1000,
             (CUDART_VERSION % 1000) / 10);
    return version;
}

extern "C" int kernels_cuda_device_count(char *why, size_t why_size)
{
    int count = 0;
    cudaError_t status = cudaGetDeviceCount(&count);
    if (status != cudaSuccess) {
        snprintf(why, why_size, "cudaGetDeviceCount: %s", cudaGetErrorString(status));
        return 0;
    }
    if (count == 0)
        snprintf(why, why_size, "no CUDA device");
    return count;
}

__global__ static void add_vectors(const float *a, const float *b, float *sum, size_t n)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n)
        sum[i] = a[i] + b[i];
}

// Frees device buffers on every path out of the self-test.
struct device_buffers {
    float *a = nullptr, *b = nullptr, *sum = nullptr;
    ~device_buffers() { cudaFree(a); cudaFree(b); cudaFree(sum); }
};

extern "C" int kernels_cuda_selftest(size_t n, char *why, size_t why_size)
{
    std::vector<float> a(n), b(n), sum(n);
    for (size_t i = 0; i < n; i++) {
        a[i] = (float)i;
        b[i] = 0.5f * (float)(n - i);
    }
    size_t bytes = n * sizeof(float);
    device_buffers d;
    CUDA_TRY(cudaSetDevice(0));
    CUDA_TRY(cudaMalloc(&d.a, bytes));
    CUDA_TRY(cudaMalloc(&d.b, bytes));
    CUDA_TRY(cudaMalloc(&d.sum, bytes));
    CUDA_TRY(cudaMemcpy(d.a, a.data(), bytes, cudaMemcpyHostToDevice));
    CUDA_TRY(cudaMemcpy(d.b, b.data(), bytes, cudaMemcpyHostToDevice));
    unsigned threads = 256;
    unsigned blocks = (unsigned)((n + threads - 1) / threads);
    add_vectors<<<blocks, threads>>>(d.a, d.b, d.sum, n);
    CUDA_TRY(cudaGetLastError());
    CUDA_TRY(cudaMemcpy(sum.data(), d.sum, bytes, cudaMemcpyDeviceToHost));
    for (size_t i = 0; i < n; i++) {
        if (sum[i] != a[i] + b[i]) {
            snprintf(why, why_size, "element %zu: device gave %g, host %g", i,
                     (double)sum[i], (double)(a[i] + b[i]));
            return -1;
        }
    }
    return 0;
}
