/* The kernel families' formulas (models/kernel_constants.h); tools/fit_kernels.py fits
 * the same ones. */
#include "models/kernel_constants.h"

#include <assert.h>
#include <math.h>
#include <stddef.h>
#include <string.h>

static double sat(double x, double half) { return half > 0 ? x / (x + half) : 1; }

const perf_kernel_family *perf_kernel_family_named(const char *name)
{
    for (const perf_kernel_family *const *f = perf_kernel_families; name && *f; f++)
        if (!strcmp((*f)->name, name))
            return *f;
    return NULL;
}

double perf_kernel_gemm_s(const perf_kernel_family *f, double tokens, double k, double n,
                          double weight_bytes)
{
    assert(f->cls == KERNEL_GEMM);
    const perf_gemm_constants *c = &f->gemm;
    double compute = 2 * tokens * k * n
                     / (f->peak_flops * c->efficiency * sat(tokens, c->tokens_half));
    double memory = (k * n * weight_bytes + 2 * (tokens * k + tokens * n))
                    / (f->bandwidth_bytes_per_s * c->bandwidth_efficiency);
    return c->floor_s + fmax(compute, memory) + fmin(c->overlap, 1) * fmin(compute, memory);
}

double perf_kernel_attn_prefill_s(const perf_kernel_family *f, double full_flops,
                                  double causal_flops)
{
    assert(f->cls == KERNEL_ATTN_PREFILL);
    const perf_attn_prefill_constants *c = &f->attn_prefill;
    return c->floor_s + full_flops / (f->peak_flops * c->cached_efficiency)
           + causal_flops / (f->peak_flops * c->new_efficiency);
}

double perf_kernel_attn_backward_s(const perf_kernel_family *f, double forward_flops,
                                   double seq_tokens)
{
    assert(f->cls == KERNEL_ATTN_BACKWARD);
    const perf_attn_backward_constants *c = &f->attn_backward;
    return c->floor_s + 2.5 * forward_flops
                            / (f->peak_flops * c->efficiency * sat(seq_tokens, c->tokens_half));
}

static double cache_read_s(const perf_kernel_family *f, const perf_attn_decode_constants *c,
                           double width, double bytes)
{
    if (!(c->efficiency > 0))
        return 0;
    return bytes / (f->bandwidth_bytes_per_s * c->efficiency * sat(width, c->width_half));
}

double perf_kernel_attn_decode_s(const perf_kernel_family *f, double seqs_x_kv_heads,
                                 double cache_bytes)
{
    assert(f->cls == KERNEL_ATTN_DECODE);
    return f->attn_decode.floor_s + cache_read_s(f, &f->attn_decode, seqs_x_kv_heads,
                                                 cache_bytes);
}

double perf_kernel_mla_decode_s(const perf_kernel_family *f, double seqs, double cache_bytes,
                                double flops)
{
    assert(f->cls == KERNEL_MLA_DECODE);
    const perf_mla_decode_constants *c = &f->mla_decode;
    double compute = flops / (f->peak_flops * c->compute_efficiency);
    return c->memory.floor_s + fmax(cache_read_s(f, &c->memory, seqs, cache_bytes), compute);
}

double perf_kernel_grouped_gemm_s(const perf_kernel_family *f, double groups,
                                  double tokens_per_group, double n, double k,
                                  double weight_bytes)
{
    assert(f->cls == KERNEL_GROUPED_GEMM);
    const perf_grouped_gemm_constants *c = &f->grouped_gemm;
    double g = groups, m = tokens_per_group;
    double compute = 2 * g * m * n * k / (f->peak_flops * c->efficiency * sat(m, c->tokens_half));
    double memory = (g * n * k * weight_bytes + 2 * g * m * (k + n))
                    / (f->bandwidth_bytes_per_s * c->bandwidth_efficiency);
    return c->floor_s + fmax(compute, memory);
}

double perf_kernel_alltoall_s(const perf_kernel_family *f, bool combine, double bytes)
{
    assert(f->cls == KERNEL_ALLTOALL);
    const perf_alltoall_constants *c = combine ? &f->combine : &f->dispatch;
    return c->alpha_s + bytes / (c->efficiency * c->link_bytes_per_s);
}

double perf_kernel_collective_s(const perf_kernel_family *f, unsigned n, double bytes)
{
    assert(f->cls == KERNEL_COLLECTIVE);
    if (n <= 1)
        return 0;
    double share = f->collective_kind == COLLECTIVE_ALL_REDUCE ? 2.0 * (n - 1) / n
                                                               : (double)(n - 1) / n;
    const perf_allreduce_constants *c = &f->collective;
    return c->alpha_s + share * bytes / (c->efficiency * c->link_bytes_per_s);
}
