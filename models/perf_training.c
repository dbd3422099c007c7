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

static double gather_s(double bytes, unsigned n, double link, double latency)
{
    return perf_allreduce_s(bytes, n, link, latency) / 2;
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
    unsigned ep = one_if_zero(s->ep);
    perf_iteration_expert_group(&ps, &b, ep, s->tp * one_if_zero(s->cp) * ep, &ops);
    const perf_op_time *o = ops.op;
    microbatch r = { 0 };
    r.a2a_f = o[OP_ALLTOALL].time_s;
    r.matmul_f = o[OP_QKV].time_s + o[OP_OUT_PROJ].time_s + o[OP_ROUTER].time_s
                 + o[OP_MLP_UP].time_s + o[OP_MLP_DOWN].time_s + o[OP_LM_HEAD].time_s;
    r.attention_f = o[OP_ATTN_PREFILL].time_s;
    r.pass_f = o[OP_EMBED].time_s + o[OP_NORM].time_s + o[OP_ROPE].time_s + o[OP_ACT].time_s
               + o[OP_MOE_PERMUTE].time_s
               + o[OP_ADD].time_s + o[OP_FINAL_NORM].time_s;
    r.tp_f = o[OP_ALLREDUCE].time_s;
    double cast_f = 0, cast_b = 0;
    if (prec == PREC_FP8 && d->peak_flops[PREC_FP8] > 0) {
        /* Transformer Engine's casts: each product's input (forward) and output
         * gradient (backward), 3 bytes an element (read 16-bit, write fp8) */
        const perf_family *f = family_of(p, d);
        double t = one_if_zero(s->tp), h = m->hidden, hd = (double)m->hidden / m->heads;
        double qkv = (m->heads + 2.0 * m->kv_heads) * hd / t;
        double up = (m->gated ? 2.0 : 1.0) * m->ffn / t, ffn = m->ffn / t;
        double act = m->experts ? m->experts_active : 1;
        double in = h + h / t + h + ffn * act, out = qkv + h + (up + h) * act;
        double tokens = mb * seq;
        cast_f = elementwise_s(f, d, p, tokens, 3 * tokens * in * stage_layers);
        cast_b = elementwise_s(f, d, p, tokens, 3 * tokens * out * stage_layers);
    }
    /* the data and the weight gradients; a frozen base (LoRA) takes only the data's */
    r.matmul_b = (s->lora ? 1 : 2) * r.matmul_f;
    r.attention_b = 2.5 * r.attention_f;
    r.pass_b = 2 * r.pass_f + cast_b;
    r.pass_f += cast_f;
    r.tp_b = r.tp_f;
    double layers = stage_layers > 0 ? stage_layers : 1;
    /* the once-a-step operators, out of a layer's share: the passes twice backward, the
     * LM head's product as the products are (once with a frozen base) */
    double edges = o[OP_EMBED].time_s + o[OP_FINAL_NORM].time_s, head = o[OP_LM_HEAD].time_s;
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

/* The time of half an all-reduce (a reduce-scatter or an all-gather) of `bytes` a
 * parameter: `dense` parameters over the `ranks` that hold them, `experts` over the
 * `eranks` that hold the same experts (none for a dense model), on `link`. */
static double dense_and_experts_s(double bytes, double dense, double experts, unsigned ranks,
                                  unsigned eranks, double link, const perf_profile *p)
{
    if (eranks == ranks) /* no expert parallelism: one group holds both */
        return gather_s(bytes * (dense + experts), ranks, link, p->link_latency_s);
    return gather_s(bytes * dense, ranks, link, p->link_latency_s)
           + gather_s(bytes * experts, eranks, link, p->link_latency_s);
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
    /* DualPipe pairs a stage of each direction: pp even, one chunk a stage */
    s.dualpipe = s.dualpipe && s.pp >= 2 && s.pp % 2 == 0 && s.virtual_stages == 1;
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
    double mb_recompute = s.recompute_layers * mb.layer_f;
    /* context parallelism: keys and values round the ring, hidden behind the attention */
    double mb_cp = 0;
    if (s.cp > 1) {
        double kv_layer = 2.0 * s.micro_batch * s.seq_len / s.cp * m->kv_heads
                          * ((double)m->hidden / m->heads) / s.tp * 2 /* bytes */;
        double link = group_link(d, p, s.tp, s.cp);
        double ring = 3 * (s.cp - 1) * (kv_layer / link + p->link_latency_s); /* fwd 1, bwd 2 */
        mb_cp = stage_layers * fmax(0, ring - mb.attention_layer);
    }
    if (s.dualpipe) /* dispatch and combine run under the paired chunk's computation */
        mb_ep = fmax(0, mb_ep - (mb_compute + mb_tp + mb_recompute));
    double mb_s = mb_compute + mb_tp + mb_recompute + mb_cp + mb_ep;
    e.compute_s = n * mb_compute;
    e.matmul_s = n * (mb.matmul_f + mb.matmul_b);
    e.attention_s = n * (mb.attention_f + mb.attention_b);
    e.memory_pass_s = n * (mb.pass_f + mb.pass_b);
    e.tp_comm_s = n * mb_tp;
    e.ep_comm_s = n * mb_ep;
    e.recompute_s = n * mb_recompute;
    e.cp_comm_s = n * mb_cp;
    /* the pipeline: (pp - 1) / v micro-batch slots idle, and the activations' sends along
     * the fill and the drain (steady-state sends overlap the other micro-batches) */
    if (s.pp > 1 && s.dualpipe) {
        /* DualPipe: (pp / 2 - 1) (F&B + B - 3 W), its sends hidden; F&B, a forward and a
         * backward chunk run together, is F + B (what overlaps is their communication),
         * and W, the weights' gradients, is half the backward pass's products */
        double f = mb.matmul_f + mb.attention_f + mb.pass_f + mb.tp_f + mb_cp / 3;
        double b = mb_s - f, w = s.lora ? 0 : mb.matmul_b / 2; /* a frozen base: none */
        e.bubble_s = (s.pp / 2.0 - 1) * (f + 2 * b - 3 * w);
    } else if (s.pp > 1) {
        double act = (double)s.micro_batch * s.seq_len / s.cp * m->hidden * 2 / s.tp;
        double link = group_link(d, p, s.tp * s.cp * s.dp, s.pp);
        e.bubble_s = (s.pp - 1) * mb_s / s.virtual_stages
                     + 2 * (s.pp - 1) * (act / link + p->link_latency_s);
    }
    /* data parallelism: a device's dense weights over the dp x cp ranks that hold the
     * same ones, its routed experts (1 / ep of them) over the dp x cp / ep ranks that
     * hold the same experts (memory_training's split); the two groups span the same
     * devices, so the same link.  Under DualPipe a device holds two stages, each also
     * held by the mirror pipeline rank: twice the weights, reduced over twice the ranks,
     * and the group spans the pipeline */
    double copies = s.dualpipe ? 2 : 1;
    unsigned ranks = s.dp * s.cp * (unsigned)copies;
    unsigned eranks = ranks / s.ep ? ranks / s.ep : 1; /* ep divides dp in any plan */
    double routed = (double)model_moe_layers(m) * m->experts * model_expert_params(m);
    double dense = copies * (model_params(m) - routed) / ((double)s.tp * s.pp);
    double experts = copies * routed / ((double)s.tp * s.pp * s.ep);
    double link = group_link(d, p, s.tp, s.dualpipe ? s.dp * s.cp * s.pp : ranks);
    if (s.zero_stage >= 3) {
        double layer_routed = routed / m->layers;
        double ag = dense_and_experts_s(2, (model_params_layer(m) - layer_routed) / s.tp,
                                        layer_routed / (s.tp * s.ep), ranks, eranks, link, p);
        double fwd = stage_layers * fmax(0, ag - mb.layer_f) + ag;
        double rs = s.lora ? 0 : ag; /* a frozen base's gradients need no reduce-scatter */
        double bwd = stage_layers * fmax(0, ag + rs - mb.layer_b) + ag;
        e.dp_comm_s = n * (fwd + bwd);
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
        double half = dense_and_experts_s(2, dense, experts, ranks, eranks, link, p);
        double backward = mb.matmul_b + mb.attention_b + mb.pass_b + mb.tp_b;
        double forward = mb.matmul_f + mb.attention_f + mb.pass_f + mb.tp_f;
        double v = s.virtual_stages, rounds = fmin(n, s.pp) - 1;
        double reach = 1 - 1 / stage_layers, later = v > 1 ? rounds * (v - 1) / v : 0;
        e.dp_comm_s = fmax(half - backward * (reach + later), half / stage_layers)
                      + fmax(half - forward * (reach + later), half / stage_layers);
    }
    if (s.lora && s.zero_stage < 3) /* only the adapters' gradients: not counted */
        e.dp_comm_s = 0;
    /* Adam over this rank's share of the states */
    const perf_family *f = family_of(p, d);
    double opt_params = s.lora ? 0
                        : s.zero_stage >= 1 ? dense / ranks + experts / eranks : dense + experts;
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

static void describe(char *buf, size_t size, const training_setup *s)
{
    char ep[24] = "";
    if (s->ep > 1)
        snprintf(ep, sizeof ep, ", ep %u", s->ep);
    snprintf(buf, size, "tp %u, pp %u%s, dp %u%s, ZeRO-%u%s", s->tp, s->pp,
             s->dualpipe ? " DualPipe" : s->virtual_stages > 1 ? " interleaved" : "", s->dp,
             ep, s->zero_stage,
             s->zero_stage == 3 ? " (FSDP)" : "");
}

static double slower_pct(const training_estimate *alt, const training_estimate *best)
{
    double a = alt->step_s / alt->tokens_per_step, b = best->step_s / best->tokens_per_step;
    return 100 * (a / b - 1);
}

/* What the planner has found so far. */
typedef struct plan_state {
    training_estimate best, best_low_zero, best_no_recompute;
    bool found, found_low_zero, found_no_recompute;
    double least_over;     /* before anything fits: the closest miss's memory over usable */
    unsigned tried;
} plan_state;

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
    if (!st->found || faster(&e, &st->best))
        st->best = e;
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

/* best->why: how many setups fit, and what the best without sharding beyond ZeRO-1 or
 * without recomputation would cost. */
static void explain(training_estimate *best, const plan_state *st)
{
    char alt[96];
    size_t used = 0, size = sizeof best->why;
    best->why[0] = 0;
    append(best->why, size, &used, "the fastest of %u setups that fit", st->tried);
    if (best->setup.zero_stage > 1) {
        if (st->found_low_zero) {
            describe(alt, sizeof alt, &st->best_low_zero.setup);
            append(best->why, size, &used, "; sharding only the optimizer (%s) is %.1f%% slower",
                   alt, slower_pct(&st->best_low_zero, best));
        } else {
            append(best->why, size, &used, "; nothing fits with only the optimizer sharded");
        }
    }
    if (best->setup.recompute_layers > 0) {
        if (st->found_no_recompute) {
            describe(alt, sizeof alt, &st->best_no_recompute.setup);
            append(best->why, size, &used, "; without recomputation (%s) %.1f%% slower", alt,
                   slower_pct(&st->best_no_recompute, best));
        } else {
            append(best->why, size, &used, "; nothing fits without recomputing layers");
        }
    }
}

bool perf_training_plan_within(const model_spec *m, const device_spec *d,
                               const perf_profile *p, precision prec, unsigned gpus,
                               unsigned seq_len, unsigned global_batch,
                               training_constraints c, training_estimate *out)
{
    plan_state st = { .least_over = INFINITY };
    unsigned max_tp = p->devices_per_node > 1 ? p->devices_per_node : 1;
    unsigned cp = one_if_zero(c.cp);
    /* tp: powers of two within a node, pp: powers of two up to the layers (or as imposed) */
    for (unsigned tp = c.tp ? c.tp : 1; tp <= (c.tp ? c.tp : max_tp) && tp <= gpus; tp *= 2) {
        for (unsigned pp = c.pp ? c.pp : 1;
             pp <= (c.pp ? c.pp : m->layers) && tp * pp * cp <= gpus; pp *= 2) {
            if (gpus % (tp * pp * cp) != 0 || global_batch < gpus / (tp * pp * cp))
                continue;
            unsigned dp = gpus / (tp * pp * cp), per_rank = global_batch / dp;
            unsigned stage_layers = (m->layers + pp - 1) / pp;
            for (int zero = 1; zero <= 3; zero++) {
                if (c.zero_stage >= 0 && zero != c.zero_stage)
                    continue;
                unsigned mb_from = c.micro_batch ? c.micro_batch : 1;
                for (unsigned mbs = mb_from; mbs <= (c.micro_batch ? mb_from : 8)
                                             && mbs <= per_rank; mbs *= 2) {
                    unsigned n = per_rank / mbs;
                    unsigned v_from = c.virtual_stages ? c.virtual_stages : 1;
                    for (unsigned v = v_from; v <= (c.virtual_stages ? v_from : 8); v *= 2) {
                        /* interleaving needs the micro-batches a multiple of pp and the
                         * stage's layers a multiple of v (Megatron's conditions) */
                        if (!c.virtual_stages && v > 1
                            && (pp == 1 || n % pp != 0 || stage_layers % v != 0))
                            continue;
                        /* DualPipe: one chunk a stage, pp and the micro-batches even and
                         * at least 2 pp of them (the released schedule's own conditions),
                         * the weights whole (two stages' copies, not gathered) */
                        if (c.dualpipe
                            && (v > 1 || pp % 2 || n % 2 || n < 2 * pp || zero == 3))
                            continue;
                        training_setup s = { .tp = tp, .pp = pp, .cp = cp,
                                             .zero_stage = (unsigned)zero,
                                             .virtual_stages = v, .micro_batch = mbs,
                                             .seq_len = seq_len, .dualpipe = c.dualpipe,
                                             .lora = c.lora, .weight_bytes = c.weight_bytes,
                                             .gradient_bytes = c.gradient_bytes,
                                             .optimizer_bytes = c.optimizer_bytes };
                        /* expert parallelism: powers of two dividing dp, up to the
                         * experts (1 for a dense model) */
                        unsigned ep_most = model_moe_layers(m) ? m->experts : 1;
                        for (unsigned ep = c.ep ? c.ep : 1;
                             ep <= (c.ep ? c.ep : ep_most) && ep <= dp; ep *= 2) {
                            if (dp % ep)
                                continue;
                            s.ep = ep;
                            consider(&st, m, d, p, prec, gpus, global_batch, c, s, stage_layers);
                        }
                    }
                }
            }
        }
    }
    training_estimate best = st.best;
    bool found = st.found;
    if (found)
        explain(&best, &st);
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
