/* A scaling policy written in Lua: `autoscaler = fs.autoscaler { policy = function(pool)
 * ... end }`.  The run calls it at every evaluation (models/scenario.h: scale_fn) with
 * pool = { time, active, provisioning, draining, min, max, utilization, kv_cache,
 * outstanding, pending } and uses the number of replicas it returns (clamped to min..max).  The
 * table is reused from call to call, each call has its own instruction budget, and an
 * error stops the run with its message (lua/callback.h). */
#ifndef FLEETSIM_LUA_SCALER_H
#define FLEETSIM_LUA_SCALER_H

#include <stddef.h>

#include <lua.h>

#include "models/scenario.h"

typedef struct scaler scaler;

/* Wraps the function at key of the table at index owner (the pool's fs.autoscaler); it
 * lives as long as the sandbox.  Out of memory raises a Lua error. */
scaler *scaler_create(lua_State *L, int owner, const char *key, const char *pool);

/* The scale_fn to give the serving model, with the scaler as its context. */
int scaler_decide(void *context, const autoscale_view *view, char *err, size_t err_size);

#endif
