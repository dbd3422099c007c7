/* How long model operations take on a device.
 *
 * Inference: a step (an iteration of continuous batching: prefill chunks and decode
 * tokens together) is the sum of its operators, each timed at the efficiency engines
 * reach at that shape and precision (models/perf_constants.h has the formulas and the
 * one table of constants, fitted to measured operator times):
 *   per layer  the QKV, output, up (gate and up) and down projections (GEMMs; a mixture
 *              of experts runs the experts its tokens touch), attention (prefill:
 *              flash-style, compute-bound over its token pairs; decode: reading the
 *              cache), its layout copies, two norms, rotary embedding, the activation,
 *              two residual adds (memory passes over their real bytes), and with tensor
 *              parallelism two all-reduces of the hidden state;
 *   per step   the token embedding, the final norm and the LM head for the sequences
 *              that need logits, and the engine's host work (scheduling, sampling,
 *              preparing inputs, detokenising: perf_profile's host_*).
 * Matrix products run in the weights' precision as engines run it: fp8 on a device with
 * fp8 at the table's share of its fp8 peak, int8/int4 (and fp8 elsewhere) weight-only:
 * dequantised and multiplied in 16-bit, so they cut weight bytes only.  The LM head of a
 * quantized checkpoint stays 16-bit (precision_unquantized; model_weight_bytes says why),
 * so it is multiplied and read in 16-bit.  Attention and the memory passes stay 16-bit
 * (32-bit for fp32 models); the cache is read and written at kv precision, which is
 * separate (16-bit by default, fp8 on request).
 *
 * The profile's anchors scale the table: compute_efficiency is the large 16-bit GEMM's
 * share of the peak (the table's by default; 1 after a calibration replaced the peaks by
 * measured ones), and every compute-bound class scales with it; bandwidth_efficiency is
 * the GEMM weight stream's share of the bandwidth, and every memory-bound class scales
 * with it; kernel_launch_s is the GEMM's fixed time, and every kernel floor scales with
 * it.  So replica_set_speed (a shared GPU) slows every operator's two sides alike.
 *
 * Training steps are models/perf_training.h.
 *
 * Precomputed per batch shape: a pure-decode iteration costs a part fixed for its batch
 * plus attention linear in the context (perf_decode_shape), so a replica caches the
 * shape per batch size and sums runs of iterations in closed form (decode_cost_sum).
 */
#ifndef FLEETSIM_MODELS_PERF_H
#define FLEETSIM_MODELS_PERF_H

#include <stdbool.h>
#include <stddef.h>

#include "models/device.h"
#include "models/llm.h"
#include "models/memory.h"
#include "models/kernel_constants.h"
#include "models/perf_constants.h"

typedef struct perf_profile {
    double compute_efficiency;   /* of the 16-bit peak, matrix products (see above) */
    double tokens_half;          /* a calibration's GEMM curve (unused by the model since
                                  * training derives from the operators; kept for files) */
    double width_half;           /* unused likewise (kept for files) */
    double bandwidth_efficiency; /* of peak memory bandwidth, streaming weights */
    double kernel_launch_s;      /* fixed time of a product; other kernels' floors scale */
    double kernels_per_layer;    /* unused since the per-operator model (kept for files) */
    double link_latency_s;       /* alpha of a training collective step */
    double network_bytes_per_s;  /* per device, between nodes (one direction) */
    unsigned devices_per_node;   /* devices a group reaches without the network: the scale-up
                                  * domain (72 in an NVL72 rack), or a server of 8 */
    double dp_overlap;           /* unused since the overlap follows from the schedule
                                  * (models/perf_training.h); kept for files */
    /* the engine's host work per iteration (engine_overheads.csv by default; 0 for an
     * engine that hides it behind the GPU) */
    double host_s, host_per_seq_s;       /* every iteration, and per sequence in it */
    double host_tp_s, host_tp_per_seq_s; /* more with tensor parallelism */
    /* the table the anchors scale; NULL: the device's own (perf_family_of) */
    const perf_family *family;
    const perf_node *node;
    /* a device's own operator table, fitted by `fleetsim calibrate --model` (and --steps)
     * to its measured operators; when present it stands in for family (by value, so a
     * copy of the profile carries it; its precision row points at static data) */
    bool has_operators;
    perf_family operators;
    /* of devices_per_node, those joined by the scale-up link (NVLink); the rest of a node
     * over PCIe.  0: the whole node (2 where the node is NVLink pairs).  Last, so that
     * positional initializers written before it leave it 0 */
    unsigned scale_up_devices;
    /* of the host work, the share the engine runs while the GPU computes (models/engine.h):
     * a step costs max(GPU, overlap x host) + (1 - overlap) x host; 0: in series */
    double host_overlap;
    /* the engine's fitted kernel families (models/kernel_constants.h) for attention over
     * a prompt, a mixture's routed experts (a grouped GEMM a layer) and, in training,
     * attention's backward pass, each of its family's shares of the device's own peaks;
     * NULL: the table's (family) classes */
    const perf_kernel_family *prefill_family, *moe_family, *attn_backward_family;
    /* training: the routed experts' weight gradients as the engine's kernel runs them
     * (perf_breakdown.grouped_wgrad_s); NULL: at moe_family's rate, as the forward */
    const perf_kernel_family *moe_wgrad_family;
    /* a draft model's steps are iterations of their own, each paying its host work in
     * series (vLLM V0's proposer worker); false: they run inside the round's one
     * iteration, GPU work only (EAGLE and MTP drafts in SGLang, vLLM V1, TensorRT-LLM) */
    bool draft_iterations;
    /* the host's tensor-parallel term (Ray's worker traffic) is not paid by a replica
     * within one node, whose workers are local processes (models/engine.h) */
    bool host_tp_local;
    /* a mixture's expert-parallel all-to-all as the engine runs it (models/engine.h):
     * dispatch in fp8 with its scales (1 + 4 / 128 bytes a value; the combine stays
     * 16-bit), one copy a token for each node it is routed to across the network
     * (DeepEP-style forwarding within the node; else a copy for each expert), and two
     * micro-batches each hiding the other's all-to-all under its compute (a pure-decode
     * run's closed form, perf_decode_shape_of, takes its exposed part at context 0: an
     * approximation, the attention that hides it growing with the context) */
    bool dispatch_fp8, per_node_dispatch, two_batch_overlap;
    /* training: the share of the tensor-parallel all-reduces (sequence parallelism's
     * all-gathers and reduce-scatters) the framework runs under the products that need
     * or make them, as far as they last (Transformer Engine's userbuffers overlap, a
     * training engine's tp_overlap); 0: in series */
    double train_tp_overlap;
    /* of network_bytes_per_s, what a collective's traffic between nodes reaches (the
     * family's cluster constants); 0: the line rate */
    double network_efficiency;
} perf_profile;

/* The share of a GPU's streaming multiprocessors an all-to-all running beside computation
 * takes from it: DeepSeek-V3's 20 of an H800's 132 (the fit set's training/
 * parallelism_throughput.csv PT61: "only 20 SMs are sufficient to fully utilize the
 * bandwidths of IB and NVLink"). */
#define PERF_ALLTOALL_SM_SHARE (20.0 / 132.0)

/* What an all-to-all of a2a_s shows when it runs beside compute_s of another
 * micro-batch's computation (SGLang's two-batch overlap, DualPipe's paired chunks,
 * Megatron's batch-level overlap): the computation under it runs on the SMs it leaves
 * (1 - PERF_ALLTOALL_SM_SHARE), so the pair takes max(a2a, compute + share x a2a) and
 * the all-to-all shows max(a2a - compute, share x a2a). */
double perf_alltoall_exposed_s(double a2a_s, double compute_s);

/* The family of measurements that stands for device d, the node layout its tensor-
 * parallel groups are timed on, and a sentence saying which and why (for estimate). */
const perf_family *perf_family_of(const device_spec *d);
const perf_node *perf_node_of(const device_spec *d);
const char *perf_family_reason(const device_spec *d);

/* One operator class of the table alone, in 16-bit on its family's profiled device (the
 * datasheet peak and bandwidth the fit divided by): what tools/fit_operators.py compared
 * with the measured rows.  For tests and for a command that checks the table. */
double perf_family_gemm_s(const perf_family *f, double tokens, double k, double n);
double perf_family_pass_s(const perf_family *f, perf_pass_kind kind, double tokens,
                          double bytes);
double perf_family_attn_decode_s(const perf_family *f, double seqs_x_kv_heads,
                                 double cache_bytes);
double perf_family_attn_prefill_s(const perf_family *f, double cached_flops, double new_flops);
/* An all-reduce of n devices of the node (n = 2, 4, 8) over links of link_bytes_per_s (one
 * direction).  More than 8 (an NVL72 domain) take the 8-GPU row: its alpha and its
 * efficiency at the given link, with the ring's 2 (n - 1) / n of the bytes.  That is an
 * assumption, no larger domain being measured: NVLink switches keep every pair one hop
 * apart, as in the 8-GPU box, so neither is taken to change with the domain's size. */
double perf_node_allreduce_s(const perf_node *node, unsigned n, double bytes,
                             double link_bytes_per_s);

/* A send of `bytes` from one device of the node to another over a link of
 * link_bytes_per_s (one direction), at the node's measured point-to-point rate. */
double perf_node_p2p_s(const perf_node *node, double bytes, double link_bytes_per_s);

/* Defaults for a device (GPU or CPU): the anchors from its family's row; the links from
 * the device where it states them (scale_up_devices, network_*), else the family's (8 a
 * node, 400 Gb/s a device).  devices_per_node is the larger of the device's scale-up
 * domain and the family's node: PCIe cards (domain 1 or 2) still share a server of 8. */
perf_profile perf_default_profile(const device_spec *d);

/* The one-direction rate of each device's link in a group spanning `span` consecutive
 * devices (a group of n ranks `inner` apart spans inner x n): the scale-up link within
 * the domain, PCIe beyond it within a node, the network beyond the node (its NIC at the
 * share a collective's traffic reaches, perf_network_bytes_per_s of one).  For tensor
 * parallelism's all-reduces and training's context, pipeline and data groups alike.
 * profile->node (or the device's) tells NVLink pairs. */
double perf_group_link_bytes_per_s(const device_spec *d, const perf_profile *p, double span);

/* What `members` devices of a node carry to other nodes together, each over its own NIC,
 * in a collective's traffic: members x network_bytes_per_s x network_efficiency. */
double perf_network_bytes_per_s(const perf_profile *p, double members);

/* The stage between nodes of an all-reduce of `bytes` over a group spread over `nodes`
 * nodes with `members` of its ranks on each: NCCL's hierarchy, in which each node's
 * members first reduce among themselves so that each holds 1 / members of the sum, the
 * nodes then ring their shares over the members' own NICs (2 (nodes - 1) / nodes of the
 * bytes at perf_network_bytes_per_s, and 2 (nodes - 1) steps of link_latency_s), the
 * members last gathering the result.  The stages within the node work on chunks the
 * network is not carrying: a group's all-reduce pays both stages' start-ups and the
 * slower of their transfers.  One member a node is a plain ring over the nodes; 0 with
 * one node (and the start-up alone with no bytes). */
double perf_network_allreduce_s(const perf_profile *p, double bytes, double nodes,
                                double members);

/* Whether such a group lies within the scale-up domain (its link the scale-up one). */
bool perf_group_within_scale_up(const device_spec *d, const perf_profile *p, double span);

/* What a step runs on: a replica of tp devices, weights and cache in their precisions.
 * Borrowed pointers. */
typedef struct perf_setup {
    const model_spec *model;
    const device_spec *device;
    const perf_profile *profile;
    precision weights, kv;
    unsigned tp;
    bool expert_parallel;  /* a mixture's experts held whole, experts / tp on each device
                            * (false: each split over the tp devices like a dense FFN) */
    double expert_skew;    /* the busiest device's routed tokens over the mean, beyond
                            * chance (1 or 0: none) */
    bool attention_dp;     /* attention data parallel over the tp devices (each its share
                            * of the sequences, every head, its own copy of the attention
                            * weights) and a mixture's experts spread whole over them, with
                            * all-to-all dispatch and combine; no effect on a dense model */
    const memory_reserve *reserve; /* what the engine keeps of each device's memory before
                            * the cache (NULL: memory.h's default), where a step's batch is
                            * bounded by the cache (perf_best_throughput) */
} perf_setup;

/* With expert parallelism over n devices, the tokens the busiest one computes when T
 * tokens each pick experts_active experts (see perf.c). */
double perf_expert_busiest_tokens(const model_spec *m, double T, unsigned n, double skew);

/* The work of one iteration. */
typedef struct perf_batch {
    double decode_seqs;          /* sequences generating one token each */
    double decode_context;       /* tokens they attend to, all sequences together */
    double prefill_tokens;       /* prompt tokens processed */
    double prefill_seqs;         /* sequences those tokens belong to */
    double prefill_last;         /* of them, those whose prompt ends here (need logits) */
    double prefill_cached_pairs; /* attention pairs of a new and a cached token */
    double prefill_new_pairs;    /* pairs of two new tokens (causal: chunk^2 / 2) */
} perf_batch;

/* What bounds an operator's time. */
typedef enum perf_bound {
    BOUND_COMPUTE, BOUND_MEMORY, BOUND_LAUNCH, BOUND_HOST, BOUND_COMMUNICATION
} perf_bound;

const char *perf_bound_name(perf_bound b); /* "compute", "memory", ... */

typedef enum perf_op {
    OP_EMBED, OP_NORM, OP_QKV, OP_ROPE, OP_ATTN_PREFILL, OP_ATTN_DECODE, OP_ATTN_COPY,
    OP_OUT_PROJ, OP_ROUTER, OP_MOE_PERMUTE, OP_MLP_UP, OP_ACT, OP_MLP_DOWN, OP_ADD, OP_ALLREDUCE,
    OP_ALLTOALL, OP_FINAL_NORM, OP_LM_HEAD, OP_HOST, OP_COUNT
} perf_op;

const char *perf_op_name(perf_op op); /* "qkv_proj", "attention_decode", ... */

/* One operator over the whole step (all layers). */
typedef struct perf_op_time {
    double time_s;
    double compute_s, memory_s, floor_s; /* the parts it is the larger or the sum of */
    double count;                        /* kernels (or collectives, host phases) */
    perf_bound bound;                    /* the largest part */
} perf_op_time;

typedef struct perf_breakdown {
    perf_op_time op[OP_COUNT];
    /* each operator's products' activations, elements a device over all their kernels:
     * read (tokens x K) and written (tokens x N); what a training engine casts to fp8
     * (perf_training.c).  Kept here, not in perf_op_time, which the serving fast path
     * clears at every step it prices */
    double elements_in[OP_COUNT], elements_out[OP_COUNT];
    /* the routed experts' grouped GEMMs (the engine's moe_family): their time as priced,
     * and the time of their weight gradients (the same products, the tokens summed over)
     * at the profile's moe_wgrad_family, or at the same rate without one */
    double grouped_s, grouped_wgrad_s;
} perf_breakdown;

/* A step's time and what it went to: total_s = max(gpu_s, host_hidden_s) + host_exposed_s. */
typedef struct perf_time {
    double total_s;
    double compute_s;  /* operators bound by compute */
    double memory_s;   /* by memory bandwidth */
    double launch_s;   /* by their kernel floor, and the floors of the others */
    double comm_s;     /* tensor-parallel all-reduces */
    double host_s;     /* the engine's host work, all of it */
    double gpu_s;      /* compute + memory + launch + comm */
    double host_hidden_s;  /* of host_s, what the engine runs while the GPU computes */
    double host_exposed_s; /* what it runs in series with the GPU */
    bool compute_bound; /* compute_s >= memory_s */
} perf_time;

/* Device-seconds of GPU work by what bounded them, the activity a power model prices
 * (models/power.h): operators bound by compute, by memory bandwidth, collectives, and
 * kernel floors.  A step's host work and the GPU's waits are in none. */
typedef struct perf_phases {
    double compute_s, memory_s, comm_s, launch_s;
} perf_phases;

/* A step's GPU time by phase. */
perf_phases perf_time_phases(const perf_time *t);
/* a + k x b, phase by phase */
perf_phases perf_phases_add(perf_phases a, perf_phases b, double k);

/* The step's time from its GPU time and its host work under an overlap share: the
 * overlapped part counts where it exceeds the GPU's (see perf_profile.host_overlap). */
double perf_step_s(double gpu_s, double host_s, double overlap);

/* Attention's backward pass over prefill batch b (training: every token's queries and
 * the pairs b counts), by the profile's attn_backward_family: its per-layer floor plus
 * 2.5 times the forward's FLOPs at the family's share of the device's 16-bit peak
 * (scaled as every class by the profile's anchors) at a sequence's tokens.  A negative
 * value when the profile has no such family. */
double perf_attention_backward_s(const perf_setup *s, const perf_batch *b);

/* One iteration; fills *ops (when not NULL) with its operators. */
perf_time perf_iteration(const perf_setup *s, const perf_batch *b, perf_breakdown *ops);

/* The operators of an iteration whose cost depends on its token count alone (all but
 * the LM head, attention over the cache and the prompts, the all-to-all and the host),
 * kept by count for one setup, and the LM head by count of sequences that need logits:
 * perf_iteration_memo(m, b) is perf_iteration(s, b, NULL) bit for bit, with those
 * operators evaluated once per count.  In the serving bench (64 replicas, a simulated
 * hour, 1.0e6 requests, a budget of 8,192 tokens) 8,015 counts came up, each some 125
 * times on average.  The setup (and the profile it points to) must not change while the
 * table lives.  Counts past most_tokens, or not whole, are evaluated each time.  NULL
 * where there is nothing to keep (attention data parallel: each device's tokens are a
 * share) or out of memory.  Memory: the table's entries for the counts evaluated. */
typedef struct perf_token_memo perf_token_memo;
perf_token_memo *perf_token_memo_create(const perf_setup *s, unsigned most_tokens);
void perf_token_memo_free(perf_token_memo *m);
size_t perf_token_memo_bytes(const perf_token_memo *m);
perf_time perf_iteration_memo(perf_token_memo *m, const perf_batch *b);

/* The same on one device of an expert group of ep x etp devices (training's expert
 * parallelism, laid over the tensor- and data-parallel ranks as Megatron folds it):
 * each device runs batch b with its tp devices as perf_iteration does, the routed
 * token-expert pairs of the ep etp / tp tensor-parallel groups the expert group covers go
 * to experts spread over ep devices, each expert's width over etp (0: tp), the busiest
 * device setting the step, and each mixture layer pays a dispatch and a combine
 * all-to-all over a group of `span` devices' extent (perf_group_link_bytes_per_s), each
 * device sending etp / tp of b's tokens (its sequence-parallel share, gathered over the
 * expert's etp devices). */
perf_time perf_iteration_expert_group(const perf_setup *s, const perf_batch *b, unsigned ep,
                                      unsigned etp, unsigned span, perf_breakdown *ops);

/* Speculative decoding: a draft proposes k tokens a sequence, the target verifies them
 * in one iteration over k + 1 positions and keeps the accepted prefix and one token of
 * its own.  With each proposed token accepted independently with probability a, a
 * round yields (1 - a^(k+1)) / (1 - a) tokens in expectation (k + 1 when a = 1;
 * Leviathan et al. 2023, arXiv 2211.17192). */
double perf_speculative_tokens(double acceptance, unsigned k);

typedef struct perf_speculation {
    const perf_setup *draft; /* a small model on the same devices; NULL: a draft that costs
                              * nothing on the GPU (n-gram or prompt lookup) but step_s */
    unsigned k;
    double acceptance;
    double step_s;           /* without a draft model: the lookup's cost a draft step, for
                              * the whole batch (n-gram or self-speculation; 0: free) */
} perf_speculation;

/* The setup of a draft model beside a target set up as `target`: the same devices,
 * precisions, profile and tp.  Where the target runs attention data parallel (a mixture
 * over tp > 1 devices, each its own share of the sequences), so does the draft: a
 * mixture draft as the target, a dense one whole on each device on that device's
 * sequences (as engines run an MTP or EAGLE draft beside DP attention); elsewhere the
 * draft is tensor parallel over the tp devices. */
perf_setup perf_draft_setup(const perf_setup *target, const model_spec *draft);

/* One round at `batch` sequences of mean context `context`: k decode steps of the draft
 * (each an iteration of its own with its host work where the profile's
 * draft_iterations says so, else GPU work inside the round's one engine iteration) and
 * the target's verification, a forward of k + 1 tokens a sequence attending to its
 * cache and to each other (logits for all of them). */
double perf_speculative_round_s(const perf_setup *target, const perf_speculation *sp,
                                unsigned batch, double context);

/* Adds to b the verification of `seqs` sequences of `context` tokens each (what a plain
 * decode step of one would read): k + 1 positions a sequence attending to its cache and
 * to each other, logits for every one.  The round's verification is this batch alone; a
 * replica adds it beside prompt chunks in a mixed iteration. */
void perf_speculative_verify_add(perf_batch *b, const model_spec *m, unsigned k, double seqs,
                                 double context);

/* The draft's part of that round alone: its k steps (or k x step_s without a model). */
double perf_speculative_draft_s(const perf_speculation *sp, unsigned batch, double context);

/* The draft's prefill of the prompt chunks in b (its own cache of every prompt), without
 * host work, as its steps; 0 without a draft model. */
double perf_speculative_draft_prefill_s(const perf_speculation *sp, const perf_batch *b);

/* Prefill of `batch` prompts of `prompt` tokens in one iteration. */
perf_time perf_prefill(const perf_setup *s, unsigned batch, double prompt);

/* One decode iteration of `batch` sequences at a mean context of `context` tokens. */
perf_time perf_decode_step(const perf_setup *s, unsigned batch, double context);


/* A pure-decode iteration of `seqs` sequences attending to `context` tokens in all costs
 * max(fixed_s + attention_s_per_token x context, host_hidden_s) + host_exposed_s: the
 * GPU's part is fixed for the batch but for the attention over the cache, which is linear
 * in the context; the host work is fixed for the batch, its overlapped part hidden under
 * the GPU's (perf_profile.host_overlap; 0 for an engine in series, whose host work is
 * all exposed). */
typedef struct perf_decode_shape {
    double fixed_s;
    double attention_s_per_token;
    double host_hidden_s, host_exposed_s;
    perf_phases fixed_phases;   /* the GPU's part of fixed_s by phase */
    bool attention_compute;     /* the attention over the cache is bound by compute */
} perf_decode_shape;

perf_decode_shape perf_decode_shape_of(const perf_setup *s, double seqs);

/* A round of `seqs` sequences whose plain decode steps would read `context` tokens in
 * all costs shape.fixed_s + shape.attention_s_per_token x context, as a pure-decode
 * iteration does: the verification's pairs with the cache and the draft's reads are
 * linear in the context, the rest fixed for the batch (a model without a sliding window;
 * the draft's likewise).  So a replica caches a round's shape per batch size and sums a
 * run of rounds with decode_cost_sum.  Taken from perf_speculative_round_s at two
 * contexts, not derived again. */
perf_decode_shape perf_speculative_shape_of(const perf_setup *target, const perf_speculation *sp,
                                            unsigned seqs);

/* The same for the draft's part alone (perf_speculative_draft_s): how much of a round is
 * the draft's, for a replica's draft share of its time. */
perf_decode_shape perf_speculative_draft_shape_of(const perf_speculation *sp, unsigned seqs);

/* The k-th of a run of iterations with a fixed batch costs max(compute0 + compute1 k,
 * memory0 + memory1 k) + fixed (all in seconds).  From a decode shape: memory the GPU's
 * part, compute the host's overlapped part (constant), fixed the exposed host work. */
typedef struct decode_cost {
    double compute0, compute1, memory0, memory1, fixed;
    /* the first k on the second line's side, max(ceil((memory0 - compute0) / (compute1 -
     * memory1)), 0), where the two lines are not parallel: worked out at each sum unless
     * crossing_known (decode_cost_settled) */
    double crossing;
    bool crossing_known;
} decode_cost;

/* c with its crossing worked out once, for the many sums of a run (a cut run's sums, a
 * division each, were a tenth of a small fleet's time); changing a coefficient after
 * calls for it again.  The sums are the same, bit for bit. */
decode_cost decode_cost_settled(decode_cost c);

/* The run of `seqs` sequences starting at `context` tokens in all, from its shape. */
decode_cost perf_decode_cost_of(const perf_decode_shape *shape, double seqs, double context);

/* The same from the setup (the shape computed anew). */
decode_cost perf_decode_cost(const perf_setup *s, double seqs, double context);

/* Time of iterations 0..n-1 of a decode run: the closed form of the sum (each of the two
 * rooflines is linear in k, and their maximum is linear on each side of one crossing). */
double decode_cost_sum(const decode_cost *c, double n);

/* The number of whole iterations of a decode run that end within `elapsed` seconds. */
double decode_cost_iterations_within(const decode_cost *c, double elapsed, double max_n);

/* The same for a run of max_n iterations known to take `total` (its decode_cost_sum),
 * and, where fewer end within `elapsed`, how long the run cut after the iteration in
 * progress takes (decode_cost_sum of the result + 1) into *next (NaN otherwise). */
double decode_cost_cut(const decode_cost *c, double elapsed, double max_n, double total,
                       double *next);


/* Best offline throughput (output tokens per second) on gpus devices for requests of
 * prompt + output tokens: over tensor parallelism and batch size within memory (s->tp
 * is ignored: every power of two up to a node is tried, and past the node, where no
 * replica within it holds the model, the least that does).  All zero when none fits. */
typedef struct throughput_plan {
    double tokens_per_s;
    unsigned tp, batch, replicas;
} throughput_plan;

throughput_plan perf_best_throughput(const perf_setup *s, unsigned gpus, double prompt,
                                     double output);

#endif
