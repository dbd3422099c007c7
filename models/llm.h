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
    double published_params, published_active_params; /* for tests; 0 if unknown */
} model_spec;

/* Total and active (per token) parameters. */
double model_params(const model_spec *m);
double model_params_active(const model_spec *m);

/* Parameters of one transformer layer (all experts), and of the embeddings. */
double model_params_layer(const model_spec *m);
double model_params_embedding(const model_spec *m);

/* Whether queries and keys are rotated (rotary embeddings): neither learned positions
 * nor ALiBi. */
bool model_rotary(const model_spec *m);

/* Key-value cache bytes per token of context, all layers. */
double model_kv_bytes_per_token(const model_spec *m, precision kv);

/* Forward FLOPs for one token attending to `context` earlier tokens: 2 per active
 * weight (matrix products) plus attention scores and values, 4 x layers x hidden x
 * context.  Training costs three times this (forward and backward). */
double model_forward_flops_per_token(const model_spec *m, double context);

/* Distinct experts a batch of `tokens` touches per layer, in expectation (each token
 * picks experts_active of experts uniformly): what a decode step must read. */
double model_experts_touched(const model_spec *m, double tokens);

/* Frees the name and zeroes the spec; NULL is fine. */
void model_release(model_spec *m);

#endif
