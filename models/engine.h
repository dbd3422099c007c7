/* Serving engines and training frameworks as the performance and memory models see
 * them: which kernel family runs each operator class, the host's work per iteration and
 * how much of it the engine runs while the GPU computes, the batch sizes it captures in
 * CUDA graphs, what it reserves of a device's memory before the cache, and for training
 * the bytes of state a parameter costs.  The catalog is data (lua/fleetsim/engines.lua,
 * each value with its source and how it was set); lua/catalog.c fills these.
 *
 * A workload names its engine (fs.inference / fs.training `engine`, estimate --engine,
 * validate's engine column); the loader applies it once, to the workload's perf_profile
 * (engine_apply_profile) and memory (engine_memory_reserve), so the hot path reads
 * numbers and never looks an engine up by name.
 *
 * Host work that overlaps: an engine that schedules the next batch while the GPU runs
 * this one (SGLang's overlap scheduler, vLLM V1's asynchronous scheduling, TensorRT-LLM's
 * C++ executor) hides the part `host_overlap` of its host work H under the GPU's step G:
 * a step costs max(G, overlap H) + (1 - overlap) H; a serial engine (overlap 0) pays
 * G + H. */
#ifndef FLEETSIM_MODELS_ENGINE_H
#define FLEETSIM_MODELS_ENGINE_H

#include <stdbool.h>

#include "models/device.h"
#include "models/llm.h"
#include "models/memory.h"
#include "models/perf.h"
#include "models/perf_training.h"

/* The operator classes an engine picks a kernel family for. */
typedef enum engine_class {
    ENGINE_GEMM,         /* dense projections (its precision's library: cuBLAS, CUTLASS fp8) */
    ENGINE_ATTN_PREFILL, /* attention over a prompt (FlashAttention-2/3, cuDNN, XQA) */
    ENGINE_ATTN_DECODE,  /* attention of one token over the cache (paged decode, FlashMLA) */
    ENGINE_MOE_GEMM,     /* a mixture's experts (fused MoE, grouped GEMMs) */
    ENGINE_ALLTOALL,     /* expert-parallel dispatch and combine (NCCL, DeepEP) */
    ENGINE_COLLECTIVES,  /* all-reduce and the other collectives (NCCL ring, NVLS) */
    ENGINE_CLASS_COUNT
} engine_class;

/* "gemm", "attention_prefill", ... (the catalog's keys of `kernels`). */
const char *engine_class_name(engine_class c);

typedef struct engine_spec {
    char *name;                /* "vllm", "sglang", ... */
    char *describes;           /* the engine and versions the profile stands for */
    bool training;             /* a training framework (fs.training), else a serving engine */
    char *kernels[ENGINE_CLASS_COUNT]; /* each class's kernel family, in words (the
                                * breakdown's column); "operators" is the fit set's */
    /* the fitted families that price a class (models/kernel_constants.h) where the device
     * takes the h100 table's shares; NULL: the table's.  Wired: attention_prefill
     * (KERNEL_ATTN_PREFILL) and moe_gemm (KERNEL_GROUPED_GEMM) */
    const perf_kernel_family *families[ENGINE_CLASS_COUNT];
    /* a training framework's attention backward (KERNEL_ATTN_BACKWARD), on the same
     * devices; NULL: 2.5 times the forward's FLOPs at the forward's rate */
    const perf_kernel_family *attn_backward_family;
    /* a training framework's experts' weight gradients (KERNEL_GROUPED_GEMM: the tokens
     * are the reduction), on the same devices; NULL: at the forward's grouped GEMM rate */
    const perf_kernel_family *moe_wgrad_family;
    /* Host work per iteration: base + per sequence, and more with tensor parallelism; NaN
     * in host_s: the device family's measured figures (the operator set's engine). */
    double host_s, host_per_seq_s, host_tp_s, host_tp_per_seq_s;
    bool draft_iterations;     /* a draft model's steps are iterations of their own
                                * (perf_profile.draft_iterations) */
    bool dispatch_fp8, per_node_dispatch, two_batch_overlap; /* the all-to-all (perf.h) */
    bool host_local_workers;   /* with the family's figures: its tensor-parallel term (Ray's
                                * worker traffic) not charged, the workers local processes */
    double host_overlap;       /* share of the host work run while the GPU computes: 0-1 */
    bool host_measured;        /* the figures are a measurement's (else stated parameters) */
    char *host_source;         /* how the host figures were set */
    unsigned cuda_graph_max_batch; /* decode batches up to it replay a captured graph (0:
                                * none); informational until launches are modelled apart */
    unsigned max_batch, max_tokens; /* its defaults of sequences and tokens an iteration (a
                                * workload's max_batch, max_tokens when it gives none) */
    /* Its smaller defaults on a smaller device (engine_batch_defaults): on a CPU, on a GPU
     * of less than smaller_below_bytes as CUDA reports it, or on one whose catalog name
     * contains smaller_named (case aside; "" none).  smaller_max_batch 0: none. */
    unsigned smaller_max_batch, smaller_max_tokens;
    double smaller_below_bytes;
    char smaller_named[32];
    /* Memory (serving): the rule (models/memory.h) and its share (0 under a static pool:
     * the device less what is reserved, SGLang's own rule), what lives outside the
     * allocator on each device (more with tensor parallelism: NCCL's and custom all-reduce
     * buffers, once or for each rank), the CUDA graphs', the activation peak of a step of
     * token_budget tokens (a flat activation_bytes_per_token, else activation_factor x the
     * live bytes of one token, engine_activation_bytes_per_token), and the least reserved
     * on a device of more than floor_above_bytes. */
    memory_rule memory_rule;
    double memory_share;
    double runtime_bytes, runtime_tp_bytes, runtime_rank_bytes;
    double cuda_graph_bytes;
    double token_budget;       /* tokens of the profiling step */
    double activation_bytes_per_token;
    double activation_factor;
    bool activation_split;     /* the peak splits over tensor parallelism (TensorRT-LLM's
                                * workspace is sized per rank); else every device holds it */
    double sampler_seqs;       /* the profiling step's sequences, whose logits ... */
    double bytes_per_logit;    /* ... take this much each at the sampler's peak (0: none) */
    double floor_bytes, floor_above_bytes;
    /* Training: bytes a parameter of the weights (as the step computes with them), of its
     * gradients (as they are reduced), and of the optimizer's state (master weights and
     * Adam's two moments); what ZeRO stage 1 shards is the optimizer's, 2 also the
     * gradients, 3 also the weights.  0 in all three: the 2 + 2 + 12 of mixed precision. */
    double train_weight_bytes, train_gradient_bytes, train_optimizer_bytes;
    /* the highest ZeRO stage the framework runs beside pipeline parallelism (DeepSpeed's
     * pipeline engine refuses ZeRO-2 and 3; Megatron's distributed optimizer is ZeRO-1) */
    unsigned train_pipeline_zero;
    unsigned train_zero_stages; /* the ZeRO stages it runs, bit s for stage s (Megatron: no 2) */
    /* the share of its tensor-parallel communication run under the layer's products
     * (perf_profile.train_tp_overlap) */
    double train_tp_overlap;
    /* runs tensor parallelism without sequence parallelism unless a plan states it
     * (training_constraints.sequence_parallel_off) */
    bool train_no_sequence_parallel;
} engine_spec;

/* Frees the strings and zeroes the spec; NULL is fine. */
void engine_release(engine_spec *e);

/* *to = a copy of from with strings of its own (released with engine_release); -1 when
 * out of memory (*to then released). */
int engine_copy(engine_spec *to, const engine_spec *from);

/* The sequences a batch and the tokens an iteration engine e runs on device d when a
 * workload gives neither: its smaller defaults on a smaller device, else its own. */
void engine_batch_defaults(const engine_spec *e, const device_spec *d, unsigned *max_batch,
                           unsigned *max_tokens);

/* The profile a workload of engine e runs on device d with: a serving engine's host work
 * and its overlap (a NaN host_s keeps the family's measured figures); on a device that
 * takes the h100 table's shares (perf_family_of), the engine's fitted kernel families.  A
 * profile whose operators were measured on the user's own engine (has_operators:
 * calibrate --model, --steps) keeps its own figures, and is left as it is. */
perf_profile engine_apply_profile(const engine_spec *e, const perf_profile *p,
                                  const device_spec *d);

/* The live bytes of one token at the activation peak of a forward pass, in the
 * activations' 16 bits: the part tensor parallelism splits (the feed-forward's gate and
 * up products and its activation; a mixture's experts_active and shared experts) in
 * *split, the part every device holds whole (the residual stream and the normed input;
 * a mixture's permuted copies of each token for each of its experts, in and out) in
 * *whole. */
void engine_activation_bytes_per_token(const model_spec *m, double *split, double *whole);

/* What engine e keeps of each device's memory before the cache, for model m, as
 * models/memory.h reads it. */
memory_reserve engine_memory_reserve(const engine_spec *e, const model_spec *m);

/* The kernel family that runs operator op under e, in words (e->kernels), or NULL for
 * an operator outside the classes (memory passes, host work); a mixture's feed-forward is
 * the MoE class. */
const char *engine_kernel_of(const engine_spec *e, perf_op op, const model_spec *m);

/* Sets c's bytes a parameter and the ZeRO stage it pipelines with to training engine e's
 * (NULL or a serving engine: left). */
void engine_training_state(const engine_spec *e, training_constraints *c);

#endif
