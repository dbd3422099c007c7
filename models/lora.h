/* Multi-LoRA serving: many low-rank adapters on one base model, served by one fleet
 * (S-LoRA, arXiv 2311.03285; Punica, arXiv 2310.18547; vLLM's --max-loras).
 *
 * An adapter of rank r adds, to each adapted projection of every layer (in -> out),
 * A (in x r) and B (r x out): r (in + out) values.  A replica holds `slots` adapters in
 * GPU memory at once (their bytes come out of its key-value cache); an adapter not
 * resident is copied from host memory over the host link before the iteration that
 * first uses it, into a free slot or the least recently used slot no running sequence
 * uses.  A request whose adapter finds no such slot waits.  A batch of mixed adapters
 * runs each adapted projection as a segmented gather GEMM (Punica's SGMV): its
 * arithmetic is 2 x tokens x r (in + out), small, but it reads every distinct adapter's
 * A and B once a step, which is the cost that grows with the batch's adapters.
 */
#ifndef FLEETSIM_MODELS_LORA_H
#define FLEETSIM_MODELS_LORA_H

#include <stdbool.h>
#include <stdint.h>

#include <gsl/gsl_rng.h>

#include "models/llm.h"
#include "sim/histogram.h"
#include "sim/stat.h"

/* The projections an adapter may adapt (a mask): attention's q, k, v, o and the MLP's
 * gate, up, down (a mixture's experts not: their dense width, ffn, is taken). */
enum {
    LORA_Q = 1, LORA_K = 2, LORA_V = 4, LORA_O = 8,
    LORA_GATE = 16, LORA_UP = 32, LORA_DOWN = 64,
    LORA_ATTENTION = LORA_Q | LORA_K | LORA_V | LORA_O,  /* the default (S-LoRA's) */
    LORA_ALL = 127,
};

/* Adapters are kept in 16-bit values whatever the base model's precision (PEFT's
 * checkpoints; vLLM's lora_dtype defaults to the model's activation type). */
#define LORA_BYTES_PER_VALUE 2.0

/* The values r (in + out) over the adapted projections of one layer, for rank 1. */
double lora_layer_width(const model_spec *m, unsigned projections);

/* An adapter's bytes: layers x rank x lora_layer_width x bytes per value. */
double lora_adapter_bytes(const model_spec *m, unsigned rank, unsigned projections,
                          double bytes_per_value);

/* FLOPs the adapter adds per token: 2 x rank x (in + out), over projections and layers. */
double lora_flops_per_token(const model_spec *m, unsigned rank, unsigned projections);

/* Seconds to load `bytes` over a host link of bytes_per_s. */
double lora_load_s(double bytes, double bytes_per_s);

/* The adapters' popularity: a cumulative table over adapters 0..n-1, from a Zipf law of
 * exponent s (adapter i weighs 1 / (i + 1)^s) or from weights.  Owned by its caller. */
typedef struct lora_popularity {
    unsigned adapters;
    double *cumulative;  /* n, the last 1 */
} lora_popularity;

/* 0, or -1 when out of memory or the weights are not positive and finite. */
int lora_popularity_zipf(lora_popularity *p, unsigned adapters, double s);
int lora_popularity_weights(lora_popularity *p, const double *weights, unsigned n);
void lora_popularity_release(lora_popularity *p);
/* An adapter drawn from rng: one uniform, a binary search. */
unsigned lora_popularity_draw(const lora_popularity *p, gsl_rng *rng);

/* A replica's adapter slots: which adapters are resident, how many running sequences
 * use each, and their order of last use. */
typedef struct lora_slots lora_slots;

/* NULL if out of memory; slots >= 1, adapters >= 1. */
lora_slots *lora_slots_create(unsigned slots, unsigned adapters);
void lora_slots_free(lora_slots *s); /* NULL-safe */

typedef enum lora_acquire_result { LORA_HIT, LORA_LOADED, LORA_NO_SLOT } lora_acquire_result;

/* Whether lora_slots_acquire(adapter) would succeed now (resident, or a slot to take). */
bool lora_slots_can_acquire(const lora_slots *s, unsigned adapter);
/* A sequence starts using the adapter: LORA_HIT if resident, LORA_LOADED if it took a
 * free slot or evicted the least recently used one unused (*evicted: that adapter, or
 * UINT32_MAX for a free slot), LORA_NO_SLOT (nothing changed) if every slot is in use. */
lora_acquire_result lora_slots_acquire(lora_slots *s, unsigned adapter, unsigned *evicted);
/* A sequence stops using it (it finished, was preempted or evicted). */
void lora_slots_release(lora_slots *s, unsigned adapter);
/* Adapters in use by running sequences (the batch's distinct adapters). */
unsigned lora_slots_in_use(const lora_slots *s);
bool lora_slots_resident(const lora_slots *s, unsigned adapter);
/* Empties every slot (the replica lost its GPU). */
void lora_slots_clear(lora_slots *s);

/* What a workload's replicas measured, after warmup_s (arrival times): requests
 * admitted with an adapter (hits: resident), loads, the adapter-load seconds each
 * admitted request's first iteration waited, and distinct adapters over iterations. */
typedef struct lora_stats {
    double warmup_s;
    uint64_t admitted, hits, loads;
    sim_stat wait_s;
    sim_histogram wait_hist_s;
    double iterations, distinct_sum;
} lora_stats;

#endif
