/* Training steps and the planner that picks a parallel setup (tensor, pipeline and data
 * parallelism, ZeRO, recomputation) for a model on a number of devices. */
#ifndef FLEETSIM_MODELS_PERF_TRAINING_H
#define FLEETSIM_MODELS_PERF_TRAINING_H

#include <stdbool.h>

#include "models/device.h"
#include "models/llm.h"
#include "models/memory.h"
#include "models/perf.h"

/* Ring all-reduce of `bytes` among n devices (training's alpha-beta form). */
double perf_allreduce_s(double bytes, unsigned n, double link_bytes_per_s, double latency_s);

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

#endif
