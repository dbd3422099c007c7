/* A workload's `lora` table in a scenario file, into inference_spec's lora_*:
 *
 *   lora = { adapters = 500, popularity = 1.0, rank = 16, slots = 32 }
 *   lora = { popularity = { 50, 20, 10, 5 }, rank = 8, slots = 2,
 *            projections = "all", load = "80ms" }
 *
 * adapters: how many (1 to 1e6); popularity: a Zipf exponent (adapter i weighs
 * 1 / i^s; default 1), or a list of weights, one per adapter (adapters then defaults to
 * its length); rank: 1 to 1024 (default 16); slots: adapters a replica holds in GPU
 * memory at once (default 8), their 16-bit A and B taken out of its key-value cache;
 * projections: "attention" (q, k, v, o: the default), "qv" or "all" (the MLP's too);
 * load: an adapter's copy from host memory (default: its bytes over the host link,
 * host_kv.bandwidth or the device's PCIe at models/kv_swap.h's achieved share).  Not
 * with decode (disaggregated serving) or speculative decoding.
 */
#ifndef FLEETSIM_LUA_LORA_LOAD_H
#define FLEETSIM_LUA_LORA_LOAD_H

#include "lua/fields.h"
#include "models/scenario.h"

/* w.lora, if present; call after the replicas are sized and speculative/decode read (it
 * checks the cache left beside the slots).  0, or -1 with the message in the context. */
int lora_load(load_context *c, const fields_object *w, scenario *sc, inference_spec *out);

#endif
