#include "models/llm.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

double model_head_dim(const model_spec *m)
{
    return m->head_dim ? m->head_dim : (double)m->hidden / m->heads;
}

bool model_latent_attention(const model_spec *m) { return m->kv_lora_rank > 0; }

double model_query_width(const model_spec *m)
{
    return m->heads * (model_head_dim(m) + (model_latent_attention(m) ? m->rope_head_dim : 0));
}

double model_value_width(const model_spec *m)
{
    if (model_latent_attention(m))
        return (double)m->heads * (m->v_head_dim ? m->v_head_dim : model_head_dim(m));
    return m->heads * model_head_dim(m);
}

double model_params_attention(const model_spec *m)
{
    double h = m->hidden;
    if (model_latent_attention(m)) {
        double q = m->q_lora_rank ? h * m->q_lora_rank + m->q_lora_rank * model_query_width(m)
                                    + m->q_lora_rank /* its norm */
                                  : h * model_query_width(m);
        double kv_down = h * (m->kv_lora_rank + m->rope_head_dim) + m->kv_lora_rank;
        double kv_up = (double)m->kv_lora_rank * m->heads * model_head_dim(m)
                       + (double)m->kv_lora_rank * model_value_width(m);
        return q + kv_down + kv_up + model_value_width(m) * h;
    }
    double q = model_query_width(m), kv = m->kv_heads * model_head_dim(m);
    return 2 * h * q + 2 * h * kv; /* query and output, key and value */
}

unsigned model_moe_layers(const model_spec *m)
{
    if (!m->experts || m->dense_layers >= m->layers)
        return 0;
    return (m->layers - m->dense_layers) / (m->moe_every ? m->moe_every : 1);
}

unsigned model_dense_layers(const model_spec *m) { return m->layers - model_moe_layers(m); }

double model_dense_ffn_params(const model_spec *m)
{
    return (m->gated ? 3.0 : 2.0) * m->hidden * m->ffn;
}

double model_expert_params(const model_spec *m)
{
    return (m->gated ? 3.0 : 2.0) * m->hidden * (m->expert_ffn ? m->expert_ffn : m->ffn);
}

/* All layers' parameters, with `experts` of each mixture counted. */
static double layers_params(const model_spec *m, double experts)
{
    double norms = 2.0 * m->hidden, moe = model_moe_layers(m), dense = model_dense_layers(m);
    double router = m->experts ? (double)m->hidden * m->experts : 0;
    return m->layers * (model_params_attention(m) + norms) + dense * model_dense_ffn_params(m)
           + moe * ((experts + m->shared_experts) * model_expert_params(m) + router);
}

double model_params_layer(const model_spec *m)
{
    return layers_params(m, m->experts) / m->layers;
}

double model_params_embedding(const model_spec *m)
{
    double table = (double)m->vocab * m->hidden;
    return table * (m->tied ? 1 : 2) + (double)m->positions * m->hidden + m->hidden; /* final norm */
}

double model_params(const model_spec *m)
{
    return layers_params(m, m->experts) + model_params_embedding(m);
}

double model_params_active(const model_spec *m)
{
    return layers_params(m, m->experts_active) + model_params_embedding(m);
}

double model_unquantized_layers(const model_spec *m)
{
    return fmin(2.0 * m->unquantized_edge_layers, m->layers);
}

double model_weight_bytes(const model_spec *m, precision weights)
{
    precision wide = precision_unquantized(weights);
    double all = model_params(m);
    if (wide == weights)
        return all * precision_bytes(weights);
    /* what stays 16-bit: the embeddings; with quantize_mlp_only every layer's attention,
     * norms and routers; and the edge layers' feed-forward (a dense model's: the loader
     * allows edge layers on no other) */
    double kept = model_params_embedding(m);
    double ffn = model_dense_layers(m) * model_dense_ffn_params(m)
                 + model_moe_layers(m) * (m->experts + m->shared_experts) * model_expert_params(m);
    double rest = all - kept - ffn; /* attention, norms, routers */
    double edge = model_unquantized_layers(m);
    if (m->quantize_mlp_only)
        kept += rest + ffn * edge / m->layers;
    else
        kept += (rest + ffn) * edge / m->layers;
    return (all - kept) * precision_bytes(weights) + kept * precision_bytes(wide);
}

bool model_rotary(const model_spec *m) { return !m->positions && !m->alibi; }

unsigned model_local_layers(const model_spec *m)
{
    if (!m->window)
        return 0;
    return m->global_every ? m->layers - m->layers / m->global_every : m->layers;
}

double model_attended_tokens(const model_spec *m, double context)
{
    if (!m->window || context <= m->window)
        return context;
    double local = model_local_layers(m);
    return context - local / m->layers * (context - m->window);
}

double model_attended_growth(const model_spec *m, double context)
{
    if (!m->window || context < m->window)
        return 1;
    return 1 - (double)model_local_layers(m) / m->layers;
}

/* Over the new tokens j in [0, n) at positions c + j, the tokens a window of w keeps in
 * sight: the integral of min(w, c + x) (continuous, as chunk^2 / 2 is). */
static double window_pairs(double w, double c, double n)
{
    if (c >= w)
        return n * w;
    if (c + n <= w)
        return n * c + n * n / 2;
    return (w - c) * (c + w) / 2 + (c + n - w) * w;
}

void model_attention_pairs(const model_spec *m, double cached, double chunk, double *cached_pairs,
                           double *new_pairs)
{
    double global_cached = chunk * cached, global_new = chunk * chunk / 2;
    double local = model_local_layers(m) / (double)m->layers;
    if (local <= 0) {
        *cached_pairs = global_cached;
        *new_pairs = global_new;
        return;
    }
    double w = m->window;
    double local_new = window_pairs(w, 0, chunk);
    double local_cached = window_pairs(w, cached, chunk) - local_new;
    *cached_pairs = (1 - local) * global_cached + local * local_cached;
    *new_pairs = (1 - local) * global_new + local * local_new;
}

double model_kv_bytes_per_token(const model_spec *m, precision kv)
{
    if (model_latent_attention(m))
        return (double)m->layers * (m->kv_lora_rank + m->rope_head_dim) * precision_bytes(kv);
    return 2.0 * m->layers * m->kv_heads * model_head_dim(m) * precision_bytes(kv);
}

double model_kv_bytes_per_token_per_device(const model_spec *m, precision kv, unsigned tp)
{
    if (model_latent_attention(m) || tp <= 1)
        return model_kv_bytes_per_token(m, kv);
    return model_kv_bytes_per_token(m, kv) / tp;
}

double model_forward_flops_per_token(const model_spec *m, double context)
{
    /* the input embedding is a lookup, not a product */
    double weights = model_params_active(m) - (double)m->vocab * m->hidden * (m->tied ? 0 : 1)
                     - (double)m->positions * m->hidden;
    return 2 * weights
           + 2.0 * m->layers * (model_query_width(m) + model_value_width(m)) * context;
}

double model_experts_touched(const model_spec *m, double tokens)
{
    if (!m->experts)
        return 1;
    double miss = 1 - (double)m->experts_active / m->experts;
    return m->experts * (1 - pow(miss, tokens));
}

int model_copy(model_spec *to, const model_spec *from)
{
    *to = *from; /* the name is the only thing a spec owns */
    to->name = from->name ? strdup(from->name) : NULL;
    if (from->name && !to->name) {
        model_release(to);
        return -1;
    }
    return 0;
}

void model_release(model_spec *m)
{
    if (!m)
        return;
    free(m->name);
    memset(m, 0, sizeof *m);
}
