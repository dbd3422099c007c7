// Shared by the CUDA calibration's two files (calib_cuda.cu, calib_cuda_blas.cu): the
// context of a run, checked calls and timing.  C++ (nvcc) only.
#ifndef FLEETSIM_KERNELS_CALIB_CUDA_INTERNAL_H
#define FLEETSIM_KERNELS_CALIB_CUDA_INTERNAL_H

#include <cmath>
#include <cstdio>
#include <vector>

#include <cuda_runtime.h>

#include "kernels/calib_bench.h"
#include "kernels/calib_fit.h"

struct cuda_ctx {
    const calib_options *o;
    calib_samples *out;
    char *err;
    size_t err_size;
    int device;
    cudaDeviceProp prop;
    unsigned repeats;
    double target_s; // per repeat: enough launches to dwarf the events' resolution
};

// Evaluates a CUDA runtime call; on failure writes "call: error string" and returns -1.
#define CUDA_TRY(c, call)                                                              \
    do {                                                                               \
        cudaError_t status_ = (call);                                                  \
        if (status_ != cudaSuccess) {                                                  \
            snprintf((c)->err, (c)->err_size, "%s: %s", #call,                         \
                     cudaGetErrorString(status_));                                     \
            return -1;                                                                 \
        }                                                                              \
    } while (0)

// Device memory freed on every path out.
struct device_buffer {
    void *p = nullptr;
    ~device_buffer() { if (p) cudaFree(p); }
};

struct event_pair {
    cudaEvent_t start = nullptr, stop = nullptr;
    ~event_pair() {
        if (start) cudaEventDestroy(start);
        if (stop) cudaEventDestroy(stop);
    }
};

// Appends one sample; -1 (with a message) when out of memory.
int cuda_sample(cuda_ctx *c, const char *kind, const char *precision, unsigned threads,
                double m, double n, double k, double size_bytes, double bytes, double flops,
                unsigned repeat, double seconds);

// Times op() (which launches work on the legacy stream and returns 0, or -1 with a
// message) with CUDA events: a warm-up sizes the inner loop to about c->target_s, then
// c->repeats repeats of that many calls; seconds per call in *seconds.
template <typename Op> int cuda_time(cuda_ctx *c, Op op, std::vector<double> *seconds)
{
    event_pair ev;
    CUDA_TRY(c, cudaEventCreate(&ev.start));
    CUDA_TRY(c, cudaEventCreate(&ev.stop));
    for (int i = 0; i < 2; i++) // the first call may pay for lazy loading and heuristics
        if (op() != 0)
            return -1;
    CUDA_TRY(c, cudaEventRecord(ev.start, 0));
    if (op() != 0)
        return -1;
    CUDA_TRY(c, cudaEventRecord(ev.stop, 0));
    CUDA_TRY(c, cudaEventSynchronize(ev.stop));
    float ms = 0;
    CUDA_TRY(c, cudaEventElapsedTime(&ms, ev.start, ev.stop));
    double once = std::fmax(ms * 1e-3, 1e-7);
    unsigned inner = (unsigned)std::fmax(1, std::fmin(10000, std::ceil(c->target_s / once)));
    seconds->clear();
    for (unsigned r = 0; r < c->repeats; r++) {
        CUDA_TRY(c, cudaEventRecord(ev.start, 0));
        for (unsigned i = 0; i < inner; i++)
            if (op() != 0)
                return -1;
        CUDA_TRY(c, cudaEventRecord(ev.stop, 0));
        CUDA_TRY(c, cudaEventSynchronize(ev.stop));
        CUDA_TRY(c, cudaEventElapsedTime(&ms, ev.start, ev.stop));
        seconds->push_back(ms * 1e-3 / inner);
    }
    return 0;
}

// The median of a series, for progress lines.
double cuda_median(std::vector<double> v);

// A progress line on the calibration's progress stream (none when it is NULL).
void cuda_progress(const cuda_ctx *c, const char *format, ...)
    __attribute__((format(printf, 2, 3)));

// cuBLAS GEMM (fp16, bf16, int8; fp8 through cuBLASLt from compute capability 8.9) over
// decode-like shapes and squares.
int calib_cuda_gemm(cuda_ctx *c);

// NCCL all-reduce over message sizes on every device (>= 2); a note and 0 when NCCL
// cannot be loaded.
int calib_cuda_allreduce(cuda_ctx *c, int devices);

#endif
