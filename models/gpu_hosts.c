#include "models/gpu_hosts.h"

#include <stdio.h>
#include <stdlib.h>

#include "models/replica.h"
#include "sim/array.h"
#include "sim/fatal.h"
#include "sim/rng.h"

struct gpu_hosts {
    sim_engine *engine;
    gpu_hosts_config config;
    gpu_host **hosts;      /* by physical GPU number; NULL where none is in use */
    size_t nhosts;
    uint64_t opens;        /* hosts opened so far: names their noise streams */
};

bool gpu_hosts_needed(const gpu_hosts_config *c)
{
    return c->noisy || (c->sharing && c->sharing->mode != SHARE_NONE);
}

gpu_hosts *gpu_hosts_create(sim_engine *engine, const gpu_hosts_config *c)
{
    gpu_hosts *h = calloc(1, sizeof *h);
    if (!h)
        sim_out_of_memory("out of memory for GPU hosts");
    h->engine = engine;
    h->config = *c;
    return h;
}

static void close_host(gpu_hosts *h, gpu_host *host)
{
    h->hosts[host->gpu] = NULL;
    noisy_free(host->noise);
    gsl_rng_free(host->rng);
    gpu_share_free(host->share);
    free(host);
}

void gpu_hosts_free(gpu_hosts *h)
{
    if (!h)
        return;
    for (size_t k = 0; k < h->nhosts; k++)
        if (h->hosts[k])
            close_host(h, h->hosts[k]);
    free(h->hosts);
    free(h);
}

/* A unit's replica (NULL: none now) runs at the speed its host's sharing gives it. */
static void apply_speed(void *member_context, double compute_factor, double memory_factor)
{
    if (member_context)
        replica_set_speed(member_context, compute_factor, memory_factor);
}

gpu_host *gpu_hosts_join(gpu_hosts *h, unsigned gpu)
{
    h->hosts = sim_array_grow_zeroed(h->hosts, &h->nhosts, (size_t)gpu + 1, sizeof *h->hosts,
                                     "GPU hosts"); /* NULL: no host open on that GPU yet */
    gpu_host *host = h->hosts[gpu];
    if (!host) {
        const gpu_hosts_config *c = &h->config;
        static const sharing_spec whole = { .mode = SHARE_NONE };
        unsigned members = c->units_per_gpu ? c->units_per_gpu : 1;
        host = calloc(1, sizeof *host);
        if (!host || !(host->share = gpu_share_create(c->sharing ? c->sharing : &whole,
                                                      members, apply_speed)))
            sim_out_of_memory("out of memory for GPU hosts");
        host->gpu = gpu;
        if (c->noisy) {
            char stream[256];
            snprintf(stream, sizeof stream, "%s.noisy.%u.%llu",
                     c->pool_name ? c->pool_name : "pool", gpu,
                     (unsigned long long)h->opens++);
            host->rng = sim_rng_stream(c->seed, c->replication, stream);
            host->noise = noisy_create(h->engine, c->noisy, host->rng,
                                       gpu_share_noise_changed, host->share);
            if (!host->noise)
                sim_out_of_memory("out of memory for GPU hosts");
            noisy_start(host->noise);
        }
        h->hosts[gpu] = host;
    }
    host->attached++;
    return host;
}

void gpu_hosts_leave(gpu_hosts *h, gpu_host *host, unsigned member)
{
    gpu_share_set_busy(host->share, member, false);
    gpu_share_attach(host->share, member, NULL);
    if (--host->attached == 0)
        close_host(h, host);
}
