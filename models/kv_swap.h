/* The host tier of a replica's key-value cache, as a swap space or an offload tier.
 *
 * Swap: when the cache is full under
 * when_full = "swap", a preempted sequence's cache is copied to host memory over PCIe
 * and back when it is readmitted (vLLM's swap preemption), instead of being thrown
 * away and recomputed; a host tier that is full falls back to recomputing.
 *
 * A copy stalls the replica for latency + bytes / bandwidth: vLLM's scheduler issues
 * the step's swap-outs and swap-ins before the step's forward pass, on the same stream,
 * so the iteration waits for them.  Bytes are model_kv_bytes_per_token at the cache's
 * precision times the sequence's cached tokens (all layers, every KV head: the shards of
 * a tp replica move over their own links together, which the bandwidth counts).
 */
#ifndef FLEETSIM_MODELS_KV_SWAP_H
#define FLEETSIM_MODELS_KV_SWAP_H

#include <stdbool.h>
#include <stdint.h>

#include "models/device.h"

/* Of a PCIe x16 link's rate (device_spec.pcie_bytes_per_s, 128b/130b at gen 3 and
 * beyond), what pinned host<->device copies reach: NVIDIA's bandwidthTest and
 * nvbandwidth measure about 25 GB/s of gen 4's 32 (A100) and 50-55 GB/s of gen 5's 64
 * (H100), TLP headers and DMA overheads taking the rest. */
#define KV_SWAP_PCIE_ACHIEVED_SHARE 0.8
/* A copy's fixed cost: cudaMemcpyAsync's launch and the DMA engine's setup, some
 * microseconds (bandwidthTest's small-copy times), 10 us taken. */
#define KV_SWAP_LATENCY_S 10e-6

/* host_kv = { size, bandwidth, latency, offload } of a replica. */
typedef struct host_kv_spec {
    double size_bytes;         /* host memory the replica may fill; 0: no host tier */
    double bandwidth_bytes_per_s; /* each direction; 0: its devices' PCIe (below) */
    double latency_s;          /* per copy; < 0: KV_SWAP_LATENCY_S */
    /* An offload tier instead of swap's: the cache extends into the host memory, and
     * every iteration's attention reads the part of the running sequences' cache beyond
     * the device's share over PCIe (bytes / bandwidth, no latency: a stream of reads),
     * which is how a context longer than the device holds can be served at all. */
    bool offload;
} host_kv_spec;

/* Tokens of cache the offload tier adds to a replica (0 without one). */
double kv_offload_tokens(const host_kv_spec *h, double kv_bytes_per_token);

/* The bandwidth a replica's copies reach: the spec's, else `links` PCIe links of device
 * d at KV_SWAP_PCIE_ACHIEVED_SHARE (links: tp, each device moving its shard; 1 under
 * attention data parallel, where a sequence's cache is on one device). */
double kv_swap_bandwidth(const host_kv_spec *h, const device_spec *d, unsigned links);
double kv_swap_latency(const host_kv_spec *h);

/* Seconds one copy of `bytes` takes: latency + bytes / bandwidth. */
double kv_swap_copy_s(double bytes, double bandwidth_bytes_per_s, double latency_s);

/* What swapping did on a replica (after the warm-up). */
typedef struct kv_swap_stats {
    uint64_t swaps_out, swaps_in; /* sequences copied to host memory, and back */
    uint64_t recomputes;          /* preemptions that threw the cache away: under
                                     "preempt", or "swap" with the host tier full */
    double bytes;                 /* moved, both directions */
    double stall_s;               /* replica time spent waiting for copies */
    /* the offload tier: cache read from host memory by iterations, and their time
       waiting for it */
    double offload_bytes, offload_s;
} kv_swap_stats;

void kv_swap_stats_add(kv_swap_stats *sum, const kv_swap_stats *s);

#endif
