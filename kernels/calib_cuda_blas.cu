// cuBLAS GEMM and NCCL all-reduce for the CUDA calibration (see calib_cuda_internal.h).
//
// cuBLAS, cuBLASLt and NCCL are opened with dlopen when a calibration needs them, not
// linked: fleetsim links the CUDA runtime statically so that it starts on machines with
// no CUDA library, and every other command would otherwise load some hundreds of MB of
// BLAS.  The headers still give every function's exact type (decltype).
#include "kernels/calib_cuda_blas.h"

#include <chrono>
#include <cstdint>
#include <cstring>

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#if __has_include(<nccl.h>)
#include <nccl.h>
#define CALIB_HAVE_NCCL 1
#endif

#ifndef FLEETSIM_CUDA_LIBDIR
#define FLEETSIM_CUDA_LIBDIR "/usr/local/cuda/lib64"
#endif
#define CALIB_STR2(x) #x
#define CALIB_STR(x) CALIB_STR2(x)

void *cuda_open_library(cuda_ctx *c, const char *soname)
{
    void *h = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
    if (h)
        return h;
    const char *first = dlerror();
    char path[512], why[256];
    snprintf(why, sizeof why, "%s", first ? first : "not found");
    snprintf(path, sizeof path, "%s/%s", FLEETSIM_CUDA_LIBDIR, soname);
    h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h)
        snprintf(c->err, c->err_size, "dlopen %s: %s (also tried %s)", soname, why, path);
    return h;
}

int cuda_blas_open(cuda_ctx *c, blas_api *api)
{
    if (!(api->lt = cuda_open_library(c, "libcublasLt.so." CALIB_STR(CUBLAS_VER_MAJOR)))
        || !(api->cublas = cuda_open_library(c, "libcublas.so." CALIB_STR(CUBLAS_VER_MAJOR))))
        return -1;
    CALIB_LOAD(c, api->cublas, api->create, "cublasCreate_v2");
    CALIB_LOAD(c, api->cublas, api->destroy, "cublasDestroy_v2");
    CALIB_LOAD(c, api->cublas, api->gemm_ex, "cublasGemmEx");
    CALIB_LOAD(c, api->cublas, api->gemm_strided_batched, "cublasGemmStridedBatchedEx");
    CALIB_LOAD(c, api->cublas, api->status_string, "cublasGetStatusString");
    CALIB_LOAD(c, api->lt, api->lt_create, "cublasLtCreate");
    CALIB_LOAD(c, api->lt, api->lt_destroy, "cublasLtDestroy");
    CALIB_LOAD(c, api->lt, api->desc_create, "cublasLtMatmulDescCreate");
    CALIB_LOAD(c, api->lt, api->desc_destroy, "cublasLtMatmulDescDestroy");
    CALIB_LOAD(c, api->lt, api->desc_set, "cublasLtMatmulDescSetAttribute");
    CALIB_LOAD(c, api->lt, api->layout_create, "cublasLtMatrixLayoutCreate");
    CALIB_LOAD(c, api->lt, api->layout_destroy, "cublasLtMatrixLayoutDestroy");
    CALIB_LOAD(c, api->lt, api->pref_create, "cublasLtMatmulPreferenceCreate");
    CALIB_LOAD(c, api->lt, api->pref_destroy, "cublasLtMatmulPreferenceDestroy");
    CALIB_LOAD(c, api->lt, api->pref_set, "cublasLtMatmulPreferenceSetAttribute");
    CALIB_LOAD(c, api->lt, api->heuristic, "cublasLtMatmulAlgoGetHeuristic");
    CALIB_LOAD(c, api->lt, api->matmul, "cublasLtMatmul");
    return 0;
}

enum gemm_type { GEMM_FP16, GEMM_BF16, GEMM_INT8, GEMM_FP8, GEMM_TYPES };

struct gemm_kind {
    const char *name;
    cudaDataType ab, out;
    cublasComputeType_t compute;
    size_t ab_bytes;
};

static const gemm_kind GEMM_KINDS[GEMM_TYPES] = {
    { "fp16", CUDA_R_16F, CUDA_R_16F, CUBLAS_COMPUTE_32F, 2 },
    { "bf16", CUDA_R_16BF, CUDA_R_16BF, CUBLAS_COMPUTE_32F, 2 },
    { "int8", CUDA_R_8I, CUDA_R_32I, CUBLAS_COMPUTE_32I, 1 },
    { "fp8", CUDA_R_8F_E4M3, CUDA_R_16BF, CUBLAS_COMPUTE_32F, 1 }, // through cuBLASLt
};

// The operands of one precision: weights (n x k, used transposed: the "TN" layout every
// type supports), activations (k x tokens) and the output (n x tokens), column-major.
struct gemm_buffers {
    device_buffer weights, activations, output, workspace;
    size_t workspace_bytes = 32u << 20;
};

// cuBLASLt's descriptors for one fp8 shape, destroyed with it.
struct lt_plan {
    const blas_api *api;
    cublasLtMatmulDesc_t op = nullptr;
    cublasLtMatrixLayout_t a = nullptr, b = nullptr, d = nullptr;
    cublasLtMatmulPreference_t pref = nullptr;
    cublasLtMatmulHeuristicResult_t result;
    explicit lt_plan(const blas_api *x) : api(x) { memset(&result, 0, sizeof result); }
    ~lt_plan() {
        if (pref) api->pref_destroy(pref);
        if (d) api->layout_destroy(d);
        if (b) api->layout_destroy(b);
        if (a) api->layout_destroy(a);
        if (op) api->desc_destroy(op);
    }
};

static int lt_prepare(cuda_ctx *c, const blas_api *api, cublasLtHandle_t lt, lt_plan *p,
                      int n, int tokens, int k, size_t workspace_bytes)
{
    cublasOperation_t transa = CUBLAS_OP_T, transb = CUBLAS_OP_N;
    CUBLAS_TRY(c, api, api->desc_create(&p->op, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    CUBLAS_TRY(c, api, api->desc_set(p->op, CUBLASLT_MATMUL_DESC_TRANSA, &transa, sizeof transa));
    CUBLAS_TRY(c, api, api->desc_set(p->op, CUBLASLT_MATMUL_DESC_TRANSB, &transb, sizeof transb));
    CUBLAS_TRY(c, api, api->layout_create(&p->a, CUDA_R_8F_E4M3, k, n, k));
    CUBLAS_TRY(c, api, api->layout_create(&p->b, CUDA_R_8F_E4M3, k, tokens, k));
    CUBLAS_TRY(c, api, api->layout_create(&p->d, CUDA_R_16BF, n, tokens, n));
    CUBLAS_TRY(c, api, api->pref_create(&p->pref));
    CUBLAS_TRY(c, api, api->pref_set(p->pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                     &workspace_bytes, sizeof workspace_bytes));
    int found = 0;
    CUBLAS_TRY(c, api, api->heuristic(lt, p->op, p->a, p->b, p->d, p->d, p->pref, 1,
                                      &p->result, &found));
    if (found == 0) {
        snprintf(c->err, c->err_size, "cublasLtMatmulAlgoGetHeuristic: no fp8 algorithm for "
                 "%d x %d x %d", tokens, n, k);
        return -2;
    }
    return 0;
}

// Times one shape (tokens x k times k x n); 0, -1 on failure, -2 when unsupported.
static int gemm_shape(cuda_ctx *c, const blas_api *api, cublasHandle_t h, cublasLtHandle_t lt,
                      gemm_type type, gemm_buffers *buf, int tokens, int n, int k)
{
    const gemm_kind &g = GEMM_KINDS[type];
    float alpha = 1, beta = 0;
    int32_t ialpha = 1, ibeta = 0;
    const void *pa = type == GEMM_INT8 ? (const void *)&ialpha : (const void *)&alpha;
    const void *pb = type == GEMM_INT8 ? (const void *)&ibeta : (const void *)&beta;
    lt_plan plan(api);
    int status = 0;
    if (type == GEMM_FP8 && (status = lt_prepare(c, api, lt, &plan, n, tokens, k,
                                                 buf->workspace_bytes)) != 0)
        return status;
    auto op = [&]() -> int {
        if (type == GEMM_FP8)
            CUBLAS_TRY(c, api, api->matmul(lt, plan.op, &alpha, buf->weights.p, plan.a,
                                           buf->activations.p, plan.b, &beta, buf->output.p,
                                           plan.d, buf->output.p, plan.d, &plan.result.algo,
                                           buf->workspace.p, buf->workspace_bytes, 0));
        else
            CUBLAS_TRY(c, api, api->gemm_ex(h, CUBLAS_OP_T, CUBLAS_OP_N, n, tokens, k, pa,
                                            buf->weights.p, g.ab, k, buf->activations.p, g.ab,
                                            k, pb, buf->output.p, g.out, n, g.compute,
                                            CUBLAS_GEMM_DEFAULT));
        return 0;
    };
    // a first call apart: an unsupported shape says so before any timing
    if ((status = op()) != 0)
        return status;
    std::vector<double> seconds;
    if ((status = cuda_time(c, op, &seconds)) != 0)
        return status;
    double flops = 2.0 * tokens * n * (double)k;
    for (unsigned r = 0; r < seconds.size(); r++)
        if (cuda_sample(c, "gemm", g.name, 1, tokens, n, k, 0,
                        (double)g.ab_bytes * ((double)n * k + (double)k * tokens), flops, r,
                        seconds[r]) != 0)
            return -1;
    cuda_progress(c, "  gemm  %-4s %5d x %5d x %5d  %9.1f TFLOP/s\n", g.name, tokens, n, k,
                  flops / cuda_median(seconds) / 1e12);
    return 0;
}

int calib_cuda_gemm(cuda_ctx *c)
{
    blas_api api;
    if (cuda_blas_open(c, &api) != 0)
        return -1;
    blas_handles handles(&api);
    if (api.create(&handles.h) != CUBLAS_STATUS_SUCCESS
        || api.lt_create(&handles.lt) != CUBLAS_STATUS_SUCCESS) {
        snprintf(c->err, c->err_size, "cublasCreate or cublasLtCreate failed (out of device "
                 "memory, or a driver older than cuBLAS %d)", CUBLAS_VER_MAJOR);
        return -1;
    }
    // decode-like: a few tokens against a wide weight matrix; then squares
    static const int quick_tokens[] = { 1, 4, 16, 64, 256 };
    static const int full_tokens[] = { 1, 2, 4, 8, 16, 32, 64, 128, 256 };
    static const int quick_squares[] = { 2048, 4096, 8192 };
    static const int full_squares[] = { 1024, 2048, 4096, 8192 };
    const int *tokens = c->o->quick ? quick_tokens : full_tokens;
    const int *squares = c->o->quick ? quick_squares : full_squares;
    int ntokens = c->o->quick ? 5 : 9, nsquares = c->o->quick ? 3 : 4, wide = 8192;
    size_t largest = (size_t)wide * wide;
    gemm_buffers buf;
    CUDA_TRY(c, cudaMalloc(&buf.weights.p, largest * 2));
    CUDA_TRY(c, cudaMalloc(&buf.activations.p, largest * 2));
    CUDA_TRY(c, cudaMalloc(&buf.output.p, largest * 4));
    CUDA_TRY(c, cudaMalloc(&buf.workspace.p, buf.workspace_bytes));
    bool fp8 = c->prop.major * 10 + c->prop.minor >= 89;
    if (!fp8)
        cuda_progress(c, "  gemm  fp8: needs compute capability 8.9, this device has %d.%d\n",
                      c->prop.major, c->prop.minor);
    for (int t = 0; t < GEMM_TYPES; t++) {
        gemm_type type = (gemm_type)t;
        if (type == GEMM_FP8 && !fp8)
            continue;
        int filled = 0;
        switch (type) {
        case GEMM_FP16:
            filled = fill<__half>(c, buf.weights.p, largest, 1) || fill<__half>(c, buf.activations.p, largest, 1);
            break;
        case GEMM_BF16:
            filled = fill<__nv_bfloat16>(c, buf.weights.p, largest, 1)
                     || fill<__nv_bfloat16>(c, buf.activations.p, largest, 1);
            break;
        case GEMM_INT8:
            filled = fill<int8_t>(c, buf.weights.p, largest, 64) || fill<int8_t>(c, buf.activations.p, largest, 64);
            break;
        default:
            filled = fill<__nv_fp8_e4m3>(c, buf.weights.p, largest, 1)
                     || fill<__nv_fp8_e4m3>(c, buf.activations.p, largest, 1);
        }
        if (filled)
            return -1;
        for (int i = 0; i < ntokens + nsquares; i++) {
            int m = i < ntokens ? tokens[i] : squares[i - ntokens];
            int n = i < ntokens ? wide : m;
            int status = gemm_shape(c, &api, handles.h, handles.lt, type, &buf, m, n, n);
            if (status == -1)
                return -1;
            if (status == -2) // unsupported here: say so and go on
                cuda_progress(c, "  gemm  %-4s %5d x %5d x %5d  skipped: %s\n",
                              GEMM_KINDS[t].name, m, n, n, c->err);
        }
    }
    c->err[0] = '\0';
    return 0;
}

// ---- NCCL all-reduce --------------------------------------------------------------------

#ifdef CALIB_HAVE_NCCL
struct nccl_api {
    void *h = nullptr;
    decltype(&ncclCommInitAll) init_all = nullptr;
    decltype(&ncclCommDestroy) destroy = nullptr;
    decltype(&ncclAllReduce) all_reduce = nullptr;
    decltype(&ncclGroupStart) group_start = nullptr;
    decltype(&ncclGroupEnd) group_end = nullptr;
    decltype(&ncclGetErrorString) error_string = nullptr;
    std::vector<ncclComm_t> comms;
    std::vector<cudaStream_t> streams;
    std::vector<void *> buffers;
    ~nccl_api() {
        for (size_t i = 0; i < comms.size(); i++) {
            cudaSetDevice((int)i);
            if (buffers[i]) cudaFree(buffers[i]);
            if (streams[i]) cudaStreamDestroy(streams[i]);
            if (comms[i] && destroy) destroy(comms[i]);
        }
        if (h) dlclose(h);
    }
};

#define NCCL_TRY(c, api, call)                                                         \
    do {                                                                               \
        ncclResult_t status_ = (call);                                                 \
        if (status_ != ncclSuccess) {                                                  \
            snprintf((c)->err, (c)->err_size, "%s: %s", #call,                         \
                     (api)->error_string(status_));                                    \
            return -1;                                                                 \
        }                                                                              \
    } while (0)

// One all-reduce of `bytes` on every device, waited for.
static int allreduce_once(cuda_ctx *c, nccl_api *api, size_t bytes)
{
    int devices = (int)api->comms.size();
    NCCL_TRY(c, api, api->group_start());
    for (int d = 0; d < devices; d++)
        NCCL_TRY(c, api, api->all_reduce(api->buffers[d], api->buffers[d], bytes / sizeof(float),
                                         ncclFloat, ncclSum, api->comms[d], api->streams[d]));
    NCCL_TRY(c, api, api->group_end());
    for (int d = 0; d < devices; d++)
        CUDA_TRY(c, cudaStreamSynchronize(api->streams[d]));
    return 0;
}

int calib_cuda_allreduce(cuda_ctx *c, int devices)
{
    nccl_api api;
    if (!(api.h = cuda_open_library(c, "libnccl.so.2"))) {
        cuda_progress(c, "  allreduce skipped: %s\n", c->err);
        c->err[0] = '\0';
        return 0;
    }
    CALIB_LOAD(c, api.h, api.init_all, "ncclCommInitAll");
    CALIB_LOAD(c, api.h, api.destroy, "ncclCommDestroy");
    CALIB_LOAD(c, api.h, api.all_reduce, "ncclAllReduce");
    CALIB_LOAD(c, api.h, api.group_start, "ncclGroupStart");
    CALIB_LOAD(c, api.h, api.group_end, "ncclGroupEnd");
    CALIB_LOAD(c, api.h, api.error_string, "ncclGetErrorString");
    size_t largest = c->o->quick ? (256u << 20) : (1u << 30);
    api.comms.assign(devices, nullptr);
    api.streams.assign(devices, nullptr);
    api.buffers.assign(devices, nullptr);
    NCCL_TRY(c, &api, api.init_all(api.comms.data(), devices, nullptr));
    for (int d = 0; d < devices; d++) {
        CUDA_TRY(c, cudaSetDevice(d));
        CUDA_TRY(c, cudaStreamCreate(&api.streams[d]));
        CUDA_TRY(c, cudaMalloc(&api.buffers[d], largest));
        CUDA_TRY(c, cudaMemset(api.buffers[d], 0, largest));
    }
    // host clock: the collective spans every device's stream, one device's events do not
    using clock = std::chrono::steady_clock;
    unsigned step = c->o->quick ? 16 : 4;
    for (size_t bytes = 4096; bytes <= largest; bytes *= step) {
        for (int i = 0; i < 3; i++)
            if (allreduce_once(c, &api, bytes) != 0)
                return -1;
        auto start = clock::now();
        if (allreduce_once(c, &api, bytes) != 0)
            return -1;
        double once = std::chrono::duration<double>(clock::now() - start).count();
        unsigned inner = (unsigned)std::fmax(1, std::fmin(1000, std::ceil(c->target_s / once)));
        std::vector<double> seconds;
        for (unsigned r = 0; r < c->repeats; r++) {
            start = clock::now();
            for (unsigned i = 0; i < inner; i++)
                if (allreduce_once(c, &api, bytes) != 0)
                    return -1;
            double s = std::chrono::duration<double>(clock::now() - start).count() / inner;
            seconds.push_back(s);
            if (cuda_sample(c, "allreduce", "fp32", (unsigned)devices, 0, 0, 0, (double)bytes,
                            (double)bytes, 0, r, s) != 0)
                return -1;
        }
        cuda_progress(c, "  allreduce %d devices %10zu KB  %8.1f us  %8.2f GB/s (algorithm)\n",
                      devices, bytes >> 10, cuda_median(seconds) * 1e6,
                      bytes / cuda_median(seconds) / 1e9);
    }
    CUDA_TRY(c, cudaSetDevice(c->device));
    return 0;
}
#else
int calib_cuda_allreduce(cuda_ctx *c, int devices)
{
    cuda_progress(c, "  allreduce over %d devices skipped: built without nccl.h\n", devices);
    return 0;
}
#endif
