/* A routing policy written in Lua: `routing = function(replicas, request) ... end` in an
 * inference workload.  The run calls it for every request (models/serving.h: route_fn)
 * with replicas = { { outstanding = n, tokens = t }, ... } and request = { prompt = p,
 * output = o, time = s }; it returns the 1-based index of a replica.  The tables are
 * reused from call to call (the function should not keep them; entries of replicas the
 * fleet no longer has are removed, so #replicas is the fleet's size), each call has its own
 * budget of instructions in the sandbox, and an error stops the run with its message
 * (lua/callback.h). */
#ifndef FLEETSIM_LUA_ROUTER_H
#define FLEETSIM_LUA_ROUTER_H

#include <stddef.h>

#include <lua.h>

#include "models/serving.h"

typedef struct router router;

/* Wraps the function at key of the table at index owner (the workload's fs.inference)
 * for a workload of `replicas` replicas; the router lives as long as the sandbox.  Out
 * of memory raises a Lua error. */
router *router_create(lua_State *L, int owner, const char *key, unsigned replicas,
                      const char *workload);

/* The route_fn to give the serving model, with the router as its context. */
int router_route(void *context, const replica_load *loads, unsigned n, unsigned prompt,
                 unsigned output, double now_s, char *err, size_t err_size);

#endif
