/* Memory of a model on devices: weights, key-value cache, and training state
 * (weights, gradients, Adam's optimizer states, activations), per device, with the
 * check that it fits and the smallest parallelism that would. */
#ifndef FLEETSIM_MODELS_MEMORY_H
#define FLEETSIM_MODELS_MEMORY_H

#include <stdbool.h>

#include "models/device.h"
#include "models/llm.h"

/* Of a device's memory, what a serving or training process can use where no engine says
 * otherwise: the rest goes to the CUDA context, allocator fragmentation and workspaces
 * (vLLM's default gpu_memory_utilization is the same 0.9). */
#define MEMORY_USABLE_FRACTION 0.9

/* How an engine sizes the cache from a device's memory M (device_spec.memory_bytes, what
 * CUDA reports). */
typedef enum memory_rule {
    /* vLLM: share x M holds everything the engine allocates; the weights and the cache
     * get what is left of it after the memory outside PyTorch's allocator (CUDA context,
     * NCCL and library workspaces), the activation peak of a profiling step and the CUDA
     * graphs */
    MEMORY_SHARE_OF_TOTAL,
    /* SGLang: share x M (mem_fraction_static) holds the weights and the cache only; the
     * activations, graphs and workspaces live in the rest */
    MEMORY_STATIC_POOL,
    /* TensorRT-LLM: the cache takes share (free_gpu_memory_fraction) of what is free after
     * the weights, the runtime, the activation workspace and the graphs */
    MEMORY_SHARE_OF_FREE,
    MEMORY_RULE_COUNT
} memory_rule;

/* "share_of_total", "static_pool", "share_of_free". */
const char *memory_rule_name(memory_rule r);

/* What an engine keeps of each device's memory before the cache, for one model at any
 * tensor parallelism t (models/engine.h fills one for a workload).  A NULL reserve
 * wherever one is taken: MEMORY_USABLE_FRACTION of M for the weights and the cache,
 * nothing else. */
typedef struct memory_reserve {
    memory_rule rule;
    double share;             /* of M; 0 under MEMORY_STATIC_POOL: M less what is reserved
                               * (SGLang's own rule for mem_fraction_static) */
    double runtime_bytes;     /* outside the allocator: CUDA context, library workspaces */
    double runtime_tp_bytes;  /* more when t > 1: NCCL's and custom all-reduce buffers */
    double runtime_rank_bytes;/* more for each of the t ranks */
    double activation_split_bytes; /* the activation peak of a step: the part split over */
    double activation_whole_bytes; /* t devices, and the part every device holds whole, */
    double activation_least_bytes; /* and at least this (a sampler's logits, held whole) */
    double graph_bytes;       /* captured CUDA graphs */
    double floor_bytes;       /* at least this much reserved in all ... */
    double floor_above_bytes; /* ... on a device of more than this (0: on every device) */
} memory_reserve;

/* What r keeps of each of t devices of device_bytes outside the weights and the cache (0
 * for NULL). */
double memory_reserved_bytes(const memory_reserve *r, unsigned t, double device_bytes);

/* The same for a device of an attention-data-parallel group of n (memory_inference_dp):
 * it runs its own share of the batch whole (the activation peak unsplit) and still talks
 * to the other n - 1. */
double memory_reserved_dp_bytes(const memory_reserve *r, unsigned n, double device_bytes);

/* The activation peak r keeps on each of t devices (0 for NULL). */
double memory_activation_bytes(const memory_reserve *r, unsigned t);

/* The bytes of a device of M bytes (one of t) that the weights (weights_bytes of them)
 * and the cache may take together under reserve r (NULL: MEMORY_USABLE_FRACTION of M). */
double memory_usable_bytes(const memory_reserve *r, unsigned t, double device_bytes,
                           double weights_bytes);

typedef struct inference_memory {
    double weights_bytes;           /* per device */
    double kv_bytes_per_token;      /* per device */
    double usable_bytes;            /* per device */
    double kv_capacity_tokens;      /* tokens of context the replica can hold */
    bool fits;                      /* the weights and at least one token of cache */
} inference_memory;

/* Weights in `weights`, cache in `kv`, split over tp devices (tensor parallelism). */
inference_memory memory_inference(const model_spec *m, const device_spec *d,
                                  precision weights, precision kv, unsigned tp);

/* The same under an engine's reserve r (NULL: memory_inference's). */
inference_memory memory_inference_reserved(const model_spec *m, const device_spec *d,
                                           precision weights, precision kv, unsigned tp,
                                           const memory_reserve *r);

/* With attention data parallel over n devices (perf_setup's attention_dp): each device
 * holds the attention, dense and embedding weights whole and 1/n of the routed experts,
 * and the whole cache of its own sequences; kv_capacity_tokens is the n devices'
 * together.  A dense model, or n = 1, is memory_inference_reserved's.  r as there. */
inference_memory memory_inference_dp(const model_spec *m, const device_spec *d,
                                     precision weights, precision kv, unsigned n,
                                     const memory_reserve *r);

/* memory_inference_reserved or memory_inference_dp, as attention_dp says. */
inference_memory memory_inference_for(const model_spec *m, const device_spec *d,
                                      precision weights, precision kv, unsigned tp,
                                      bool attention_dp, const memory_reserve *r);

/* A replica that also holds a draft model for speculative decoding, on the same tp
 * devices in the same precisions: the draft's weights take their share of the memory and
 * every token of context has a cache in both models, so kv_capacity_tokens is (usable -
 * both weights) / (both caches' bytes a token); weights_bytes and kv_bytes_per_token are
 * the two's together.  draft NULL: memory_inference's. */
inference_memory memory_inference_with_draft(const model_spec *m, const model_spec *draft,
                                             const device_spec *d, precision weights,
                                             precision kv, unsigned tp,
                                             const memory_reserve *r);

/* The same where the replica may run attention data parallel over its tp devices (a
 * mixture target, tp > 1: memory_inference_dp's layout): each device then holds the
 * draft too, a mixture draft's routed experts spread as the target's and the rest whole
 * (a dense draft whole on every device), and the whole cache of its own sequences in
 * both models; kv_capacity_tokens is the devices' together.  Otherwise
 * memory_inference_with_draft's. */
inference_memory memory_inference_with_draft_for(const model_spec *m, const model_spec *draft,
                                                 const device_spec *d, precision weights,
                                                 precision kv, unsigned tp, bool attention_dp,
                                                 const memory_reserve *r);

/* The smallest power-of-two tensor parallelism, at most max_tp, whose replica holds the
 * weights and `context` tokens of cache under reserve r (NULL as above); 0 if none does. */
unsigned memory_min_tp(const model_spec *m, const device_spec *d, precision weights,
                       precision kv, double context, unsigned max_tp,
                       const memory_reserve *r);

/* How expert parallelism's tokens travel between the ranks, as Megatron names its token
 * dispatchers (--moe-token-dispatcher-type alltoall, or flex with the deepep or hybridep
 * backend) */
typedef enum training_dispatcher {
    TRAINING_DISPATCH_ENGINE,   /* the profile's way (perf_profile.per_node_dispatch) */
    TRAINING_DISPATCH_ALLTOALL, /* NCCL's all-to-all: a copy of a token for each remote expert */
    TRAINING_DISPATCH_DEEPEP,   /* DeepEP: a copy for each remote node, forwarded within it
                                 * over NVLink */
    TRAINING_DISPATCH_HYBRIDEP, /* NVIDIA's Hybrid-EP (DeepEP's hybrid-ep branch): the same
                                 * path, RDMA across nodes and NVLink within */
} training_dispatcher;

typedef struct training_setup {
    unsigned tp, pp, dp;      /* tensor, pipeline and data parallelism: gpus = tp pp cp dp */
    unsigned cp;              /* context parallelism: each sequence split over cp devices
                               * (0 is read as 1) */
    unsigned ep;              /* expert parallelism: a mixture's routed experts spread over
                               * ep of the data-parallel ranks (0 is read as 1) */
    unsigned zero_stage;      /* 0-3: what data parallelism shards (ZeRO; 3 is FSDP) */
    unsigned recompute_layers;/* layers per pipeline stage recomputed in full in the
                               * backward pass; the others keep their activations */
    unsigned virtual_stages;  /* model chunks per pipeline stage: 1 (or 0) is 1F1B, more
                               * is the interleaved schedule */
    bool dualpipe;            /* DeepSeek's DualPipe schedule in place of 1F1B (with
                               * virtual_stages 1): each device holds two stages, one of
                               * each direction's pipeline */
    bool lora;                /* low-rank adapters trained on a frozen base model: the
                               * base's weights take no gradients and no optimizer state
                               * (the adapters', a fraction of a percent at the ranks
                               * used, are not counted) */
    bool zero_bubble;         /* the zero-bubble schedule ZB-H1 in place of 1F1B (Qi et al.
                               * 2024): each backward pass split into its data gradients
                               * (B) and its weight gradients (W), W deferred into the
                               * bubble; 1F1B's memory */
    bool selective;           /* selective recomputation (Korthikanti et al. 2022): the
                               * attention core of each layer not recomputed in full is
                               * recomputed in the backward pass */
    unsigned etp;             /* expert tensor parallelism: each routed expert split over
                               * etp devices (0: tp, Megatron's default); ep x etp of the
                               * tp x cp x dp ranks of a stage form an expert group
                               * (Megatron's MoE parallel folding) */
    unsigned shard_ranks;     /* ZeRO-3 hybrid sharding (HSDP): the states sharded within
                               * groups of this many data-parallel ranks, replicated across
                               * groups; 0: over all of them */
    bool no_sequence_parallel;/* tp > 1 without sequence parallelism (Korthikanti et al.
                               * 2022): each device keeps the layer's input, norms and
                               * residual stream whole; false, the default: with it */
    bool no_dp_overlap;       /* the data-parallel collectives in series with the passes
                               * (Megatron-LM without --overlap-grad-reduce and
                               * --overlap-param-gather; FSDP without prefetching): each
                               * shows whole; false, the default: run under the passes */
    bool no_tp_overlap;       /* tensor parallelism's collectives in series with the
                               * products (Megatron without --tp-comm-overlap); false, the
                               * default: the engine's share of them hidden
                               * (perf_profile.train_tp_overlap) */
    training_dispatcher dispatcher; /* expert parallelism's token dispatcher */
    bool ep_overlap;          /* expert parallelism's dispatch and combine run while another
                               * micro-batch computes (Megatron's batch-level overlap,
                               * --overlap-moe-expert-parallel-comm), as DualPipe's do */
    unsigned micro_batch;     /* sequences per micro-batch */
    unsigned seq_len;         /* tokens per sequence */
    unsigned microbatches;    /* per data-parallel rank per step */
    /* the framework's bytes a parameter (models/engine.h): of the weights as held, of
     * the gradients, of the optimizer's state; 0 in all three: 2, 2 and 12 */
    double weight_bytes, gradient_bytes, optimizer_bytes;
} training_setup;

typedef struct training_memory {
    double weights_bytes, gradient_bytes, optimizer_bytes, activation_bytes; /* per GPU */
    double logits_bytes;      /* the last stage's fp32 logits of one micro-batch */
    double total_bytes, usable_bytes;
    bool fits;
} training_memory;

/* Mixed-precision Adam: 2 bytes of weights, 2 of gradients and 12 of optimizer state
 * (fp32 master weights, momentum, variance) per parameter, 16 in all (ZeRO, arXiv
 * 1910.02054), unless the setup states its framework's (Megatron's fp32 gradients: 2, 4,
 * 12; FSDP2's fp32 sharded parameters: 4, 4, 8); ZeRO stage 1 shards the optimizer over the dp x cp ranks, 2 also the
 * gradients, 3 (FSDP) also the weights, which then need two layers gathered at a time.
 * With expert parallelism the routed experts are split ep ways more, and their states
 * shard over the tp x cp x dp / (ep x etp) ranks that hold the same experts.
 * Activations per layer and micro-batch in 16-bit, after Korthikanti et al. 2022 (arXiv
 * 2205.05198) with attention flash-style (the scores are never stored, which is what
 * their selective recomputation achieves): s b h (10 + 24 / t) bytes, 34 s b h / t with
 * sequence parallelism (taken whenever t > 1); a layer recomputed in full keeps only its
 * input, 2 s b h, split along the sequence too, 2 s b h / t; s is the sequence's share of
 * one device (seq_len / cp).  Routed experts split over ep x etp (etp 0: tp), their
 * states over the t cp dp / (ep etp) ranks holding the same experts; HSDP (shard_ranks)
 * shards ZeRO-3's states within its groups.  The first
 * stage holds min(pp, micro-batches) micro-batches in flight, (1 + (pp - 1) / (pp v))
 * times that with v virtual stages; the last stage holds instead one in flight plus the
 * fp32 logits, 4 s b vocab / t bytes (the loss is taken in fp32).  The total is the
 * larger of the two stages' (one stage when pp = 1).  DualPipe (DeepSeek-V3 report, arXiv
 * 2412.19437, section 3.2.1 and its Table 2) keeps two stages' parameters on each device,
 * each stage also held by its mirror pipeline rank: twice the weights and (unsharded)
 * gradients, the optimizer's shard the same over twice the ranks, and pp + 1
 * micro-batches' activations in flight.  With setup.lora the base is frozen: its 16-bit
 * weights (sharded as ZeRO-3 shards them), no gradients, no optimizer state. */
training_memory memory_training(const model_spec *m, const device_spec *d,
                                const training_setup *setup);

/* The activations of one micro-batch in one layer: kept (recomputed false) or recomputed
 * in full (true). */
double memory_training_layer_activations(const model_spec *m, const training_setup *setup,
                                         bool recomputed);

#endif
