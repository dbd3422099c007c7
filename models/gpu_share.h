/* Sharing one physical GPU among several members (serving replicas, jobs): how much
 * slower each runs, on the compute-bound and the memory-bound side of the roofline,
 * given which members are busy and how noisy the host is.
 *
 *   - SHARE_NONE: one member with the GPU to itself; only the noise applies.
 *   - SHARE_MIG: each member is a MIG slice (models/mig.h) with its own SMs, memory
 *     controllers and L2.  The partition is not perfect: slices still share the memory
 *     fabric, HBM stacks' refresh and thermal/power headroom, so a slice's memory-bound
 *     phases slow by 1 + bandwidth_interference x (busy other slices) / (slices - 1).
 *     GPU_SHARE_DEFAULT_BANDWIDTH_INTERFERENCE (0.15, i.e. up to 15% slower with every
 *     other slice streaming) is an assumption: NVIDIA presents MIG slices as fully
 *     isolated, while published comparisons find co-located work losing up to ~30% to
 *     memory contention without such partitioning (MPS, shared/reference); half of that
 *     is our guess for what partitioning leaves.  Compute is not slowed.
 *   - SHARE_TIME_SLICING: members take turns on the whole GPU, round robin, slice_s each,
 *     with a context switch of switch_s between turns.  With k busy members, each runs
 *     slice_s out of every k (slice_s + switch_s): its compute and memory factors are
 *     k (1 + switch_s / slice_s); alone (k = 1) it runs at full speed, no switching.  A
 *     fluid approximation: it spreads the turns evenly over an iteration instead of
 *     modelling which iteration waits for which turn.
 *
 * The noise factors of the host (models/noisy.h) multiply every member's factors.  The
 * group pushes each member's combined factors through `apply` whenever they change, and
 * only then (a member's factors start at 1 and 1).
 */
#ifndef FLEETSIM_MODELS_GPU_SHARE_H
#define FLEETSIM_MODELS_GPU_SHARE_H

#include <stdbool.h>

#define GPU_SHARE_DEFAULT_BANDWIDTH_INTERFERENCE 0.15
/* Defaults for fs.time_slicing, assumptions: a turn of the order of the GPU scheduler's
 * timeslice (NVIDIA's minimum is 1 ms) and a context switch of tens of microseconds. */
#define GPU_SHARE_DEFAULT_SLICE_S 2e-3
#define GPU_SHARE_DEFAULT_SWITCH_S 50e-6

typedef enum share_mode { SHARE_NONE, SHARE_MIG, SHARE_TIME_SLICING } share_mode;

/* How a pool's GPUs are shared, as a scenario says it. */
typedef struct sharing_spec {
    share_mode mode;
    char *mig_profile;             /* SHARE_MIG: "1g.10gb" (owned) */
    double bandwidth_interference; /* SHARE_MIG, >= 0 */
    unsigned tenants;              /* SHARE_TIME_SLICING: members per GPU, >= 2 */
    double slice_s, switch_s;      /* SHARE_TIME_SLICING: > 0, >= 0 */
} sharing_spec;

/* Frees mig_profile.  NULL-safe. */
void sharing_spec_release(sharing_spec *spec);

/* Receives a member's combined factors (>= 1). */
typedef void (*gpu_share_apply_fn)(void *member_context, double compute_factor,
                                   double memory_factor);

typedef struct gpu_share gpu_share;
typedef struct gpu_share_member gpu_share_member;

/* A group of `members` (>= 1; for MIG, the slices of one GPU; for time-slicing, its
 * tenants) with every member idle and no noise.  spec is copied (its mig_profile is not
 * used).  NULL if out of memory. */
gpu_share *gpu_share_create(const sharing_spec *spec, unsigned members, gpu_share_apply_fn apply);
/* NULL is fine. */
void gpu_share_free(gpu_share *g);

/* Names the context passed to apply for a member (e.g. its replica) and pushes the
 * member's factors to it if they are not 1 and 1. */
void gpu_share_attach(gpu_share *g, unsigned member, void *member_context);

/* A member's busy flag changed; pushes the factors that changed. */
void gpu_share_set_busy(gpu_share *g, unsigned member, bool busy);

/* The host's noise changed (factors >= 1); pushes the factors that changed. */
void gpu_share_set_noise(gpu_share *g, double compute_factor, double memory_factor);

/* The same, shaped for callbacks: `member` from gpu_share_member fits replica_config's
 * on_busy/busy_context, and gpu_share_noise_changed with the group as context fits
 * noisy_create's `changed`. */
gpu_share_member *gpu_share_member_of(gpu_share *g, unsigned member);
void gpu_share_busy_changed(void *member, bool busy);
void gpu_share_noise_changed(void *group, double compute_factor, double memory_factor);

/* A member's current factors, and the members busy now. */
void gpu_share_factors(const gpu_share *g, unsigned member, double *compute_factor,
                       double *memory_factor);
unsigned gpu_share_busy_count(const gpu_share *g);

#endif
