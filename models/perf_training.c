/* Training steps from the inference operators, and the parallel-setup planner (see
 * perf_training.h). */
#include "models/perf_training.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

double perf_allreduce_s(double bytes, unsigned n, double link_bytes_per_s, double latency_s)
{
    if (n <= 1)
        return 0;
    return 2.0 * (n - 1) / n * bytes / link_bytes_per_s + 2.0 * (n - 1) * latency_s;
}

int perf_training_precision_check(const device_spec *d, precision p, char *why,
                                  size_t size)
{
    if (p == PREC_INT8 || p == PREC_INT4 || p == PREC_FP4) {
        snprintf(why, size, "%s is a serving precision: training runs in bf16, fp16, tf32, "
                 "fp32 or fp8", precision_name(p));
        return -1;
    }
    if (p == PREC_FP8 && !(d->peak_flops[PREC_FP8] > 0)) {
        snprintf(why, size, "%s has no fp8 matrix units (fp8 training runs on Hopper and "
                 "later)", d->name);
        return -1;
    }
    /* a GPU without bf16 (a V100) trains in fp16 with loss scaling; a CPU's 16-bit runs
     * at its widest precision, as its serving does */
    if ((p == PREC_BF16 || p == PREC_FP16 || p == PREC_TF32) && !d->is_cpu
        && !(d->peak_flops[p] > 0)) {
        snprintf(why, size, "%s has no %s matrix units", d->name, precision_name(p));
        return -1;
    }
    return 0;
}


/* The operator table the profile stands on: a calibration's, or the device family's. */
static const perf_family *family_of(const perf_profile *p, const device_spec *d)
{
    return p->has_operators ? &p->operators : p->family ? p->family : perf_family_of(d);
}

static unsigned one_if_zero(unsigned x) { return x ? x : 1; }


/* A memory pass of `bytes` over `tokens` at the family's elementwise (activation) rate:
 * fp8 casts and the optimizer step. */
static double elementwise_s(const perf_family *f, const device_spec *d, const perf_profile *p,
                            double tokens, double bytes)
{
    const perf_pass_constants *c = &f->pass[PASS_ACT];
    double mscale = p->bandwidth_efficiency / f->gemm.bandwidth_efficiency;
    double eff = c->efficiency * mscale * tokens / (tokens + c->tokens_half);
    return bytes > 0 ? bytes / (d->bandwidth_bytes_per_s * eff) : 0;
}

/* One micro-batch on the last pipeline stage, forward and backward, by operator kind. */
typedef struct microbatch {
    double matmul_f, attention_f, pass_f, tp_f; /* forward */
    double matmul_b, attention_b, pass_b, tp_b; /* backward */
    double matmul_w;       /* the backward products' weight-gradient part (0: a frozen base) */
    double layer_f;        /* one layer's forward (for recomputation and overlaps) */
    double layer_b;        /* one layer's backward */
    double attention_layer;/* one layer's attention, forward and backward */
    double a2a_f;          /* expert parallelism's dispatch and combine, forward */
} microbatch;

static microbatch microbatch_of(const model_spec *m, const device_spec *d,
                                const perf_profile *p, precision prec, const training_setup *s,
                                double stage_layers)
{
    model_spec stage = *m;
    stage.layers = (unsigned)stage_layers;
    perf_profile np = *p; /* no engine host work in a training loop */
    np.host_s = np.host_per_seq_s = np.host_tp_s = np.host_tp_per_seq_s = 0;
    /* the overlap of the all-to-alls is the plan's (ep_overlap, DualPipe), priced once in
     * the step, not a serving engine's two batches inside the iteration */
    np.two_batch_overlap = false;
    /* the plan's token dispatcher, where it names one, in place of the engine's way:
     * DeepEP and Hybrid-EP send a token once to each node its experts lie on */
    if (s->dispatcher != TRAINING_DISPATCH_ENGINE)
        np.per_node_dispatch = s->dispatcher != TRAINING_DISPATCH_ALLTOALL;
    perf_setup ps = { .model = &stage, .device = d, .profile = &np, .weights = prec,
                      .kv = PREC_BF16, .tp = s->tp };
    double cp = one_if_zero(s->cp), seq = s->seq_len / cp, mb = s->micro_batch;
    /* a sequence's share of one device attends causally to its own share and, over the
     * ring, to the earlier shares: seq^2 / 2 new pairs and seq^2 (cp - 1) / 2 cached */
    double ring, own;
    model_attention_pairs(m, seq * (cp - 1), seq, &ring, &own); /* a window sees fewer */
    perf_batch b = { .prefill_tokens = mb * seq, .prefill_seqs = mb,
                     .prefill_last = mb * seq, .prefill_new_pairs = mb * own,
                     .prefill_cached_pairs = mb * ring / 2 };
    perf_breakdown ops;
    /* Megatron's MoE parallel folding: ep x etp consecutive ranks of the stage's
     * tp x cp x dp form an expert group, so its all-to-all spans ep x etp devices: within
     * a node's NVLink when that fits */
    unsigned ep = one_if_zero(s->ep), etp = s->etp ? s->etp : s->tp;
    perf_iteration_expert_group(&ps, &b, ep, etp, ep * etp, &ops);
    const perf_op_time *o = ops.op;
    microbatch r = { 0 };
    r.a2a_f = o[OP_ALLTOALL].time_s;
    r.matmul_f = o[OP_QKV].time_s + o[OP_OUT_PROJ].time_s + o[OP_ROUTER].time_s
                 + o[OP_MLP_UP].time_s + o[OP_MLP_DOWN].time_s + o[OP_LM_HEAD].time_s;
    r.attention_f = o[OP_ATTN_PREFILL].time_s;
    /* sequence parallelism (Korthikanti et al. 2022, section 4.2.2): with tp > 1 the
     * norms and the residual adds run on each device's 1 / tp of the tokens (the
     * iteration times them on all, as serving's tensor parallelism runs them) */
    double sp = s->no_sequence_parallel ? 1 : one_if_zero(s->tp);
    r.pass_f = o[OP_EMBED].time_s + (o[OP_NORM].time_s + o[OP_ADD].time_s
                                     + o[OP_FINAL_NORM].time_s) / sp
               + o[OP_ROPE].time_s + o[OP_ACT].time_s + o[OP_MOE_PERMUTE].time_s;
    r.tp_f = o[OP_ALLREDUCE].time_s;
    double cast_f = 0, cast_b = 0;
    if (prec == PREC_FP8 && d->peak_flops[PREC_FP8] > 0) {
        /* Transformer Engine's casts: each layer product's input (forward) and output
         * gradient (backward), 3 bytes an element (read 16-bit, write fp8), as the
         * iteration shaped them: every routed copy of a token through its expert, the
         * shared experts, latent attention's projections (the router and the LM head
         * stay 16-bit) */
        const perf_family *f = family_of(p, d);
        static const perf_op CAST[] = { OP_QKV, OP_OUT_PROJ, OP_MLP_UP, OP_MLP_DOWN };
        double in = 0, out = 0, tokens = mb * seq;
        for (size_t k = 0; k < sizeof CAST / sizeof *CAST; k++) {
            in += ops.elements_in[CAST[k]];
            out += ops.elements_out[CAST[k]];
        }
        cast_f = elementwise_s(f, d, p, tokens, 3 * in);
        cast_b = elementwise_s(f, d, p, tokens, 3 * out);
    }
    /* the data and the weight gradients; a frozen base (LoRA) takes only the data's.  The
     * routed experts' weight gradients run at the engine's weight-gradient kernel's rate
     * (perf_breakdown.grouped_wgrad_s): a grouped GEMM summing over each expert's tokens
     * reaches less of the peak than the forward's (DeepGEMM's, 0.47 against 0.66) */
    r.matmul_w = s->lora ? 0 : r.matmul_f + ops.grouped_wgrad_s - ops.grouped_s;
    r.matmul_b = r.matmul_f + r.matmul_w;
    /* FlashAttention's backward: five products to the forward's two, at the engine's
     * fitted backward kernel where it has one, else at the forward's rate */
    double attention_b = perf_attention_backward_s(&ps, &b);
    r.attention_b = attention_b >= 0 ? attention_b : 2.5 * r.attention_f;
    r.pass_b = 2 * r.pass_f + cast_b;
    r.pass_f += cast_f;
    /* NCCL's all-to-all sends what each rank holds for each other rank as one block, so
     * a dispatcher on it reorders the tokens twice each way: by destination rank before
     * the send (the permutation the iteration prices) and, with several experts on a
     * rank, by local expert after it (Megatron's sort_chunks_by_idxs, and back before
     * the combine).  DeepEP and Hybrid-EP write each token to its expert's slot and
     * leave the one permutation.  The sort reads and writes the `busiest` copies,
     * 4 busiest to the permutation's 3 busiest + busiest / k, and like every memory
     * pass twice in the backward */
    double local_experts = m->experts / (double)ep;
    if (ep > 1 && local_experts > 1 && !np.per_node_dispatch && model_moe_layers(m)) {
        double k = m->experts_active;
        double sort = o[OP_MOE_PERMUTE].time_s * 4 * k / (3 * k + 1);
        r.pass_f += sort;
        r.pass_b += 2 * sort;
    }
    r.tp_b = r.tp_f;
    /* tensor-parallel communication overlapped with the products, as far as they last */
    double hidden = s->no_tp_overlap ? 0 : p->train_tp_overlap;
    if (hidden > 0) {
        r.tp_f = fmax((1 - hidden) * r.tp_f, r.tp_f - r.matmul_f);
        r.tp_b = fmax((1 - hidden) * r.tp_b, r.tp_b - r.matmul_b);
    }
    double layers = stage_layers > 0 ? stage_layers : 1;
    /* the once-a-step operators, out of a layer's share: the passes twice backward, the
     * LM head's product as the products are (once with a frozen base) */
    double edges = o[OP_EMBED].time_s + o[OP_FINAL_NORM].time_s / sp, head = o[OP_LM_HEAD].time_s;
    r.layer_f = (r.matmul_f + r.attention_f + r.pass_f + r.tp_f - edges - head) / layers;
    r.layer_b = (r.matmul_b + r.attention_b + r.pass_b + r.tp_b - 2 * edges
                 - (s->lora ? 1 : 2) * head) / layers;
    r.attention_layer = (r.attention_f + r.attention_b) / layers;
    return r;
}

/* The link of a group of n consecutive ranks (stride `inner`): NVLink within the scale-up
 * domain (72 GPUs of an NVL72 rack), PCIe beyond it within a node, else the network. */
static double group_link(const device_spec *d, const perf_profile *p, double inner, double n)
{
    return perf_group_link_bytes_per_s(d, p, inner * n);
}

/* Half an all-reduce (a reduce-scatter or an all-gather, rings in NCCL) of `bytes` over n
 * ranks `stride` devices apart (ranks numbered node by node) in `blocks` runs of them
 * (DualPipe's stage and its mirror: 2), within a group of devices spanning `span`.  Every hop of the ring carries (n - 1) / n of the bytes, one step a
 * rank.  Within a node the hops run over the group's link.  Past it, each of the ring's
 * channels leaves every node once and NCCL spreads the channels over the NICs of the
 * node's members, so the hops between nodes carry the bytes at every member's NIC
 * together (perf_network_bytes_per_s: 46-48 GB/s a 400 Gb/s NIC of bus bandwidth, as
 * NCCL's maintainers state it), at the node holding the fewest members (the last, where
 * they do not fill whole nodes), and the members' own link bounds the hops within. */
static double group_half_s(const device_spec *d, const perf_profile *p, double bytes,
                           unsigned n, double stride, double blocks, double span)
{
    if (n <= 1)
        return 0;
    double node = p->devices_per_node;
    if (span <= node)
        return perf_allreduce_s(bytes, n, perf_group_link_bytes_per_s(d, p, span),
                                p->link_latency_s) / 2;
    double full = fmax(1, fmin(floor(n / blocks), floor(node / stride)));
    double nodes = ceil(n / full);
    double rate = perf_network_bytes_per_s(p, n - (nodes - 1) * full);
    if (full > 1)
        rate = fmin(rate, perf_group_link_bytes_per_s(d, p, stride * full));
    return perf_allreduce_s(bytes, n, rate, p->link_latency_s) / 2;
}

/* The time of half an all-reduce of `bytes` a parameter: `dense` parameters over the
 * `ranks` that hold them (`stride` devices apart), `experts` over the `eranks` that hold
 * the same experts (`estride` apart; none for a dense model), both in `blocks` runs
 * within `span`. */
static double dense_and_experts_s(const device_spec *d, const perf_profile *p, double bytes,
                                  double dense, double experts, unsigned ranks, double stride,
                                  unsigned eranks, double estride, double blocks, double span)
{
    if (eranks == ranks) /* no expert parallelism: one group holds both */
        return group_half_s(d, p, bytes * (dense + experts), ranks, stride, blocks, span);
    return group_half_s(d, p, bytes * dense, ranks, stride, blocks, span)
           + group_half_s(d, p, bytes * experts, eranks, estride, blocks, span);
}

training_estimate perf_training_step(const model_spec *m, const device_spec *d,
                                     const perf_profile *p, precision prec,
                                     training_setup s, unsigned gpus, unsigned global_batch)
{
    training_estimate e = { 0 };
    s.tp = one_if_zero(s.tp);
    s.pp = one_if_zero(s.pp);
    s.cp = one_if_zero(s.cp);
    s.micro_batch = one_if_zero(s.micro_batch);
    s.virtual_stages = one_if_zero(s.virtual_stages);
    s.ep = one_if_zero(s.ep);
    /* DualPipe pairs a stage of each direction: pp even, one chunk a stage; ZB-H1
     * splits 1F1B's backward passes (one chunk a stage) */
    s.dualpipe = s.dualpipe && s.pp >= 2 && s.pp % 2 == 0 && s.virtual_stages == 1;
    s.zero_bubble = s.zero_bubble && !s.dualpipe && s.pp >= 2 && s.virtual_stages == 1;
    s.etp = s.etp ? s.etp : s.tp;
    s.dp = gpus / (s.tp * s.pp * s.cp);
    if (!s.dp)
        s.dp = 1;
    unsigned per_rank = global_batch / s.dp;
    s.microbatches = per_rank / s.micro_batch > 0 ? per_rank / s.micro_batch : 1;
    double stage_layers = ceil((double)m->layers / s.pp);
    if (s.recompute_layers > stage_layers)
        s.recompute_layers = (unsigned)stage_layers;
    e.setup = s;
    e.memory = memory_training(m, d, &s);
    microbatch mb = microbatch_of(m, d, p, prec, &s, stage_layers);
    double n = s.microbatches;
    double mb_compute = mb.matmul_f + mb.attention_f + mb.pass_f
                        + mb.matmul_b + mb.attention_b + mb.pass_b;
    double mb_tp = mb.tp_f + mb.tp_b;
    double mb_ep = 2 * mb.a2a_f; /* the backward pass sends the gradients back the same way */
    /* full recomputation runs those layers' forward again; selective recomputation
     * (Korthikanti et al. 2022) the attention core of the others: with flash-style
     * attention, whose scores are never stored, it saves no memory (memory_training) and
     * costs the attention's forward once more (2.7% more FLOPs for GPT-3 175B by their
     * count, with the scores materialised) */
    double mb_recompute = s.recompute_layers * mb.layer_f;
    if (s.selective)
        mb_recompute += (stage_layers - s.recompute_layers) * mb.attention_f / stage_layers;
    /* context parallelism: keys and values round the ring, hidden behind the attention */
    double mb_cp = 0;
    if (s.cp > 1) {
        double kv_layer = 2.0 * s.micro_batch * s.seq_len / s.cp * m->kv_heads
                          * ((double)m->hidden / m->heads) / s.tp * 2 /* bytes */;
        double link = group_link(d, p, s.tp, s.cp);
        double ring = 3 * (s.cp - 1) * (kv_layer / link + p->link_latency_s); /* fwd 1, bwd 2 */
        mb_cp = stage_layers * fmax(0, ring - mb.attention_layer);
    }
    /* DualPipe's paired chunks, and Megatron's batch-level overlap: a micro-batch's
     * forward runs beside another's backward, so the forward's dispatch and combine hide
     * under that backward's computation and the backward's under that forward's, each
     * losing the SMs it takes from it (perf_alltoall_exposed_s).  Megatron's n
     * micro-batches a rank make n - 1 such pairs: the first forward and the last backward
     * run alone, their all-to-alls in series (one micro-batch: nothing overlaps).
     * DualPipe's schedule feeds both ends and its bubble counts its warm-up.  The
     * interleaved schedule's further warm-up passes are not counted apart. */
    double ep_forward = mb.a2a_f; /* the forward pass's share of mb_ep */
    if (s.dualpipe || s.ep_overlap) {
        double forward = mb.matmul_f + mb.attention_f + mb.pass_f + mb.tp_f;
        double backward = mb_compute + mb_tp + mb_recompute - forward;
        double under_b = perf_alltoall_exposed_s(mb.a2a_f, backward);
        double under_f = perf_alltoall_exposed_s(mb.a2a_f, forward);
        double paired = s.dualpipe ? 1 : (n - 1) / n;
        ep_forward = paired * under_b + (1 - paired) * mb.a2a_f;
        mb_ep = ep_forward + paired * under_f + (1 - paired) * mb.a2a_f;
    }
    double mb_s = mb_compute + mb_tp + mb_recompute + mb_cp + mb_ep;
    e.compute_s = n * mb_compute;
    e.matmul_s = n * (mb.matmul_f + mb.matmul_b);
    e.attention_s = n * (mb.attention_f + mb.attention_b);
    e.memory_pass_s = n * (mb.pass_f + mb.pass_b);
    e.tp_comm_s = n * mb_tp;
    e.tp_overlap_share = s.tp > 1 && !s.no_tp_overlap ? p->train_tp_overlap : 0;
    e.ep_comm_s = n * mb_ep;
    e.recompute_s = n * mb_recompute;
    e.cp_comm_s = n * mb_cp;
    /* the pipeline: (pp - 1) / v micro-batch slots idle, and the activations' sends along
     * the fill and the drain (steady-state sends overlap the other micro-batches) */
    if (s.pp > 1 && s.dualpipe) {
        /* DualPipe: (pp / 2 - 1) (F&B + B - 3 W), its sends hidden; F&B, a forward and a
         * backward chunk run together, is F + B (what overlaps is their communication),
         * and W is the backward products' weight-gradient part (microbatch.matmul_w) */
        double f = mb.matmul_f + mb.attention_f + mb.pass_f + mb.tp_f + mb_cp / 3
                   + ep_forward;
        double b = mb_s - f, w = mb.matmul_w; /* a frozen base: none */
        e.bubble_s = (s.pp / 2.0 - 1) * (f + 2 * b - 3 * w);
    } else if (s.pp > 1) {
        double act = (double)s.micro_batch * s.seq_len / s.cp * m->hidden * 2 / s.tp;
        double link = group_link(d, p, s.tp * s.cp * s.dp, s.pp);
        double idle = mb_s / s.virtual_stages;
        if (s.zero_bubble) {
            /* ZB-H1 (Qi et al. 2024, their Figure 3: the bubble (p - 1)(F + B - 2W), B the
             * whole backward pass, their B + W):
             * each backward pass split into B, the data gradients the previous stage
             * waits for, and W, the weights' (microbatch.matmul_w), W filling
             * the drain; 1F1B's memory.  (A frozen base has no W.) */
            double w = mb.matmul_w;
            idle = fmax(0, mb_s - 2 * w);
        }
        e.bubble_s = (s.pp - 1) * idle + 2 * (s.pp - 1) * (act / link + p->link_latency_s);
    }
    /* data parallelism: a device's dense weights over the dp x cp ranks that hold the
     * same ones, its routed experts (1 / (ep etp) of them) over the tp cp dp / (ep etp)
     * ranks that hold the same experts (memory_training's split); the two groups span the same
     * devices, so the same link.  Under DualPipe a device holds two stages, each also
     * held by the mirror pipeline rank: twice the weights, reduced over twice the ranks,
     * and the group spans the pipeline */
    double copies = s.dualpipe ? 2 : 1;
    unsigned ranks = s.dp * s.cp * (unsigned)copies;
    /* the ranks holding the same experts: the stage's tp cp dp ranks in expert groups of
     * ep x etp (the planner keeps ep etp dividing tp cp dp) */
    double eranks = fmax(1, (double)ranks * s.tp / ((double)s.ep * s.etp));
    double routed = (double)model_moe_layers(m) * m->experts * model_expert_params(m);
    double dense = copies * (model_params(m) - routed) / ((double)s.tp * s.pp);
    double experts = copies * routed / ((double)s.etp * s.pp * s.ep);
    /* the devices the groups span: the stage's (and under DualPipe its mirror's, the
     * pipeline between them); the holders of the same dense weights are tp apart, those
     * of the same experts one an expert group of ep x etp */
    double span = s.tp * (s.dualpipe ? (double)s.dp * s.cp * s.pp : ranks);
    double estride = (double)s.ep * s.etp;
    /* the ranks the states shard over: HSDP's group under ZeRO-3, else all that hold them */
    unsigned shard = s.zero_stage >= 3 && s.shard_ranks && s.shard_ranks < ranks
                     ? s.shard_ranks : ranks;
    double eshard = fmax(1, eranks * shard / ranks);
    if (s.zero_stage >= 3) {
        /* each layer's weights gathered before its forward and again before its backward
         * pass, its gradients reduce-scattered after it, every micro-batch: the next
         * layer's transfer prefetched behind this layer's work, so what exceeds that
         * work shows (L - 1 layers have a next one), and the first layer's gather and the
         * last layer's reduction show whole (the 10% of FSDP's traffic that cannot
         * overlap at this depth, PyTorch's FSDP tuning notes).  HSDP gathers within its shard group (its link: within a
         * node when the group is) and all-reduces the gradients across the groups once
         * a step, as ZeRO-1/2 reduce below */
        double layer_routed = routed / m->layers;
        double ag = dense_and_experts_s(d, p, 2, (model_params_layer(m) - layer_routed) / s.tp,
                                        layer_routed / ((double)s.etp * s.ep), shard, s.tp,
                                        (unsigned)eshard, estride, 1, (double)s.tp * shard);
        double rs = s.lora ? 0 : ag; /* a frozen base's gradients need no reduce-scatter */
        double fwd = ag + (stage_layers - 1) * fmax(0, ag - mb.layer_f);
        double bwd = ag + (stage_layers - 1) * fmax(0, ag + rs - mb.layer_b) + rs;
        if (s.no_dp_overlap) /* each layer waits for its gather, and its reduction */
            fwd = stage_layers * ag, bwd = stage_layers * (ag + rs);
        e.dp_comm_s = n * (fwd + bwd);
        if (shard < ranks && !s.lora) {
            double across = 2 * dense_and_experts_s(d, p, 2, dense / shard,
                                                    experts / eshard, ranks / shard,
                                                    (double)s.tp * shard,
                                                    (unsigned)fmax(1, eranks / eshard),
                                                    (double)s.tp * shard, 1, span);
            double backward = mb.matmul_b + mb.attention_b + mb.pass_b + mb.tp_b;
            e.dp_comm_s += s.no_dp_overlap ? across
                                           : fmax(across - backward * (1 - 1 / stage_layers),
                                                  across / stage_layers);
        }
    } else {
        /* ZeRO-1/2 (Megatron's distributed optimizer, DeepSpeed): the gradients are
         * reduce-scattered once a step and the updated weights all-gathered, each half
         * of an all-reduce's volume.  A layer's gradients are final after its last
         * micro-batch's backward pass, so its reduction hides behind the backward work
         * still to come: the rest of that pass (1F1B), and with v chunks per stage the
         * later chunks' backward passes of the last round of min(m, pp) micro-batches
         * too (the interleaved schedule finishes chunk by chunk); the gathers hide
         * alike behind the next step's first forward passes.  What a layer's bucket
         * needs after the last work is never hidden. */
        double half = dense_and_experts_s(d, p, 2, dense, experts, ranks, s.tp,
                                          (unsigned)eranks, estride, copies, span);
        double backward = mb.matmul_b + mb.attention_b + mb.pass_b + mb.tp_b;
        double forward = mb.matmul_f + mb.attention_f + mb.pass_f + mb.tp_f;
        double v = s.virtual_stages, rounds = fmin(n, s.pp) - 1;
        double reach = 1 - 1 / stage_layers, later = v > 1 ? rounds * (v - 1) / v : 0;
        e.dp_comm_s = s.no_dp_overlap /* after the last backward pass, in series */
                          ? 2 * half
                          : fmax(half - backward * (reach + later), half / stage_layers)
                                + fmax(half - forward * (reach + later), half / stage_layers);
    }
    if (s.lora && s.zero_stage < 3) /* only the adapters' gradients: not counted */
        e.dp_comm_s = 0;
    /* Adam over this rank's share of the states */
    const perf_family *f = family_of(p, d);
    double opt_params = s.lora ? 0
                        : s.zero_stage >= 1 ? dense / shard + experts / eshard : dense + experts;
    e.optimizer_s = elementwise_s(f, d, p, opt_params / m->hidden, 28 * opt_params);
    if (prec == PREC_FP8 && d->peak_flops[PREC_FP8] > 0 && !s.lora) /* the weights' casts,
                                                                    * once a step */
        e.optimizer_s += elementwise_s(f, d, p, opt_params / m->hidden, 3 * (dense + experts));
    e.step_s = e.compute_s + e.recompute_s + e.tp_comm_s + e.cp_comm_s + e.ep_comm_s
               + e.bubble_s + e.dp_comm_s + e.optimizer_s;
    e.tokens_per_step = n * s.micro_batch * s.dp * s.seq_len;
    /* 6 N a token; 4 N with a frozen base (forward and the data gradients) */
    double model_flops = (s.lora ? 4.0 : 6.0) * model_params_active(m) * e.tokens_per_step;
    e.mfu = model_flops / (e.step_s * gpus * device_peak_flops(d, prec, NULL));
    return e;
}

/* ---- the planner ------------------------------------------------------------------------ */

void training_constraints_state_from(training_constraints *to, const training_constraints *from)
{
    to->weight_bytes = from->weight_bytes;
    to->gradient_bytes = from->gradient_bytes;
    to->optimizer_bytes = from->optimizer_bytes;
    to->pipeline_zero = from->pipeline_zero;
    to->zero_stages = from->zero_stages;
    to->sequence_parallel_off = from->sequence_parallel_off;
}

/* The fewest layers per stage to recompute in full for the setup to fit; -1 if even all
 * do not.  The memory falls as layers are recomputed, so the first that fits is it. */
static int layers_to_recompute(const model_spec *m, const device_spec *d, training_setup s,
                               unsigned gpus, unsigned global_batch)
{
    s.dp = gpus / (s.tp * s.pp * s.cp);
    unsigned per_rank = global_batch / s.dp;
    s.microbatches = per_rank / s.micro_batch > 0 ? per_rank / s.micro_batch : 1;
    unsigned layers = (unsigned)ceil((double)m->layers / s.pp);
    for (unsigned k = 0; k <= layers; k++) {
        s.recompute_layers = k;
        if (memory_training(m, d, &s).fits)
            return (int)k;
    }
    return -1;
}

static bool faster(const training_estimate *a, const training_estimate *b)
{
    return a->step_s / a->tokens_per_step < b->step_s / b->tokens_per_step;
}

const char *const training_dispatcher_names[] = { "alltoall", "deepep", "hybridep", NULL };

const char *training_dispatcher_name(training_dispatcher t)
{
    if (t == TRAINING_DISPATCH_ENGINE)
        return "the engine's";
    return t <= TRAINING_DISPATCH_HYBRIDEP ? training_dispatcher_names[t - TRAINING_DISPATCH_ALLTOALL]
                                           : "?";
}

static void describe(char *buf, size_t size, const training_setup *s)
{
    char ep[80] = "", rec[40] = "";
    if (s->ep > 1 && s->etp && s->etp != s->tp)
        snprintf(ep, sizeof ep, ", ep %u etp %u", s->ep, s->etp);
    else if (s->ep > 1)
        snprintf(ep, sizeof ep, ", ep %u", s->ep);
    if (s->ep > 1 && (s->dispatcher != TRAINING_DISPATCH_ENGINE || s->ep_overlap)) {
        size_t used = strlen(ep);
        snprintf(ep + used, sizeof ep - used, " (%s%s%s)",
                 s->dispatcher != TRAINING_DISPATCH_ENGINE
                     ? training_dispatcher_name(s->dispatcher) : "",
                 s->dispatcher != TRAINING_DISPATCH_ENGINE && s->ep_overlap ? ", " : "",
                 s->ep_overlap ? "overlapped" : "");
    }
    if (s->recompute_layers)
        snprintf(rec, sizeof rec, ", %u layers recomputed", s->recompute_layers);
    else if (s->selective)
        snprintf(rec, sizeof rec, ", selective recomputation");
    char pipe[32] = "", cp[16] = "";
    if (s->dualpipe)
        snprintf(pipe, sizeof pipe, " DualPipe");
    else if (s->zero_bubble)
        snprintf(pipe, sizeof pipe, " ZB-H1");
    else if (s->virtual_stages > 1)
        snprintf(pipe, sizeof pipe, " interleaved x%u", s->virtual_stages);
    if (s->cp > 1)
        snprintf(cp, sizeof cp, ", cp %u", s->cp);
    const char *tp_note = s->tp <= 1 ? ""
                          : s->no_sequence_parallel && s->no_tp_overlap
                              ? " (no SP, TP not overlapped)"
                          : s->no_sequence_parallel ? " (no SP)"
                          : s->no_tp_overlap ? " (TP not overlapped)" : "";
    snprintf(buf, size, "tp %u%s, pp %u%s%s, dp %u%s, ZeRO-%u%s%s, micro-batch %u%s", s->tp,
             tp_note, s->pp,
             pipe, cp, s->dp, ep, s->zero_stage,
             s->zero_stage < 3 ? "" : s->shard_ranks ? " (HSDP)" : " (FSDP)",
             s->no_dp_overlap ? " (not overlapped)" : "", s->micro_batch, rec);
}

static double slower_pct(const training_estimate *alt, const training_estimate *best)
{
    double a = alt->step_s / alt->tokens_per_step, b = best->step_s / best->tokens_per_step;
    return 100 * (a / b - 1);
}

/* What the planner has found so far. */
typedef struct plan_state {
    training_estimate best, runner_up, best_low_zero, best_no_recompute;
    bool found, found_runner_up, found_low_zero, found_no_recompute;
    double least_over;     /* before anything fits: the closest miss's memory over usable */
    unsigned tried;
    char reason[240];      /* the first setup refused before timing, and why */
} plan_state;

/* Notes why a setup was refused before it was timed.  The first reason met is kept: where
 * the planner's free choices meet a stated one, a setup may fail for several, and it
 * names one of them. */
static __attribute__((format(printf, 2, 3))) void refused(plan_state *st, const char *format, ...)
{
    if (st->reason[0])
        return;
    va_list ap;
    va_start(ap, format);
    vsnprintf(st->reason, sizeof st->reason, format, ap);
    va_end(ap);
}

/* Whether a and b are other plans, not twins that differ only in ZeRO 1 or 2 (the same
 * traffic and nearly the same time: a runner-up that says nothing). */
static bool another_plan(const training_setup *a, const training_setup *b)
{
    bool low_a = a->zero_stage <= 2, low_b = b->zero_stage <= 2;
    return a->tp != b->tp || a->pp != b->pp || a->cp != b->cp || a->ep != b->ep
           || a->etp != b->etp || a->virtual_stages != b->virtual_stages
           || a->micro_batch != b->micro_batch || a->recompute_layers != b->recompute_layers
           || low_a != low_b || (!low_a && a->shard_ranks != b->shard_ranks);
}

/* Times setup s, recomputing the fewest layers that fit (or as imposed), and keeps it
 * where it beats what st holds. */
static void consider(plan_state *st, const model_spec *m, const device_spec *d,
                     const perf_profile *p, precision prec, unsigned gpus,
                     unsigned global_batch, training_constraints c, training_setup s,
                     unsigned stage_layers)
{
    int k = c.recompute_layers >= 0 ? (int)fmin(c.recompute_layers, stage_layers)
                                    : layers_to_recompute(m, d, s, gpus, global_batch);
    s.recompute_layers = k < 0 ? stage_layers : (unsigned)k;
    training_estimate e = perf_training_step(m, d, p, prec, s, gpus, global_batch);
    st->tried++;
    if (!e.memory.fits) {
        double over = e.memory.total_bytes / e.memory.usable_bytes;
        if (!st->found && over < st->least_over) {
            st->least_over = over;
            st->best = e;
        }
        return;
    }
    if (!st->found || faster(&e, &st->best)) {
        /* the runner-up: the faster of the old best and the old runner-up that is another
         * plan than the new best, not its twin with gradients sharded or not */
        training_estimate old = st->best;
        bool had = st->found;
        if (st->found_runner_up && !another_plan(&st->runner_up.setup, &e.setup))
            st->found_runner_up = false;
        if (had && another_plan(&old.setup, &e.setup)
            && (!st->found_runner_up || faster(&old, &st->runner_up))) {
            st->runner_up = old;
            st->found_runner_up = true;
        }
        st->best = e;
    } else if (another_plan(&e.setup, &st->best.setup)
               && (!st->found_runner_up || faster(&e, &st->runner_up))) {
        st->runner_up = e;
        st->found_runner_up = true;
    }
    st->found = true;
    if (s.zero_stage == 1 && (!st->found_low_zero || faster(&e, &st->best_low_zero))) {
        st->best_low_zero = e;
        st->found_low_zero = true;
    }
    if (k == 0 && (!st->found_no_recompute || faster(&e, &st->best_no_recompute))) {
        st->best_no_recompute = e;
        st->found_no_recompute = true;
    }
}

/* Appends to buf (holding *used of size bytes) without running past it. */
static __attribute__((format(printf, 4, 5))) void append(char *buf, size_t size, size_t *used,
                                                        const char *format, ...)
{
    if (*used + 1 >= size)
        return;
    va_list ap;
    va_start(ap, format);
    int n = vsnprintf(buf + *used, size - *used, format, ap);
    va_end(ap);
    if (n > 0)
        *used = *used + (size_t)n < size ? *used + (size_t)n : size - 1;
}

/* best->why: how many setups fit, the runner-up and its cost, and what the best without
 * sharding beyond ZeRO-1 or without recomputation would cost. */
static void explain(training_estimate *best, const plan_state *st,
                    const training_constraints *c)
{
    char alt[160];
    size_t used = 0, size = sizeof best->why;
    best->why[0] = 0;
    append(best->why, size, &used, "the fastest of %u setups that fit", st->tried);
    if (st->found_runner_up) {
        describe(alt, sizeof alt, &st->runner_up.setup);
        append(best->why, size, &used, "; the runner-up (%s) is %.1f%% slower", alt,
               slower_pct(&st->runner_up, best));
    }
    if (best->setup.zero_stage > 1 && c->zero_stage < 0 && !c->shard_ranks) {
        if (st->found_low_zero) {
            append(best->why, size, &used, "; sharding only the optimizer: %.1f%% slower",
                   slower_pct(&st->best_low_zero, best));
        } else {
            append(best->why, size, &used, "; nothing fits with only the optimizer sharded");
        }
    }
    if (best->setup.recompute_layers > 0 && c->recompute_layers < 0) {
        if (st->found_no_recompute) {
            append(best->why, size, &used, "; without recomputation: %.1f%% slower",
                   slower_pct(&st->best_no_recompute, best));
        } else {
            append(best->why, size, &used, "; nothing fits without recomputing layers");
        }
    }
}

/* out->refusal when nothing fits: the closest miss's memory, needed and held, when a
 * setup was timed; otherwise why the setups were refused before timing. */
static void explain_refusal(training_estimate *out, const plan_state *st, const model_spec *m,
                            const device_spec *d, unsigned gpus)
{
    if (st->least_over < INFINITY) {
        const training_memory *mem = &out->memory;
        char setup[160];
        describe(setup, sizeof setup, &out->setup);
        snprintf(out->refusal, sizeof out->refusal, "%s does not fit on %u %s: the closest "
                 "setup (%s) needs %.1f GB a GPU (weights %.1f, gradients %.1f, optimizer "
                 "%.1f, activations %.1f) of %.1f GB usable", m->name, gpus, d->name, setup,
                 mem->total_bytes / 1e9, mem->weights_bytes / 1e9, mem->gradient_bytes / 1e9,
                 mem->optimizer_bytes / 1e9, mem->activation_bytes / 1e9,
                 mem->usable_bytes / 1e9);
    } else {
        snprintf(out->refusal, sizeof out->refusal, "%s",
                 st->reason[0] ? st->reason : "no setup of the model on these GPUs");
    }
}

/* Whether tensor parallelism tp can split the model: whole attention heads on each
 * device (Megatron's condition); a reason in st when not. */
static bool tp_splits(plan_state *st, const model_spec *m, unsigned tp)
{
    if (m->heads % tp == 0)
        return true;
    refused(st, "tp %u does not divide the %u attention heads of %s", tp, m->heads, m->name);
    return false;
}

/* The schedule's conditions on pp, v and the n micro-batches a rank; a reason in st when
 * they fail. */
static bool schedule_fits(plan_state *st, const training_constraints *c, unsigned pp,
                          unsigned v, unsigned n, unsigned stage_layers, int zero)
{
    if (c->dualpipe && (v > 1 || pp % 2 || n % 2 || n < 2 * pp || zero == 3)) {
        /* one chunk a stage, pp and the micro-batches even and at least 2 pp of them (the
         * released schedule's own conditions), the weights whole */
        refused(st, "DualPipe needs pp even, one chunk a stage, ZeRO 1 or 2 and an even number "
                "of at least 2 pp = %u micro-batches a rank; pp %u, %u micro-batches", 2 * pp,
                pp, n);
        return false;
    }
    if (c->zero_bubble && (v > 1 || pp < 2)) {
        refused(st, "the zero-bubble schedule ZB-H1 runs one chunk a stage on 2 or more "
                "stages; pp %u, %u chunks", pp, v);
        return false;
    }
    /* interleaving needs the micro-batches a multiple of pp and the stage's layers a
     * multiple of v (Megatron's conditions) */
    if (v > 1 && (pp == 1 || n % pp != 0 || stage_layers % v != 0)) {
        refused(st, "the interleaved schedule with %u chunks a stage needs pp > 1, the "
                "micro-batches a multiple of pp and the %u layers a stage a multiple of %u; "
                "pp %u, %u micro-batches", v, stage_layers, v, pp, n);
        return false;
    }
    return true;
}

bool perf_training_plan_within(const model_spec *m, const device_spec *d,
                               const perf_profile *p, precision prec, unsigned gpus,
                               unsigned seq_len, unsigned global_batch,
                               training_constraints c, training_estimate *out)
{
    plan_state st = { .least_over = INFINITY };
    unsigned max_tp = p->devices_per_node > 1 ? p->devices_per_node : 1;
    unsigned cp = one_if_zero(c.cp);
    bool moe = model_moe_layers(m) > 0;
    if (c.ep > 1 && !moe)
        refused(&st, "ep %u: %s has no experts", c.ep, m->name);
    else if (c.ep > m->experts && moe)
        refused(&st, "ep %u is more than the %u experts of %s", c.ep, m->experts, m->name);
    if (c.pp > m->layers)
        refused(&st, "pp %u is more than the %u layers of %s", c.pp, m->layers, m->name);
    if (c.tp && c.tp > gpus)
        refused(&st, "tp %u is more than the %u GPUs", c.tp, gpus);
    if (cp > gpus || (c.tp && c.tp * cp > gpus))
        refused(&st, "tp x cp = %u x %u is more than the %u GPUs", c.tp ? c.tp : 1, cp, gpus);
    if (seq_len % cp)
        refused(&st, "cp %u does not divide the %u-token sequences", cp, seq_len);
    if (c.etp > 1 && !moe)
        refused(&st, "etp %u: %s has no experts", c.etp, m->name);
    /* a dense model has no all-to-all: a dispatcher other than the default, or its
     * overlap, would change nothing, so it is refused rather than ignored */
    bool other_dispatcher = c.dispatcher != TRAINING_DISPATCH_ENGINE
                            && c.dispatcher != TRAINING_DISPATCH_ALLTOALL;
    if ((other_dispatcher || c.ep_overlap > 0) && !moe)
        refused(&st, "%s%s%s%s: %s is dense (no experts, no all-to-all)",
                other_dispatcher ? "dispatcher " : "",
                other_dispatcher ? training_dispatcher_name((training_dispatcher)c.dispatcher)
                                 : "",
                other_dispatcher && c.ep_overlap > 0 ? ", " : "",
                c.ep_overlap > 0 ? "ep_overlap on" : "", m->name);
    /* Megatron's batch-level overlap of the all-to-alls runs only with ep > 1, the
     * interleaved schedule where pp > 1, and no full or layer-count recomputation
     * (Megatron-Bridge's comm_overlap.py asserts each, as of its 26.04 table); DualPipe
     * pairs its chunks already */
    if (c.ep_overlap > 0 && moe) {
        if (c.ep == 1)
            refused(&st, "ep_overlap on needs expert parallelism (ep > 1), ep 1 stated");
        if (c.recompute_layers >= (int)m->layers)
            refused(&st, "ep_overlap on runs without full recomputation (as Megatron does), "
                    "full stated");
        else if (c.recompute_layers > 0)
            refused(&st, "ep_overlap on runs without per-layer recomputation (as Megatron "
                    "does), %d layers a stage stated", c.recompute_layers);
        if (c.pp > 1 && c.virtual_stages == 1)
            refused(&st, "ep_overlap on with pp %u needs the interleaved schedule (vpp 2 or "
                    "more, as Megatron does), vpp 1 stated", c.pp);
        if (c.dualpipe)
            refused(&st, "ep_overlap on: DualPipe overlaps the all-to-alls itself");
        if (c.zero_bubble)
            refused(&st, "ep_overlap on: ZB-H1 runs one chunk a stage, and the overlap needs "
                    "the interleaved schedule (as Megatron does)");
        c.recompute_layers = 0; /* the planner may not add any */
    }
    if (st.reason[0]) { /* a stated degree no setup can take */
        *out = (training_estimate){ 0 };
        explain_refusal(out, &st, m, d, gpus);
        return false;
    }
    /* tp: powers of two within a node, pp: powers of two up to the layers (or as imposed) */
    for (unsigned tp = c.tp ? c.tp : 1; tp <= (c.tp ? c.tp : max_tp) && tp <= gpus; tp *= 2) {
        if (!tp_splits(&st, m, tp))
            continue;
        for (unsigned pp = c.pp ? c.pp : 1;
             pp <= (c.pp ? c.pp : m->layers) && pp <= m->layers && tp * pp * cp <= gpus;
             pp *= 2) {
            if (gpus % (tp * pp * cp) != 0) {
                refused(&st, "tp x pp x cp = %u x %u x %u does not divide %u GPUs", tp, pp,
                        cp, gpus);
                continue;
            }
            unsigned dp = gpus / (tp * pp * cp);
            if (c.dp && dp != c.dp) {
                refused(&st, "dp %u stated, but %u GPUs over tp x pp x cp = %u x %u x %u "
                        "leave %u", c.dp, gpus, tp, pp, cp, dp);
                continue;
            }
            if (global_batch < dp) {
                refused(&st, "a global batch of %u sequences is fewer than the %u "
                        "data-parallel ranks (one each at least)", global_batch, dp);
                continue;
            }
            unsigned per_rank = global_batch / dp;
            unsigned stage_layers = (m->layers + pp - 1) / pp;
            if (c.micro_batch > per_rank)
                refused(&st, "a micro-batch of %u sequences is more than the %u a "
                        "data-parallel rank gets (%u over %u ranks)", c.micro_batch, per_rank,
                        global_batch, dp);
            /* ZeRO 1-3 (plain data parallelism, ZeRO 0, only when stated: it holds more
             * for the same traffic) */
            for (int zero = c.zero_stage == 0 ? 0 : 1; zero <= 3; zero++) {
                if (c.zero_stage >= 0 && zero != c.zero_stage)
                    continue;
                if (zero == 3 && c.shard_ranks
                    && (c.shard_ranks > dp * cp || (dp * cp) % c.shard_ranks)) {
                    refused(&st, "an HSDP group of %u ranks does not divide the dp x cp = %u "
                            "ranks holding the same weights", c.shard_ranks, dp * cp);
                    continue;
                }
                if (!(c.zero_stages >> zero & 1u)) {
                    refused(&st, "ZeRO-%d: the framework does not run it", zero);
                    continue;
                }
                if (pp > 1 && zero > (int)c.pipeline_zero) {
                    refused(&st, "ZeRO-%d beside pipeline parallelism (pp %u): the framework "
                            "pipelines with ZeRO-%u at most", zero, pp, c.pipeline_zero);
                    continue;
                }
                unsigned mb_from = c.micro_batch ? c.micro_batch : 1;
                for (unsigned mbs = mb_from; mbs <= (c.micro_batch ? mb_from : 8)
                                             && mbs <= per_rank; mbs *= 2) {
                    unsigned n = per_rank / mbs;
                    unsigned v_from = c.virtual_stages ? c.virtual_stages : 1;
                    for (unsigned v = v_from; v <= (c.virtual_stages ? v_from : 8); v *= 2) {
                        if (!schedule_fits(&st, &c, pp, v, n, stage_layers, zero))
                            continue;
                        if (c.ep_overlap > 0 && pp > 1 && v == 1) {
                            refused(&st, "ep_overlap on with pp %u needs the interleaved "
                                    "schedule (vpp 2 or more)", pp);
                            continue;
                        }
                        training_setup s = { .tp = tp, .pp = pp, .cp = cp,
                                             .zero_stage = (unsigned)zero,
                                             .virtual_stages = v, .micro_batch = mbs,
                                             .seq_len = seq_len, .dualpipe = c.dualpipe,
                                             .zero_bubble = c.zero_bubble,
                                             .selective = c.selective > 0,
                                             .shard_ranks = zero == 3 ? c.shard_ranks : 0,
                                             .no_sequence_parallel =
                                                 c.sequence_parallel == 0
                                                 || (c.sequence_parallel < 0
                                                     && c.sequence_parallel_off),
                                             .no_dp_overlap = c.dp_overlap == 0,
                                             .no_tp_overlap = c.tp_overlap == 0,
                                             .dispatcher = (training_dispatcher)c.dispatcher,
                                             .ep_overlap = c.ep_overlap > 0,
                                             .lora = c.lora, .weight_bytes = c.weight_bytes,
                                             .gradient_bytes = c.gradient_bytes,
                                             .optimizer_bytes = c.optimizer_bytes };
                        /* expert parallelism: powers of two up to the experts (1 for a
                         * dense model), ep x etp dividing the stage's tp cp dp ranks
                         * (Megatron's folding); etp tp (its default) or 1 */
                        unsigned ep_most = moe ? m->experts : 1;
                        unsigned ep_to = c.ep ? c.ep : ep_most < tp * cp * dp ? ep_most
                                                                               : tp * cp * dp;
                        if (c.ep_overlap > 0 && moe && !c.ep && ep_to < 2)
                            refused(&st, "ep_overlap on needs ep 2 or more: a stage's tp x cp "
                                    "x dp = %u ranks hold one expert group of one", tp * cp * dp);
                        for (unsigned ep = c.ep ? c.ep : c.ep_overlap > 0 && moe ? 2 : 1;
                             ep <= ep_to; ep *= 2) {
                            unsigned etps[2] = { c.etp ? c.etp : tp, 1 };
                            unsigned netp = c.etp || tp == 1 || ep == 1 || !moe ? 1 : 2;
                            for (unsigned i = 0; i < netp; i++) {
                                if ((tp * cp * dp) % (ep * etps[i])) {
                                    refused(&st, "ep x etp = %u x %u does not divide the "
                                            "tp x cp x dp = %u ranks of a stage", ep, etps[i],
                                            tp * cp * dp);
                                    continue;
                                }
                                s.ep = ep;
                                s.etp = etps[i];
                                consider(&st, m, d, p, prec, gpus, global_batch, c, s,
                                         stage_layers);
                            }
                        }
                    }
                }
            }
        }
    }
    training_estimate best = st.best;
    bool found = st.found;
    if (found)
        explain(&best, &st, &c);
    else
        explain_refusal(&best, &st, m, d, gpus);
    if (!found && c.ep_overlap > 0 && moe && st.least_over < INFINITY) {
        size_t used = strlen(best.refusal);
        snprintf(best.refusal + used, sizeof best.refusal - used,
                 " (ep_overlap on: no layers recomputed, as Megatron requires)");
    }
    *out = best;
    return found;
}

bool perf_training_plan(const model_spec *m, const device_spec *d, const perf_profile *p,
                        precision prec, unsigned gpus, unsigned seq_len, unsigned global_batch,
                        training_estimate *out)
{
    return perf_training_plan_within(m, d, p, prec, gpus, seq_len, global_batch, TRAINING_FREE,
                                     out);
}
