/* The performance model (see perf.h; the constants in perf_constants.c). */
#include "models/perf.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- which measurements stand for a device --------------------------------------------- */

/* Catalog devices by name prefix, first match wins (so "L40" before "L4"); a device of
 * another name is placed by its figures (perf_family_of). */
static const struct device_map {
    const char *prefix;
    perf_family_id family;
    perf_node_id node;
    const char *why;
} DEVICE_MAP[] = {
    { "H100-SXM", PERF_FAMILY_H100, PERF_NODE_H100_DGX,
      "h100: the profiled H100 SXM; all-reduce as measured on a DGX H100" },
    { "H100-PCIe", PERF_FAMILY_H100, PERF_NODE_H100_PAIRS,
      "h100: H100's shares of the PCIe card's own peaks; all-reduce as measured between "
      "NVLink-bridged H100 pairs" },
    { "H200", PERF_FAMILY_H100, PERF_NODE_H100_DGX,
      "h100: the same die as H100, at H100's shares of its own peaks and larger bandwidth; "
      "all-reduce as on a DGX H100" },
    { "GH200", PERF_FAMILY_H100, PERF_NODE_H100_DGX,
      "h100: H100's shares of its own peaks; all-reduce as on a DGX H100" },
    { "H20", PERF_FAMILY_H100, PERF_NODE_H100_DGX, /* after H200, whose prefix it is */
      "h100: a cut-down Hopper at H100's shares of its own (far lower) peaks; all-reduce as "
      "on a DGX H100" },
    { "H800", PERF_FAMILY_H100, PERF_NODE_H100_DGX,
      "h100: the H100 SXM die at H100's shares; all-reduce as on a DGX H100 at H800's "
      "400 GB/s NVLink" },
    { "H100-NVL", PERF_FAMILY_H100, PERF_NODE_H100_PAIRS,
      "h100: H100's shares of the NVL card's own peaks; all-reduce as measured between "
      "NVLink-bridged H100 pairs" },
    { "GB200", PERF_FAMILY_H100, PERF_NODE_H100_DGX,
      "h100: no Blackwell measurements, so H100's shares of GB200's datasheet peaks; "
      "all-reduce as on a DGX H100 at NVLink 5's rate, its 8-GPU row across the 72 of the "
      "rack" },
    { "GB300", PERF_FAMILY_H100, PERF_NODE_H100_DGX,
      "h100: no Blackwell measurements, so H100's shares of GB300's datasheet peaks; "
      "all-reduce as on a DGX H100 at NVLink 5's rate, its 8-GPU row across the 72 of the "
      "rack" },
    { "B300", PERF_FAMILY_H100, PERF_NODE_H100_DGX,
      "h100: no Blackwell measurements, so H100's shares of B300's datasheet peaks; "
      "all-reduce as on a DGX H100 at B300's NVLink rate" },
    { "MI3", PERF_FAMILY_H100, PERF_NODE_H100_DGX,
      "h100: no AMD measurements, so the h100 family's shares of the Instinct's own datasheet "
      "peaks; all-reduce as on a DGX H100 at its Infinity Fabric rate" },
    { "Gaudi", PERF_FAMILY_H100, PERF_NODE_H100_DGX,
      "h100: no Gaudi measurements, so the h100 family's shares of Gaudi's own datasheet "
      "peaks; all-reduce as on a DGX H100 at its RoCE mesh's rate" },
    { "B200", PERF_FAMILY_H100, PERF_NODE_H100_DGX,
      "h100: no Blackwell measurements, so H100's shares of B200's datasheet peaks; "
      "all-reduce as on a DGX H100 at B200's NVLink rate" },
    { "A100-40GB-PCIe", PERF_FAMILY_A100, PERF_NODE_A100_PAIRS,
      "a100: the profiled A100; all-reduce as between NVLink-bridged A100 pairs" },
    { "A100-80GB-PCIe", PERF_FAMILY_A100, PERF_NODE_A100_PAIRS,
      "a100: the profiled A100; all-reduce as between NVLink-bridged A100 pairs" },
    { "A100", PERF_FAMILY_A100, PERF_NODE_A100_DGX,
      "a100: the profiled A100 80GB at the device's own peaks; all-reduce as on a DGX A100" },
    { "V100", PERF_FAMILY_A100, PERF_NODE_A100_DGX,
      "a100: no Volta measurements, so A100's shares of V100's datasheet peaks; all-reduce "
      "as on a DGX A100 at V100's NVLink rate" },
    { "A40", PERF_FAMILY_A40, PERF_NODE_A100_PAIRS,
      "a40: the profiled A40; all-reduce as between A100 pairs (no A40 all-reduce measured)" },
    { "L40S", PERF_FAMILY_A40, PERF_NODE_A100_PAIRS,
      "a40: a GDDR6 PCIe card like the profiled A40, at A40's shares of its own peaks; "
      "all-reduce over PCIe as between A100 pairs (no NVLink)" },
    { "L40", PERF_FAMILY_A40, PERF_NODE_A100_PAIRS,
      "a40: a GDDR6 card like the profiled A40, at A40's shares of its own peaks; all-reduce "
      "over PCIe as between A100 pairs" },
    { "A10", PERF_FAMILY_A40, PERF_NODE_A100_PAIRS,
      "a40: a GDDR6 Ampere card like the profiled A40, at A40's shares of its own peaks" },
    { "L4", PERF_FAMILY_A40, PERF_NODE_A100_PAIRS,
      "a40: a GDDR6 card like the profiled A40, at A40's shares of its own peaks; all-reduce "
      "over PCIe as between A100 pairs" },
    { "T4", PERF_FAMILY_A40, PERF_NODE_A100_PAIRS,
      "a40: a GDDR6 card like the profiled A40, at A40's shares of its own peaks; all-reduce "
      "over PCIe as between A100 pairs" },
};

static const struct device_map *device_map_of(const device_spec *d)
{
    for (size_t i = 0; i < sizeof DEVICE_MAP / sizeof DEVICE_MAP[0]; i++)
        if (d->name && !strncmp(d->name, DEVICE_MAP[i].prefix, strlen(DEVICE_MAP[i].prefix)))
            return &DEVICE_MAP[i];
    return NULL;
}

const perf_family *perf_family_of(const device_spec *d)
{
    if (d->is_cpu)
        return perf_families[PERF_FAMILY_CPU];
    const struct device_map *e = device_map_of(d);
    if (e)
        return perf_families[e->family];
    if (d->peak_flops[PREC_FP8] > 0) /* an unknown GPU: by its generation's tell-tales */
        return perf_families[PERF_FAMILY_H100];
    return perf_families[d->bandwidth_bytes_per_s < 1e12 ? PERF_FAMILY_A40 : PERF_FAMILY_A100];
}

const perf_node *perf_node_of(const device_spec *d)
{
    const struct device_map *e = d->is_cpu ? NULL : device_map_of(d);
    if (e)
        return perf_nodes[e->node];
    if (d->nvlink_bytes_per_s >= 900e9)
        return perf_nodes[PERF_NODE_H100_DGX];
    return perf_nodes[d->nvlink_bytes_per_s > 0 ? PERF_NODE_A100_DGX : PERF_NODE_A100_PAIRS];
}

const char *perf_family_reason(const device_spec *d)
{
    if (d->is_cpu)
        return "cpu: no operator measurements; shares of the datasheet peaks";
    const struct device_map *e = device_map_of(d);
    if (e)
        return e->why;
    return "a device the table does not name: the family of its figures (fp8: h100; under "
           "1 TB/s: a40; else a100) at its own peaks";
}

perf_profile perf_default_profile(const device_spec *d)
{
    const perf_family *f = perf_family_of(d);
    unsigned domain = d->is_cpu ? 0 : d->scale_up_devices, node = f->cluster.devices_per_node;
    perf_profile p = {
        .compute_efficiency = f->gemm.efficiency,
        .bandwidth_efficiency = f->gemm.bandwidth_efficiency,
        .kernel_launch_s = f->gemm.floor_s, .kernels_per_layer = 0,
        .link_latency_s = d->network_latency_s > 0 ? d->network_latency_s
                                                   : f->cluster.link_latency_s,
        .network_bytes_per_s = d->network_bytes_per_s > 0 ? d->network_bytes_per_s
                                                          : f->cluster.network_bytes_per_s,
        /* so tensor parallelism stays within 8 unless the domain is larger: beyond the
         * domain every layer's two all-reduces would leave NVLink */
        .devices_per_node = domain > node ? domain : node,
        .scale_up_devices = domain,
        .host_s = f->host.base_s, .host_per_seq_s = f->host.per_seq_s,
        .host_tp_s = f->host.tp_base_s, .host_tp_per_seq_s = f->host.tp_per_seq_s,
        .family = f, .node = perf_node_of(d),
        .network_efficiency = d->network_efficiency > 0 ? d->network_efficiency
                                                        : f->cluster.network_efficiency,
    };
    return p;
}

bool perf_group_within_scale_up(const device_spec *d, const perf_profile *p, double span)
{
    const perf_node *node = p->node ? p->node : perf_node_of(d);
    double domain = p->scale_up_devices ? fmin(p->scale_up_devices, p->devices_per_node)
                    : node->pairs ? 2 : p->devices_per_node;
    return span <= domain;
}

double perf_group_link_bytes_per_s(const device_spec *d, const perf_profile *p, double span)
{
    if (perf_group_within_scale_up(d, p, span))
        return device_link_bytes_per_s(d);
    return span <= p->devices_per_node ? d->pcie_bytes_per_s : perf_network_bytes_per_s(p, 1);
}

double perf_network_bytes_per_s(const perf_profile *p, double members)
{
    double e = p->network_efficiency > 0 ? p->network_efficiency : 1;
    return members * p->network_bytes_per_s * e;
}

double perf_network_allreduce_s(const perf_profile *p, double bytes, double nodes,
                                double members)
{
    if (nodes <= 1)
        return 0;
    return 2 * (nodes - 1) / nodes * bytes / perf_network_bytes_per_s(p, members)
           + 2 * (nodes - 1) * p->link_latency_s;
}

/* ---- names ------------------------------------------------------------------------------ */

const char *perf_bound_name(perf_bound b)
{
    static const char *const names[] = { "compute", "memory", "launch", "host", "communication" };
    return (unsigned)b < sizeof names / sizeof names[0] ? names[b] : "?";
}

const char *perf_op_name(perf_op op)
{
    static const char *const names[OP_COUNT] = {
        [OP_EMBED] = "embedding", [OP_NORM] = "norms", [OP_QKV] = "qkv_proj",
        [OP_ROPE] = "rotary", [OP_ATTN_PREFILL] = "attention_prefill",
        [OP_ATTN_DECODE] = "attention_decode", [OP_ATTN_COPY] = "attention_copies",
        [OP_OUT_PROJ] = "out_proj", [OP_ROUTER] = "router",
        [OP_MOE_PERMUTE] = "moe_permute", [OP_MLP_UP] = "mlp_up",
        [OP_ACT] = "activation", [OP_MLP_DOWN] = "mlp_down", [OP_ADD] = "residual_adds",
        [OP_ALLREDUCE] = "all_reduce", [OP_ALLTOALL] = "all_to_all",
        [OP_FINAL_NORM] = "final_norm", [OP_LM_HEAD] = "lm_head",
        [OP_HOST] = "host",
    };
    return (unsigned)op < OP_COUNT ? names[op] : "?";
}

/* ---- one step, operator by operator ---------------------------------------------------- */

static double sat(double x, double half) { return half > 0 ? x / (x + half) : 1; }

/* What every operator of a step needs, derived once per step. */
typedef struct step {
    const model_spec *m;
    const device_spec *d;
    const perf_profile *p;
    const perf_family *f;
    const perf_node *node;
    double tp, layers, hd, q_heads, kv_heads; /* heads per device */
    double cache_bytes;    /* cached bytes per token and layer on a device */
    double decode_flops;   /* attention FLOPs per pair of a new and a cached token, decode */
    double prefill_flops;  /* the same in a prefill (latent attention runs unabsorbed) */
    double peak16;         /* attention's FLOP/s (the activations' precision) */
    /* the layers' products (weights) and those a quantized checkpoint keeps 16-bit (wide,
     * precision_unquantized: the LM head; attention's projections with quantize_mlp_only;
     * the edge layers' feed-forward): GEMM FLOP/s at the precision's share, the share of
     * the GEMM weight stream's bandwidth, bytes a weight */
    struct gemm_weights { double peak, stream, bytes; } weights, wide;
    double edge_layers;    /* layers whose feed-forward runs wide (dense models) */
    double cscale, mscale; /* the profile's anchors over the family's */
    double floor_scale;    /* kernel floors: the profile's over the family's */
    bool expert_parallel;  /* experts held whole, experts / tp on each device */
    double expert_skew;
    double abytes, kvbytes;
    precision weights_precision;
    perf_breakdown *counts; /* where the products' elements are counted (NULL: nowhere) */
} step;

static bool weights_only(const device_spec *d, precision w)
{
    /* fp4 without an fp4 peak: dequantised to 16-bit, as Marlin-style kernels run it */
    return w == PREC_INT8 || w == PREC_INT4 || (w == PREC_FP8 && !(d->peak_flops[PREC_FP8] > 0))
           || (w == PREC_FP4 && !(d->peak_flops[PREC_FP4] > 0));
}

/* How weights of precision w are multiplied on d: at their own peak's share, or
 * weight-only (dequantised, in 16-bit) where the device lacks it. */
static struct gemm_weights gemm_weights_of(const step *s, const device_spec *d, precision w)
{
    const perf_precision_row *pr = s->f->precision;
    if (weights_only(d, w))
        return (struct gemm_weights){ s->peak16 * pr->weight_only_compute,
                                      pr->weight_only_stream, precision_bytes(w) };
    return (struct gemm_weights){ device_peak_flops(d, w, NULL) * pr->compute[w], 1,
                                  precision_bytes(w) };
}

static void step_init(step *s, const perf_setup *setup)
{
    const model_spec *m = setup->model;
    const device_spec *d = setup->device;
    const perf_profile *p = setup->profile;
    s->m = m;
    s->d = d;
    s->p = p;
    s->f = p->has_operators ? &p->operators : p->family ? p->family : perf_family_of(d);
    s->node = p->node ? p->node : perf_node_of(d);
    s->tp = setup->tp ? setup->tp : 1;
    s->layers = m->layers;
    s->hd = model_head_dim(m);
    s->q_heads = m->heads / s->tp;
    s->kv_heads = fmax(m->kv_heads / s->tp, 1); /* fewer heads than devices: replicated */
    bool wide = setup->weights == PREC_FP32 || setup->weights == PREC_TF32;
    precision act = wide ? setup->weights : PREC_FP16;
    s->peak16 = device_peak_flops(d, act, NULL);
    s->weights = gemm_weights_of(s, d, setup->weights);
    s->weights_precision = setup->weights;
    s->counts = NULL;
    s->wide = gemm_weights_of(s, d, precision_unquantized(setup->weights));
    s->edge_layers = model_moe_layers(m) ? 0 : model_unquantized_layers(m);
    s->cscale = p->compute_efficiency / s->f->gemm.efficiency;
    s->mscale = p->bandwidth_efficiency / s->f->gemm.bandwidth_efficiency;
    s->floor_scale = s->f->gemm.floor_s > 0 ? p->kernel_launch_s / s->f->gemm.floor_s : 0;
    s->abytes = wide ? 4 : 2;
    s->kvbytes = precision_bytes(setup->kv);
    s->expert_parallel = setup->expert_parallel;
    s->expert_skew = setup->expert_skew;
    if (model_latent_attention(m)) {
        /* the latent and the rotary key, replicated on every device; decode runs
         * absorbed (scores over latent + rotary, values over the latent), prefill
         * expands the keys and values per head */
        double latent = m->kv_lora_rank, rope = m->rope_head_dim;
        double v = model_value_width(m) / m->heads;
        s->cache_bytes = (latent + rope) * s->kvbytes;
        s->decode_flops = 2 * s->q_heads * (latent + rope) + 2 * s->q_heads * latent;
        s->prefill_flops = 2 * s->q_heads * (s->hd + rope) + 2 * s->q_heads * v;
    } else {
        s->cache_bytes = 2 * s->kv_heads * s->hd * s->kvbytes;
        s->decode_flops = s->prefill_flops = 4 * s->hd * s->q_heads;
    }
}

/* A kernel's floor: the family's, scaled to the profile (a CPU's: one launch). */
static double floor_s(const step *s, double family_floor)
{
    return s->f->gemm.floor_s > 0 ? family_floor * s->floor_scale : s->p->kernel_launch_s;
}

/* Adds `kernels` kernels of t = floor + max(compute, memory) + overlap x min(compute,
 * memory): the smaller side's exposed share counts as its own. */
static void add_affine(perf_op_time *o, double kernels, double floor, double compute,
                       double memory, double overlap)
{
    o->floor_s += kernels * floor;
    if (compute >= memory) {
        o->compute_s += kernels * compute;
        o->memory_s += kernels * overlap * memory;
    } else {
        o->memory_s += kernels * memory;
        o->compute_s += kernels * overlap * compute;
    }
    o->count += kernels;
}

/* Adds `kernels` kernels of t = max(floor, bytes at the pass's bandwidth for `tokens`). */
static void add_pass(const step *s, perf_op_time *o, perf_pass_kind kind, double kernels,
                     double tokens, double bytes)
{
    const perf_pass_constants *c = &s->f->pass[kind];
    if (!(c->efficiency > 0))
        return;
    double memory = bytes / (s->d->bandwidth_bytes_per_s * c->efficiency * s->mscale
                             * sat(tokens, c->tokens_half));
    double fl = floor_s(s, c->floor_s);
    if (fl >= memory)
        o->floor_s += kernels * fl;
    else
        o->memory_s += kernels * memory;
    o->count += kernels;
}

/* Counts a product's rows x K elements read and rows x N written against its operator,
 * where the step counts them (o is then one of s->counts->op). */
static void count_elements(const step *s, const perf_op_time *o, double rows, double K,
                           double N)
{
    if (!s->counts)
        return;
    size_t k = (size_t)(o - s->counts->op);
    s->counts->elements_in[k] += rows * K;
    s->counts->elements_out[k] += rows * N;
}

/* `kernels` launches (one per layer) of `products` products of T x K by K x N each, of
 * weights w. */
static void add_gemm_of(const step *s, const struct gemm_weights *w, perf_op_time *o,
                        double kernels, double products, double T, double K, double N)
{
    if (T <= 0)
        return;
    const perf_profile *p = s->p;
    double compute = products * 2 * T * K * N
                     / (w->peak * p->compute_efficiency * sat(T, s->f->gemm.tokens_half));
    double bytes_w = products * K * N * w->bytes / w->stream;
    double bytes_a = products * (T * K + T * N) * s->abytes;
    double vector = s->f->gemm.vector_bandwidth_efficiency;
    double e_mem = T <= 1 && vector > 0 ? vector * s->mscale : p->bandwidth_efficiency;
    double memory = (bytes_w + bytes_a) / (s->d->bandwidth_bytes_per_s * e_mem);
    add_affine(o, kernels, floor_s(s, s->f->gemm.floor_s), compute, memory, s->f->gemm.overlap);
    if (w != &s->wide) /* kept 16-bit: nothing to cast */
        count_elements(s, o, kernels * products * T, K, N);
}

/* The layers' products (the checkpoint's precision). */
static void add_gemm(const step *s, perf_op_time *o, double kernels, double products, double T,
                     double K, double N)
{
    add_gemm_of(s, &s->weights, o, kernels, products, T, K, N);
}

/* Attention's projections, a kernel a layer: the checkpoint's precision, or 16-bit
 * (quantize_mlp_only; the edge layers always). */
static void add_attention_gemm(const step *s, perf_op_time *o, double kernels, double T,
                               double K, double N)
{
    if (s->m->quantize_mlp_only) {
        add_gemm_of(s, &s->wide, o, kernels, 1, T, K, N);
        return;
    }
    double edge = fmin(s->edge_layers, kernels);
    add_gemm_of(s, &s->weights, o, kernels - edge, 1, T, K, N);
    if (edge > 0)
        add_gemm_of(s, &s->wide, o, edge, 1, T, K, N);
}

/* Attention over the cache, per token of context (all sequences together) and layer:
 * reading the cache, and its products (pairs of a query and a cached token). */
static void decode_attention_per_token(const step *s, double seqs, double *compute,
                                       double *memory)
{
    const perf_family *f = s->f;
    double bw = s->d->bandwidth_bytes_per_s * f->attn_decode.efficiency * s->mscale
                * sat(seqs * s->kv_heads, f->attn_decode.width_half);
    /* an unfused engine's scores: each query head's, written and read back, per token */
    *memory = (s->cache_bytes + s->q_heads * f->attn_decode.score_accesses * s->abytes) / bw;
    *compute = s->decode_flops / (s->peak16 * f->attn_prefill.cached_efficiency * s->cscale);
}

/* Two ring all-reduces a layer (after attention and after the MLP) and one after the
 * vocabulary-parallel embedding, of the hidden state, at the node's measured rate.  A
 * group past the node runs NCCL's hierarchy (perf_network_allreduce_s): each node's
 * devices reduce among themselves at the node's rate while the nodes ring their shares
 * over every member's NIC, the slower of the two setting the time. */
static double allreduce_s(const step *s, double tokens)
{
    if (s->tp <= 1 || tokens <= 0)
        return 0;
    unsigned n = (unsigned)s->tp;
    perf_profile p = *s->p;
    p.node = s->node;
    double bytes = tokens * s->m->hidden * s->abytes;
    if (n <= p.devices_per_node)
        return perf_node_allreduce_s(s->node, n, bytes, perf_group_link_bytes_per_s(s->d, &p, n));
    unsigned members = p.devices_per_node;
    double nodes = ceil((double)n / members), link = perf_group_link_bytes_per_s(s->d, &p, members);
    double least = n - (nodes - 1) * members; /* the last node's, where they do not fill it */
    double within = perf_node_allreduce_s(s->node, members, bytes, link);
    double across = perf_network_allreduce_s(&p, bytes, nodes, least);
    /* each stage's start-up (its time for no bytes): they add; the transfers overlap */
    double start_within = perf_node_allreduce_s(s->node, members, 0, link);
    double start_across = perf_network_allreduce_s(&p, 0, nodes, least);
    return start_within + start_across + fmax(within - start_within, across - start_across);
}

double perf_node_allreduce_s(const perf_node *node, unsigned n, double bytes,
                             double link_bytes_per_s)
{
    if (n <= 1)
        return 0;
    const perf_allreduce_constants *c = &node->allreduce[n <= 2 ? 0 : n <= 4 ? 1 : 2];
    return c->alpha_s + 2.0 * (n - 1) / n * bytes / (c->efficiency * link_bytes_per_s);
}

double perf_node_p2p_s(const perf_node *node, double bytes, double link_bytes_per_s)
{
    return node->p2p.alpha_s + bytes / (node->p2p.efficiency * link_bytes_per_s);
}

/* ---- the table's classes alone, on their profiled devices --------------------------- */

double perf_family_gemm_s(const perf_family *f, double tokens, double k, double n)
{
    perf_op_time o = { 0 };
    double compute = 2 * tokens * k * n
                     / (f->peak_flops * f->gemm.efficiency * sat(tokens, f->gemm.tokens_half));
    double e_mem = tokens <= 1 && f->gemm.vector_bandwidth_efficiency > 0
                       ? f->gemm.vector_bandwidth_efficiency : f->gemm.bandwidth_efficiency;
    double memory = 2 * (k * n + tokens * k + tokens * n) / (f->bandwidth_bytes_per_s * e_mem);
    add_affine(&o, 1, f->gemm.floor_s, compute, memory, f->gemm.overlap);
    return o.compute_s + o.memory_s + o.floor_s;
}

double perf_family_pass_s(const perf_family *f, perf_pass_kind kind, double tokens,
                          double bytes)
{
    const perf_pass_constants *c = &f->pass[kind];
    if (!(c->efficiency > 0))
        return 0;
    return fmax(c->floor_s, bytes / (f->bandwidth_bytes_per_s * c->efficiency
                                     * sat(tokens, c->tokens_half)));
}

double perf_family_attn_decode_s(const perf_family *f, double seqs_x_kv_heads,
                                 double cache_bytes)
{
    /* the catalog's fused kernels: no dispatch per head, no scores in memory */
    const perf_attn_decode_constants *c = &f->attn_decode;
    return c->floor_s + cache_bytes / (f->bandwidth_bytes_per_s * c->efficiency
                                       * sat(seqs_x_kv_heads, c->width_half));
}

double perf_family_attn_prefill_s(const perf_family *f, double cached_flops, double new_flops)
{
    const perf_attn_prefill_constants *c = &f->attn_prefill;
    return c->floor_s + cached_flops / (f->peak_flops * c->cached_efficiency)
           + new_flops / (f->peak_flops * c->new_efficiency);
}

/* An operator's time from its parts, bound by the largest. */
static void finish(perf_op_time *o)
{
    o->time_s = o->compute_s + o->memory_s + o->floor_s;
    if (o->compute_s >= o->memory_s && o->compute_s >= o->floor_s)
        o->bound = BOUND_COMPUTE;
    else
        o->bound = o->memory_s >= o->floor_s ? BOUND_MEMORY : BOUND_LAUNCH;
}

/* The query, key, value and output projections and the rotary embedding of every layer;
 * returns the width of what the layout copies move per token. */
static double add_attention_projections(const step *s, perf_op_time *o, double T)
{
    const model_spec *m = s->m;
    const double L = s->layers, h = m->hidden;
    if (model_latent_attention(m)) {
        /* queries through their latent (if any); the shared key-value latent and rotary
         * key on every device; their expansion per head; the output from the values */
        double rope = m->rope_head_dim, latent = m->kv_lora_rank;
        double q = s->q_heads * (s->hd + rope), v = model_value_width(m) / m->heads;
        if (m->q_lora_rank) {
            add_attention_gemm(s, &o[OP_QKV], L, T, h, m->q_lora_rank);
            add_attention_gemm(s, &o[OP_QKV], L, T, m->q_lora_rank, q);
        } else {
            add_attention_gemm(s, &o[OP_QKV], L, T, h, q);
        }
        add_attention_gemm(s, &o[OP_QKV], L, T, h, latent + rope);
        add_attention_gemm(s, &o[OP_QKV], L, T, latent, s->q_heads * (s->hd + v));
        add_pass(s, &o[OP_ROPE], PASS_ROPE, L, T, 2 * s->abytes * T * (s->q_heads + 1) * rope);
        add_attention_gemm(s, &o[OP_OUT_PROJ], L, T, s->q_heads * v, h);
        return q + latent + rope;
    }
    double qkv = (s->q_heads + 2 * s->kv_heads) * s->hd;
    add_attention_gemm(s, &o[OP_QKV], L, T, h, qkv);
    if (model_rotary(m))
        add_pass(s, &o[OP_ROPE], PASS_ROPE, L, T,
                 2 * s->abytes * T * (s->q_heads + s->kv_heads) * s->hd);
    add_attention_gemm(s, &o[OP_OUT_PROJ], L, T, s->q_heads * s->hd, h);
    return qkv;
}

/* Tokens on the busiest of n devices holding experts whole, when T tokens each pick k
 * experts: the mean T k / n times the skew (a popularity imbalance the scenario states,
 * 1 when none), plus the spread of a count that large, the largest of n near-Poisson
 * counts being about mean + sqrt(2 mean ln n); at most T x min(k, experts on one). */
double perf_expert_busiest_tokens(const model_spec *m, double T, unsigned n, double skew)
{
    double k = m->experts_active, mean = T * k / n * (skew > 1 ? skew : 1);
    double busiest = n > 1 ? mean + sqrt(2 * mean * log((double)n)) : mean;
    double cap = T * fmin(k, (double)m->experts / n);
    return fmin(busiest, cap);
}

/* The feed-forward layers: dense ones, and mixtures of experts with their router, the
 * routed experts each token picks (the ones the step touches, read once) and the shared
 * ones.  Experts are split over the tensor-parallel devices like a dense FFN, or with
 * expert parallelism held whole, experts / tp on each, the busiest device setting the
 * step; with tensor-parallel attention every device has every token, so the routed
 * outputs combine in the all-reduce after the FFN and need no all-to-all. */
/* Where the routed experts run: like a dense FFN or with expert parallelism over the
 * step's tp devices (the default), or, with attention data parallel, over n devices
 * that together hold `tokens` tokens (n times this device's). */
typedef struct routed_plan {
    bool data_parallel;
    double n, tokens;
    double width_split;    /* each expert's width over this many devices (1: whole) */
    double span;           /* devices the group's all-to-all spans (its link) */
    double sends;          /* of the iteration's tokens, the share a device dispatches */
} routed_plan;

/* Experts on the step's own devices: nothing dispatched. */
static const routed_plan NOT_ROUTED = { false, 1, 0, 1, 1, 1 };

/* A mixture layer's token permutation, as engines run it (Megatron's permute and
 * unpermute, vLLM's fused-MoE align and sum): dispatch gathers a copy of each token's
 * hidden state for every expert it is routed to, grouped by expert (a read and a write of
 * each of `pairs` copies); combine reads the experts' outputs and writes each of the
 * `tokens` tokens' weighted sum.  Two kernels a layer, as memory passes of their mean
 * bytes; a dense model has none. */
static void add_permutation(const step *s, perf_op_time *o, double layers, double pairs,
                            double tokens)
{
    double h = s->m->hidden;
    add_pass(s, o, PASS_RESHAPE, 2 * layers, pairs, s->abytes * h * (3 * pairs + tokens) / 2);
}

/* A mixture's routed experts in `layers` layers as the engine's grouped GEMM runs them
 * (p->moe_family, models/kernel_constants.h): per layer one launch of `groups` experts
 * of m tokens each, T x K by K x N, at the family's shares of the device's own peak in
 * the weights' precision and of its bandwidth (scaled like every class by the profile's
 * anchors): floor + max(compute, memory). */
static void add_grouped_gemm(const step *s, perf_op_time *o, double layers, double groups,
                             double m, double K, double N)
{
    if (m <= 0 || groups <= 0)
        return;
    const perf_grouped_gemm_constants *c = &s->p->moe_family->grouped_gemm;
    /* the weights' own peak, or 16-bit where they are dequantised (weight-only) */
    double peak = weights_only(s->d, s->weights_precision)
                      ? s->peak16 : device_peak_flops(s->d, s->weights_precision, NULL);
    double flops = 2 * groups * m * N * K;
    double compute = flops / (peak * c->efficiency * sat(m, c->tokens_half) * s->cscale);
    double memory = (groups * N * K * s->weights.bytes + 2 * groups * m * (K + N))
                    / (s->d->bandwidth_bytes_per_s * c->bandwidth_efficiency * s->mscale);
    double floor = floor_s(s, c->floor_s);
    add_affine(o, layers, floor, compute, memory, 0);
    count_elements(s, o, layers * groups * m, K, N);
    if (s->counts) {
        /* training's backward: the weight gradients at their own kernel's rate, the
         * products and then each expert's fp32 gradient written once (the sum's
         * epilogue, models/kernel_constants.h); else as the forward */
        const perf_kernel_family *wf = s->p->moe_wgrad_family;
        double forward = floor + fmax(compute, memory), wgrad = forward;
        if (wf) {
            const perf_grouped_gemm_constants *w = &wf->grouped_gemm;
            wgrad = floor_s(s, w->floor_s)
                    + flops / (peak * w->efficiency * sat(m, w->tokens_half) * s->cscale)
                    + 4 * groups * N * K / (s->d->bandwidth_bytes_per_s * w->bandwidth_efficiency
                                            * s->mscale);
        }
        s->counts->grouped_s += layers * forward;
        s->counts->grouped_wgrad_s += layers * wgrad;
    }
}

/* The routed experts' two products, up (gates x width) and down: the engine's grouped
 * GEMM where it has one, else `groups` products of the table's GEMM. */
static void add_experts(const step *s, perf_op_time *o, double layers, double groups, double m,
                        double h, double width)
{
    double gates = s->m->gated ? 2.0 : 1.0;
    if (s->p->moe_family) {
        add_grouped_gemm(s, &o[OP_MLP_UP], layers, groups, m, h, gates * width);
        add_grouped_gemm(s, &o[OP_MLP_DOWN], layers, groups, m, width, h);
        return;
    }
    add_gemm(s, &o[OP_MLP_UP], layers, groups, m, h, gates * width);
    add_gemm(s, &o[OP_MLP_DOWN], layers, groups, m, width, h);
}

static void add_ffn(const step *s, perf_op_time *o, double T, const routed_plan *r)
{
    const model_spec *m = s->m;
    const double h = m->hidden, tp = s->tp, gates = m->gated ? 2.0 : 1.0;
    double dense = model_dense_layers(m), moe = model_moe_layers(m);
    double act_tokens_ffn = 0; /* tokens x FFN width through the activation, all layers */
    if (dense > 0) {
        double edge = fmin(s->edge_layers, dense); /* kept 16-bit whole */
        add_gemm(s, &o[OP_MLP_UP], dense - edge, 1, T, h, gates * m->ffn / tp);
        add_gemm(s, &o[OP_MLP_DOWN], dense - edge, 1, T, m->ffn / tp, h);
        if (edge > 0) {
            add_gemm_of(s, &s->wide, &o[OP_MLP_UP], edge, 1, T, h, gates * m->ffn / tp);
            add_gemm_of(s, &s->wide, &o[OP_MLP_DOWN], edge, 1, T, m->ffn / tp, h);
        }
        act_tokens_ffn += dense * T * m->ffn / tp;
    }
    if (moe > 0) {
        double e = m->expert_ffn ? m->expert_ffn : m->ffn;
        add_gemm(s, &o[OP_ROUTER], moe, 1, T, h, m->experts);
        double touched = model_experts_touched(m, T);
        if (r->data_parallel) {
            /* the n devices' tokens routed to experts held whole, experts / n on each */
            double busiest = perf_expert_busiest_tokens(m, r->tokens, (unsigned)r->n,
                                                        s->expert_skew);
            double local = model_experts_touched(m, r->tokens) / r->n;
            double w = e / r->width_split;
            add_experts(s, o, moe, local, busiest / local, h, w);
            add_permutation(s, &o[OP_MOE_PERMUTE], moe, busiest, busiest / m->experts_active);
            act_tokens_ffn += moe * busiest * w;
        } else if (s->expert_parallel && tp > 1) {
            double busiest = perf_expert_busiest_tokens(m, T, (unsigned)tp, s->expert_skew);
            double local = touched / tp;
            add_experts(s, o, moe, local, busiest / local, h, e);
            add_permutation(s, &o[OP_MOE_PERMUTE], moe, busiest, T);
            act_tokens_ffn += moe * busiest * e;
        } else {
            double per_expert = T * m->experts_active / touched;
            add_experts(s, o, moe, touched, per_expert, h, e / tp);
            add_permutation(s, &o[OP_MOE_PERMUTE], moe, T * m->experts_active, T);
            act_tokens_ffn += moe * T * m->experts_active * e / tp;
        }
        if (m->shared_experts) {
            add_gemm(s, &o[OP_MLP_UP], moe, m->shared_experts, T, h, gates * e / tp);
            add_gemm(s, &o[OP_MLP_DOWN], moe, m->shared_experts, T, e / tp, h);
            act_tokens_ffn += moe * T * m->shared_experts * e / tp;
        }
    }
    /* one kernel a layer, of the layers' mean bytes */
    add_pass(s, &o[OP_ACT], PASS_ACT, s->layers, T,
             (gates + 1) * s->abytes * act_tokens_ffn / s->layers);
}

/* Copies of a token that cross the network when its k experts are spread over `nodes`
 * nodes: one for each remote expert, or, where the engine sends one a node and forwards
 * within it (per_node_dispatch, DeepEP's), one for each remote node its experts lie on:
 * at most routed_nodes of them (node-limited routing), else the distinct nodes of k
 * uniform picks, nodes (1 - (1 - 1 / nodes)^k). */
static double network_copies(const model_spec *m, const perf_profile *p, double nodes)
{
    double k = m->experts_active, remote = (nodes - 1) / nodes;
    if (!p->per_node_dispatch)
        return k * remote;
    double reached = nodes * (1 - pow(1 - 1 / nodes, k));
    if (m->routed_nodes && m->routed_nodes < reached)
        reached = m->routed_nodes;
    return reached * remote;
}

/* The all-to-alls of expert parallelism: each mixture layer sends every token's hidden
 * state to the devices of its experts (dispatch) and takes the outputs back (combine),
 * (n - 1) / n of T k states a device each way, the dispatch in fp8 with its scales where
 * the engine sends it so (dispatch_fp8), the combine 16-bit.  Within the scale-up domain
 * each device's share leaves over its own link as a point-to-point send does, at the
 * node's measured send/recv rate and start-up (perf_node_p2p_s); beyond it, at the
 * network's rate with the node's 8-device all-reduce start-up, the copies that cross it
 * (network_copies; the forwarding within a node runs beside it) over the nodes the group
 * spans (the fit set's sends between nodes ran on its own cluster's network, whose rate
 * it does not give, so they set no share of a device's). */
static double alltoall_s(const step *s, double T, double n, double span)
{
    const model_spec *m = s->m;
    if (n <= 1 || !model_moe_layers(m))
        return 0;
    const perf_profile *p = s->p;
    double link = perf_group_link_bytes_per_s(s->d, p, span);
    double states = T * m->experts_active * m->hidden * (n - 1) / n;
    double dispatch = p->dispatch_fp8 ? 1 + 4.0 / 128 : s->abytes, combine = s->abytes;
    bool within = perf_group_within_scale_up(s->d, p, span);
    double alpha = s->node->allreduce[2].alpha_s;
    if (!within) {
        /* the scale-up domain as perf_group_within_scale_up reads it */
        double domain = p->scale_up_devices ? fmin(p->scale_up_devices, p->devices_per_node)
                        : s->node->pairs ? 2 : p->devices_per_node;
        domain = fmax(1, domain);
        double nodes = fmax(2, span / domain);
        states = T * network_copies(m, p, nodes) * m->hidden;
    }
    if (dispatch == combine) { /* both ways alike: one send, twice */
        double bytes = states * s->abytes;
        double one = within ? perf_node_p2p_s(s->node, bytes, link) : alpha + bytes / link;
        return 2 * model_moe_layers(m) * one;
    }
    double both = within ? perf_node_p2p_s(s->node, states * dispatch, link)
                               + perf_node_p2p_s(s->node, states * combine, link)
                         : 2 * alpha + states * (dispatch + combine) / link;
    return model_moe_layers(m) * both;
}

double perf_alltoall_exposed_s(double a2a_s, double compute_s)
{
    return fmax(a2a_s - compute_s, PERF_ALLTOALL_SM_SHARE * a2a_s);
}

/* Two micro-batches (two_batch_overlap): each one's all-to-alls run while the other
 * computes, so of the step's all-to-all time only what exceeds the rest of its GPU work
 * shows, and the SMs the all-to-all takes from that work (perf_alltoall_exposed_s). */
static void overlap_two_batches(const perf_profile *p, perf_op_time *o)
{
    if (!p->two_batch_overlap || !(o[OP_ALLTOALL].time_s > 0))
        return;
    double rest = o[OP_ALLREDUCE].time_s;
    for (int i = 0; i < OP_COUNT; i++)
        if (i != OP_ALLREDUCE && i != OP_ALLTOALL && i != OP_HOST)
            rest += o[i].compute_s + o[i].memory_s + o[i].floor_s;
    o[OP_ALLTOALL].time_s = perf_alltoall_exposed_s(o[OP_ALLTOALL].time_s, rest);
}

/* Whether a setup runs attention data parallel: asked for, over several devices, and a
 * mixture to spread (a dense model has nothing to spread). */
static bool attention_data_parallel(const perf_setup *setup)
{
    return setup->attention_dp && setup->tp > 1 && model_moe_layers(setup->model);
}

/* With attention data parallel, one device of the setup: every head, no tensor
 * parallelism of its own, the setup's routing skew. */
static void step_init_one_device(step *s, const perf_setup *setup)
{
    perf_setup one = *setup;
    one.tp = 1;
    one.attention_dp = one.expert_parallel = false;
    step_init(s, &one);
    s->expert_skew = setup->expert_skew;
}

/* The operators of an iteration of T > 0 tokens whose cost depends on T alone: all but
 * the LM head, the all-to-all and those iterate_rest adds.  Each operator is its own sum,
 * so the order the two parts run in changes no bit. */
static void iterate_tokens(const step *s, double T, perf_op_time *o, const routed_plan *r)
{
    const double L = s->layers, h = s->m->hidden;
    add_pass(s, &o[OP_EMBED], PASS_EMBED, 1, T, 2 * s->abytes * T * h);
    add_pass(s, &o[OP_NORM], PASS_NORM, 2 * L, T, 2 * s->abytes * T * h);
    double qkv = add_attention_projections(s, o, T);
    add_pass(s, &o[OP_ATTN_COPY], PASS_RESHAPE, L, T, 2 * s->abytes * T * qkv);
    add_ffn(s, o, T, r);
    add_pass(s, &o[OP_ADD], PASS_ADD, 2 * L, T, 3 * s->abytes * T * h);
    add_pass(s, &o[OP_FINAL_NORM], PASS_NORM, 1, T, 2 * s->abytes * T * h);
    double ar = allreduce_s(s, T);
    if (ar > 0) {
        o[OP_ALLREDUCE].time_s = (2 * L + 1) * ar;
        o[OP_ALLREDUCE].count = 2 * L + 1;
    }
}

/* The LM head and sampling over the sequences that need logits. */
static void add_lm_head(const step *s, double logits, perf_op_time *o)
{
    const model_spec *m = s->m;
    add_gemm_of(s, &s->wide, &o[OP_LM_HEAD], 1, 1, logits, m->hidden, m->vocab / s->tp);
    add_pass(s, &o[OP_LM_HEAD], PASS_SAMPLE, 1, logits, 12 * logits * m->vocab);
}

static void iterate_rest(const step *s, const perf_batch *b, perf_op_time *o,
                         const routed_plan *r, bool lm_head_added);

/* One iteration of batch b on a device set up as s, routed experts as r. */
static void iterate(const step *s, const perf_batch *b, perf_op_time *o, const routed_plan *r)
{
    double T = b->decode_seqs + b->prefill_tokens;
    if (T > 0)
        iterate_tokens(s, T, o, r);
    iterate_rest(s, b, o, r, false);
}

/* The rest of an iteration: the LM head (unless added), the all-to-all, attention over
 * the cache and over the prompts, the host's work. */
static void iterate_rest(const step *s, const perf_batch *b, perf_op_time *o,
                         const routed_plan *r, bool lm_head_added)
{
    const model_spec *m = s->m;
    const double L = s->layers, tp = s->tp;
    double T = b->decode_seqs + b->prefill_tokens;
    if (T > 0) {
        if (!lm_head_added)
            add_lm_head(s, b->decode_seqs + b->prefill_last, o);
        if (r->data_parallel) {
            o[OP_ALLTOALL].time_s = alltoall_s(s, T * r->sends, r->n, r->span);
            o[OP_ALLTOALL].count = 2.0 * model_moe_layers(m);
        }
    }
    o[OP_ALLREDUCE].bound = o[OP_ALLTOALL].bound = BOUND_COMMUNICATION;
    const perf_family *f = s->f;
    if (b->decode_seqs > 0) {
        double compute, memory;
        decode_attention_per_token(s, b->decode_seqs, &compute, &memory);
        /* an unfused engine's dispatch per sequence and kv head (one latent: per
         * sequence), a layer */
        double heads = model_latent_attention(s->m) ? 1 : s->kv_heads;
        double per_head = b->decode_seqs * heads * f->attn_decode.per_head_s;
        add_affine(&o[OP_ATTN_DECODE], L, floor_s(s, f->attn_decode.floor_s) + per_head,
                   compute * b->decode_context, memory * b->decode_context, 0);
    }
    if (b->prefill_tokens > 0) {
        /* the engine's fitted kernel where it has one (FlashAttention-3), else the table's */
        const perf_attn_prefill_constants *c = s->p->prefill_family
                                                   ? &s->p->prefill_family->attn_prefill
                                                   : &f->attn_prefill;
        double flops = s->prefill_flops;
        double compute = flops * b->prefill_cached_pairs
                             / (s->peak16 * c->cached_efficiency * s->cscale)
                         + flops * b->prefill_new_pairs
                             / (s->peak16 * c->new_efficiency * s->cscale);
        /* a fitted family's intercept stands for its smallest rows' shortfall (FA3's
         * 1,024-token, 192-head rows), not a launch: a launch costs at most the table's
         * measured floor, so a short prompt is not charged the extrapolation */
        add_affine(&o[OP_ATTN_PREFILL], L, floor_s(s, fmin(c->floor_s, f->attn_prefill.floor_s)),
                   compute, 0, 0);
    }
    double seqs = b->decode_seqs + b->prefill_seqs;
    if (seqs > 0) {
        const perf_profile *p = s->p;
        double host = p->host_s + p->host_per_seq_s * seqs;
        /* workers as local processes on one node; beyond it Ray's traffic as measured */
        if (tp > 1 && !(p->host_tp_local && tp <= p->devices_per_node))
            host += p->host_tp_s + p->host_tp_per_seq_s * seqs;
        o[OP_HOST].time_s = host;
        o[OP_HOST].count = host > 0;
    }
    o[OP_HOST].bound = BOUND_HOST;
}

double perf_attention_backward_s(const perf_setup *setup, const perf_batch *b)
{
    const perf_kernel_family *k = setup->profile->attn_backward_family;
    if (!k)
        return -1;
    if (!(b->prefill_tokens > 0 && b->prefill_seqs > 0))
        return 0;
    step s;
    step_init(&s, setup);
    double forward = s.prefill_flops * (b->prefill_new_pairs + b->prefill_cached_pairs);
    double seq = b->prefill_tokens / b->prefill_seqs;
    const perf_attn_backward_constants *c = &k->attn_backward;
    double rate = s.peak16 * c->efficiency * s.cscale * sat(seq, c->tokens_half);
    return s.layers * (floor_s(&s, c->floor_s) + 2.5 * forward / rate);
}

double perf_step_s(double gpu_s, double host_s, double overlap)
{
    if (!(overlap > 0)) /* in series: the sum, in the order every caller adds it */
        return gpu_s + host_s;
    double hidden = overlap * host_s;
    return fmax(gpu_s, hidden) + (host_s - hidden);
}

/* A step's time from its operators, the host work overlapped as the profile says. */
static perf_time totals(perf_op_time *o, const perf_profile *p)
{
    perf_time t = { 0 };
    for (int i = 0; i < OP_COUNT; i++) {
        if (i == OP_ALLREDUCE || i == OP_ALLTOALL || i == OP_HOST)
            continue;
        finish(&o[i]);
        t.compute_s += o[i].compute_s;
        t.memory_s += o[i].memory_s;
        t.launch_s += o[i].floor_s;
    }
    t.comm_s = o[OP_ALLREDUCE].time_s + o[OP_ALLTOALL].time_s;
    t.host_s = o[OP_HOST].time_s;
    t.gpu_s = t.compute_s + t.memory_s + t.launch_s + t.comm_s;
    double overlap = p->host_overlap > 0 ? fmin(p->host_overlap, 1) : 0;
    t.host_hidden_s = overlap * t.host_s;
    t.host_exposed_s = t.host_s - t.host_hidden_s;
    t.total_s = perf_step_s(t.gpu_s, t.host_s, overlap);
    t.compute_bound = t.compute_s >= t.memory_s;
    return t;
}

perf_time perf_iteration_expert_group(const perf_setup *setup, const perf_batch *b,
                                      unsigned ep, unsigned etp, unsigned span,
                                      perf_breakdown *out)
{
    if (ep <= 1 || !model_moe_layers(setup->model))
        return perf_iteration(setup, b, out);
    perf_breakdown local;
    perf_breakdown *ops = out ? out : &local;
    memset(ops, 0, sizeof *ops);
    step st;
    step_init(&st, setup);
    st.counts = out; /* the elements, only where a caller keeps them */
    /* the group's ep x etp devices hold the tokens of ep etp / tp tensor-parallel groups
     * (a fraction of one when the group is narrower than tp).  Each device dispatches
     * etp / tp of its group's tokens: under sequence parallelism a device holds 1 / tp of
     * them, and an expert split over etp devices needs each token on all etp (Megatron
     * gathers them within the expert's tensor-parallel group first) */
    etp = etp ? etp : (unsigned)st.tp;
    double groups = (double)ep * etp / st.tp;
    routed_plan r = { true, ep, groups * (b->decode_seqs + b->prefill_tokens), etp, span,
                      etp / st.tp };
    iterate(&st, b, ops->op, &r);
    overlap_two_batches(setup->profile, ops->op);
    return totals(ops->op, setup->profile);
}

perf_time perf_iteration(const perf_setup *setup, const perf_batch *b, perf_breakdown *out)
{
    perf_breakdown local;
    perf_breakdown *ops = out ? out : &local;
    memset(ops, 0, sizeof *ops);
    perf_op_time *o = ops->op;
    step st;
    if (attention_data_parallel(setup)) {
        /* attention data parallel: each of the n devices runs its share of the batch
         * with every head and a whole copy of the attention and dense weights (and its
         * own scheduler: the host work is its share's), the mixtures' experts spread
         * whole over the n devices with all-to-all dispatch and combine */
        double n = setup->tp;
        step_init_one_device(&st, setup);
        st.counts = out; /* the elements, only where a caller keeps them */
        perf_batch share = { b->decode_seqs / n, b->decode_context / n, b->prefill_tokens / n,
                             b->prefill_seqs / n, b->prefill_last / n,
                             b->prefill_cached_pairs / n, b->prefill_new_pairs / n };
        routed_plan r = { true, n, b->decode_seqs + b->prefill_tokens, 1, n, 1 };
        iterate(&st, &share, o, &r);
    } else {
        step_init(&st, setup);
        st.counts = out;
        iterate(&st, b, o, &NOT_ROUTED);
    }
    overlap_two_batches(setup->profile, o);
    return totals(o, setup->profile);
}

/* ---- an iteration's token-count costs, kept ---------------------------------------- */

struct perf_token_memo {
    step s; /* the setup, prepared once */
    unsigned most;
    unsigned nops;
    unsigned char op[OP_COUNT]; /* the operators iterate_tokens adds to */
    bool allreduce;
    size_t stride;  /* doubles a count: each operator's compute, memory, floor; the all-reduce */
    size_t known_n, lm_known_n; /* counts evaluated */
    double *costs;
    unsigned char *known;
    double *lm; /* the LM head's compute, memory and floor, by count of sequences' logits */
    unsigned char *lm_known;
};

perf_token_memo *perf_token_memo_create(const perf_setup *setup, unsigned most_tokens)
{
    if (attention_data_parallel(setup) || most_tokens == 0)
        return NULL;
    perf_token_memo *m = calloc(1, sizeof *m);
    if (!m)
        return NULL;
    step_init(&m->s, setup);
    m->most = most_tokens;
    /* the operators present are those a count of 1 launches: every add counts its
     * kernels whatever T > 0 is */
    perf_op_time o[OP_COUNT] = { 0 };
    iterate_tokens(&m->s, 1, o, &NOT_ROUTED);
    for (int i = 0; i < OP_COUNT; i++)
        if (i != OP_ALLREDUCE && o[i].count > 0)
            m->op[m->nops++] = (unsigned char)i;
    m->allreduce = o[OP_ALLREDUCE].count > 0;
    m->stride = 3 * (size_t)m->nops + 1;
    /* untouched pages of the table cost nothing: counts fill it as they come */
    m->costs = malloc((most_tokens + (size_t)1) * m->stride * sizeof *m->costs);
    m->known = calloc(most_tokens + (size_t)1, 1);
    m->lm = malloc((most_tokens + (size_t)1) * 3 * sizeof *m->lm);
    m->lm_known = calloc(most_tokens + (size_t)1, 1);
    if (!m->costs || !m->known || !m->lm || !m->lm_known) {
        perf_token_memo_free(m);
        return NULL;
    }
    return m;
}

void perf_token_memo_free(perf_token_memo *m)
{
    if (!m)
        return;
    free(m->costs);
    free(m->known);
    free(m->lm);
    free(m->lm_known);
    free(m);
}

size_t perf_token_memo_bytes(const perf_token_memo *m)
{
    return m ? sizeof *m + 2 * (m->most + (size_t)1)
                   + (m->known_n * m->stride + m->lm_known_n * 3) * sizeof *m->costs
             : 0;
}

/* An operator's parts as a table keeps them: compute, memory, floor. */
static void store_parts(double *c, const perf_op_time *x)
{
    c[0] = x->compute_s;
    c[1] = x->memory_s;
    c[2] = x->floor_s;
}

static void load_parts(perf_op_time *x, const double *c)
{
    x->compute_s = c[0];
    x->memory_s = c[1];
    x->floor_s = c[2];
}

/* Whether the tables hold a count: whole, from 1 to their size. */
static bool kept_count(const perf_token_memo *m, double n)
{
    return n >= 1 && n <= m->most && n == (double)(unsigned)n;
}

/* The LM head's costs kept for `logits` sequences, evaluated the first time; NULL for
 * a count the table does not hold. */
static const double *lm_head_costs(perf_token_memo *m, double logits)
{
    if (!kept_count(m, logits))
        return NULL;
    size_t n = (size_t)logits;
    double *c = m->lm + 3 * n;
    if (!m->lm_known[n]) {
        perf_op_time o[OP_COUNT] = { 0 };
        add_lm_head(&m->s, logits, o);
        store_parts(c, &o[OP_LM_HEAD]);
        m->lm_known[n] = 1;
        m->lm_known_n++;
    }
    return c;
}

/* The costs kept for T tokens, evaluated the first time; NULL for a count the table
 * does not hold. */
static const double *token_costs(perf_token_memo *m, double T)
{
    if (!kept_count(m, T))
        return NULL;
    size_t n = (size_t)T;
    double *c = m->costs + n * m->stride;
    if (!m->known[n]) {
        perf_op_time o[OP_COUNT] = { 0 };
        iterate_tokens(&m->s, T, o, &NOT_ROUTED);
        for (unsigned k = 0; k < m->nops; k++)
            store_parts(c + 3 * k, &o[m->op[k]]);
        c[3 * m->nops] = o[OP_ALLREDUCE].time_s;
        m->known[n] = 1;
        m->known_n++;
    }
    return c;
}

perf_time perf_iteration_memo(perf_token_memo *m, const perf_batch *b)
{
    perf_op_time o[OP_COUNT];
    memset(o, 0, sizeof o);
    const double *c = token_costs(m, b->decode_seqs + b->prefill_tokens);
    if (c) {
        for (unsigned k = 0; k < m->nops; k++)
            load_parts(&o[m->op[k]], c + 3 * k);
        if (m->allreduce)
            o[OP_ALLREDUCE].time_s = c[3 * m->nops];
        /* (none, for a chunk that does not end its prompt: evaluated as ever) */
        const double *lm = lm_head_costs(m, b->decode_seqs + b->prefill_last);
        if (lm)
            load_parts(&o[OP_LM_HEAD], lm);
        iterate_rest(&m->s, b, o, &NOT_ROUTED, lm != NULL);
    } else {
        iterate(&m->s, b, o, &NOT_ROUTED);
    }
    overlap_two_batches(m->s.p, o);
    return totals(o, m->s.p);
}

double perf_speculative_tokens(double a, unsigned k)
{
    if (a >= 1)
        return k + 1;
    if (a <= 0)
        return 1;
    return (1 - pow(a, k + 1)) / (1 - a);
}

void perf_speculative_verify_add(perf_batch *b, const model_spec *m, unsigned k, double seqs,
                                 double context)
{
    double q = k + 1.0, cached, fresh;
    model_attention_pairs(m, context, q, &cached, &fresh);
    b->prefill_tokens += seqs * q;
    b->prefill_seqs += seqs;
    b->prefill_last += seqs * q;
    b->prefill_cached_pairs += seqs * cached;
    b->prefill_new_pairs += seqs * fresh;
}

double perf_speculative_round_s(const perf_setup *target, const perf_speculation *sp,
                                unsigned batch, double context)
{
    perf_batch verify = { 0 };
    perf_speculative_verify_add(&verify, target->model, sp->k, batch, context);
    perf_time t = perf_iteration(target, &verify, NULL);
    double draft = perf_speculative_draft_s(sp, batch, context);
    if (!(t.host_hidden_s > 0))
        return t.total_s + draft;
    return fmax(t.gpu_s + draft, t.host_hidden_s) + t.host_exposed_s;
}

/* The draft's steps run inside the round's one engine iteration: the host work
 * (scheduling, detokenising) is the verification's, not paid again by the draft. */
static perf_setup quiet_draft(const perf_speculation *sp, perf_profile *quiet)
{
    *quiet = *sp->draft->profile;
    quiet->host_s = quiet->host_per_seq_s = quiet->host_tp_s = quiet->host_tp_per_seq_s = 0;
    perf_setup draft = *sp->draft;
    draft.profile = quiet;
    return draft;
}

/* A draft step as an iteration of its own (draft_iterations): its host work in series
 * with its GPU work, as the proposer worker runs it. */
static perf_setup iterating_draft(const perf_speculation *sp, perf_profile *own)
{
    *own = *sp->draft->profile;
    own->host_overlap = 0;
    perf_setup draft = *sp->draft;
    draft.profile = own;
    return draft;
}

perf_setup perf_draft_setup(const perf_setup *target, const model_spec *draft)
{
    perf_setup s = *target;
    s.model = draft;
    s.attention_dp = attention_data_parallel(target);
    return s;
}

/* A dense draft of an attention-data-parallel replica (perf_draft_setup) runs whole on
 * each of the tp devices on that device's share of the sequences: draft becomes one
 * device's setup, and the share of a batch each device runs is returned (1: the whole
 * batch, on the setup as it was).  A mixture draft keeps perf_iteration's own path. */
static double dense_draft_share(perf_setup *draft)
{
    if (!draft->attention_dp || draft->tp <= 1 || model_moe_layers(draft->model))
        return 1;
    double n = draft->tp;
    draft->tp = 1;
    draft->attention_dp = false;
    return 1 / n;
}

double perf_speculative_draft_s(const perf_speculation *sp, unsigned batch, double context)
{
    if (!sp->draft)
        return sp->k * sp->step_s;
    perf_profile quiet;
    perf_setup draft = sp->draft->profile->draft_iterations ? iterating_draft(sp, &quiet)
                                                            : quiet_draft(sp, &quiet);
    double seqs = batch * dense_draft_share(&draft);
    double t = 0;
    for (unsigned i = 0; i < sp->k; i++) {
        perf_batch b = { .decode_seqs = seqs,
                         .decode_context = seqs * model_attended_tokens(draft.model, context + i) };
        t += perf_iteration(&draft, &b, NULL).total_s;
    }
    return t;
}

double perf_speculative_draft_prefill_s(const perf_speculation *sp, const perf_batch *b)
{
    if (!sp->draft || !(b->prefill_tokens > 0))
        return 0;
    perf_profile quiet;
    perf_setup draft = quiet_draft(sp, &quiet);
    double share = dense_draft_share(&draft);
    perf_batch chunks = { 0, 0, b->prefill_tokens * share, b->prefill_seqs * share,
                          b->prefill_last * share, b->prefill_cached_pairs * share,
                          b->prefill_new_pairs * share };
    return perf_iteration(&draft, &chunks, NULL).total_s;
}

/* A cost linear in the context (see perf.h) from two points: exact but for rounding. */
static perf_decode_shape shape_of_two_points(double at0, double at1, double wide, unsigned seqs)
{
    return (perf_decode_shape){ .fixed_s = at0, .attention_s_per_token = (at1 - at0) / (wide * seqs) };
}

/* A round's GPU time (the verification's and the draft's, in series) and its host work. */
static perf_time round_parts(const perf_setup *target, const perf_speculation *sp,
                             unsigned batch, double context)
{
    perf_batch verify = { 0 };
    perf_speculative_verify_add(&verify, target->model, sp->k, batch, context);
    perf_time t = perf_iteration(target, &verify, NULL);
    t.gpu_s += perf_speculative_draft_s(sp, batch, context);
    return t;
}

perf_decode_shape perf_speculative_shape_of(const perf_setup *target, const perf_speculation *sp,
                                            unsigned seqs)
{
    const double wide = 4096;
    perf_time at0 = round_parts(target, sp, seqs, 0), at1 = round_parts(target, sp, seqs, wide);
    perf_decode_shape shape;
    if (!(at0.host_hidden_s > 0)) { /* in series: the rounds' totals, as they always were */
        shape = shape_of_two_points(perf_speculative_round_s(target, sp, seqs, 0),
                                    perf_speculative_round_s(target, sp, seqs, wide), wide, seqs);
    } else {
        shape = shape_of_two_points(at0.gpu_s, at1.gpu_s, wide, seqs);
        shape.host_hidden_s = at0.host_hidden_s;
        shape.host_exposed_s = at0.host_exposed_s;
    }
    /* the verification's work by phase; the draft's steps (a small model: its weights'
     * reads and its kernels' floors) as memory-bound work */
    shape.fixed_phases = perf_time_phases(&at0);
    shape.fixed_phases.memory_s += at0.gpu_s - (at0.compute_s + at0.memory_s + at0.comm_s
                                                + at0.launch_s);
    shape.attention_compute = at1.compute_s - at0.compute_s > at1.memory_s - at0.memory_s;
    return shape;
}

perf_decode_shape perf_speculative_draft_shape_of(const perf_speculation *sp, unsigned seqs)
{
    const double wide = 4096;
    return shape_of_two_points(perf_speculative_draft_s(sp, seqs, 0),
                               perf_speculative_draft_s(sp, seqs, wide), wide, seqs);
}

perf_time perf_prefill(const perf_setup *s, unsigned batch, double prompt)
{
    double cached, fresh;
    model_attention_pairs(s->model, 0, prompt, &cached, &fresh);
    perf_batch b = { .prefill_tokens = batch * prompt, .prefill_seqs = batch,
                     .prefill_last = batch, .prefill_new_pairs = batch * fresh };
    return perf_iteration(s, &b, NULL);
}

perf_time perf_decode_step(const perf_setup *s, unsigned batch, double context)
{
    perf_batch b = { .decode_seqs = batch,
                     .decode_context = batch * model_attended_tokens(s->model, context) };
    return perf_iteration(s, &b, NULL);
}

perf_phases perf_time_phases(const perf_time *t)
{
    return (perf_phases){ t->compute_s, t->memory_s, t->comm_s, t->launch_s };
}

perf_phases perf_phases_add(perf_phases a, perf_phases b, double k)
{
    return (perf_phases){ a.compute_s + k * b.compute_s, a.memory_s + k * b.memory_s,
                          a.comm_s + k * b.comm_s, a.launch_s + k * b.launch_s };
}

/* ---- a pure-decode iteration's shape (its runs' sums: models/decode_cost.c) ------------- */

perf_decode_shape perf_decode_shape_of(const perf_setup *setup, double seqs)
{
    perf_batch b = { .decode_seqs = seqs, .decode_context = 0 };
    step s;
    double n = 1;
    if (attention_data_parallel(setup)) {
        /* each device attends over its share of the sequences and of the context */
        step_init_one_device(&s, setup);
        n = setup->tp;
    } else {
        step_init(&s, setup);
    }
    double compute, memory;
    decode_attention_per_token(&s, seqs / n, &compute, &memory);
    perf_time t = perf_iteration(setup, &b, NULL);
    perf_decode_shape shape = { .fixed_s = t.total_s,
                                .attention_s_per_token = s.layers * fmax(compute, memory) / n,
                                .fixed_phases = perf_time_phases(&t),
                                .attention_compute = compute > memory };
    if (t.host_hidden_s > 0) { /* the GPU's part alone, the host's beside it */
        shape.fixed_s = t.gpu_s;
        shape.host_hidden_s = t.host_hidden_s;
        shape.host_exposed_s = t.host_exposed_s;
    }
    return shape;
}

/* ---- offline throughput ----------------------------------------------------------------- */

throughput_plan perf_best_throughput(const perf_setup *setup, unsigned gpus, double prompt,
                                     double output)
{
    const model_spec *m = setup->model;
    const device_spec *d = setup->device;
    const perf_profile *p = setup->profile;
    throughput_plan best = { 0, 0, 0, 0 };
    /* tensor parallelism within the node (its domain), where every layer's all-reduces
     * stay off the network; past it only when the model fits no replica within it, and
     * then at the least degree that fits (estimate's own choice for such a model) */
    unsigned within = d->is_cpu ? 1 : (gpus < p->devices_per_node ? gpus : p->devices_per_node);
    unsigned max_tp = d->is_cpu ? 1 : gpus;
    double context = prompt + output;
    for (unsigned tp = 1; tp <= max_tp; tp *= 2) {
        if (tp > within && best.tp)
            break;
        if (gpus % tp)
            continue;
        perf_setup s = *setup;
        s.tp = tp;
        inference_memory mem = memory_inference_for(m, d, s.weights, s.kv, tp, s.attention_dp,
                                                    s.reserve);
        double max_batch = floor(mem.kv_capacity_tokens / model_attended_tokens(m, context));
        if (max_batch < 1)
            continue;
        for (double b = 1; b <= max_batch && b <= 4096; b = b * 2 > max_batch && b < max_batch ? max_batch : b * 2) {
            unsigned batch = (unsigned)b;
            /* a wave: prefill the batch, then `output` decode steps at the mean context */
            double t = perf_prefill(&s, batch, prompt).total_s
                       + output * perf_decode_step(&s, batch, prompt + output / 2).total_s;
            double rate = batch * output / t * (gpus / tp);
            if (rate > best.tokens_per_s)
                best = (throughput_plan){ rate, tp, batch, gpus / tp };
        }
    }
    return best;
}

