/* A workload's `speculative` table in a scenario file, into inference_spec's spec_*:
 *
 *   speculative = { k = 4, acceptance = 0.7, draft = "llama-3.2-1b" }
 *   speculative = { k = 3, acceptance = fs.uniform { low = 0.5, high = 0.9 },
 *                   draft_cost = "0.2ms" }     -- n-gram or self-speculation, per step
 *
 * k: tokens the draft proposes a round (1 to 16); acceptance: the chance each is kept, a
 * number in [0, 1] or a distribution of values in [0, 1] drawn per request; draft: a
 * catalog model run on the replica's devices in its precisions, its weights and its own
 * cache counted in the replica's memory (kv_capacity_tokens shrinks to match); draft_cost
 * instead: a lookup's cost a step for the whole batch.  One of the two.  Not yet with
 * when_full = "preempt", attention_dp, or a model with a sliding window.
 */
#ifndef FLEETSIM_LUA_SPECULATIVE_LOAD_H
#define FLEETSIM_LUA_SPECULATIVE_LOAD_H

#include "lua/fields.h"
#include "models/scenario.h"

/* w.speculative, if present; call after the replicas are sized (it recomputes their
 * cache with the draft's share).  0, or -1 with the message in the context. */
int speculative_load(load_context *c, const fields_object *w, scenario *sc, inference_spec *out);

#endif
