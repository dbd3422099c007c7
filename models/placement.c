/* Fleet state, placement policies and the fragmentation measure (see placement.h). */
#include "models/placement.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/fatal.h"

#define MILLI CLUSTER_GPU_MILLI
#define MAX_GPUS CLUSTER_MAX_GPUS_PER_NODE
#define MAX_MODELS 64

typedef struct fleet_node {
    uint32_t cpu_free, mem_free, cpu_cap, mem_cap;
    uint32_t free_total;      /* free GPU thousandths */
    uint32_t first;           /* index of its GPU 0 in gpu_fleet.gpu_free */
    uint32_t ngpus, full_free, max_free;
    uint32_t model;
    uint64_t share_sum;       /* sum over GPUs of free * share_above[free] */
    uint64_t frag;            /* F_n times the measured tasks, in thousandths */
} fleet_node;

struct gpu_fleet {
    fleet_node *nodes;
    size_t nnodes;
    uint16_t *gpu_free;
    char *models[MAX_MODELS];
    size_t nmodels;
    uint64_t capacity, free_total, frag_total;
    /* the measure */
    uint64_t measured;                  /* GPU tasks in it */
    uint64_t share_above[MILLI + 1];    /* [x]: measured shares of more than x thousandths */
    uint64_t whole;                     /* measured whole-GPU tasks */
    uint64_t whole_upto[MAX_GPUS + 1];  /* [k]: those on at most k GPUs */
    uint32_t cpu_min, mem_min;
};

static const char *const PLACEMENT_NAMES[GPU_PLACEMENT_COUNT] = {
    "first_fit", "best_fit", "fragmentation_aware", "whole_gpus",
};

const char *gpu_placement_name(gpu_placement p) { return PLACEMENT_NAMES[p]; }

int gpu_placement_parse(const char *name, gpu_placement *out)
{
    for (int p = 0; p < GPU_PLACEMENT_COUNT; p++) {
        if (!strcmp(name, PLACEMENT_NAMES[p])) {
            *out = (gpu_placement)p;
            return 0;
        }
    }
    return -1;
}

/* F_n for a node in the given state (see placement.h), times the measured tasks. */
static uint64_t node_frag(const gpu_fleet *f, uint32_t cpu_free, uint32_t mem_free,
                          uint32_t free_total, uint32_t full_free, uint64_t share_sum)
{
    if (cpu_free < f->cpu_min || mem_free < f->mem_min)
        return (uint64_t)free_total * f->measured;
    return share_sum + f->whole * free_total
           - (uint64_t)MILLI * full_free * f->whole_upto[full_free];
}

/* Recomputes a node's summaries after its GPUs changed, and the fleet's totals. */
static void refresh(gpu_fleet *f, fleet_node *x)
{
    const uint16_t *g = f->gpu_free + x->first;
    uint32_t total = 0, full = 0, max = 0;
    uint64_t share_sum = 0;
    for (uint32_t i = 0; i < x->ngpus; i++) {
        total += g[i];
        full += g[i] == MILLI;
        max = g[i] > max ? g[i] : max;
        share_sum += (uint64_t)g[i] * f->share_above[g[i]];
    }
    f->free_total = f->free_total - x->free_total + total;
    x->free_total = total;
    x->full_free = full;
    x->max_free = max;
    x->share_sum = share_sum;
    uint64_t frag = node_frag(f, x->cpu_free, x->mem_free, total, full, share_sum);
    f->frag_total = f->frag_total - x->frag + frag;
    x->frag = frag;
}

static void set_measure(gpu_fleet *f, const gpu_demand *measure, size_t nmeasure)
{
    uint64_t shares[MILLI + 1] = { 0 }, whole[MAX_GPUS + 1] = { 0 };
    f->cpu_min = f->mem_min = UINT32_MAX;
    for (size_t i = 0; i < nmeasure; i++) {
        const gpu_demand *d = &measure[i];
        if (d->num_gpu == 0)
            continue; /* uses no GPU: no GPU capacity is a fragment to it */
        f->measured++;
        f->cpu_min = d->cpu_milli < f->cpu_min ? d->cpu_milli : f->cpu_min;
        f->mem_min = d->memory_mib < f->mem_min ? d->memory_mib : f->mem_min;
        if (d->gpu_milli < MILLI)
            shares[d->gpu_milli]++;
        else
            whole[d->num_gpu]++;
    }
    if (!f->measured)
        f->cpu_min = f->mem_min = 0;
    uint64_t above = 0;
    for (int x = MILLI; x >= 0; x--) {
        f->share_above[x] = above;
        above += shares[x];
    }
    uint64_t upto = 0;
    for (int k = 0; k <= MAX_GPUS; k++) {
        upto += whole[k];
        f->whole_upto[k] = upto;
    }
    f->whole = upto;
}

gpu_fleet *gpu_fleet_create(const cluster_node *const *nodes, size_t nnodes,
                            const gpu_demand *measure, size_t nmeasure, char *err,
                            size_t err_size)
{
    size_t ngpus = 0;
    for (size_t i = 0; i < nnodes; i++)
        ngpus += nodes[i]->gpus;
    gpu_fleet *f = calloc(1, sizeof *f);
    if (!f || !(f->nodes = calloc(nnodes ? nnodes : 1, sizeof *f->nodes))
        || !(f->gpu_free = malloc((ngpus ? ngpus : 1) * sizeof *f->gpu_free)))
        sim_out_of_memory("out of memory creating a GPU fleet");
    f->nnodes = nnodes;
    set_measure(f, measure, nmeasure);
    size_t next = 0;
    for (size_t i = 0; i < nnodes; i++) {
        const cluster_node *c = nodes[i];
        fleet_node *x = &f->nodes[i];
        size_t m = 0;
        while (m < f->nmodels && strcmp(f->models[m], c->model))
            m++;
        if (m == f->nmodels) {
            if (m == MAX_MODELS) {
                snprintf(err, err_size, "node %s: more than %d GPU models in one fleet",
                         c->name, MAX_MODELS);
                gpu_fleet_free(f);
                return NULL;
            }
            if (!(f->models[f->nmodels++] = strdup(c->model)))
                sim_out_of_memory("out of memory creating a GPU fleet");
        }
        *x = (fleet_node){ .cpu_free = c->cpu_milli, .mem_free = c->memory_mib,
                           .cpu_cap = c->cpu_milli, .mem_cap = c->memory_mib,
                           .first = (uint32_t)next, .ngpus = c->gpus, .model = (uint32_t)m };
        for (uint32_t g = 0; g < c->gpus; g++)
            f->gpu_free[next++] = MILLI;
        f->capacity += (uint64_t)MILLI * c->gpus;
        refresh(f, x);
    }
    return f;
}

void gpu_fleet_free(gpu_fleet *f)
{
    if (!f)
        return;
    for (size_t m = 0; m < f->nmodels; m++)
        free(f->models[m]);
    free(f->nodes);
    free(f->gpu_free);
    free(f);
}

size_t gpu_fleet_models(const gpu_fleet *f) { return f->nmodels; }
const char *gpu_fleet_model_name(const gpu_fleet *f, size_t m) { return f->models[m]; }
uint64_t gpu_fleet_capacity_milli(const gpu_fleet *f) { return f->capacity; }
uint64_t gpu_fleet_allocated_milli(const gpu_fleet *f) { return f->capacity - f->free_total; }

unsigned gpu_fleet_gpu_free_milli(const gpu_fleet *f, size_t n, unsigned g)
{
    return f->gpu_free[f->nodes[n].first + g];
}

double gpu_fleet_fragmentation(const gpu_fleet *f)
{
    if (!f->capacity || !f->measured)
        return 0;
    return (double)f->frag_total / ((double)f->capacity * (double)f->measured);
}

static bool model_ok(const fleet_node *x, const gpu_demand *d)
{
    return d->num_gpu == 0 || (d->models >> x->model & 1);
}

bool gpu_fleet_could_fit(const gpu_fleet *f, size_t n, const gpu_demand *d)
{
    const fleet_node *x = &f->nodes[n];
    return model_ok(x, d) && x->cpu_cap >= d->cpu_milli && x->mem_cap >= d->memory_mib
           && x->ngpus >= d->num_gpu;
}

bool gpu_fleet_fits(const gpu_fleet *f, size_t n, const gpu_demand *d)
{
    const fleet_node *x = &f->nodes[n];
    if (x->cpu_free < d->cpu_milli || x->mem_free < d->memory_mib || !model_ok(x, d))
        return false;
    if (d->num_gpu == 0)
        return true;
    if (d->gpu_milli < MILLI)
        return x->max_free >= d->gpu_milli;
    return x->full_free >= d->num_gpu;
}

/* The k entirely free GPUs of lowest index (any k free GPUs leave the same state). */
static uint64_t first_free_gpus(const gpu_fleet *f, const fleet_node *x, uint32_t k)
{
    uint64_t mask = 0;
    const uint16_t *g = f->gpu_free + x->first;
    for (uint32_t i = 0; i < x->ngpus && k > 0; i++) {
        if (g[i] == MILLI) {
            mask |= (uint64_t)1 << i;
            k--;
        }
    }
    return mask;
}

/* The fragmentation-aware choice on one node, and its increase of F_n. */
static uint64_t fgd_on(const gpu_fleet *f, const fleet_node *x, const gpu_demand *d,
                       int64_t *delta)
{
    uint32_t cpu = x->cpu_free - d->cpu_milli, mem = x->mem_free - d->memory_mib;
    if (d->num_gpu == 0 || d->gpu_milli == MILLI) {
        uint32_t k = d->num_gpu;
        uint64_t after = node_frag(f, cpu, mem, x->free_total - MILLI * k, x->full_free - k,
                                   x->share_sum); /* free GPUs add 0 to share_sum */
        *delta = (int64_t)after - (int64_t)x->frag;
        return k ? first_free_gpus(f, x, k) : 0;
    }
    const uint16_t *g = f->gpu_free + x->first;
    uint32_t m = d->gpu_milli;
    uint64_t best_gpu = 0;
    uint32_t best_free = UINT32_MAX;
    int64_t best = INT64_MAX;
    for (uint32_t i = 0; i < x->ngpus; i++) {
        if (g[i] < m)
            continue;
        uint64_t share_sum = x->share_sum - (uint64_t)g[i] * f->share_above[g[i]]
                             + (uint64_t)(g[i] - m) * f->share_above[g[i] - m];
        uint64_t after = node_frag(f, cpu, mem, x->free_total - m,
                                   x->full_free - (g[i] == MILLI), share_sum);
        int64_t change = (int64_t)after - (int64_t)x->frag;
        if (change < best || (change == best && g[i] < best_free)) {
            best = change;
            best_free = g[i];
            best_gpu = (uint64_t)1 << i;
        }
    }
    *delta = best;
    return best_gpu;
}

gpu_slot gpu_fleet_choose_on(const gpu_fleet *f, gpu_placement p, size_t n,
                             const gpu_demand *d)
{
    const fleet_node *x = &f->nodes[n];
    gpu_slot s = { (int32_t)n, 0 };
    if (d->num_gpu == 0)
        return s;
    if (p == PLACE_FRAGMENTATION_AWARE) {
        int64_t delta;
        s.gpus = fgd_on(f, x, d, &delta);
        return s;
    }
    if (d->gpu_milli == MILLI) {
        s.gpus = first_free_gpus(f, x, d->num_gpu);
        return s;
    }
    const uint16_t *g = f->gpu_free + x->first;
    uint32_t best = 0, best_free = UINT32_MAX;
    for (uint32_t i = 0; i < x->ngpus; i++) {
        if (g[i] < d->gpu_milli || g[i] >= best_free)
            continue;
        best = i;
        best_free = g[i];
        if (p != PLACE_BEST_FIT)
            break; /* first fit: the first GPU with room */
    }
    s.gpus = (uint64_t)1 << best;
    return s;
}

gpu_slot gpu_fleet_choose(const gpu_fleet *f, gpu_placement p, const gpu_demand *d)
{
    uint64_t used = (uint64_t)d->num_gpu * d->gpu_milli;
    size_t best = SIZE_MAX;
    uint64_t best_gpu_left = UINT64_MAX, best_cpu_left = UINT64_MAX, best_gpus = 0;
    int64_t best_delta = INT64_MAX;
    for (size_t n = 0; n < f->nnodes; n++) {
        if (!gpu_fleet_fits(f, n, d))
            continue;
        const fleet_node *x = &f->nodes[n];
        if (p == PLACE_FIRST_FIT || p == PLACE_WHOLE_GPUS)
            return gpu_fleet_choose_on(f, p, n, d);
        int64_t delta = 0;
        uint64_t gpus = 0;
        if (p == PLACE_FRAGMENTATION_AWARE) {
            gpus = fgd_on(f, x, d, &delta);
            if (delta > best_delta)
                continue;
        }
        uint64_t gpu_left = d->num_gpu ? x->free_total - used : 0;
        uint64_t cpu_left = x->cpu_free - d->cpu_milli;
        if (delta < best_delta || gpu_left < best_gpu_left
            || (gpu_left == best_gpu_left && cpu_left < best_cpu_left)) {
            best = n;
            best_delta = delta;
            best_gpu_left = gpu_left;
            best_cpu_left = cpu_left;
            best_gpus = gpus;
        }
    }
    if (best == SIZE_MAX)
        return (gpu_slot){ -1, 0 };
    if (p == PLACE_FRAGMENTATION_AWARE)
        return (gpu_slot){ (int32_t)best, best_gpus };
    return gpu_fleet_choose_on(f, p, best, d);
}

void gpu_fleet_take(gpu_fleet *f, gpu_slot s, const gpu_demand *d)
{
    fleet_node *x = &f->nodes[s.node];
    x->cpu_free -= d->cpu_milli;
    x->mem_free -= d->memory_mib;
    uint16_t *g = f->gpu_free + x->first;
    for (uint32_t i = 0; i < x->ngpus; i++)
        if (s.gpus >> i & 1)
            g[i] = (uint16_t)(g[i] - d->gpu_milli);
    refresh(f, x);
}

void gpu_fleet_give(gpu_fleet *f, gpu_slot s, const gpu_demand *d)
{
    fleet_node *x = &f->nodes[s.node];
    x->cpu_free += d->cpu_milli;
    x->mem_free += d->memory_mib;
    uint16_t *g = f->gpu_free + x->first;
    for (uint32_t i = 0; i < x->ngpus; i++)
        if (s.gpus >> i & 1)
            g[i] = (uint16_t)(g[i] + d->gpu_milli);
    refresh(f, x);
}

uint64_t gpu_fleet_node_fragmentation_milli(const gpu_fleet *f, size_t n, const gpu_demand *d)
{
    const fleet_node *x = &f->nodes[n];
    if (d->num_gpu == 0)
        return 0;
    if (x->cpu_free < d->cpu_milli || x->mem_free < d->memory_mib || !model_ok(x, d))
        return x->free_total;
    if (d->gpu_milli == MILLI)
        return x->full_free < d->num_gpu ? x->free_total
                                         : x->free_total - (uint64_t)MILLI * x->full_free;
    uint64_t sum = 0;
    const uint16_t *g = f->gpu_free + x->first;
    for (uint32_t i = 0; i < x->ngpus; i++)
        if (g[i] < d->gpu_milli)
            sum += g[i];
    return sum;
}
