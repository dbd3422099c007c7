// cuBLAS and cuBLASLt for the CUDA calibration (calib_cuda_blas.cu, calib_ops_cuda.cu):
// the libraries opened with dlopen, their functions, checked calls, operand fills.  C++
// (nvcc) only.
#ifndef FLEETSIM_KERNELS_CALIB_CUDA_BLAS_H
#define FLEETSIM_KERNELS_CALIB_CUDA_BLAS_H

#include <dlfcn.h>

#include <cublasLt.h>
#include <cublas_v2.h>

#include "kernels/calib_cuda_internal.h"

// The library by its soname from the loader's path, else from the toolkit's lib64; NULL
// with the reason in c->err.
void *cuda_open_library(cuda_ctx *c, const char *soname);

// Looks a symbol up into a typed function pointer; -1 with the reason when it is missing.
#define CALIB_LOAD(c, handle, field, name)                                              \
    do {                                                                                \
        *(void **)&(field) = dlsym((handle), (name));                                   \
        if (!(field)) {                                                                 \
            const char *why_ = dlerror();                                               \
            snprintf((c)->err, (c)->err_size, "dlsym %s: %s", (name),                   \
                     why_ ? why_ : "not found");                                        \
            return -1;                                                                  \
        }                                                                               \
    } while (0)

// cublasGemmEx's and cublasGemmStridedBatchedEx's C signatures (C++ sees overloads too,
// so decltype cannot name them).
typedef cublasStatus_t (*gemm_ex_fn)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int,
                                     int, int, const void *, const void *, cudaDataType, int,
                                     const void *, cudaDataType, int, const void *, void *,
                                     cudaDataType, int, cublasComputeType_t, cublasGemmAlgo_t);
typedef cublasStatus_t (*gemm_batched_fn)(cublasHandle_t, cublasOperation_t, cublasOperation_t,
                                          int, int, int, const void *, const void *,
                                          cudaDataType, int, long long, const void *,
                                          cudaDataType, int, long long, const void *, void *,
                                          cudaDataType, int, long long, int, cublasComputeType_t,
                                          cublasGemmAlgo_t);

struct blas_api {
    void *cublas = nullptr, *lt = nullptr;
    decltype(&cublasCreate_v2) create = nullptr;
    decltype(&cublasDestroy_v2) destroy = nullptr;
    gemm_ex_fn gemm_ex = nullptr;
    gemm_batched_fn gemm_strided_batched = nullptr;
    decltype(&cublasGetStatusString) status_string = nullptr;
    decltype(&cublasLtCreate) lt_create = nullptr;
    decltype(&cublasLtDestroy) lt_destroy = nullptr;
    decltype(&cublasLtMatmulDescCreate) desc_create = nullptr;
    decltype(&cublasLtMatmulDescDestroy) desc_destroy = nullptr;
    decltype(&cublasLtMatmulDescSetAttribute) desc_set = nullptr;
    decltype(&cublasLtMatrixLayoutCreate) layout_create = nullptr;
    decltype(&cublasLtMatrixLayoutDestroy) layout_destroy = nullptr;
    decltype(&cublasLtMatmulPreferenceCreate) pref_create = nullptr;
    decltype(&cublasLtMatmulPreferenceDestroy) pref_destroy = nullptr;
    decltype(&cublasLtMatmulPreferenceSetAttribute) pref_set = nullptr;
    decltype(&cublasLtMatmulAlgoGetHeuristic) heuristic = nullptr;
    decltype(&cublasLtMatmul) matmul = nullptr;
    ~blas_api() {
        if (lt) dlclose(lt);
        if (cublas) dlclose(cublas);
    }
};

// Opens cuBLAS and cuBLASLt and looks their functions up; 0, or -1 with the reason.
int cuda_blas_open(cuda_ctx *c, blas_api *api);

// Evaluates a cuBLAS(Lt) call; on failure writes "call: status string" and returns -1,
// or -2 for a shape or type the library does not support (the caller skips it).
#define CUBLAS_TRY(c, api, call)                                                       \
    do {                                                                               \
        cublasStatus_t status_ = (call);                                               \
        if (status_ != CUBLAS_STATUS_SUCCESS) {                                        \
            snprintf((c)->err, (c)->err_size, "%s: %s", #call,                         \
                     (api)->status_string(status_));                                   \
            return status_ == CUBLAS_STATUS_NOT_SUPPORTED                              \
                           || status_ == CUBLAS_STATUS_INVALID_VALUE                   \
                       ? -2                                                            \
                       : -1;                                                           \
        }                                                                              \
    } while (0)

struct blas_handles {
    const blas_api *api;
    cublasHandle_t h = nullptr;
    cublasLtHandle_t lt = nullptr;
    explicit blas_handles(const blas_api *x) : api(x) {}
    ~blas_handles() {
        if (h) api->destroy(h);
        if (lt) api->lt_destroy(lt);
    }
};

// Varied values in [-scale, scale): no zeros a library could skip, no infinities.
template <typename T> __global__ static void fill_kernel(T *p, size_t n, float scale)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x) {
        unsigned h = (unsigned)i * 2654435761u ^ 0x9e3779b9u;
        h ^= h >> 15;
        h *= 2246822519u;
        h ^= h >> 13;
        p[i] = T(((float)(h & 0xFFFF) / 32768.0f - 1.0f) * scale);
    }
}

template <typename T> static int fill(cuda_ctx *c, void *p, size_t n, float scale)
{
    fill_kernel<T><<<1024, 256>>>((T *)p, n, scale);
    CUDA_TRY(c, cudaGetLastError());
    CUDA_TRY(c, cudaDeviceSynchronize());
    return 0;
}

#endif
