/* The keys of an fs.inference workload for prompts that repeat: prefix_cache, a
 * system_prompt, sessions of turns and affinity_bound (models/serving.h). */
#ifndef FLEETSIM_LUA_PREFIX_LOAD_H
#define FLEETSIM_LUA_PREFIX_LOAD_H

#include "lua/fields.h"
#include "models/scenario.h"

/* Reads them from the workload w into out (nothing set where absent: no cache, no
 * system prompt, no sessions); 0, or -1 with the message in c.  After the routing and
 * trace keys and the decode and overflow pools: prefix_affinity needs the cache,
 * sessions refuse a trace, a shared tier's default rate is its pools' network. */
int prefix_load_convert(load_context *c, const fields_object *w, const scenario *sc,
                        inference_spec *out);

#endif
