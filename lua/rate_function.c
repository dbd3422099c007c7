/* Lua rate functions (see rate_function.h). */
#include "lua/rate_function.h"

#include <math.h>
#include <stdio.h>

#include <lauxlib.h>

#include "lua/callback.h"

struct rate_function {
    callback cb; /* first: the object is the callback's */
};

rate_function *rate_function_create(lua_State *L, int owner, const char *key,
                                    const char *workload)
{
    return callback_create(L, owner, key, sizeof(rate_function), "workload", workload,
                           "rate function");
}

/* The time (a callback_push_fn). */
static int push_time(lua_State *L, void *arg)
{
    lua_pushnumber(L, *(const double *)arg);
    return 1;
}

double rate_function_call(void *context, double time_s, char *err, size_t err_size)
{
    rate_function *f = context;
    if (callback_call(&f->cb, push_time, &time_s, err, err_size) != 0)
        return -1;
    lua_State *L = callback_state(&f->cb);
    double rate = -1;
    if (lua_type(L, -1) != LUA_TNUMBER || !(lua_tonumber(L, -1) >= 0)
        || !isfinite(lua_tonumber(L, -1)))
        snprintf(err, err_size, "%sworkload %s: the rate function must return a rate >= 0 per "
                 "second, got %s at t = %g s", f->cb.where, f->cb.name,
                 lua_type(L, -1) == LUA_TNUMBER ? "a negative or infinite number"
                                                : luaL_typename(L, -1),
                 time_s);
    else
        rate = lua_tonumber(L, -1);
    lua_pop(L, 1);
    return rate;
}
