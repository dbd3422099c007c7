/* A routing policy written in Lua: `routing = function(replicas, request) ... end` in an
 * inference workload.  The run calls it for every request (models/serving.h: route_fn)
 * with replicas = { { outstanding = n, tokens = t }, ... } and request = { prompt = p,
 * output = o, time = s }; it returns the 1-based index of a replica.  The tables are
 * reused from call to call (the function should not keep them), each call has its own
 * budget of instructions in the sandbox, and an error stops the run with its message. */
#ifndef FLEETSIM_LUA_ROUTER_H
#define FLEETSIM_LUA_ROUTER_H

#include <stddef.h>

#include <lua.h>

#include "models/serving.h"

/* Instructions one call may use before it counts as an endless loop. */
#define ROUTER_CALL_INSTRUCTIONS 1000000u

typedef struct lua_router lua_router;

/* Wraps the function at fn_index for a workload of `replicas` replicas; the router lives
 * in the state (freed with it).  NULL if out of memory. */
lua_router *lua_router_create(lua_State *L, int fn_index, unsigned replicas, const char *workload);

/* The route_fn to give the serving model, with the router as its context. */
int lua_router_route(void *router, const replica_load *loads, unsigned n, unsigned prompt,
                     unsigned output, double now_s, char *err, size_t err_size);

#endif
