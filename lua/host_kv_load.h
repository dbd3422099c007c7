/* when_full = "swap"'s host tier, or an offload tier, from the scenario's table into
 * models/kv_swap.h:
 *
 *   when_full = "swap", host_kv = { size = "512GB", bandwidth = "50GB/s", latency = "10us" }
 *   host_kv = { size = "1TB", offload = true }     -- the cache extended into host memory
 *
 * size (req.): host memory for one replica's swapped caches; bandwidth: its copies',
 * each direction (default: its GPUs' PCIe links at KV_SWAP_PCIE_ACHIEVED_SHARE);
 * latency: per copy (KV_SWAP_LATENCY_S).  Errors read
 * "file.lua:12: workloads.chat.host_kv.size: ...".
 */
#ifndef FLEETSIM_LUA_HOST_KV_LOAD_H
#define FLEETSIM_LUA_HOST_KV_LOAD_H

#include <stdbool.h>

#include "lua/fields.h"
#include "models/kv_swap.h"

/* workload.host_kv into *out (zero size and defaults when absent); swap says whether
 * when_full is "swap", which needs one, and not an offload tier (the others leave a swap
 * space unused, so that a sweep over when_full can keep it).  0 or -1. */
int host_kv_load(load_context *c, const fields_object *workload, bool swap, host_kv_spec *out);

#endif
