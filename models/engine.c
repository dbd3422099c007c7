/* Engines applied to a workload's profile and memory (see engine.h). */
#include "models/engine.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

const char *engine_class_name(engine_class c)
{
    static const char *const names[] = { "gemm", "attention_prefill", "attention_decode",
                                         "moe_gemm", "alltoall", "collectives" };
    return (unsigned)c < ENGINE_CLASS_COUNT ? names[c] : "?";
}

void engine_release(engine_spec *e)
{
    if (!e)
        return;
    free(e->name);
    free(e->describes);
    free(e->host_source);
    for (int i = 0; i < ENGINE_CLASS_COUNT; i++)
        free(e->kernels[i]);
    memset(e, 0, sizeof *e);
}

/* A string of its own (NULL stays NULL); false when out of memory. */
static bool copy_text(char **to, const char *from)
{
    *to = from ? strdup(from) : NULL;
    return !from || *to;
}

int engine_copy(engine_spec *to, const engine_spec *from)
{
    *to = *from; /* the strings are the only things a spec owns (the families are static) */
    bool ok = copy_text(&to->name, from->name);
    ok = copy_text(&to->describes, from->describes) && ok;
    ok = copy_text(&to->host_source, from->host_source) && ok;
    for (int i = 0; i < ENGINE_CLASS_COUNT; i++)
        ok = copy_text(&to->kernels[i], from->kernels[i]) && ok;
    if (!ok)
        engine_release(to);
    return ok ? 0 : -1;
}

/* Whether `name` contains `part`, case aside. */
static bool names_part(const char *name, const char *part)
{
    size_t n = strlen(part);
    for (const char *p = name; *p; p++)
        if (strncasecmp(p, part, n) == 0)
            return true;
    return false;
}

void engine_batch_defaults(const engine_spec *e, const device_spec *d, unsigned *max_batch,
                           unsigned *max_tokens)
{
    bool smaller = e->smaller_max_batch > 0 && d
                   && (d->is_cpu || d->memory_bytes < e->smaller_below_bytes
                       || (e->smaller_named[0] && names_part(d->name, e->smaller_named)));
    *max_batch = smaller ? e->smaller_max_batch : e->max_batch;
    *max_tokens = smaller ? e->smaller_max_tokens : e->max_tokens;
}

perf_profile engine_apply_profile(const engine_spec *e, const perf_profile *p,
                                  const device_spec *d)
{
    perf_profile out = *p;
    if (!e || p->has_operators) /* measured on the user's own engine: its figures stand */
        return out;
    /* the families were fitted on Hopper: they price the devices the h100 table stands
     * for, as shares of each device's own peaks */
    const perf_family *table = p->family ? p->family : perf_family_of(d);
    if (table == perf_families[PERF_FAMILY_H100]) {
        out.prefill_family = e->families[ENGINE_ATTN_PREFILL];
        out.moe_family = e->families[ENGINE_MOE_GEMM];
        out.attn_backward_family = e->attn_backward_family;
        out.moe_wgrad_family = e->moe_wgrad_family;
        /* as the families: Transformer Engine's userbuffers overlap, which NeMo's recipes
         * turn on for Hopper and later (tp_comm_overlap) */
        out.train_tp_overlap = e->train_tp_overlap;
    }
    if (e->training) /* a training framework has no serving host work */
        return out;
    out.draft_iterations = e->draft_iterations;
    out.dispatch_fp8 = e->dispatch_fp8;
    out.per_node_dispatch = e->per_node_dispatch;
    out.two_batch_overlap = e->two_batch_overlap;
    if (!isnan(e->host_s)) {
        out.host_s = e->host_s;
        out.host_per_seq_s = e->host_per_seq_s;
        out.host_tp_s = e->host_tp_s;
        out.host_tp_per_seq_s = e->host_tp_per_seq_s;
    } else {
        out.host_tp_local = e->host_local_workers;
    }
    out.host_overlap = e->host_overlap;
    return out;
}

void engine_activation_bytes_per_token(const model_spec *m, double *split, double *whole)
{
    /* the feed-forward's peak: its gate and up products and the activation's output live
     * together; a mixture's token runs experts_active experts (and the shared ones) */
    double gates = m->gated ? 2 : 1;
    double width = m->experts ? (m->experts_active + m->shared_experts)
                                    * (double)(m->expert_ffn ? m->expert_ffn : m->ffn)
                              : m->ffn;
    *split = 2 * (gates + 1) * width;
    *whole = 2 * 2.0 * m->hidden; /* the residual stream and the normed input */
    if (m->experts) /* each token's copy for each of its experts, gathered and scattered
                     * back: every device of a tensor-parallel group holds all tokens' */
        *whole += 2 * 2.0 * m->experts_active * m->hidden;
}

memory_reserve engine_memory_reserve(const engine_spec *e, const model_spec *m)
{
    memory_reserve r = {
        .rule = e->memory_rule, .share = e->memory_share,
        .runtime_bytes = e->runtime_bytes, .runtime_tp_bytes = e->runtime_tp_bytes,
        .runtime_rank_bytes = e->runtime_rank_bytes, .graph_bytes = e->cuda_graph_bytes,
        .floor_bytes = e->floor_bytes, .floor_above_bytes = e->floor_above_bytes,
    };
    if (e->activation_bytes_per_token > 0) { /* the engine's own flat figure */
        r.activation_whole_bytes = e->token_budget * e->activation_bytes_per_token;
        return r;
    }
    double split, whole;
    engine_activation_bytes_per_token(m, &split, &whole);
    double tokens = e->activation_factor * e->token_budget;
    if (e->activation_split) {
        r.activation_split_bytes = tokens * split;
        r.activation_whole_bytes = tokens * whole;
    } else {
        r.activation_whole_bytes = tokens * (split + whole);
    }
    /* the sampler's logits over the whole vocabulary, gathered on every device */
    r.activation_least_bytes = e->sampler_seqs * (double)m->vocab * e->bytes_per_logit;
    return r;
}

void engine_training_state(const engine_spec *e, training_constraints *c)
{
    if (!e || !e->training)
        return;
    c->weight_bytes = e->train_weight_bytes;
    c->gradient_bytes = e->train_gradient_bytes;
    c->optimizer_bytes = e->train_optimizer_bytes;
    c->pipeline_zero = e->train_pipeline_zero;
    c->zero_stages = e->train_zero_stages;
    c->sequence_parallel_off = e->train_no_sequence_parallel;
}

const char *engine_kernel_of(const engine_spec *e, perf_op op, const model_spec *m)
{
    if (!e)
        return NULL;
    switch (op) {
    case OP_QKV: case OP_OUT_PROJ: case OP_LM_HEAD: case OP_ROUTER:
        return e->kernels[ENGINE_GEMM];
    case OP_MLP_UP: case OP_MLP_DOWN:
        return e->kernels[model_moe_layers(m) ? ENGINE_MOE_GEMM : ENGINE_GEMM];
    case OP_ATTN_PREFILL:
        return e->kernels[ENGINE_ATTN_PREFILL];
    case OP_ATTN_DECODE:
        return e->kernels[ENGINE_ATTN_DECODE];
    case OP_ALLREDUCE:
        return e->kernels[ENGINE_COLLECTIVES];
    case OP_ALLTOALL:
        return e->kernels[ENGINE_ALLTOALL];
    default:
        return NULL;
    }
}
