/* The state of a GPU cluster under fractional-GPU tasks, the placement policies that
 * choose where a task goes, and the fragmentation measure (used by models/gpu_tasks.h).
 *
 * A node has CPU milli-cores, memory MiB and GPUs, each GPU with its free thousandths
 * (0..1000).  A task takes CPU and memory on one node and either a share of one GPU
 * (num_gpu = 1, gpu_milli < 1000), or num_gpu whole, entirely free GPUs of that node, or
 * no GPU at all.
 *
 * Policies (remaining ties go to the lower node index, then the lower GPU index):
 * - FIRST_FIT: the first node in list order that fits; on it, the first GPU with room
 *   (a share) or the first free GPUs (whole GPUs).
 * - BEST_FIT: the node that leaves the least free GPU capacity (sum of its GPUs' free
 *   thousandths after placement), then the least free CPU; on it, the GPU with the least
 *   free thousandths that still fits.  A CPU-only task: the node leaving the least free
 *   CPU.
 * - FRAGMENTATION_AWARE: the (node, GPU) that least increases the expected
 *   fragmentation F_n defined below (after "Beware of Fragmentation", Weng et al., USENIX
 *   ATC 2023, in our own formulation); among equal increases, as BEST_FIT would (many
 *   placements tie, e.g. a CPU-only task, or a share on any of several empty nodes, and
 *   first-fit ties would always wear down the first, often the largest, node).
 * - WHOLE_GPUS: the baseline of dedicated GPUs; the caller rounds every share up to a
 *   whole GPU, and the placement is first-fit.
 *
 * Fragmentation.  For a task size m, F_n(m) is the free GPU capacity of node n that a
 * task of size m could not use:
 * - every free thousandth, if the node lacks the CPU or memory (see below);
 * - a share m (thousandths of one GPU): the free thousandths of every GPU with less than
 *   m free (if no GPU has m free, that is all of them);
 * - k whole GPUs: every free thousandth if fewer than k GPUs are entirely free, else the
 *   free thousandths of the partly used GPUs.
 * The expected fragmentation F_n is the mean of F_n(m) over the GPU tasks' sizes (the
 * "measure": the sizes of the workload to replay, known in advance as in the paper,
 * CPU-only tasks left out since they use no GPU).  The CPU test uses the smallest CPU
 * and memory any measured task asks for: a node below either can host none of them.
 * gpu_spec constraints are left out of the measure (a share of a model the node lacks
 * still counts as usable).  Sums are kept in integers (thousandths times task counts),
 * so the cluster's total is exact and updated in O(GPUs of a node) per change.
 */
#ifndef FLEETSIM_MODELS_PLACEMENT_H
#define FLEETSIM_MODELS_PLACEMENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "models/cluster_trace.h"

typedef enum gpu_placement {
    PLACE_FIRST_FIT,
    PLACE_BEST_FIT,
    PLACE_FRAGMENTATION_AWARE,
    PLACE_WHOLE_GPUS,
} gpu_placement;

#define GPU_PLACEMENT_COUNT 4

/* "first_fit", "best_fit", "fragmentation_aware", "whole_gpus". */
const char *gpu_placement_name(gpu_placement p);
/* 0, or -1 for an unknown name. */
int gpu_placement_parse(const char *name, gpu_placement *out);

/* What a task asks for, as placed (after rounding up for WHOLE_GPUS). */
typedef struct gpu_demand {
    uint32_t cpu_milli, memory_mib;
    uint32_t num_gpu;      /* 0: CPU only */
    uint32_t gpu_milli;    /* per GPU: < 1000 a share of one GPU, 1000 whole GPUs */
    uint64_t models;       /* bit m: the node model of index m is accepted */
} gpu_demand;

/* Where a task runs: a node, and the GPUs of that node it uses (bit g: GPU g). */
typedef struct gpu_slot {
    int32_t node;          /* -1: nowhere */
    uint64_t gpus;
} gpu_slot;

typedef struct gpu_fleet gpu_fleet;

/* The fleet of the given nodes (all free), with the fragmentation measure of the given
 * demands (the GPU ones count).  Models are numbered in order of first appearance;
 * at most 64 distinct models (else NULL and a message).  Aborts if out of memory. */
gpu_fleet *gpu_fleet_create(const cluster_node *const *nodes, size_t nnodes,
                            const gpu_demand *measure, size_t nmeasure, char *err,
                            size_t err_size);
/* NULL is fine. */
void gpu_fleet_free(gpu_fleet *f);

/* The fleet's distinct GPU models (index m is bit m of gpu_demand.models). */
size_t gpu_fleet_models(const gpu_fleet *f);
const char *gpu_fleet_model_name(const gpu_fleet *f, size_t m);

/* Whether node n could take the demand if it were empty. */
bool gpu_fleet_could_fit(const gpu_fleet *f, size_t n, const gpu_demand *d);
/* Whether node n can take it now. */
bool gpu_fleet_fits(const gpu_fleet *f, size_t n, const gpu_demand *d);

/* The slot the policy chooses for d over all nodes (node -1 when none fits), or on node
 * n alone (gpu_fleet_choose_on, which assumes gpu_fleet_fits(f, n, d)). */
gpu_slot gpu_fleet_choose(const gpu_fleet *f, gpu_placement p, const gpu_demand *d);
gpu_slot gpu_fleet_choose_on(const gpu_fleet *f, gpu_placement p, size_t n,
                             const gpu_demand *d);

/* Takes the slot's resources for d, or gives them back. */
void gpu_fleet_take(gpu_fleet *f, gpu_slot s, const gpu_demand *d);
void gpu_fleet_give(gpu_fleet *f, gpu_slot s, const gpu_demand *d);

/* Total GPU thousandths, and those allocated now. */
uint64_t gpu_fleet_capacity_milli(const gpu_fleet *f);
uint64_t gpu_fleet_allocated_milli(const gpu_fleet *f);

/* Free thousandths of GPU g of node n. */
unsigned gpu_fleet_gpu_free_milli(const gpu_fleet *f, size_t n, unsigned g);

/* The expected fragmentation of the whole fleet as a fraction of its GPU capacity:
 * sum over nodes of F_n over capacity (0 with no GPU or no measured task). */
double gpu_fleet_fragmentation(const gpu_fleet *f);

/* F_n(m) of node n for one demand, in thousandths (the fragmentation against one task). */
uint64_t gpu_fleet_node_fragmentation_milli(const gpu_fleet *f, size_t n, const gpu_demand *d);

#endif
