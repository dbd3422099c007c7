#include "models/memory.h"

#include <math.h>

inference_memory memory_inference(const model_spec *m, const device_spec *d,
                                  precision weights, precision kv, unsigned tp)
{
    inference_memory r;
    r.weights_bytes = model_params(m) * precision_bytes(weights) / tp;
    r.kv_bytes_per_token = model_kv_bytes_per_token(m, kv) / tp;
    r.usable_bytes = d->memory_bytes * MEMORY_USABLE_FRACTION;
    double free_bytes = r.usable_bytes - r.weights_bytes;
    r.kv_capacity_tokens = free_bytes > 0 ? floor(free_bytes / r.kv_bytes_per_token) : 0;
    r.fits = r.kv_capacity_tokens >= 1;
    return r;
}

unsigned memory_min_tp(const model_spec *m, const device_spec *d, precision weights,
                       precision kv, double context, unsigned max_tp)
{
    for (unsigned tp = 1; tp <= max_tp; tp *= 2)
        if (memory_inference(m, d, weights, kv, tp).kv_capacity_tokens >= context)
            return tp;
    return 0;
}

training_memory memory_training(const model_spec *m, const device_spec *d,
                                const training_setup *s)
{
    training_memory r;
    double shard = model_params(m) / ((double)s->tp * s->pp);
    double dp = s->dp;
    r.weights_bytes = 2 * shard / (s->zero_stage >= 3 ? dp : 1);
    r.gradient_bytes = 2 * shard / (s->zero_stage >= 2 ? dp : 1);
    r.optimizer_bytes = 12 * shard / (s->zero_stage >= 1 ? dp : 1);
    double sbh = (double)s->seq_len * s->micro_batch * m->hidden;
    double t = s->tp, a = m->heads, h = m->hidden, seq = s->seq_len;
    double per_layer = s->recompute ? 2 * sbh : sbh * (10 + 24 / t + 5 * a * seq / (h * t));
    double layers = ceil((double)m->layers / s->pp);
    double in_flight = s->microbatches < s->pp ? s->microbatches : s->pp;
    r.activation_bytes = per_layer * layers * (in_flight > 0 ? in_flight : 1);
    r.total_bytes = r.weights_bytes + r.gradient_bytes + r.optimizer_bytes + r.activation_bytes;
    r.usable_bytes = d->memory_bytes * MEMORY_USABLE_FRACTION;
    r.fits = r.total_bytes <= r.usable_bytes;
    return r;
}
