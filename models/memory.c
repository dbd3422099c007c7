#include "models/memory.h"

#include <math.h>
#include <stddef.h>

const char *memory_rule_name(memory_rule r)
{
    static const char *const names[] = { "share_of_total", "static_pool", "share_of_free" };
    return (unsigned)r < MEMORY_RULE_COUNT ? names[r] : "?";
}

double memory_activation_bytes(const memory_reserve *r, unsigned t)
{
    if (!r)
        return 0;
    t = t ? t : 1;
    return fmax(r->activation_split_bytes / t + r->activation_whole_bytes,
                r->activation_least_bytes);
}

/* What r keeps before a floor: the runtime, its tensor-parallel and per-rank parts for
 * `ranks`, the activation peak split over `split` devices, the graphs. */
static double reserved_raw(const memory_reserve *r, unsigned ranks, unsigned split)
{
    return r->runtime_bytes + (ranks > 1 ? r->runtime_tp_bytes : 0) + ranks * r->runtime_rank_bytes
           + memory_activation_bytes(r, split) + r->graph_bytes;
}

static double floored(const memory_reserve *r, double reserved, double device_bytes)
{
    return device_bytes > r->floor_above_bytes ? fmax(reserved, r->floor_bytes) : reserved;
}

double memory_reserved_bytes(const memory_reserve *r, unsigned t, double device_bytes)
{
    if (!r)
        return 0;
    t = t ? t : 1;
    return floored(r, reserved_raw(r, t, t), device_bytes);
}

double memory_reserved_dp_bytes(const memory_reserve *r, unsigned n, double device_bytes)
{
    if (!r)
        return 0;
    return floored(r, reserved_raw(r, n ? n : 1, 1), device_bytes);
}

/* The weights' and the cache's bytes of a device under r, given what r keeps of it. */
static double usable_given(const memory_reserve *r, double reserved, double device_bytes,
                           double weights_bytes)
{
    switch (r->rule) {
    case MEMORY_STATIC_POOL:
        return r->share > 0 ? r->share * device_bytes : device_bytes - reserved;
    case MEMORY_SHARE_OF_FREE: /* the cache's share of what the weights and the rest leave */
        return weights_bytes + r->share * fmax(device_bytes - weights_bytes - reserved, 0);
    case MEMORY_SHARE_OF_TOTAL:
    default:
        return r->share * device_bytes - reserved;
    }
}

double memory_usable_bytes(const memory_reserve *r, unsigned t, double device_bytes,
                           double weights_bytes)
{
    if (!r)
        return device_bytes * MEMORY_USABLE_FRACTION;
    return usable_given(r, memory_reserved_bytes(r, t, device_bytes), device_bytes,
                        weights_bytes);
}

/* The cache's tokens (n devices' together) and whether a token fits. */
static inference_memory with_cache(inference_memory r, double copies)
{
    double free_bytes = r.usable_bytes - r.weights_bytes;
    r.kv_capacity_tokens = free_bytes > 0 ? copies * floor(free_bytes / r.kv_bytes_per_token) : 0;
    r.fits = r.kv_capacity_tokens >= 1;
    return r;
}

inference_memory memory_inference(const model_spec *m, const device_spec *d,
                                  precision weights, precision kv, unsigned tp)
{
    return memory_inference_reserved(m, d, weights, kv, tp, NULL);
}

inference_memory memory_inference_reserved(const model_spec *m, const device_spec *d,
                                           precision weights, precision kv, unsigned tp,
                                           const memory_reserve *reserve)
{
    inference_memory r;
    r.weights_bytes = model_weight_bytes(m, weights) / tp;
    r.kv_bytes_per_token = model_kv_bytes_per_token_per_device(m, kv, tp);
    r.usable_bytes = memory_usable_bytes(reserve, tp, d->memory_bytes, r.weights_bytes);
    return with_cache(r, 1);
}

inference_memory memory_inference_with_draft(const model_spec *m, const model_spec *draft,
                                             const device_spec *d, precision weights,
                                             precision kv, unsigned tp,
                                             const memory_reserve *reserve)
{
    inference_memory r = memory_inference_reserved(m, d, weights, kv, tp, reserve);
    if (!draft)
        return r;
    inference_memory small = memory_inference_reserved(draft, d, weights, kv, tp, reserve);
    r.weights_bytes += small.weights_bytes;
    r.kv_bytes_per_token += small.kv_bytes_per_token;
    r.usable_bytes = memory_usable_bytes(reserve, tp, d->memory_bytes, r.weights_bytes);
    return with_cache(r, 1);
}

/* The bytes of model m each of n attention-data-parallel devices holds: everything but
 * the routed experts whole, those 1/n each. */
static double dp_weight_bytes(const model_spec *m, precision weights, unsigned n)
{
    double routed = (double)model_moe_layers(m) * m->experts * model_expert_params(m);
    return model_weight_bytes(m, weights) - routed * (1 - 1.0 / n) * precision_bytes(weights);
}

/* What a device of an attention-data-parallel group of n may give the weights and the
 * cache: it runs its own share of the batch whole (its activations unsplit) and talks to
 * the other n - 1. */
static double dp_usable_bytes(const memory_reserve *reserve, unsigned n, double device_bytes,
                              double weights_bytes)
{
    return reserve ? usable_given(reserve, memory_reserved_dp_bytes(reserve, n, device_bytes),
                                  device_bytes, weights_bytes)
                   : memory_usable_bytes(NULL, 1, device_bytes, weights_bytes);
}

inference_memory memory_inference_dp(const model_spec *m, const device_spec *d,
                                     precision weights, precision kv, unsigned n,
                                     const memory_reserve *reserve)
{
    if (n <= 1 || !model_moe_layers(m))
        return memory_inference_reserved(m, d, weights, kv, n ? n : 1, reserve);
    inference_memory r;
    r.weights_bytes = dp_weight_bytes(m, weights, n);
    r.kv_bytes_per_token = model_kv_bytes_per_token(m, kv);
    r.usable_bytes = dp_usable_bytes(reserve, n, d->memory_bytes, r.weights_bytes);
    return with_cache(r, n);
}

inference_memory memory_inference_with_draft_for(const model_spec *m, const model_spec *draft,
                                                 const device_spec *d, precision weights,
                                                 precision kv, unsigned tp, bool attention_dp,
                                                 const memory_reserve *reserve)
{
    if (!draft || !attention_dp || tp <= 1 || !model_moe_layers(m))
        return memory_inference_with_draft(m, draft, d, weights, kv, tp, reserve);
    inference_memory r = memory_inference_dp(m, d, weights, kv, tp, reserve);
    r.weights_bytes += dp_weight_bytes(draft, weights, tp);
    r.kv_bytes_per_token += model_kv_bytes_per_token(draft, kv);
    r.usable_bytes = dp_usable_bytes(reserve, tp, d->memory_bytes, r.weights_bytes);
    return with_cache(r, tp);
}

inference_memory memory_inference_for(const model_spec *m, const device_spec *d,
                                      precision weights, precision kv, unsigned tp,
                                      bool attention_dp, const memory_reserve *r)
{
    return attention_dp ? memory_inference_dp(m, d, weights, kv, tp, r)
                        : memory_inference_reserved(m, d, weights, kv, tp, r);
}

unsigned memory_min_tp(const model_spec *m, const device_spec *d, precision weights,
                       precision kv, double context, unsigned max_tp, const memory_reserve *r)
{
    for (unsigned tp = 1; tp <= max_tp; tp *= 2)
        if (memory_inference_reserved(m, d, weights, kv, tp, r).kv_capacity_tokens
            >= model_attended_tokens(m, context))
            return tp;
    return 0;
}

double memory_training_layer_activations(const model_spec *m, const training_setup *s,
                                         bool recomputed)
{
    double cp = s->cp ? s->cp : 1, t = s->tp ? s->tp : 1;
    double sbh = (double)s->seq_len / cp * s->micro_batch * m->hidden;
    /* sequence parallelism (with t > 1, unless the setup runs without it) splits the
     * layer's input along the sequence: the one tensor a layer recomputed in full keeps,
     * and the 10 s b h tensor parallelism alone leaves whole on every device */
    double sp = s->no_sequence_parallel ? 1 : t;
    if (recomputed)
        return 2 * sbh / sp;
    return t > 1 && !s->no_sequence_parallel ? 34 * sbh / t : sbh * (10 + 24 / t);
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
    double ep = s->ep > 1 ? s->ep : 1, etp = s->etp ? s->etp : t;
    double routed = (double)model_moe_layers(m) * m->experts * model_expert_params(m);
    /* DualPipe: a stage of each direction, each also held by the mirror pipeline rank */
    double copies = s->dualpipe ? 2 : 1;
    double dense = copies * (model_params(m) - routed) / (t * pp);
    double experts = copies * routed / (etp * pp * ep);
    double ranks = (s->dp ? s->dp : 1) * cp * copies; /* the ranks holding the same weights */
    /* ... the same experts: the stage's t cp dp ranks in expert groups of ep x etp */
    double eranks = ranks * t / (ep * etp);
    /* HSDP: ZeRO-3's states sharded within groups of shard_ranks, replicated across */
    double shard = s->zero_stage >= 3 && s->shard_ranks && s->shard_ranks < ranks
                   ? s->shard_ranks : ranks;
    double eshard = fmax(1, shard * eranks / ranks);
    bool framework = s->weight_bytes > 0 || s->gradient_bytes > 0 || s->optimizer_bytes > 0;
    double wb = framework ? s->weight_bytes : 2, gb = framework ? s->gradient_bytes : 2;
    double ob = framework ? s->optimizer_bytes : 12;
    r.weights_bytes = states(wb, dense, experts, shard, eshard, s->zero_stage >= 3);
    if (s->zero_stage >= 3) { /* the layer computing and the one prefetched, in 16 bits */
        double layer_routed = routed / m->layers;
        r.weights_bytes += 2 * 2 * ((model_params_layer(m) - layer_routed) / t
                                    + layer_routed / (ep * etp));
    }
    if (!s->lora) { /* a frozen base keeps neither */
        r.gradient_bytes = states(gb, dense, experts, shard, eshard, s->zero_stage >= 2);
        r.optimizer_bytes = states(ob, dense, experts, shard, eshard, s->zero_stage >= 1);
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
