/* The physical GPUs of a pool whose units are shared (MIG slices, time-slicing tenants)
 * or whose hosts are noisy: a gpu_host per GPU in use, opened by the first replica that
 * runs on it and closed with its last.  One registry serves every replica on the pool,
 * whichever model it serves: models packed on a GPU (several models on one pool, each
 * replica on a unit) slow each other as the GPU's sharing says, exactly as replicas of
 * one model do. */
#ifndef FLEETSIM_MODELS_GPU_HOSTS_H
#define FLEETSIM_MODELS_GPU_HOSTS_H

#include <stdbool.h>
#include <stdint.h>

#include <gsl/gsl_rng.h>

#include "models/gpu_share.h"
#include "models/noisy.h"
#include "sim/engine.h"

typedef struct gpu_host {
    unsigned gpu;          /* the pool's unit number / units_per_gpu */
    gpu_share *share;      /* its members: the units, pushing speeds to their replicas */
    noisy_process *noise;  /* NULL without noisy neighbours */
    gsl_rng *rng;
    unsigned attached;     /* replicas on it now */
} gpu_host;

typedef struct gpu_hosts_config {
    const sharing_spec *sharing; /* NULL: whole GPUs */
    unsigned units_per_gpu;      /* 0 or 1: a unit is a GPU */
    const noisy_spec *noisy;     /* NULL: quiet hosts */
    const char *pool_name;       /* names the noise streams ("pool" when NULL) */
    uint64_t seed, replication;
} gpu_hosts_config;

typedef struct gpu_hosts gpu_hosts;

/* Whether a pool so configured needs hosts at all (sharing or noise). */
bool gpu_hosts_needed(const gpu_hosts_config *c);

/* An empty registry; config's pointers must outlive it.  Out of memory is fatal. */
gpu_hosts *gpu_hosts_create(sim_engine *engine, const gpu_hosts_config *c);
/* Closes the hosts still open.  NULL is fine. */
void gpu_hosts_free(gpu_hosts *h);

/* The host of GPU number gpu, opened if no replica runs on it (its noise then starts,
 * from a stream naming the opening: a host reopened after a repair draws new noise),
 * with one more replica attached.  The caller attaches its member (gpu_share_attach). */
gpu_host *gpu_hosts_join(gpu_hosts *h, unsigned gpu);

/* A replica leaves its unit `member` of host: idle there, detached, and the host closed
 * when it was the last. */
void gpu_hosts_leave(gpu_hosts *h, gpu_host *host, unsigned member);

#endif
