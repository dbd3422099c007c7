// A decoder layer's operators on a CUDA device (see calib_ops.h), in bf16 as engines run
// them: the projections through cuBLAS with their weights cold (rotated through a pool
// four times the L2, at least 512 MB), decode attention as a split-context kernel over a
// contiguous cache (a block a query head, sequence and chunk of 512 cached tokens, its warps
// splitting the chunk, an online softmax, the chunks merged), prefill attention unfused
// (cuBLAS batched products for the
// scores and the values around a causal softmax: what an engine without a fused kernel
// runs), and the memory passes as plain kernels.  Each sample's bytes and flops are
// counted as models/perf.c counts them at 2 bytes an element, so a fitted efficiency
// means what the model's does.
#include "kernels/calib_cuda_blas.h"
#include "kernels/calib_ops.h"

#include <algorithm>
#include <cstring>

#include <cuda_bf16.h>

typedef __nv_bfloat16 bf16;

namespace {

const int TOKENS[] = { 1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024 };
const int TOKENS_QUICK[] = { 1, 4, 16, 64, 256, 1024 };
const int BATCHES[] = { 1, 2, 4, 8, 16, 32, 64 };
const int BATCHES_QUICK[] = { 1, 4, 16, 64 };
const int CONTEXTS[] = { 128, 256, 512, 1024, 2048, 4096 };
const int CONTEXTS_QUICK[] = { 128, 512, 2048 };
const int PROMPTS[] = { 64, 128, 256, 512, 1024, 2048 };
const int PROMPTS_QUICK[] = { 64, 256, 1024 };

template <size_t N> std::vector<int> grid(bool quick, const int (&full)[N], const int *small,
                                          size_t nsmall)
{
    return quick ? std::vector<int>(small, small + nsmall) : std::vector<int>(full, full + N);
}
#define GRID(c, a) grid((c)->o->quick, a, a##_QUICK, sizeof a##_QUICK / sizeof(int))

constexpr int MAX_HEAD_DIM = 256;
constexpr int DECODE_WARPS = 4;

// ---- the kernels ---------------------------------------------------------------------------

// Split-context decoding, as engines run decode attention (FlashAttention's split-KV,
// vLLM's paged attention v2): one block a (query head, sequence, chunk of DECODE_CHUNK
// cached tokens); each warp takes every DECODE_WARPS-th token of the chunk, a lane the head
// dims lane, lane + 32, ...; an online softmax per warp, merged in the block.  One chunk
// writes the output; several write their partial (max, sum, accumulator) to `partial`,
// which attn_merge_kernel combines.
constexpr int DECODE_CHUNK = 512;

__global__ void attn_decode_kernel(const bf16 *__restrict__ q, const bf16 *__restrict__ keys,
                                   const bf16 *__restrict__ values, bf16 *__restrict__ out,
                                   float *__restrict__ partial, int kv_heads, int group,
                                   int context, int hd, float scale)
{
    constexpr int PER = MAX_HEAD_DIM / 32;
    int head = blockIdx.x, seq = blockIdx.y, heads = kv_heads * group, kvh = head / group;
    int chunks = gridDim.z, first = blockIdx.z * DECODE_CHUNK;
    int last = min(context, first + DECODE_CHUNK);
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const bf16 *qh = q + ((size_t)seq * heads + head) * hd;
    size_t base = ((size_t)seq * kv_heads + kvh) * (size_t)context * hd;
    float qv[PER], acc[PER];
    for (int i = 0; i < PER; i++) {
        int d = lane + 32 * i;
        qv[i] = d < hd ? __bfloat162float(qh[d]) : 0.f;
        acc[i] = 0.f;
    }
    float mx = -INFINITY, sum = 0.f;
    for (int j = first + warp; j < last; j += DECODE_WARPS) {
        const bf16 *k = keys + base + (size_t)j * hd, *v = values + base + (size_t)j * hd;
        float s = 0.f;
        for (int i = 0; i < PER; i++) {
            int d = lane + 32 * i;
            if (d < hd)
                s += qv[i] * __bfloat162float(k[d]);
        }
        for (int off = 16; off; off >>= 1)
            s += __shfl_xor_sync(0xffffffffu, s, off);
        s *= scale;
        float now = fmaxf(mx, s), keep = __expf(mx - now), p = __expf(s - now);
        sum = sum * keep + p;
        for (int i = 0; i < PER; i++) {
            int d = lane + 32 * i;
            if (d < hd)
                acc[i] = acc[i] * keep + p * __bfloat162float(v[d]);
        }
        mx = now;
    }
    __shared__ float warp_max[DECODE_WARPS], warp_sum[DECODE_WARPS];
    __shared__ float warp_acc[DECODE_WARPS][MAX_HEAD_DIM];
    if (lane == 0)
        warp_max[warp] = mx, warp_sum[warp] = sum;
    for (int i = 0; i < PER; i++) {
        int d = lane + 32 * i;
        if (d < hd)
            warp_acc[warp][d] = acc[i];
    }
    __syncthreads();
    if (warp != 0)
        return;
    float m = -INFINITY, total = 0.f;
    for (int w = 0; w < DECODE_WARPS; w++)
        m = fmaxf(m, warp_max[w]);
    for (int w = 0; w < DECODE_WARPS; w++)
        total += warp_max[w] == -INFINITY ? 0.f : warp_sum[w] * __expf(warp_max[w] - m);
    size_t slot = ((size_t)seq * heads + head) * chunks + blockIdx.z;
    float *mine = partial + slot * (hd + 2);
    if (chunks > 1 && lane == 0)
        mine[0] = m, mine[1] = total;
    for (int i = 0; i < PER; i++) {
        int d = lane + 32 * i;
        if (d >= hd)
            continue;
        float a = 0.f;
        for (int w = 0; w < DECODE_WARPS; w++)
            if (warp_max[w] != -INFINITY)
                a += warp_acc[w][d] * __expf(warp_max[w] - m);
        if (chunks > 1)
            mine[2 + d] = a;
        else
            out[((size_t)seq * heads + head) * hd + d] = __float2bfloat16(a / total);
    }
}

// The chunks' partials of one (query head, sequence) into its output: a block each.
__global__ void attn_merge_kernel(const float *__restrict__ partial, bf16 *__restrict__ out,
                                  int heads, int chunks, int hd)
{
    int head = blockIdx.x, seq = blockIdx.y;
    const float *p = partial + ((size_t)seq * heads + head) * chunks * (hd + 2);
    float m = -INFINITY;
    for (int c = 0; c < chunks; c++)
        m = fmaxf(m, p[c * (hd + 2)]);
    for (int d = threadIdx.x; d < hd; d += blockDim.x) {
        float a = 0.f, total = 0.f;
        for (int c = 0; c < chunks; c++) {
            const float *q = p + c * (hd + 2);
            if (q[0] == -INFINITY)
                continue;
            float w = __expf(q[0] - m);
            total += q[1] * w;
            a += q[2 + d] * w;
        }
        out[((size_t)seq * heads + head) * hd + d] = __float2bfloat16(a / total);
    }
}

// Block-wide reduction of 256 threads (max or sum).
template <bool MAX> __device__ float block_reduce(float x, float *shared)
{
    for (int off = 16; off; off >>= 1) {
        float y = __shfl_xor_sync(0xffffffffu, x, off);
        x = MAX ? fmaxf(x, y) : x + y;
    }
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    if (lane == 0)
        shared[warp] = x;
    __syncthreads();
    if (warp == 0) {
        x = lane < (int)(blockDim.x >> 5) ? shared[lane] : (MAX ? -INFINITY : 0.f);
        for (int off = 16; off; off >>= 1) {
            float y = __shfl_xor_sync(0xffffffffu, x, off);
            x = MAX ? fmaxf(x, y) : x + y;
        }
        if (lane == 0)
            shared[0] = x;
    }
    __syncthreads();
    float r = shared[0];
    __syncthreads();
    return r;
}

// Each row of `cols` scores, in place: a softmax over the first (row % period) + 1 of them
// (causal: a prompt's token sees itself and those before it), zeros after.
__global__ void causal_softmax_kernel(bf16 *scores, int cols, int period)
{
    __shared__ float shared[32];
    bf16 *row = scores + (size_t)blockIdx.x * cols;
    int valid = (int)(blockIdx.x % period) + 1;
    float mx = -INFINITY;
    for (int j = threadIdx.x; j < valid; j += blockDim.x)
        mx = fmaxf(mx, __bfloat162float(row[j]));
    mx = block_reduce<true>(mx, shared);
    float sum = 0.f;
    for (int j = threadIdx.x; j < valid; j += blockDim.x)
        sum += __expf(__bfloat162float(row[j]) - mx);
    sum = block_reduce<false>(sum, shared);
    for (int j = threadIdx.x; j < cols; j += blockDim.x)
        row[j] = __float2bfloat16(j < valid ? __expf(__bfloat162float(row[j]) - mx) / sum : 0.f);
}

// RMSNorm of `rows` rows of `width`, one block a row.
__global__ void norm_kernel(const bf16 *x, const bf16 *weight, bf16 *y, int width)
{
    __shared__ float shared[32];
    const bf16 *row = x + (size_t)blockIdx.x * width;
    float ss = 0.f;
    for (int j = threadIdx.x; j < width; j += blockDim.x) {
        float v = __bfloat162float(row[j]);
        ss += v * v;
    }
    float inv = rsqrtf(block_reduce<false>(ss, shared) / width + 1e-5f);
    for (int j = threadIdx.x; j < width; j += blockDim.x)
        y[(size_t)blockIdx.x * width + j] =
            __float2bfloat16(__bfloat162float(row[j]) * inv * __bfloat162float(weight[j]));
}

// The elementwise passes over n elements (rows x width), grid-strided.
enum pass_id { P_NORM, P_ROPE, P_ACT, P_ADD, P_EMBED, P_RESHAPE, P_SAMPLE };

__global__ void rope_kernel(const bf16 *x, bf16 *y, size_t pairs, int width)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < pairs;
         i += (size_t)gridDim.x * blockDim.x) {
        float angle = (float)((i % (size_t)(width / 2)) + 1) * 1e-3f, c, s;
        __sincosf(angle, &s, &c);
        float a = __bfloat162float(x[2 * i]), b = __bfloat162float(x[2 * i + 1]);
        y[2 * i] = __float2bfloat16(a * c - b * s);
        y[2 * i + 1] = __float2bfloat16(a * s + b * c);
    }
}

__global__ void act_kernel(const bf16 *gate, const bf16 *up, bf16 *out, size_t n)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x) {
        float g = __bfloat162float(gate[i]), a = g / (1.f + __expf(-g));
        out[i] = __float2bfloat16(up ? a * __bfloat162float(up[i]) : a); // up: gated only
    }
}

__global__ void add_kernel(const bf16 *x, const bf16 *y, bf16 *z, size_t n)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        z[i] = __float2bfloat16(__bfloat162float(x[i]) + __bfloat162float(y[i]));
}

// rows gathered from a table of `vocab` rows: row i of call `salt` is token ((salt x rows
// + i) x 7919) % vocab, so that successive calls read other rows (a step's tokens are not
// the last step's: their rows come from memory, not from the L2)
__global__ void embed_kernel(const bf16 *table, bf16 *out, int rows, int width, int vocab,
                             unsigned salt)
{
    size_t n = (size_t)rows * width;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x) {
        size_t r = i / width, j = i % width;
        unsigned token = (unsigned)(((size_t)salt * rows + r) * 7919u % (unsigned)vocab);
        out[i] = table[(size_t)token * width + j];
    }
}

// a step's keys and values (rows x width, width = heads x hd) into the cache's layout by
// head, as engines write it: head h's tokens together, each token's hd dims contiguous
__global__ void reshape_kernel(const bf16 *x, bf16 *y, int rows, int width, int hd)
{
    size_t n = (size_t)rows * width;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x) {
        size_t r = i / width, j = i % width, head = j / hd;
        y[(head * rows + r) * hd + j % hd] = x[i];
    }
}

// a softmax over each row of fp32 logits and the greedy pick, one block a row
__global__ void sample_kernel(float *logits, int *picked, int vocab)
{
    __shared__ float shared[32];
    __shared__ int shared_arg[32];
    float *row = logits + (size_t)blockIdx.x * vocab;
    float mx = -INFINITY;
    for (int j = threadIdx.x; j < vocab; j += blockDim.x)
        mx = fmaxf(mx, row[j]);
    mx = block_reduce<true>(mx, shared);
    float sum = 0.f;
    for (int j = threadIdx.x; j < vocab; j += blockDim.x)
        sum += __expf(row[j] - mx);
    sum = block_reduce<false>(sum, shared);
    float best = -1.f;
    int arg = 0;
    for (int j = threadIdx.x; j < vocab; j += blockDim.x) {
        float p = __expf(row[j] - mx) / sum;
        row[j] = p;
        if (p > best)
            best = p, arg = j;
    }
    for (int off = 16; off; off >>= 1) {
        float other = __shfl_xor_sync(0xffffffffu, best, off);
        int other_arg = __shfl_xor_sync(0xffffffffu, arg, off);
        if (other > best || (other == best && other_arg < arg))
            best = other, arg = other_arg;
    }
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    if (lane == 0)
        shared[warp] = best, shared_arg[warp] = arg;
    __syncthreads();
    if (threadIdx.x == 0) {
        for (int w = 1; w < (int)(blockDim.x >> 5); w++)
            if (shared[w] > shared[0] || (shared[w] == shared[0] && shared_arg[w] < shared_arg[0]))
                shared[0] = shared[w], shared_arg[0] = shared_arg[w];
        picked[blockIdx.x] = shared_arg[0];
    }
}

// ---- the run ---------------------------------------------------------------------------------

// The grid of a grid-strided kernel over n elements.
unsigned blocks_for(size_t n) { return (unsigned)std::min<size_t>((n + 255) / 256, 65535); }

struct ops_cuda {
    cuda_ctx *c;
    const model_spec *m;
    int hd, heads, kv_heads, group;
    device_buffer pool;       // weights and caches, rotated slot by slot
    size_t pool_bytes = 0;
    device_buffer work[4];    // activations and outputs
    size_t work_bytes = 0;
};

// Times op(slot) for slots of `slot_bytes` rotated through the pool; one sample a repeat.
template <typename Op>
int time_rotated(ops_cuda *r, size_t slot_bytes, Op op, const char *kind, double m, double n,
                 double k, double bytes, double flops)
{
    size_t slots = slot_bytes ? r->pool_bytes / slot_bytes : 1;
    if (slots < 1) { // larger than the pool: the grid's smaller shapes suffice
        cuda_progress(r->c, "  %s %g x %g x %g skipped: %.0f MB of operands, a %.0f MB pool\n",
                      kind, m, n, k, slot_bytes / 1e6, r->pool_bytes / 1e6);
        return 0;
    }
    int status = op(r->pool.p); // a first call apart: an unsupported shape says so
    if (status == -2) {
        cuda_progress(r->c, "  %s %g x %g x %g skipped: %s\n", kind, m, n, k, r->c->err);
        r->c->err[0] = '\0';
        return 0;
    }
    if (status != 0)
        return -1;
    size_t next = 0;
    auto call = [&]() -> int {
        next = (next + 1) % slots;
        return op((char *)r->pool.p + next * slot_bytes);
    };
    std::vector<double> seconds;
    if (cuda_time(r->c, call, &seconds) != 0)
        return -1;
    for (unsigned i = 0; i < seconds.size(); i++)
        if (cuda_sample(r->c, kind, "bf16", 1, m, n, k, bytes, bytes, flops, i, seconds[i]) != 0)
            return -1;
    return 0;
}

int gemms(ops_cuda *r, const blas_api *api, cublasHandle_t h)
{
    const model_spec *m = r->m;
    int hid = (int)m->hidden, q = r->heads * r->hd, kv = r->kv_heads * r->hd;
    int up = (m->gated ? 2 : 1) * (int)m->ffn;
    const int shapes[][2] = { { hid, q + 2 * kv }, { q, hid }, { hid, up }, { (int)m->ffn, hid },
                              { hid, (int)m->vocab } };
    cuda_progress(r->c, "calibrate: operators: projections (QKV, output, up, down, LM head)\n");
    float alpha = 1, beta = 0;
    for (const auto &s : shapes)
        for (int t : GRID(r->c, TOKENS)) {
            int K = s[0], N = s[1];
            if ((size_t)t * std::max(K, N) * 2 > r->work_bytes)
                continue;
            auto op = [&](void *w) -> int {
                CUBLAS_TRY(r->c, api, api->gemm_ex(h, CUBLAS_OP_T, CUBLAS_OP_N, N, t, K, &alpha,
                                                   w, CUDA_R_16BF, K, r->work[0].p, CUDA_R_16BF,
                                                   K, &beta, r->work[1].p, CUDA_R_16BF, N,
                                                   CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
                return 0;
            };
            double T = t;
            if (time_rotated(r, (size_t)K * N * 2, op, "op_gemm", T, N, K,
                             2 * ((double)K * N + T * K + T * N), 2 * T * K * N) != 0)
                return -1;
        }
    return 0;
}

int decode_attention(ops_cuda *r)
{
    cuda_progress(r->c, "calibrate: operators: decode attention over the cache\n");
    float scale = 1.f / sqrtf((float)r->hd);
    for (int b : GRID(r->c, BATCHES))
        for (int ctx : GRID(r->c, CONTEXTS)) {
            size_t half = (size_t)b * r->kv_heads * ctx * r->hd * 2; // keys, or values
            int chunks = (ctx + DECODE_CHUNK - 1) / DECODE_CHUNK;
            size_t partials = (size_t)b * r->heads * chunks * (r->hd + 2) * sizeof(float);
            if ((size_t)b * r->heads * r->hd * 2 > r->work_bytes || partials > r->work_bytes)
                continue;
            auto op = [&](void *slot) -> int {
                const bf16 *keys = (const bf16 *)slot;
                const bf16 *values = (const bf16 *)((char *)slot + half);
                attn_decode_kernel<<<dim3(r->heads, b, chunks), 32 * DECODE_WARPS>>>(
                    (const bf16 *)r->work[0].p, keys, values, (bf16 *)r->work[1].p,
                    (float *)r->work[2].p, r->kv_heads, r->group, ctx, r->hd, scale);
                CUDA_TRY(r->c, cudaGetLastError());
                if (chunks > 1) {
                    attn_merge_kernel<<<dim3(r->heads, b), 128>>>(
                        (const float *)r->work[2].p, (bf16 *)r->work[1].p, r->heads, chunks,
                        r->hd);
                    CUDA_TRY(r->c, cudaGetLastError());
                }
                return 0;
            };
            double cache = 2.0 * half; // bytes read
            if (time_rotated(r, 2 * half, op, "op_attn_decode", (double)b * r->kv_heads, ctx,
                             r->group, cache, 4.0 * r->hd * r->heads * b * (double)ctx) != 0)
                return -1;
        }
    return 0;
}

int prefill_attention(ops_cuda *r, const blas_api *api, cublasHandle_t h)
{
    cuda_progress(r->c, "calibrate: operators: prefill attention (unfused)\n");
    float scale = 1.f / sqrtf((float)r->hd), beta = 0, one = 1;
    for (int T : GRID(r->c, PROMPTS)) {
        int rows = r->group * T, kv = r->kv_heads, hd = r->hd;
        size_t qb = (size_t)kv * rows * hd * 2, kb = (size_t)kv * T * hd * 2;
        size_t sb = (size_t)kv * rows * T * 2;
        if (qb + 2 * kb > r->pool_bytes || sb > r->work_bytes || qb > r->work_bytes)
            continue;
        auto op = [&](void *) -> int {
            const char *q = (const char *)r->pool.p, *k = q + qb, *v = k + kb;
            bf16 *s = (bf16 *)r->work[2].p;
            // scores (rows x T, row-major) = Q K^T per kv head: column-major S^T = K Q^T
            CUBLAS_TRY(r->c, api, api->gemm_strided_batched(
                h, CUBLAS_OP_T, CUBLAS_OP_N, T, rows, hd, &scale, k, CUDA_R_16BF, hd,
                (long long)T * hd, q, CUDA_R_16BF, hd, (long long)rows * hd, &beta, s,
                CUDA_R_16BF, T, (long long)rows * T, kv, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
            causal_softmax_kernel<<<(unsigned)(kv * rows), 256>>>(s, T, T);
            CUDA_TRY(r->c, cudaGetLastError());
            // out (rows x hd, row-major) = P V: column-major O^T = V^T P^T
            CUBLAS_TRY(r->c, api, api->gemm_strided_batched(
                h, CUBLAS_OP_N, CUBLAS_OP_N, hd, rows, T, &one, v, CUDA_R_16BF, hd,
                (long long)T * hd, s, CUDA_R_16BF, T, (long long)rows * T, &beta, r->work[1].p,
                CUDA_R_16BF, hd, (long long)rows * hd, kv, CUBLAS_COMPUTE_32F,
                CUBLAS_GEMM_DEFAULT));
            return 0;
        };
        double operands = (double)T * hd * (r->group + 2) * kv;
        if (time_rotated(r, 0, op, "op_attn_prefill", T, r->heads, hd, 2 * operands,
                         4.0 * hd * r->heads * (double)T * T / 2) != 0)
            return -1;
    }
    return 0;
}

int passes(ops_cuda *r)
{
    const model_spec *m = r->m;
    int hid = (int)m->hidden, qkv = (r->heads + 2 * r->kv_heads) * r->hd;
    const struct { pass_id id; const char *kind; int width; double bytes_per_elem; } kinds[] = {
        { P_NORM, "op_norm", hid, 4 },   { P_ROPE, "op_rope", (r->heads + r->kv_heads) * r->hd, 4 },
        { P_ACT, "op_act", (int)m->ffn, m->gated ? 6.0 : 4.0 },
        { P_ADD, "op_add", hid, 6 },     { P_EMBED, "op_embed", hid, 4 },
        { P_RESHAPE, "op_reshape", qkv, 4 }, { P_SAMPLE, "op_sample", (int)m->vocab, 12 },
    };
    cuda_progress(r->c, "calibrate: operators: norms, rotary, activation, residual adds, "
                  "embedding, copies, sampling\n");
    for (const auto &k : kinds)
        for (int t : GRID(r->c, TOKENS)) {
            if (k.id == P_SAMPLE && t > 64)
                continue; // logits for more than 64 sequences at once: not a step's
            size_t n = (size_t)t * k.width, elem = k.id == P_SAMPLE ? 4 : 2;
            if (3 * n * elem > r->pool_bytes || n * elem > r->work_bytes)
                continue;
            int rows = t, width = k.width, vocab = (int)m->vocab;
            size_t slot = k.id == P_EMBED ? 0 : 3 * n * elem;
            unsigned salt = 0;
            auto op = [&](void *p) -> int {
                bf16 *x = (bf16 *)p, *y = x + n, *z = y + n;
                switch (k.id) {
                case P_NORM:
                    norm_kernel<<<rows, 256>>>(x, (const bf16 *)r->work[3].p, y, width);
                    break;
                case P_ROPE:
                    rope_kernel<<<blocks_for(n / 2), 256>>>(x, y, n / 2, width);
                    break;
                case P_ACT:
                    act_kernel<<<blocks_for(n), 256>>>(x, m->gated ? y : nullptr, z, n);
                    break;
                case P_ADD:
                    add_kernel<<<blocks_for(n), 256>>>(x, y, z, n);
                    break;
                case P_EMBED:
                    embed_kernel<<<blocks_for(n), 256>>>((const bf16 *)r->pool.p,
                                                         (bf16 *)r->work[1].p, rows, width, vocab,
                                                         salt++);
                    break;
                case P_RESHAPE:
                    reshape_kernel<<<blocks_for(n), 256>>>(x, y, rows, width, r->hd);
                    break;
                case P_SAMPLE:
                    sample_kernel<<<rows, 256>>>((float *)p, (int *)r->work[1].p, width);
                    break;
                }
                CUDA_TRY(r->c, cudaGetLastError());
                return 0;
            };
            if (k.id == P_EMBED && (size_t)vocab * width * 2 > r->pool_bytes)
                continue;
            if (time_rotated(r, slot, op, k.kind, rows, width, 0, k.bytes_per_elem * (double)n,
                             0) != 0)
                return -1;
        }
    return 0;
}

int run(ops_cuda *r)
{
    cuda_ctx *c = r->c;
    size_t free_bytes = 0, total = 0;
    CUDA_TRY(c, cudaMemGetInfo(&free_bytes, &total));
    // the pool: four times the L2 (operands come from memory, as a step's other layers
    // leave them) and room for the largest weight matrix, within half the free memory
    const model_spec *m = r->m;
    size_t widest = (size_t)m->hidden * std::max<size_t>(std::max<size_t>(m->vocab, 2 * m->ffn),
                                                         (size_t)(r->heads + 2 * r->kv_heads) * r->hd) * 2;
    r->pool_bytes = std::max<size_t>({ (size_t)4 * c->prop.l2CacheSize, (size_t)512 << 20,
                                       2 * widest });
    r->work_bytes = (size_t)256 << 20;
    if (r->pool_bytes + 4 * r->work_bytes > free_bytes / 2) {
        snprintf(c->err, c->err_size, "%.0f MB of operands do not fit in half of the device's "
                 "%.0f MB free", (r->pool_bytes + 4 * r->work_bytes) / 1e6, free_bytes / 1e6);
        return -1;
    }
    CUDA_TRY(c, cudaMalloc(&r->pool.p, r->pool_bytes));
    for (auto &w : r->work)
        CUDA_TRY(c, cudaMalloc(&w.p, r->work_bytes));
    // small values: no overflow in the passes (fp32 logits read the same bytes as numbers)
    if (fill<bf16>(c, r->pool.p, r->pool_bytes / 2, 0.5f) != 0)
        return -1;
    for (auto &w : r->work)
        if (fill<bf16>(c, w.p, r->work_bytes / 2, 0.5f) != 0)
            return -1;
    blas_api api;
    if (cuda_blas_open(c, &api) != 0)
        return -1;
    blas_handles handles(&api);
    if (api.create(&handles.h) != CUBLAS_STATUS_SUCCESS) {
        snprintf(c->err, c->err_size, "cublasCreate failed (out of device memory, or a driver "
                 "older than cuBLAS %d)", CUBLAS_VER_MAJOR);
        return -1;
    }
    if (gemms(r, &api, handles.h) != 0 || decode_attention(r) != 0
        || prefill_attention(r, &api, handles.h) != 0 || passes(r) != 0)
        return -1;
    CUDA_TRY(c, cudaDeviceSynchronize());
    return 0;
}

} // namespace

extern "C" int calib_ops_cuda_run(const calib_options *o, const model_spec *m,
                                  calib_samples *out, calib_meta *meta, char *err,
                                  size_t err_size)
{
    cuda_ctx ctx;
    memset(&ctx, 0, sizeof ctx);
    cuda_ctx *c = &ctx;
    c->o = o, c->out = out, c->err = err, c->err_size = err_size;
    c->device = o->cuda_device;
    c->repeats = o->quick ? 5 : 11;
    c->target_s = o->quick ? 1e-3 : 5e-3;
    unsigned hd = m->head_dim ? m->head_dim : (m->heads ? m->hidden / m->heads : 0);
    if (!m->heads || !m->kv_heads || m->heads % m->kv_heads || !hd || hd > MAX_HEAD_DIM
        || (!m->head_dim && m->hidden % m->heads)) {
        snprintf(err, err_size, "model '%s': kv heads must divide heads and a head be at most "
                 "%d wide", m->name ? m->name : "?", MAX_HEAD_DIM);
        return -1;
    }
    int count = 0;
    CUDA_TRY(c, cudaGetDeviceCount(&count));
    CUDA_TRY(c, cudaSetDevice(c->device));
    CUDA_TRY(c, cudaGetDeviceProperties(&c->prop, c->device));
    if (!*meta->device) {
        snprintf(meta->device, sizeof meta->device, "%s", c->prop.name);
        meta->memory_bytes = (double)c->prop.totalGlobalMem;
        meta->cache_bytes = (double)c->prop.l2CacheSize;
        snprintf(meta->kind, sizeof meta->kind, "gpu");
        meta->threads = (unsigned)count;
        meta->quick = o->quick;
    }
    ops_cuda r;
    r.c = c, r.m = m, r.hd = (int)hd, r.heads = (int)m->heads, r.kv_heads = (int)m->kv_heads;
    r.group = (int)(m->heads / m->kv_heads);
    return run(&r);
}
