/* How long model operations take on a device: a roofline per operation,
 *
 *     time = max(FLOPs / (peak x compute efficiency), bytes / (bandwidth x bandwidth
 *            efficiency)) + kernel launches + exposed communication,
 *
 * with a compute efficiency that falls for operations with few tokens (small batches
 * use a device badly) and for narrow matrices (a layer split over many tensor-parallel
 * devices): efficiency = compute_efficiency x tokens / (tokens + tokens_half) x
 * width / (width + width_half), width being hidden / tp.  Collectives follow the alpha-beta model of a ring: 2 (n - 1) steps of
 * latency and 2 (n - 1) / n of the message over the link.  The same formulas serve CPUs.
 *
 * The profile's numbers are defaults from published utilisation until a calibration
 * profile (kernels/) replaces them; README.md ("Performance model") gives their
 * sources and what the model leaves out.
 */
#ifndef FLEETSIM_MODELS_PERF_H
#define FLEETSIM_MODELS_PERF_H

#include <stdbool.h>

#include "models/device.h"
#include "models/llm.h"
#include "models/memory.h"

typedef struct perf_profile {
    double compute_efficiency;   /* of peak, for large matrix products */
    double tokens_half;          /* tokens per product at half that efficiency */
    double width_half;           /* matrix width (hidden / tp) at half that efficiency */
    double bandwidth_efficiency; /* of peak memory bandwidth, when streaming */
    double kernel_launch_s;      /* per kernel launch */
    double kernels_per_layer;
    double link_latency_s;       /* alpha of a collective step */
    double network_bytes_per_s;  /* per device, between nodes (one direction) */
    unsigned devices_per_node;
    double dp_overlap;           /* fraction of the gradient all-reduce hidden by backward */
} perf_profile;

/* Defaults for a device (GPU or CPU). */
perf_profile perf_default_profile(const device_spec *d);

/* One operation's time and what bounds it. */
typedef struct perf_time {
    double total_s;
    double compute_s;  /* FLOPs at achieved throughput */
    double memory_s;   /* bytes at achieved bandwidth */
    double comm_s;     /* exposed communication */
    double launch_s;   /* kernel launches */
    bool compute_bound;
} perf_time;

/* Ring all-reduce of `bytes` among n devices. */
double perf_allreduce_s(double bytes, unsigned n, double link_bytes_per_s, double latency_s);

/* Prefill of `batch` prompts of `prompt` tokens on a replica of tp devices. */
perf_time perf_prefill(const model_spec *m, const device_spec *d, const perf_profile *p,
                       precision prec, unsigned tp, unsigned batch, double prompt);

/* One decode iteration of `batch` sequences at a mean context of `context` tokens. */
perf_time perf_decode_step(const model_spec *m, const device_spec *d, const perf_profile *p,
                           precision prec, unsigned tp, unsigned batch, double context);

/* One iteration of continuous batching: `decode_seqs` sequences generate a token each,
 * attending to decode_context tokens in all, while prefill_tokens prompt tokens are
 * processed whose attention spans prefill_attention token pairs (a chunk of c tokens
 * starting after s cached ones: c s + c^2 / 2). */
perf_time perf_iteration(const model_spec *m, const device_spec *d, const perf_profile *p,
                         precision prec, unsigned tp, double decode_seqs, double decode_context,
                         double prefill_tokens, double prefill_attention);

/* The parts of a pure-decode iteration that grow with context, so that the k-th of a run
 * of iterations with a fixed batch costs max(compute0 + compute1 k, memory0 + memory1 k)
 * + fixed (all in seconds). */
typedef struct decode_cost {
    double compute0, compute1, memory0, memory1, fixed;
} decode_cost;

decode_cost perf_decode_cost(const model_spec *m, const device_spec *d, const perf_profile *p,
                             precision prec, unsigned tp, double decode_seqs,
                             double decode_context);

/* Time of iterations 0..n-1 of a decode run: the closed form of the sum (each of the two
 * rooflines is linear in k, and their maximum is linear on each side of one crossing). */
double decode_cost_sum(const decode_cost *c, double n);

/* The number of whole iterations of a decode run that end within `elapsed` seconds. */
double decode_cost_iterations_within(const decode_cost *c, double elapsed, double max_n);

/* Training. */
typedef struct training_estimate {
    training_setup setup;
    training_memory memory;
    double step_s;
    double tokens_per_step;
    double compute_s, tp_comm_s, bubble_s, dp_comm_s; /* parts of a step */
    double mfu;            /* model FLOPs (6 N per token) over peak */
} training_estimate;

/* One step of `global_batch` sequences of seq_len tokens on gpus devices with the given
 * parallelism (setup.dp and microbatches are derived). */
training_estimate perf_training_step(const model_spec *m, const device_spec *d,
                                     const perf_profile *p, precision prec,
                                     training_setup setup, unsigned gpus,
                                     unsigned global_batch);

/* The fastest setup that fits: tp a power of two within a node, pp a power of two
 * dividing the layers, ZeRO-1, recomputation only when needed.  Returns false (and the
 * closest miss in *out, fits false) when nothing fits. */
bool perf_training_plan(const model_spec *m, const device_spec *d, const perf_profile *p,
                        precision prec, unsigned gpus, unsigned seq_len, unsigned global_batch,
                        training_estimate *out);

/* Best offline throughput (output tokens per second) on gpus devices for requests of
 * prompt + output tokens: over tensor parallelism and batch size within memory. */
typedef struct throughput_plan {
    double tokens_per_s;
    unsigned tp, batch, replicas;
} throughput_plan;

throughput_plan perf_best_throughput(const model_spec *m, const device_spec *d,
                                     const perf_profile *p, precision prec, unsigned gpus,
                                     double prompt, double output);

#endif
