// The CUDA device's micro-kernels (see calib_bench.h): memory bandwidth, FMA chains,
// launch latency and host-device copies; GEMM and all-reduce are in calib_cuda_blas.cu.
#include "kernels/calib_cuda_internal.h"

#include <algorithm>
#include <cstdarg>
#include <chrono>
#include <cstdlib>
#include <cstring>

#include <cuda_bf16.h>
#include <cuda_fp16.h>

int cuda_sample(cuda_ctx *c, const char *kind, const char *precision, unsigned threads,
                double m, double n, double k, double size_bytes, double bytes, double flops,
                unsigned repeat, double seconds)
{
    calib_sample s;
    memset(&s, 0, sizeof s);
    snprintf(s.kind, sizeof s.kind, "%s", kind);
    snprintf(s.precision, sizeof s.precision, "%s", precision);
    s.threads = threads;
    s.m = m, s.n = n, s.k = k;
    s.size_bytes = size_bytes, s.bytes = bytes, s.flops = flops;
    s.repeat = repeat;
    s.seconds = seconds;
    if (calib_samples_add(c->out, &s) != 0) {
        snprintf(c->err, c->err_size, "out of memory for samples");
        return -1;
    }
    return 0;
}

double cuda_median(std::vector<double> v)
{
    return calib_median(v.data(), v.size(), nullptr);
}

void cuda_progress(const cuda_ctx *c, const char *format, ...)
{
    if (!c->o->progress)
        return;
    va_list args;
    va_start(args, format);
    vfprintf(c->o->progress, format, args);
    va_end(args);
}

// ---- memory bandwidth -------------------------------------------------------------------

__global__ static void copy_kernel(float4 *__restrict__ to, const float4 *__restrict__ from,
                                   size_t n)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        to[i] = from[i];
}

__global__ static void triad_kernel(float4 *__restrict__ a, const float4 *__restrict__ b,
                                    const float4 *__restrict__ cc, float scalar, size_t n)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x) {
        float4 x = b[i], y = cc[i];
        a[i] = make_float4(x.x + scalar * y.x, x.y + scalar * y.y, x.z + scalar * y.z,
                           x.w + scalar * y.w);
    }
}

static int bandwidth(cuda_ctx *c)
{
    size_t free_bytes = 0, total = 0;
    CUDA_TRY(c, cudaMemGetInfo(&free_bytes, &total));
    // bytes per array, 4 KB to 4 GB: three arrays within 80% of free memory
    size_t largest = 4ull << 30;
    while (largest > 4096 && 3.0 * largest > 0.8 * free_bytes)
        largest /= 2;
    device_buffer a, b, d;
    CUDA_TRY(c, cudaMalloc(&a.p, largest));
    CUDA_TRY(c, cudaMalloc(&b.p, largest));
    CUDA_TRY(c, cudaMalloc(&d.p, largest));
    CUDA_TRY(c, cudaMemset(a.p, 0, largest));
    CUDA_TRY(c, cudaMemset(b.p, 0, largest));
    CUDA_TRY(c, cudaMemset(d.p, 0, largest));
    unsigned step = c->o->quick ? 16 : 4;
    int max_blocks = c->prop.multiProcessorCount * 32;
    std::vector<double> seconds;
    for (int kernel = 0; kernel < 2; kernel++) {
        for (size_t size = 4096; size <= largest; size *= step) {
            size_t n4 = size / sizeof(float4);
            int blocks = (int)std::min<size_t>((n4 + 255) / 256, (size_t)max_blocks);
            auto op = [&]() -> int {
                if (kernel == 0)
                    copy_kernel<<<blocks, 256>>>((float4 *)d.p, (const float4 *)a.p, n4);
                else
                    triad_kernel<<<blocks, 256>>>((float4 *)a.p, (const float4 *)b.p,
                                                  (const float4 *)d.p, 0.5f, n4);
                CUDA_TRY(c, cudaGetLastError());
                return 0;
            };
            if (cuda_time(c, op, &seconds) != 0)
                return -1;
            double moved = (kernel == 0 ? 2.0 : 3.0) * (double)size;
            for (unsigned r = 0; r < seconds.size(); r++)
                if (cuda_sample(c, kernel == 0 ? "copy" : "triad", "fp32", 1, 0, 0, 0,
                                (double)size, moved, 0, r, seconds[r]) != 0)
                    return -1;
            cuda_progress(c, "  %-5s %12zu KB  %10.1f GB/s\n", kernel == 0 ? "copy" : "triad",
                          size >> 10, moved / cuda_median(seconds) / 1e9);
        }
    }
    return 0;
}

// ---- FMA chains -------------------------------------------------------------------------

constexpr int FMA_CHAINS = 8;   // independent chains per thread: enough to fill the pipes
constexpr int FMA_STEPS = 1024; // dependent steps per chain

__device__ static inline float fma_step(float a, float b, float c) { return fmaf(a, b, c); }
__device__ static inline __half2 fma_step(__half2 a, __half2 b, __half2 c) { return __hfma2(a, b, c); }
__device__ static inline __nv_bfloat162 fma_step(__nv_bfloat162 a, __nv_bfloat162 b,
                                                 __nv_bfloat162 c)
{
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 800
    return __hfma2(a, b, c);
#else // no bf16 arithmetic before sm_80: in fp32 (a build for the H200 uses sm_90)
    float2 x = __bfloat1622float2(a), y = __bfloat1622float2(b), z = __bfloat1622float2(c);
    return __floats2bfloat162_rn(fmaf(x.x, y.x, z.x), fmaf(x.y, y.y, z.y));
#endif
}

// Each step is one FMA per chain (two FLOPs, four for the packed types).  The sum is
// stored only when `store` is set, which the host never does, but the compiler cannot
// know: it keeps the chains.
template <typename T> __global__ static void fma_kernel(T *sink, T x, T y, int store)
{
    T acc[FMA_CHAINS];
#pragma unroll
    for (int j = 0; j < FMA_CHAINS; j++)
        acc[j] = x;
    for (int i = 0; i < FMA_STEPS; i++) {
#pragma unroll
        for (int j = 0; j < FMA_CHAINS; j++)
            acc[j] = fma_step(acc[j], y, x);
    }
    T sum = acc[0];
#pragma unroll
    for (int j = 1; j < FMA_CHAINS; j++)
        sum = fma_step(sum, y, acc[j]);
    if (store)
        sink[blockIdx.x * blockDim.x + threadIdx.x] = sum;
}

template <typename T>
static int fma_series(cuda_ctx *c, const char *name, double flops_per_fma, T x, T y)
{
    int blocks = c->prop.multiProcessorCount * 8, threads = 256;
    device_buffer sink;
    CUDA_TRY(c, cudaMalloc(&sink.p, (size_t)blocks * threads * sizeof(T)));
    auto op = [&]() -> int {
        fma_kernel<T><<<blocks, threads>>>((T *)sink.p, x, y, 0);
        CUDA_TRY(c, cudaGetLastError());
        return 0;
    };
    std::vector<double> seconds;
    if (cuda_time(c, op, &seconds) != 0)
        return -1;
    double flops = flops_per_fma * FMA_CHAINS * FMA_STEPS * (double)blocks * threads;
    for (unsigned r = 0; r < seconds.size(); r++)
        if (cuda_sample(c, "fma", name, 1, 0, 0, 0, 0, 0, flops, r, seconds[r]) != 0)
            return -1;
    cuda_progress(c, "  fma   %-5s %10.2f TFLOP/s\n", name,
                  flops / cuda_median(seconds) / 1e12);
    return 0;
}

static int fma_all(cuda_ctx *c)
{
    if (fma_series<float>(c, "fp32", 2, 0.999f, 0.5f) != 0)
        return -1;
    if (fma_series<__half2>(c, "fp16", 4, __floats2half2_rn(0.999f, 0.998f),
                            __floats2half2_rn(0.5f, 0.5f)) != 0)
        return -1;
    return fma_series<__nv_bfloat162>(c, "bf16", 4, __floats2bfloat162_rn(0.999f, 0.998f),
                                      __floats2bfloat162_rn(0.5f, 0.5f));
}

// ---- launch latency ---------------------------------------------------------------------

__global__ static void empty_kernel() {}

// Host clock, not events: a launch's cost is the host's time to enqueue it (and, with
// synchronisation, the round trip), which events on the device cannot see.
static int launches(cuda_ctx *c)
{
    using clock = std::chrono::steady_clock;
    const int count = c->o->quick ? 2000 : 10000;
    for (int i = 0; i < 100; i++)
        empty_kernel<<<1, 1>>>();
    CUDA_TRY(c, cudaGetLastError());
    CUDA_TRY(c, cudaDeviceSynchronize());
    std::vector<double> async_s, sync_s;
    for (unsigned r = 0; r < c->repeats; r++) {
        auto start = clock::now();
        for (int i = 0; i < count; i++)
            empty_kernel<<<1, 1>>>();
        double enqueue = std::chrono::duration<double>(clock::now() - start).count() / count;
        CUDA_TRY(c, cudaGetLastError());
        CUDA_TRY(c, cudaDeviceSynchronize());
        start = clock::now();
        for (int i = 0; i < count / 10; i++) {
            empty_kernel<<<1, 1>>>();
            CUDA_TRY(c, cudaStreamSynchronize(0));
        }
        double round_trip = std::chrono::duration<double>(clock::now() - start).count()
                            / (count / 10);
        CUDA_TRY(c, cudaGetLastError());
        async_s.push_back(enqueue);
        sync_s.push_back(round_trip);
        if (cuda_sample(c, "launch", "-", 1, 0, 0, 0, 0, 0, 0, r, enqueue) != 0
            || cuda_sample(c, "launch_sync", "-", 1, 0, 0, 0, 0, 0, 0, r, round_trip) != 0)
            return -1;
    }
    cuda_progress(c, "  launch %.2f us, with synchronisation %.2f us\n",
                  cuda_median(async_s) * 1e6, cuda_median(sync_s) * 1e6);
    return 0;
}

// ---- host-device copies -----------------------------------------------------------------

struct pinned_buffer {
    void *p = nullptr;
    ~pinned_buffer() { if (p) cudaFreeHost(p); }
};

static int transfers(cuda_ctx *c)
{
    size_t largest = c->o->quick ? (256u << 20) : (1u << 30);
    device_buffer dev;
    pinned_buffer pinned;
    std::vector<unsigned char> pageable(largest, 1);
    CUDA_TRY(c, cudaMalloc(&dev.p, largest));
    CUDA_TRY(c, cudaMallocHost(&pinned.p, largest));
    memset(pinned.p, 1, largest);
    unsigned step = c->o->quick ? 16 : 4;
    std::vector<double> seconds;
    for (int kind = 0; kind < 4; kind++) {
        bool h2d = kind < 2, is_pinned = kind % 2 == 0;
        const char *name = kind == 0 ? "h2d_pinned" : kind == 1 ? "h2d_pageable"
                           : kind == 2 ? "d2h_pinned" : "d2h_pageable";
        void *host = is_pinned ? pinned.p : (void *)pageable.data();
        for (size_t size = 4096; size <= largest; size *= step) {
            auto op = [&]() -> int {
                CUDA_TRY(c, cudaMemcpyAsync(h2d ? dev.p : host, h2d ? host : dev.p, size,
                                            h2d ? cudaMemcpyHostToDevice
                                                : cudaMemcpyDeviceToHost, 0));
                return 0;
            };
            if (cuda_time(c, op, &seconds) != 0)
                return -1;
            for (unsigned r = 0; r < seconds.size(); r++)
                if (cuda_sample(c, name, "-", 1, 0, 0, 0, (double)size, (double)size, 0, r,
                                seconds[r]) != 0)
                    return -1;
            cuda_progress(c, "  %-12s %10zu KB  %8.2f GB/s\n", name, size >> 10,
                          size / cuda_median(seconds) / 1e9);
        }
    }
    return 0;
}

// ---- the run ----------------------------------------------------------------------------

extern "C" int calib_cuda_run(const calib_options *o, calib_samples *out, calib_meta *meta,
                              char *err, size_t err_size)
{
    cuda_ctx ctx;
    cuda_ctx *c = &ctx;
    memset(&ctx, 0, sizeof ctx);
    c->o = o, c->out = out, c->err = err, c->err_size = err_size;
    c->device = o->cuda_device;
    c->repeats = o->quick ? 5 : 11;
    c->target_s = o->quick ? 1e-3 : 5e-3;
    int count = 0;
    CUDA_TRY(c, cudaGetDeviceCount(&count));
    CUDA_TRY(c, cudaSetDevice(c->device));
    CUDA_TRY(c, cudaGetDeviceProperties(&c->prop, c->device));
    snprintf(meta->device, sizeof meta->device, "%s", c->prop.name);
    meta->memory_bytes = (double)c->prop.totalGlobalMem;
    meta->cache_bytes = (double)c->prop.l2CacheSize;
    snprintf(meta->kind, sizeof meta->kind, "gpu");
    meta->threads = (unsigned)count;
    meta->quick = o->quick;
    cuda_progress(c, "calibrating %s (compute capability %d.%d, %d SMs, %.0f GB), "
                  "device %d of %d\n", c->prop.name, c->prop.major, c->prop.minor,
                  c->prop.multiProcessorCount, c->prop.totalGlobalMem / 1e9, c->device, count);
    if (bandwidth(c) != 0 || fma_all(c) != 0 || launches(c) != 0 || transfers(c) != 0
        || calib_cuda_gemm(c) != 0)
        return -1;
    if (count >= 2 && calib_cuda_allreduce(c, count) != 0)
        return -1;
    return 0;
}
