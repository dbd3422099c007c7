/* A calibration profile: what a device was measured to achieve (fleetsim calibrate,
 * kernels/), and how it replaces the datasheet figures the performance model uses.
 *
 * Achieved figures are absolute (FLOP/s, B/s, s).  The perf fields are relative to the
 * datasheet of the catalog entry the calibration compared with (compute_efficiency =
 * achieved large-GEMM FLOP/s / datasheet peak, and so on), so the profile also reads as
 * "this device gets 72% of its datasheet".  lua/profile_load.h reads one from its Lua
 * file; kernels/calib_profile.h writes one.
 */
#ifndef FLEETSIM_MODELS_PROFILE_H
#define FLEETSIM_MODELS_PROFILE_H

#include <stdbool.h>

#include "models/device.h"
#include "models/perf.h"

#define PROFILE_TEXT_MAX 128

/* The operator classes whose measurements' spread a profile records. */
typedef enum profile_spread_class {
    SPREAD_GEMM,
    SPREAD_ATTN_DECODE,
    SPREAD_ATTN_PREFILL,
    SPREAD_PASSES,          /* the memory passes together: the median of their kinds' */
    SPREAD_CLASSES
} profile_spread_class;

extern const char *const profile_spread_names[SPREAD_CLASSES];

typedef struct device_profile {
    char device[PROFILE_TEXT_MAX];  /* what was measured ("NVIDIA H200") */
    char kind[8];                   /* "gpu" or "cpu" */
    char catalog[PROFILE_TEXT_MAX]; /* the catalog entry compared with, "" if none */
    char host[PROFILE_TEXT_MAX], date[32];
    /* achieved; 0 = not measured */
    double flops[PREC_COUNT];       /* dense GEMM asymptote per precision, FLOP/s (OP/s) */
    double fp64_flops;              /* CPUs: informative, the model has no fp64 */
    double bandwidth_bytes_per_s;   /* streaming memory bandwidth */
    double link_bytes_per_s;        /* between two devices, one direction (NCCL ring) */
    double host_link_bytes_per_s;   /* pinned host-to-device copies */
    double host_link_latency_s;
    double launch_s;                /* empty kernel launch (GPU), tiny BLAS call (CPU) */
    double memory_bytes;            /* the measured machine's memory (a GPU's as CUDA
                                     * reports it, a CPU's physical memory) */
    /* relative to the datasheet; NaN = absent (the device's default stays) */
    perf_profile perf;
    /* perf.has_operators: the operator table was fitted at this precision's peak
     * (perf.operators.peak_flops) and bandwidth, on the model named here */
    precision operators_precision;
    char operators_model[PROFILE_TEXT_MAX];
    /* the spread of the operator measurements: per class, the median over its shapes of
     * (q3 - q1) / median of a shape's repeats; 0 = not recorded */
    double spread[SPREAD_CLASSES];
} device_profile;

/* A profile with nothing measured and every perf field absent. */
void profile_init(device_profile *p);

/* Replaces d's figures with p's achieved ones and fills perf from p:
 *  - each measured precision's peak becomes its achieved FLOP/s; a precision d has but
 *    the profile did not measure is scaled by p's compute_efficiency (its datasheet
 *    share); compute_efficiency then becomes 1, since the peaks include it;
 *  - a measured bandwidth replaces d's, and bandwidth_efficiency becomes 1;
 *  - a measured device link sets the NVLink total (2 x one direction), a measured host
 *    link the PCIe rate; the measured machine's memory replaces d's;
 *  - every other perf field p has (tokens_half, kernel_launch_s, link_latency_s, ...)
 *    replaces the one in perf, which the caller fills first (perf_default_profile).
 * Only numbers change: d's strings stay the caller's. */
void profile_apply(const device_profile *p, device_spec *d, perf_profile *perf);
/* With an operator table (p->perf.has_operators), after the above: the table replaces
 * the family (its precision, training and cluster rows stay the device's family's); d's
 * peaks are scaled so that operators_precision's is the table's peak_flops, d's
 * bandwidth becomes the table's, and the anchors become the table's own (GEMM
 * efficiencies and floor, host work unless the profile's perf sets it), so perf.c uses
 * the table as fitted. */

/* A profile measured on one kind of device (kind "cpu" or "gpu") applies to that kind
 * only: 0, or -1 with "measured on a cpu ('AMD EPYC'), not a gpu like 'H100-SXM' ..." in
 * msg.  A profile without a kind passes. */
int profile_check_kind(const device_profile *p, const device_spec *d, char *msg,
                       size_t msg_size);

/* The relative spread of a step priced with p's operators: each class's spread weighed
 * by the time its operators take in ops (a step's classes vary together: a busy machine
 * slows them all), over total.  0 where p records none. */
double profile_step_spread(const device_profile *p, const perf_breakdown *ops, double total_s);

#endif
