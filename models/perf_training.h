/* Training steps and the planner that picks a parallel setup for a model on a number of
 * devices, as Megatron-LM, NeMo, DeepSpeed and PyTorch FSDP users run them.
 *
 * A step is derived from the inference operators (perf_iteration), not from a training
 * efficiency of its own: the forward pass of a micro-batch on one pipeline stage is a
 * prefill of its tokens (every token needs logits), without the engine's host work and
 * without the paged cache's copies; the backward pass charges each operator again at
 * its backward multiple (matrix products 2: the data and the weight gradients;
 * flash-style attention 2.5: five products for the forward's two, FlashAttention-2,
 * arXiv 2307.08691; memory passes 2: reading the saved input and the incoming gradient;
 * the tensor-parallel all-reduces once more each, Megatron's conjugate f/g operators);
 * layers recomputed in full run their forward once more.  fp8 training (Transformer
 * Engine) runs the products at the fp8 share of the fp8 peak and adds the casts: each
 * product's input cast to fp8 in the forward pass, its output gradient in the backward
 * pass (reading 2 bytes and writing 1 an element), the weights once a step.  Then, per
 * step on gpus = tp pp cp dp devices:
 *   m micro-batches of F + B (+ R) on the slowest stage (the last: it also runs the LM
 *     head and the loss);
 *   the pipeline's bubble: (pp - 1) / v of a micro-batch's time (1F1B with v = 1, the
 *     interleaved schedule with v model chunks per stage, Narayanan et al. 2021, arXiv
 *     2104.04473) plus the activations' sends through the fill and drain; or DeepSeek's
 *     DualPipe (DeepSeek-V3 report, arXiv 2412.19437, section 3.2.1, Table 2): both
 *     directions' micro-batches fed at once, each device holding a stage of each, a
 *     bubble of (pp/2 - 1)(F&B + B - 3W) with F&B = F + B (a forward and a backward chunk
 *     side by side: what they overlap is communication, not computation) and W, the
 *     weights' gradients, half the backward products; its sends and expert all-to-alls
 *     hidden under the paired chunk's computation (only what exceeds it shows); twice
 *     the parameters, each stage also held by its mirror pipeline rank, so the
 *     gradients reduce over twice the data-parallel ranks, across the pipeline
 *     (memory_training alike); pp even (setup.dualpipe with an odd pp, or with
 *     interleaving, is read as 1F1B) and, in the planner, an even number of at least
 *     2 pp micro-batches, the conditions of DeepSeek's released schedule;
 *   or the zero-bubble schedule ZB-H1 (Qi et al. 2024, arXiv 2401.10241): each backward
 *     pass split into its data gradients (B) and its weights' (W, half the backward
 *     products), the Ws deferred into the drain, a bubble of (pp - 1)(F + B - 2 W), B the
 *     whole backward pass (the paper's B + W), at
 *     1F1B's memory, one chunk a stage;
 *   recomputation: layers recomputed in full run their forward again; selective
 *     recomputation (Korthikanti et al. 2022, arXiv 2205.05198) the attention core of the
 *     others, which with flash-style attention (the scores never stored) costs the
 *     attention's forward again and saves no memory;
 *   context parallelism: each layer's keys and values passed round the cp ring, hidden
 *     behind the attention it feeds;
 *   expert parallelism as Megatron folds it: a mixture's routed experts spread over ep
 *     ranks, each expert's width over etp (tp unless stated), ep x etp consecutive ranks
 *     of a stage's tp x cp x dp forming an expert group: the group's token-expert pairs
 *     on the busiest device (perf_iteration_expert_group), and a dispatch and a combine
 *     all-to-all a mixture layer, forward and backward, over the group's extent (NVLink
 *     when ep x etp fits the scale-up domain, the network beyond), not overlapped except
 *     under DualPipe (above), each device's share at the node's measured point-to-point
 *     rate within the scale-up domain (perf_node_p2p_s);
 *   data parallelism: a device's dense weights over the dp x cp ranks that hold them,
 *     its share of the routed experts over the tp x cp x dp / (ep x etp) ranks that hold
 *     the same experts;
 *     ZeRO-1/2 reduce the gradients once a step (the volume of an all-reduce), hidden
 *     behind the backward work still to come (the last micro-batch's, and with the
 *     interleaved schedule the later chunks') except what one layer's bucket needs; ZeRO-3/FSDP gathers each layer's weights in
 *     the forward and again in the backward pass and reduce-scatters its gradients,
 *     every micro-batch, each layer's transfer hidden behind the previous layer's work
 *     at that micro-batch (so a small micro-batch over many ranks spends its step
 *     gathering); HSDP gathers within its shard group and all-reduces the gradients
 *     across the groups once a step;
 *   the optimizer step: Adam over this rank's share of the states as a memory pass (28
 *     bytes a parameter: fp32 weights, momentum and variance read and written, the
 *     16-bit gradient read and weight written).
 * Low-rank adapters on a frozen base (setup.lora, LoRA: Hu et al. 2021, arXiv 2106.09685)
 * run the same forward pass and a backward pass with the data gradients only (products
 * once, not twice; attention and the memory passes as before, their inputs' gradients
 * being needed all the same); the base has no gradients to reduce, no optimizer step and
 * no weight casts, and the adapters (rank 16 on a 70B model: under 0.1% of the weights)
 * are not counted.
 * MFU is 6 N (active parameters) per token over the device's peak in the precision (4 N
 * with a frozen base).
 */
#ifndef FLEETSIM_MODELS_PERF_TRAINING_H
#define FLEETSIM_MODELS_PERF_TRAINING_H

#include <stdbool.h>

#include "models/device.h"
#include "models/llm.h"
#include "models/memory.h"
#include "models/perf.h"

/* Ring all-reduce of `bytes` among n devices (alpha-beta form); an all-gather or a
 * reduce-scatter is half of it. */
double perf_allreduce_s(double bytes, unsigned n, double link_bytes_per_s, double latency_s);

typedef struct training_estimate {
    training_setup setup;
    training_memory memory;
    double step_s;
    double tokens_per_step;
    /* the parts of a step, which add up to step_s */
    double compute_s;      /* forward and backward operators, all micro-batches */
    double recompute_s;    /* recomputed layers' forward passes */
    double tp_comm_s;      /* tensor-parallel all-reduces */
    double tp_overlap_share; /* the share of them run under the products (the engine's,
                              * with tp > 1 and not stated in series; else 0) */
    double cp_comm_s;      /* context parallelism's exposed key-value passing */
    double ep_comm_s;      /* expert parallelism's all-to-alls (exposed: all of them but
                            * under DualPipe) */
    double bubble_s;       /* the pipeline's fill and drain */
    double dp_comm_s;      /* data parallelism's exposed gradient (and FSDP weight) traffic */
    double optimizer_s;    /* the optimizer step */
    /* compute_s by kind of operator */
    double matmul_s, attention_s, memory_pass_s;
    double mfu;            /* model FLOPs (6 N per token) over peak */
    char why[320];         /* the planner's reason for this setup; "" when imposed */
    char refusal[320];     /* when no setup fits: the cause with its numbers (memory
                            * needed and held, ep not dividing, tp past the heads, a
                            * schedule short of micro-batches) */
} training_estimate;

/* 0 when device d trains in precision p, else -1 with the reason in why: int8, int4 and
 * fp4 are serving precisions here (a framework trains with 16-bit or fp8 products over
 * fp32 master weights), and fp8 needs the device's own fp8 matrix units (Transformer
 * Engine runs fp8 on Hopper and later: an A100 has none); a GPU trains in bf16, fp16
 * or tf32 only with units of its own for it (a V100 has fp16's, not bf16's). */
int perf_training_precision_check(const device_spec *d, precision p, char *why,
                                  size_t size);

/* One step of `global_batch` sequences of setup.seq_len tokens on gpus devices with the
 * given parallelism (setup.dp and microbatches are derived; cp and virtual_stages 0 are
 * read as 1).  precision is the products' (bf16, fp8, ...). */
training_estimate perf_training_step(const model_spec *m, const device_spec *d,
                                     const perf_profile *p, precision prec,
                                     training_setup setup, unsigned gpus,
                                     unsigned global_batch);

/* What the planner may choose; a zero field is free, a set one is imposed. */
typedef struct training_constraints {
    unsigned tp, pp, cp, virtual_stages, micro_batch, ep;
    int zero_stage;        /* -1: free */
    int recompute_layers;  /* per stage, more than the stage has meaning all; -1: free */
    bool dualpipe;         /* DualPipe imposed (the planner never picks it by itself: the
                            * frameworks it models schedule 1F1B or interleaved) */
    bool lora;             /* low-rank adapters on a frozen base (training_setup.lora) */
    bool zero_bubble;      /* the ZB-H1 schedule imposed (training_setup.zero_bubble) */
    int selective;         /* selective recomputation: -1 free, 0 none, 1 imposed */
    unsigned etp;          /* expert tensor parallelism; 0: free (the planner tries tp and 1) */
    unsigned dp;           /* data parallelism as stated: 0 free, else checked against
                            * gpus / (tp pp cp) */
    unsigned shard_ranks;  /* HSDP's shard group (training_setup.shard_ranks); 0: full */
    unsigned pipeline_zero;/* the framework's highest ZeRO stage beside pp > 1 (an engine's,
                            * engine_training_state); TRAINING_FREE: 3, any */
    unsigned zero_stages;  /* the ZeRO stages the framework runs, bit s for stage s;
                            * TRAINING_FREE: 0xf, all */
    int sequence_parallel; /* with tp > 1: -1 the framework's way, 0 without, 1 with */
    bool sequence_parallel_off; /* the framework's way: without unless stated (an
                                 * engine's, engine_training_state); TRAINING_FREE: with */
    int dp_overlap;        /* the data-parallel collectives under the passes: -1 (not
                            * stated: taken as overlapped, as Megatron's recipes and FSDP's
                            * prefetching run them) or 1 yes, 0 in series
                            * (training_setup's no_dp_overlap) */
    int tp_overlap;        /* tensor parallelism's collectives under the products: -1 (not
                            * stated) or 1, the engine's share; 0 in series
                            * (training_setup's no_tp_overlap) */
    int dispatcher;        /* training_setup's: TRAINING_DISPATCH_ENGINE (0) unless stated */
    int ep_overlap;        /* expert parallelism's all-to-alls under another micro-batch's
                            * computation: -1 not stated (no: Megatron's default), 0 no,
                            * 1 yes (training_setup.ep_overlap) */
    /* the framework's bytes a parameter (training_setup's; an engine's, models/engine.h):
     * not a constraint, carried into every setup; 0 in all three: 2, 2 and 12 */
    double weight_bytes, gradient_bytes, optimizer_bytes;
} training_constraints;

#define TRAINING_FREE ((training_constraints){ .zero_stage = -1, .recompute_layers = -1, \
                                               .selective = -1, .pipeline_zero = 3, \
                                               .zero_stages = 0xf, .sequence_parallel = -1, \
                                               .dp_overlap = -1, .ep_overlap = -1, \
                                               .tp_overlap = -1 })

/* Copies from's framework settings (bytes a parameter: weight, gradient, optimizer; the
 * ZeRO stages it runs and pipelines with; sequence parallelism by default or not) into to. */
void training_constraints_state_from(training_constraints *to, const training_constraints *from);

/* The fastest setup that fits within the constraints, as a framework's user would pick
 * it: each stated field taken as stated, the free ones filled: tp a power of two within a
 * node dividing the heads, pp a power of two up to the layers, ZeRO 1, 2 or 3 (FSDP;
 * ZeRO 0 and HSDP only when stated), micro-batches of 1-8 sequences, the interleaved
 * schedule where the layers and micro-batches divide, ep a power of two with ep x etp
 * dividing a stage's tp cp dp ranks, etp tp or 1, and full recomputation of the fewest
 * layers that make it fit (selective recomputation only when stated: it saves nothing).
 * With c.dualpipe every setup is DualPipe: pp even, one chunk a stage, ZeRO 1 or 2, an
 * even number of at least 2 pp micro-batches; with c.zero_bubble ZB-H1, one chunk a stage.
 * out->why says why: how many setups fit, the runner-up and how much slower it is, and
 * what the best without sharding or recomputation would cost.
 * Returns false when nothing fits, with out->refusal naming the cause and its numbers
 * (the closest miss's memory needed and held, in *out with fits false; or the stated
 * degree no setup can take: tp not dividing the heads, ep on a dense model or not
 * dividing, dp not what the GPUs leave, a schedule short of micro-batches). */
bool perf_training_plan_within(const model_spec *m, const device_spec *d,
                               const perf_profile *p, precision prec, unsigned gpus,
                               unsigned seq_len, unsigned global_batch,
                               training_constraints c, training_estimate *out);

/* The dispatchers' names as plans state them, in training_dispatcher's order from
 * TRAINING_DISPATCH_ALLTOALL, ending with NULL: "alltoall", "deepep", "hybridep". */
extern const char *const training_dispatcher_names[];

/* A dispatcher's name as plans state it (training_dispatcher_names; "the engine's" for
 * TRAINING_DISPATCH_ENGINE). */
const char *training_dispatcher_name(training_dispatcher t);

/* The same with nothing imposed. */
bool perf_training_plan(const model_spec *m, const device_spec *d, const perf_profile *p,
                        precision prec, unsigned gpus, unsigned seq_len, unsigned global_batch,
                        training_estimate *out);

#endif
