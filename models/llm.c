#include "models/llm.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static double head_dim(const model_spec *m) { return (double)m->hidden / m->heads; }

static double attention_params(const model_spec *m)
{
    double h = m->hidden, kv = m->kv_heads * head_dim(m);
    return 2 * h * h + 2 * h * kv; /* query and output h x h, key and value h x kv */
}

static double ffn_params_one_expert(const model_spec *m)
{
    return (m->gated ? 3.0 : 2.0) * m->hidden * m->ffn;
}

static unsigned experts(const model_spec *m) { return m->experts ? m->experts : 1; }
static unsigned experts_active(const model_spec *m)
{
    return m->experts ? m->experts_active : 1;
}

double model_params_layer(const model_spec *m)
{
    double router = m->experts ? (double)m->hidden * m->experts : 0;
    double norms = 2.0 * m->hidden;
    return attention_params(m) + experts(m) * ffn_params_one_expert(m) + router + norms;
}

double model_params_embedding(const model_spec *m)
{
    double table = (double)m->vocab * m->hidden;
    return table * (m->tied ? 1 : 2) + (double)m->positions * m->hidden + m->hidden; /* final norm */
}

double model_params(const model_spec *m)
{
    return m->layers * model_params_layer(m) + model_params_embedding(m);
}

double model_params_active(const model_spec *m)
{
    double inactive = (double)(experts(m) - experts_active(m)) * ffn_params_one_expert(m);
    return model_params(m) - m->layers * inactive;
}

bool model_rotary(const model_spec *m) { return !m->positions && !m->alibi; }

double model_kv_bytes_per_token(const model_spec *m, precision kv)
{
    return 2.0 * m->layers * m->kv_heads * head_dim(m) * precision_bytes(kv);
}

double model_forward_flops_per_token(const model_spec *m, double context)
{
    /* the input embedding is a lookup, not a product */
    double weights = model_params_active(m) - (double)m->vocab * m->hidden * (m->tied ? 0 : 1)
                     - (double)m->positions * m->hidden;
    return 2 * weights + 4.0 * m->layers * m->hidden * context;
}

double model_experts_touched(const model_spec *m, double tokens)
{
    if (!m->experts)
        return 1;
    double miss = 1 - (double)m->experts_active / m->experts;
    return m->experts * (1 - pow(miss, tokens));
}

void model_release(model_spec *m)
{
    if (!m)
        return;
    free(m->name);
    memset(m, 0, sizeof *m);
}
