#include "models/memory.h"

#include <math.h>

inference_memory memory_inference(const model_spec *m, const device_spec *d,
                                  precision weights, precision kv, unsigned tp)
{
    return memory_inference_share(m, d, weights, kv, tp, MEMORY_USABLE_FRACTION);
}

inference_memory memory_inference_share(const model_spec *m, const device_spec *d,
                                        precision weights, precision kv, unsigned tp,
                                        double share)
{
    inference_memory r;
    r.weights_bytes = model_weight_bytes(m, weights) / tp;
    r.kv_bytes_per_token = model_kv_bytes_per_token_per_device(m, kv, tp);
    r.usable_bytes = d->memory_bytes * share;
    double free_bytes = r.usable_bytes - r.weights_bytes;
    r.kv_capacity_tokens = free_bytes > 0 ? floor(free_bytes / r.kv_bytes_per_token) : 0;
    r.fits = r.kv_capacity_tokens >= 1;
    return r;
}

inference_memory memory_inference_with_draft(const model_spec *m, const model_spec *draft,
                                             const device_spec *d, precision weights,
                                             precision kv, unsigned tp)
{
    inference_memory r = memory_inference(m, d, weights, kv, tp);
    if (!draft)
        return r;
    inference_memory small = memory_inference(draft, d, weights, kv, tp);
    r.weights_bytes += small.weights_bytes;
    r.kv_bytes_per_token += small.kv_bytes_per_token;
    double free_bytes = r.usable_bytes - r.weights_bytes;
    r.kv_capacity_tokens = free_bytes > 0 ? floor(free_bytes / r.kv_bytes_per_token) : 0;
    r.fits = r.kv_capacity_tokens >= 1;
    return r;
}

inference_memory memory_inference_dp(const model_spec *m, const device_spec *d,
                                     precision weights, precision kv, unsigned n)
{
    if (n <= 1 || !model_moe_layers(m))
        return memory_inference(m, d, weights, kv, n ? n : 1);
    inference_memory r;
    double routed = (double)model_moe_layers(m) * m->experts * model_expert_params(m);
    r.weights_bytes = model_weight_bytes(m, weights) - routed * (1 - 1.0 / n) * precision_bytes(weights);
    r.kv_bytes_per_token = model_kv_bytes_per_token(m, kv);
    r.usable_bytes = d->memory_bytes * MEMORY_USABLE_FRACTION;
    double free_bytes = r.usable_bytes - r.weights_bytes;
    r.kv_capacity_tokens = free_bytes > 0 ? n * floor(free_bytes / r.kv_bytes_per_token) : 0;
    r.fits = r.kv_capacity_tokens >= 1;
    return r;
}

inference_memory memory_inference_for(const model_spec *m, const device_spec *d,
                                      precision weights, precision kv, unsigned tp,
                                      bool attention_dp)
{
    return attention_dp ? memory_inference_dp(m, d, weights, kv, tp)
                        : memory_inference(m, d, weights, kv, tp);
}

unsigned memory_min_tp(const model_spec *m, const device_spec *d, precision weights,
                       precision kv, double context, unsigned max_tp)
{
    for (unsigned tp = 1; tp <= max_tp; tp *= 2)
        if (memory_inference(m, d, weights, kv, tp).kv_capacity_tokens
            >= model_attended_tokens(m, context))
            return tp;
    return 0;
}

double memory_training_layer_activations(const model_spec *m, const training_setup *s,
                                         bool recomputed)
{
    double cp = s->cp ? s->cp : 1, t = s->tp ? s->tp : 1;
    double sbh = (double)s->seq_len / cp * s->micro_batch * m->hidden;
    if (recomputed)
        return 2 * sbh;
    return t > 1 ? 34 * sbh / t : sbh * (10 + 24 / t);
}

/* `bytes` a parameter of a device's dense and expert shares, over the ranks that hold
 * the same ones when the ZeRO stage shards them. */
static double states(double bytes, double dense, double experts, double ranks, double eranks,
                     bool sharded)
{
    return bytes * (sharded ? dense / ranks + experts / eranks : dense + experts);
}

training_memory memory_training(const model_spec *m, const device_spec *d,
                                const training_setup *s)
{
    training_memory r = { 0 };
    double pp = s->pp ? s->pp : 1, t = s->tp ? s->tp : 1, cp = s->cp ? s->cp : 1;
    double ep = s->ep > 1 ? s->ep : 1;
    double routed = (double)model_moe_layers(m) * m->experts * model_expert_params(m);
    /* DualPipe: a stage of each direction, each also held by the mirror pipeline rank */
    double copies = s->dualpipe ? 2 : 1;
    double dense = copies * (model_params(m) - routed) / (t * pp);
    double experts = copies * routed / (t * pp * ep);
    double ranks = (s->dp ? s->dp : 1) * cp * copies; /* the ranks holding the same weights */
    double eranks = ranks / ep;              /* ... the same experts */
    r.weights_bytes = states(2, dense, experts, ranks, eranks, s->zero_stage >= 3);
    if (s->zero_stage >= 3) /* the layer computing and the one prefetched, gathered */
        r.weights_bytes += 2 * 2 * (model_params_layer(m) - routed / m->layers * (1 - 1 / ep)) / t;
    if (!s->lora) { /* a frozen base keeps neither */
        r.gradient_bytes = states(2, dense, experts, ranks, eranks, s->zero_stage >= 2);
        r.optimizer_bytes = states(12, dense, experts, ranks, eranks, s->zero_stage >= 1);
    }
    double layers = ceil((double)m->layers / pp);
    double recomputed = fmin(s->recompute_layers, layers);
    double per_mb = recomputed * memory_training_layer_activations(m, s, true)
                    + (layers - recomputed) * memory_training_layer_activations(m, s, false);
    double v = s->virtual_stages > 1 ? s->virtual_stages : 1;
    double mbs = s->microbatches ? s->microbatches : 1;
    double in_flight = fmin(mbs, s->dualpipe ? pp + 1 : pp);
    if (v > 1 && pp > 1)
        in_flight *= 1 + (pp - 1) / (pp * v);
    r.logits_bytes = 4.0 * s->seq_len / cp * s->micro_batch * m->vocab / t;
    double first = per_mb * in_flight, last = per_mb + r.logits_bytes;
    r.activation_bytes = fmax(first, last); /* one stage (pp 1): first <= last */
    r.total_bytes = r.weights_bytes + r.gradient_bytes + r.optimizer_bytes + r.activation_bytes;
    r.usable_bytes = d->memory_bytes * MEMORY_USABLE_FRACTION;
    r.fits = r.total_bytes <= r.usable_bytes;
    return r;
}
