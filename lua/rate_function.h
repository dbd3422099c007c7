/* A traffic rate written in Lua: arrivals = fs.profile { rate = function(t) ... end,
 * peak = r }.  The run calls it (models/traffic.h: rate_fn) at candidate arrival times
 * t (seconds since the start), each call with its own instruction budget; an error
 * stops the run with its message (lua/callback.h). */
#ifndef FLEETSIM_LUA_RATE_FUNCTION_H
#define FLEETSIM_LUA_RATE_FUNCTION_H

#include <stddef.h>

#include <lua.h>

typedef struct rate_function rate_function;

/* Wraps the function at key of the table at index owner (the workload's fs.profile, whose
 * declared peak is `peak` per second: a rate above it is an error with the file's line);
 * it lives as long as the sandbox.  Out of memory raises a Lua error. */
rate_function *rate_function_create(lua_State *L, int owner, const char *key,
                                    const char *workload, double peak);

/* The rate_fn to give the traffic model, with the wrapper as its context. */
double rate_function_call(void *context, double time_s, char *err, size_t err_size);

#endif
