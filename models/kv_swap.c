/* The host tier's copy times (see kv_swap.h). */
#include "models/kv_swap.h"

#include <math.h>

double kv_swap_bandwidth(const host_kv_spec *h, const device_spec *d, unsigned links)
{
    if (h->bandwidth_bytes_per_s > 0)
        return h->bandwidth_bytes_per_s;
    return (links ? links : 1) * d->pcie_bytes_per_s * KV_SWAP_PCIE_ACHIEVED_SHARE;
}

double kv_swap_latency(const host_kv_spec *h)
{
    return h->latency_s >= 0 ? h->latency_s : KV_SWAP_LATENCY_S;
}

double kv_swap_copy_s(double bytes, double bandwidth_bytes_per_s, double latency_s)
{
    return latency_s + bytes / bandwidth_bytes_per_s;
}

double kv_offload_tokens(const host_kv_spec *h, double kv_bytes_per_token)
{
    return h->offload && h->size_bytes > 0 ? floor(h->size_bytes / kv_bytes_per_token) : 0;
}

void kv_swap_stats_add(kv_swap_stats *sum, const kv_swap_stats *s)
{
    sum->swaps_out += s->swaps_out;
    sum->swaps_in += s->swaps_in;
    sum->recomputes += s->recomputes;
    sum->bytes += s->bytes;
    sum->stall_s += s->stall_s;
    sum->offload_bytes += s->offload_bytes;
    sum->offload_s += s->offload_s;
}
