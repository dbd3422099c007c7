/* The performance model (see perf.h). */
#include "models/perf.h"

#include <math.h>
#include <stddef.h>

perf_profile perf_default_profile(const device_spec *d)
{
    if (d->is_cpu) /* BLAS near 60% of fp32 peak; STREAM near 70% of DDR5's */
        return (perf_profile){ 0.6, 4, 16, 0.7, 0, 0, 5e-6, 12.5e9, 1, 0.5 };
    /* large bf16 products reach ~70% of dense peak (so that the 38-55% MFU of published
     * runs follows after communication and bubbles); decode streams at ~85% of peak
     * bandwidth; 400 Gb/s per GPU between nodes; 8 GPUs a node */
    return (perf_profile){ 0.70, 32, 128, 0.85, 4e-6, 8, 10e-6, 50e9, 8, 0.8 };
}

double perf_allreduce_s(double bytes, unsigned n, double link_bytes_per_s, double latency_s)
{
    if (n <= 1)
        return 0;
    return 2.0 * (n - 1) / n * bytes / link_bytes_per_s + 2.0 * (n - 1) * latency_s;
}

static double efficiency(const perf_profile *p, double tokens, double width)
{
    return p->compute_efficiency * tokens / (tokens + p->tokens_half)
           * width / (width + p->width_half);
}

/* Weights a pass must read per device: all of a dense model, the experts touched of a
 * mixture of experts. */
static double weight_bytes_read(const model_spec *m, precision prec, double tokens, unsigned tp)
{
    double params = model_params(m);
    if (m->experts) {
        double per_expert = (m->gated ? 3.0 : 2.0) * m->hidden * m->ffn * m->layers;
        params -= (m->experts - model_experts_touched(m, tokens)) * per_expert;
    }
    return params * precision_bytes(prec) / tp;
}

static perf_time roofline(const device_spec *d, const perf_profile *p, precision prec,
                          double flops, double bytes, double tokens, double width,
                          double comm_s, double layers)
{
    perf_time t;
    t.compute_s = flops / (device_peak_flops(d, prec, NULL) * efficiency(p, tokens, width));
    t.memory_s = bytes / (d->bandwidth_bytes_per_s * p->bandwidth_efficiency);
    t.comm_s = comm_s;
    t.launch_s = layers * p->kernels_per_layer * p->kernel_launch_s;
    t.compute_bound = t.compute_s >= t.memory_s;
    t.total_s = fmax(t.compute_s, t.memory_s) + t.comm_s + t.launch_s;
    return t;
}

/* Two all-reduces per layer (after attention and after the feed-forward block) of the
 * layer's 16-bit activations. */
static double tp_comm_s(const model_spec *m, const device_spec *d, const perf_profile *p,
                        unsigned tp, double tokens)
{
    double bytes = tokens * m->hidden * 2.0;
    return 2.0 * m->layers * perf_allreduce_s(bytes, tp, device_link_bytes_per_s(d),
                                              p->link_latency_s);
}

perf_time perf_prefill(const model_spec *m, const device_spec *d, const perf_profile *p,
                       precision prec, unsigned tp, unsigned batch, double prompt)
{
    double tokens = batch * prompt;
    /* causal attention: on average a token attends to half the prompt; logits are needed
     * for the last token of each prompt only */
    double head = 2.0 * m->vocab * m->hidden;
    double flops = (tokens * (model_forward_flops_per_token(m, prompt / 2) - head)
                    + batch * head) / tp;
    double bytes = weight_bytes_read(m, prec, tokens, tp)
                   + tokens * model_kv_bytes_per_token(m, prec) / tp;
    return roofline(d, p, prec, flops, bytes, tokens, (double)m->hidden / tp,
                    tp_comm_s(m, d, p, tp, tokens), m->layers);
}

perf_time perf_decode_step(const model_spec *m, const device_spec *d, const perf_profile *p,
                           precision prec, unsigned tp, unsigned batch, double context)
{
    double flops = batch * model_forward_flops_per_token(m, context) / tp;
    double bytes = weight_bytes_read(m, prec, batch, tp)
                   + batch * context * model_kv_bytes_per_token(m, prec) / tp;
    return roofline(d, p, prec, flops, bytes, batch, (double)m->hidden / tp,
                    tp_comm_s(m, d, p, tp, batch), m->layers);
}

training_estimate perf_training_step(const model_spec *m, const device_spec *d,
                                     const perf_profile *p, precision prec,
                                     training_setup s, unsigned gpus, unsigned global_batch)
{
    training_estimate e = { 0 };
    s.dp = gpus / (s.tp * s.pp);
    unsigned per_rank = global_batch / s.dp;
    s.microbatches = per_rank / s.micro_batch > 0 ? per_rank / s.micro_batch : 1;
    e.setup = s;
    e.memory = memory_training(m, d, &s);
    double tokens_mb = (double)s.micro_batch * s.seq_len;
    /* forward + backward = 3 forward passes; recomputation adds a fourth */
    double passes = s.recompute ? 4 : 3;
    double flops_mb = passes * tokens_mb * model_forward_flops_per_token(m, s.seq_len / 2.0)
                      / ((double)s.tp * s.pp);
    double mb_compute = flops_mb / (device_peak_flops(d, prec, NULL)
                                    * efficiency(p, tokens_mb, (double)m->hidden / s.tp));
    /* tensor parallelism: 4 all-reduces per layer (2 forward, 2 backward), on NVLink */
    double bytes = tokens_mb * m->hidden * 2.0;
    double link = s.tp <= p->devices_per_node ? device_link_bytes_per_s(d) : p->network_bytes_per_s;
    double mb_tp = 4.0 * ceil((double)m->layers / s.pp)
                   * perf_allreduce_s(bytes, s.tp, link, p->link_latency_s);
    double mb = mb_compute + mb_tp;
    e.compute_s = s.microbatches * mb_compute;
    e.tp_comm_s = s.microbatches * mb_tp;
    e.bubble_s = (s.pp - 1) * mb; /* 1F1B: pp - 1 micro-batch slots idle per step */
    /* data parallelism: the 16-bit gradients of this rank's shard, between nodes once the
     * group spans more than one node, partly hidden behind the backward pass */
    double grad_bytes = 2.0 * model_params(m) / ((double)s.tp * s.pp);
    double dp_link = (double)gpus > p->devices_per_node ? p->network_bytes_per_s
                                                        : device_link_bytes_per_s(d);
    double dp_s = perf_allreduce_s(grad_bytes, s.dp, dp_link, p->link_latency_s);
    e.dp_comm_s = dp_s * (1 - p->dp_overlap);
    e.step_s = e.compute_s + e.tp_comm_s + e.bubble_s + e.dp_comm_s;
    e.tokens_per_step = (double)s.microbatches * s.micro_batch * s.dp * s.seq_len;
    double model_flops = 6.0 * model_params_active(m) * e.tokens_per_step;
    e.mfu = model_flops / (e.step_s * gpus * device_peak_flops(d, prec, NULL));
    return e;
}

bool perf_training_plan(const model_spec *m, const device_spec *d, const perf_profile *p,
                        precision prec, unsigned gpus, unsigned seq_len, unsigned global_batch,
                        training_estimate *out)
{
    bool found = false;
    training_estimate best = { 0 };
    double least_over = INFINITY;
    unsigned max_tp = p->devices_per_node > 1 ? p->devices_per_node : 1;
    for (int recompute = 0; recompute <= 1 && !found; recompute++) {
        for (unsigned tp = 1; tp <= max_tp && tp <= gpus; tp *= 2) {
            for (unsigned pp = 1; tp * pp <= gpus && pp <= m->layers; pp *= 2) {
                if (gpus % (tp * pp) != 0 || global_batch < gpus / (tp * pp))
                    continue;
                training_setup s = { tp, pp, 0, 1, recompute, 1, seq_len, 0 };
                training_estimate e = perf_training_step(m, d, p, prec, s, gpus, global_batch);
                if (!e.memory.fits) {
                    double over = e.memory.total_bytes / e.memory.usable_bytes;
                    if (!found && over < least_over) {
                        least_over = over;
                        best = e;
                    }
                    continue;
                }
                if (!found || e.step_s / e.tokens_per_step < best.step_s / best.tokens_per_step)
                    best = e;
                found = true;
            }
        }
    }
    *out = best;
    return found;
}

throughput_plan perf_best_throughput(const model_spec *m, const device_spec *d,
                                     const perf_profile *p, precision prec, unsigned gpus,
                                     double prompt, double output)
{
    throughput_plan best = { 0, 0, 0, 0 };
    unsigned max_tp = d->is_cpu ? 1 : (gpus < p->devices_per_node ? gpus : p->devices_per_node);
    double context = prompt + output;
    for (unsigned tp = 1; tp <= max_tp; tp *= 2) {
        if (gpus % tp)
            continue;
        inference_memory mem = memory_inference(m, d, prec, prec, tp);
        double max_batch = floor(mem.kv_capacity_tokens / context);
        if (max_batch < 1)
            continue;
        for (double b = 1; b <= max_batch && b <= 4096; b = b * 2 > max_batch && b < max_batch ? max_batch : b * 2) {
            unsigned batch = (unsigned)b;
            /* a wave: prefill the batch, then `output` decode steps at the mean context */
            double t = perf_prefill(m, d, p, prec, tp, batch, prompt).total_s
                       + output * perf_decode_step(m, d, p, prec, tp, batch,
                                                   prompt + output / 2).total_s;
            double rate = batch * output / t * (gpus / tp);
            if (rate > best.tokens_per_s)
                best = (throughput_plan){ rate, tp, batch, gpus / tp };
        }
    }
    return best;
}

/* ---- continuous batching ------------------------------------------------------------ */

perf_time perf_iteration(const model_spec *m, const device_spec *d, const perf_profile *p,
                         precision prec, unsigned tp, double decode_seqs, double decode_context,
                         double prefill_tokens, double prefill_attention)
{
    double tokens = decode_seqs + prefill_tokens;
    double head = 2.0 * m->vocab * m->hidden;
    double per_token = model_forward_flops_per_token(m, 0); /* weights only */
    double attention = 4.0 * m->layers * m->hidden;         /* per token pair */
    /* prompt tokens need no logits but the last of a prompt: counted as one per chunk
     * would need chunk boundaries, so all prefill tokens skip the head and decode ones
     * pay it */
    double flops = (tokens * per_token - prefill_tokens * head
                    + attention * (decode_context + prefill_attention)) / tp;
    double kv = model_kv_bytes_per_token(m, prec);
    double bytes = weight_bytes_read(m, prec, tokens, tp)
                   + (decode_context + prefill_tokens) * kv / tp;
    return roofline(d, p, prec, flops, bytes, tokens, (double)m->hidden / tp,
                    tp_comm_s(m, d, p, tp, tokens), m->layers);
}

decode_cost perf_decode_cost(const model_spec *m, const device_spec *d, const perf_profile *p,
                             precision prec, unsigned tp, double decode_seqs,
                             double decode_context)
{
    perf_time at0 = perf_iteration(m, d, p, prec, tp, decode_seqs, decode_context, 0, 0);
    perf_time at1 = perf_iteration(m, d, p, prec, tp, decode_seqs,
                                   decode_context + decode_seqs, 0, 0);
    decode_cost c = { at0.compute_s, at1.compute_s - at0.compute_s, at0.memory_s,
                      at1.memory_s - at0.memory_s, at0.comm_s + at0.launch_s };
    return c;
}

/* sum over k = from..to-1 of (a + b k) */
static double linear_sum(double a, double b, double from, double to)
{
    double n = to - from;
    return n <= 0 ? 0 : a * n + b * (from + to - 1) * n / 2;
}

double decode_cost_sum(const decode_cost *c, double n)
{
    if (n <= 0)
        return 0;
    double total = c->fixed * n;
    double db = c->compute1 - c->memory1, da = c->memory0 - c->compute0;
    /* compute(k) >= memory(k) exactly when db k >= da */
    if (db == 0) {
        total += da <= 0 ? linear_sum(c->compute0, c->compute1, 0, n)
                         : linear_sum(c->memory0, c->memory1, 0, n);
        return total;
    }
    double split = fmin(fmax(ceil(da / db), 0), n);
    if (db > 0) { /* memory-bound first, compute-bound from split on */
        total += linear_sum(c->memory0, c->memory1, 0, split);
        total += linear_sum(c->compute0, c->compute1, split, n);
    } else {      /* compute-bound first */
        total += linear_sum(c->compute0, c->compute1, 0, split);
        total += linear_sum(c->memory0, c->memory1, split, n);
    }
    return total;
}

double decode_cost_iterations_within(const decode_cost *c, double elapsed, double max_n)
{
    double lo = 0, hi = max_n; /* largest n with sum(n) <= elapsed */
    if (decode_cost_sum(c, hi) <= elapsed)
        return hi;
    while (hi - lo > 1) {
        double mid = floor((lo + hi) / 2);
        if (decode_cost_sum(c, mid) <= elapsed)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}
