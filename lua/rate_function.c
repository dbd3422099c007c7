/* Lua rate functions (see rate_function.h). */
#include "lua/rate_function.h"

#include <math.h>
#include <stdio.h>

#include <lauxlib.h>

#include "lua/callback.h"

struct rate_function {
    callback cb; /* first: the object is the callback's */
    double peak;
};

rate_function *rate_function_create(lua_State *L, int owner, const char *key,
                                    const char *workload, double peak)
{
    rate_function *f = callback_create(L, owner, key, sizeof(rate_function), "workload",
                                       workload, "rate function");
    f->peak = peak;
    return f;
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
    double rate = -1, got = lua_tonumber(L, -1);
    if (lua_type(L, -1) != LUA_TNUMBER || !(got >= 0) || !isfinite(got))
        snprintf(err, err_size, "%sworkload %s: the rate function must return a rate >= 0 per "
                 "second, got %s at t = %g s", f->cb.where, f->cb.name,
                 lua_type(L, -1) != LUA_TNUMBER ? luaL_typename(L, -1)
                 : isnan(got)                   ? "NaN (not a number)"
                 : isinf(got)                   ? "an infinite number"
                                                : "a negative number",
                 time_s);
    else if (got > f->peak * (1 + 1e-12)) /* the traffic model's own check, with the line */
        snprintf(err, err_size, "%sworkload %s: the rate function gave %g/s at t = %g s, above "
                 "its peak of %g/s (fs.profile's peak bounds it)", f->cb.where, f->cb.name, got,
                 time_s, f->peak);
    else
        rate = got;
    lua_pop(L, 1);
    return rate;
}
