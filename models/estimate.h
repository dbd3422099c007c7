/* The analysis behind `fleetsim estimate`: one model on one kind of device, for
 * inference (memory, prefill, decode, best throughput) and training (memory, step time,
 * MFU, days and GPU-hours for a token budget, productive and with failures). */
#ifndef FLEETSIM_MODELS_ESTIMATE_H
#define FLEETSIM_MODELS_ESTIMATE_H

#include <stdbool.h>
#include <stddef.h>

#include "models/device.h"
#include "models/engine.h"
#include "models/goodput.h"
#include "models/llm.h"
#include "models/memory.h"
#include "models/perf.h"
#include "models/perf_training.h"
#include "models/profile.h"
#include "models/training_schedule.h"

/* The halves of an estimate: serving (inference) and training, each computed and refused
 * apart from the other. */
#define ESTIMATE_SERVING 1u
#define ESTIMATE_TRAINING 2u
#define ESTIMATE_BOTH (ESTIMATE_SERVING | ESTIMATE_TRAINING)

/* How a mixture's replica spreads over its devices (perf_setup's expert_parallel and
 * attention_dp): experts split like a dense FFN (tensor parallel), held whole (expert
 * parallel), or held whole under data-parallel attention. */
typedef enum estimate_layout {
    ESTIMATE_LAYOUT_BEST,   /* the one with the best offline throughput (a request only) */
    ESTIMATE_LAYOUT_TP, ESTIMATE_LAYOUT_EP, ESTIMATE_LAYOUT_DP,
} estimate_layout;

typedef struct estimate_request {
    unsigned halves;       /* ESTIMATE_SERVING, ESTIMATE_TRAINING or both; 0: both */
    unsigned gpus;         /* devices available (>= 1) */
    unsigned tp;           /* tensor parallelism for inference; 0 = the smallest that fits */
    unsigned pp;           /* pipeline parallelism for training; 0 = choose */
    bool dualpipe;         /* training on DeepSeek's DualPipe schedule (imposed) */
    bool lora;             /* training low-rank adapters on the frozen model */
    /* training's plan as stated, where train_stated: every field set in train_within is
     * imposed on the planner (TRAINING_FREE's values are free; the engine's bytes a
     * parameter are filled in), else nothing but pp, dualpipe and lora above, which are
     * imposed either way; the schedule by name (training_plan_scheduled) */
    bool train_stated;
    training_constraints train_within;
    training_schedule schedule;
    precision prec;        /* the weights' */
    bool kv_given;         /* kv_prec is the cache's; else precision_cache(prec) */
    precision kv_prec;
    unsigned batch;        /* sequences decoded together */
    double prompt, output; /* tokens per request */
    double train_tokens;   /* 0 = 20 per parameter (Chinchilla) */
    unsigned seq_len;      /* training sequence length; 0 = min(context, 4096) */
    unsigned global_batch; /* sequences per training step; 0 = about 4M tokens */
    const perf_profile *profile; /* a calibration; NULL: perf_default_profile(device) */
    const device_profile *calibration; /* the profile as measured, from calibration_file:
                                        * what the outputs name as its (NULL: none) */
    const char *calibration_file;
    const engine_spec *engine;   /* the serving engine (host work, memory); NULL: none
                                  * applied (the family's host work in series, 0.9 of the
                                  * memory for weights and cache) */
    const engine_spec *train_engine; /* the training framework (state a parameter); NULL:
                                  * 2 + 2 + 12 bytes */
    /* speculative decoding: k tokens proposed a round (0: none), each accepted with
     * probability acceptance, by draft (a catalog model on the same devices, in the same
     * precision) or, when NULL, by a lookup that costs nothing on the GPU */
    unsigned speculate_k;
    double acceptance;
    const model_spec *draft;
    estimate_layout layout;  /* a mixture's on replicas of several devices */
    /* training's goodput (models/goodput.h): each figure not given takes its default
     * (GOODPUT_DEFAULTS); the interval then is Young's optimum rounded to whole steps (at
     * least one), the write the checkpointed state at the storage's rate */
    bool mtbf_given, every_given, write_given, restart_given;
    double mtbf_s;             /* per GPU; 0 or INFINITY: no failures */
    double checkpoint_every_s; /* training between checkpoints; 0: never */
    double checkpoint_write_s; /* the pause to write one */
    double restart_s;          /* paid after each failure */
    double straggler;          /* share stragglers stretch training by; 0: none (always
                                * given: the default is 0) */
} estimate_request;

#define ESTIMATE_SPEC_BATCHES 6

/* Speculative decoding at one batch size: time per output token with and without. */
typedef struct estimate_speculation {
    unsigned batch;
    double plain_s, speculative_s;
} estimate_speculation;

typedef struct estimate_result {
    precision kv_prec;
    double params, params_active, weights_bytes, kv_bytes_per_token;
    /* inference, on replicas of tp devices */
    unsigned tp, min_tp;
    /* a mixture on several devices: the layout used, and each layout's best offline
     * throughput (0 where its replica does not fit; indexed by estimate_layout) */
    estimate_layout layout;
    bool layouts_compared;
    double layout_tokens_per_s[4];
    inference_memory memory;
    memory_reserve reserve;       /* what the engine keeps (has_reserve) */
    bool has_reserve;
    bool fits;
    double max_batch;             /* sequences of prompt + output tokens per replica */
    perf_time prefill, first_token, decode;
    perf_breakdown first_token_ops, decode_ops; /* per operator, for the explanation */
    unsigned batch;               /* the decode batch: --batch within max_batch */
    double decode_tokens_per_s;   /* batch / decode step */
    /* power (models/power.h, no cap): each device's mean draw in the first token's
     * prefill and in the decode step, and the replica's joules per token of each */
    double prefill_w, decode_w, prefill_j_per_token, decode_j_per_token;
    double spec_tokens;           /* tokens a speculative round yields (0: not asked) */
    unsigned nspec;               /* batch sizes of 1, 4, 16, 64, 256, 1024 within max_batch */
    estimate_speculation spec[ESTIMATE_SPEC_BATCHES];
    throughput_plan throughput;
    /* what was asked and what could not be answered: the halves computed
     * (ESTIMATE_SERVING, ESTIMATE_TRAINING) and those of them refused, each with its cause
     * and numbers (serving: the weights and cache that fit no replica, and the smallest
     * tensor parallelism that would; training: the planner's refusal, and the fewest
     * devices that would fit the same stated plan) */
    unsigned halves, refused;
    char serving_refusal[768], train_refusal[512];
    /* training */
    precision train_precision;    /* the products': bf16 where the request's precision is
                                   * no training one on the device (train_precision_why) */
    char train_precision_why[200];
    training_estimate train;
    bool train_fits;
    unsigned train_min_gpus;      /* when it does not fit on gpus: the fewest that would */
    double train_tokens, train_flops, train_s, train_gpu_hours;
    /* the same run with failures, restarts and checkpoint stalls (where it fits): the
     * inputs used (the request's or the defaults) and the expectation */
    double checkpoint_bytes;      /* the state one checkpoint writes (weights, optimizer) */
    goodput_inputs goodput_in;
    goodput_result goodput;
} estimate_result;

/* Fills out with each half asked, apart: a half that cannot be answered is refused in out
 * (out->refused, its message) and does not stop the other.  Returns 0 when at least one
 * half asked was answered; -1 with a message in err for a request that cannot run (a
 * --tp that does not divide --gpus, a goodput figure out of range; out->refused 0) or
 * when every half asked was refused (err: the first refusal, the serving's when both
 * were asked; out->refused == out->halves, each message in out). */
int estimate_run(const model_spec *m, const device_spec *d, const estimate_request *req,
                 estimate_result *out, char *err, size_t err_size);

#endif
