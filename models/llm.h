/* Transformer language models by their shapes: parameter counts, key-value cache size,
 * and floating-point work per token.  Counts follow the architecture (embeddings,
 * attention with grouped-query heads, gated or plain feed-forward, experts, norms); the
 * catalog's published counts are only for checking. */
#ifndef FLEETSIM_MODELS_LLM_H
#define FLEETSIM_MODELS_LLM_H

#include <stdbool.h>

#include "models/device.h"

typedef struct model_spec {
    char *name;
    unsigned layers, hidden, heads, kv_heads, ffn, vocab;
    unsigned experts, experts_active; /* 0 and 0 for dense models */
    unsigned positions;               /* learned position embeddings; 0 for rotary or ALiBi */
    bool alibi;                       /* positions as attention biases by distance (ALiBi):
                                       * no rotary, no learned table; then positions is 0 */
    bool gated, tied;
    unsigned context;                 /* trained context length, tokens */
    /* Optional shapes (0: the plain transformer's) */
    unsigned head_dim;                /* per attention head; 0: hidden / heads */
    unsigned expert_ffn;              /* an expert's FFN width; 0: ffn */
    unsigned shared_experts;          /* experts (expert_ffn wide) every token also uses */
    unsigned dense_layers;            /* leading layers with a dense FFN (ffn wide) */
    unsigned moe_every;               /* after those, every moe_every-th layer is a mixture
                                       * of experts and the others dense; 0: every one */
    unsigned routed_nodes;            /* node-limited routing: a token's routed experts lie
                                       * on at most this many nodes (DeepSeek-V3: 4, its
                                       * top-4 of 8 expert groups); 0: no limit */
    /* multi-head latent attention (DeepSeek-V2/V3, arXiv 2405.04434): keys and values
     * cached as one latent of kv_lora_rank plus a rotary key of rope_head_dim per token
     * and layer, shared by the heads; queries through a q_lora_rank latent (0: direct);
     * head_dim is then the non-rotary query/key part, v_head_dim the value's */
    unsigned kv_lora_rank, q_lora_rank, rope_head_dim, v_head_dim;
    /* sliding-window attention (Mistral 7B v0.1, Gemma 2/3, gpt-oss): a local layer
     * attends to, and caches, only the last `window` tokens; with global_every, every
     * global_every-th layer attends to the whole context (Gemma 3: 6, gpt-oss: 2), else
     * every layer is local.  0: every layer global. */
    unsigned window, global_every;
    /* the precision its weights are released in (DeepSeek-V3's fp8, gpt-oss's MXFP4), the
     * default of estimate and fs.inference; has_released false: fp16 */
    bool has_released;
    precision released;
    /* what a checkpoint narrower than 16 bits quantizes (its embeddings and LM head never:
     * model_weight_bytes): every layer's matrices, or (quantize_mlp_only) the feed-forward
     * ones alone, attention's projections staying 16-bit (Meta's Llama 3.1 405B FP8,
     * gpt-oss's MXFP4 experts); and unquantized_edge_layers, the first and as many last
     * layers kept 16-bit whole (Meta's: 1; dense models only) */
    bool quantize_mlp_only;
    unsigned unquantized_edge_layers;
    double published_params, published_active_params; /* for tests; 0 if unknown */
} model_spec;

/* Head size, and the query width of all heads (heads x head size; with latent attention
 * the non-rotary and rotary parts together). */
double model_head_dim(const model_spec *m);
double model_query_width(const model_spec *m);
/* With latent attention, the value width of all heads; else the query width. */
double model_value_width(const model_spec *m);
bool model_latent_attention(const model_spec *m);

/* Layers whose FFN is a mixture of experts, and the dense ones (all layers of a dense
 * model). */
unsigned model_moe_layers(const model_spec *m);
unsigned model_dense_layers(const model_spec *m);
/* FFN parameters of one dense layer and of one expert. */
double model_dense_ffn_params(const model_spec *m);
double model_expert_params(const model_spec *m);

/* Total and active (per token) parameters. */
double model_params(const model_spec *m);
double model_params_active(const model_spec *m);

/* Parameters of a mean transformer layer (all experts; the layers' total over their
 * count), of one layer's attention, and of the embeddings. */
double model_params_attention(const model_spec *m);
double model_params_layer(const model_spec *m);
double model_params_embedding(const model_spec *m);

/* The bytes of the weights in a checkpoint of precision `weights`: the layers at that
 * precision, and the embeddings (the token table, the LM head when untied, learned
 * positions, the final norm) at precision_unquantized(weights): a quantized checkpoint
 * keeps them 16-bit (NVIDIA ModelOpt's and vLLM's llm-compressor FP8 recipes leave the LM
 * head unquantized, AWQ and GPTQ likewise, and DeepSeek-V3's FP8 release keeps its
 * embeddings and head in bf16; an embedding is a lookup, never a product).  With
 * quantize_mlp_only the layers' attention (and norms and routers) stays 16-bit too, and
 * the unquantized edge layers whole.  Otherwise the layers' own norms (2 x hidden a layer)
 * are counted with the layers, at `weights`. */
double model_weight_bytes(const model_spec *m, precision weights);

/* Of the layers (unquantized_edge_layers), those kept 16-bit whole: 2 x that, at most
 * every layer. */
double model_unquantized_layers(const model_spec *m);

/* Whether queries and keys are rotated (rotary embeddings): neither learned positions
 * nor ALiBi. */
bool model_rotary(const model_spec *m);

/* Layers whose attention is local (a sliding window); 0 without a window. */
unsigned model_local_layers(const model_spec *m);

/* The tokens one mean layer attends to and caches for a sequence of `context` tokens:
 * (global layers x context + local layers x min(context, window)) / layers; the context
 * itself without a window.  Caches are counted and attention is timed in these units
 * (a token of all layers), so a sliding window shrinks both.  The growth is its slope
 * at `context` (the next token's share: 1, or the global layers' share once past the
 * window). */
double model_attended_tokens(const model_spec *m, double context);
double model_attended_growth(const model_spec *m, double context);

/* Attention pairs of a mean layer when `chunk` new tokens join a sequence that has
 * `cached` tokens: each new token with the cached tokens it sees (*cached_pairs) and
 * with the new ones before it (*new_pairs; causal, chunk^2 / 2 without a window). */
void model_attention_pairs(const model_spec *m, double cached, double chunk, double *cached_pairs,
                           double *new_pairs);

/* Key-value cache bytes per token of context, all layers: keys and values of the KV
 * heads, or with latent attention the latent and the rotary key. */
double model_kv_bytes_per_token(const model_spec *m, precision kv);
/* The same on one of tp devices: the KV heads split (or replicated when fewer than
 * devices: each device then holds one), the latent replicated on every device. */
double model_kv_bytes_per_token_per_device(const model_spec *m, precision kv, unsigned tp);

/* Forward FLOPs for one token attending to `context` earlier tokens: 2 per active
 * weight (matrix products) plus attention scores and values, 2 x layers x (query width
 * + value width) x context.  Training costs three times this (forward and backward). */
double model_forward_flops_per_token(const model_spec *m, double context);

/* Distinct experts a batch of `tokens` touches per layer, in expectation (each token
 * picks experts_active of experts uniformly): what a decode step must read. */
double model_experts_touched(const model_spec *m, double tokens);

/* Frees the name and zeroes the spec; NULL is fine. */
void model_release(model_spec *m);

/* *to = a copy of from with a name of its own (released with model_release); -1 when out
 * of memory (*to then released). */
int model_copy(model_spec *to, const model_spec *from);

#endif
