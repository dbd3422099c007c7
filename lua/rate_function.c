/* Lua rate functions (see rate_function.h). */
#include "lua/rate_function.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include <lauxlib.h>

#include "lua/router.h"
#include "lua/sandbox.h"

struct lua_rate_function {
    lua_State *L;
    int ref;
    char workload[64];
};

lua_rate_function *lua_rate_function_create(lua_State *L, int fn_index, const char *workload)
{
    fn_index = lua_absindex(L, fn_index);
    lua_rate_function *f = lua_newuserdatauv(L, sizeof *f, 0);
    f->L = L;
    snprintf(f->workload, sizeof f->workload, "%s", workload);
    luaL_ref(L, LUA_REGISTRYINDEX); /* anchors it for the state's life */
    lua_pushvalue(L, fn_index);
    f->ref = luaL_ref(L, LUA_REGISTRYINDEX);
    return f;
}

double lua_rate_function_call(void *function, double time_s, char *err, size_t err_size)
{
    lua_rate_function *f = function;
    lua_State *L = f->L;
    void *ud;
    lua_getallocf(L, &ud);
    sandbox_set_instruction_budget(ud, ROUTER_CALL_INSTRUCTIONS);
    double rate = -1;
    if (!lua_checkstack(L, 4)) {
        snprintf(err, err_size, "workload %s: the rate function has no stack left", f->workload);
        return -1;
    }
    lua_rawgeti(L, LUA_REGISTRYINDEX, f->ref); /* neither allocates: no error outside pcall */
    lua_pushnumber(L, time_s);
    if (lua_pcall(L, 1, 1, 0) != LUA_OK) {
        snprintf(err, err_size, "workload %s: the rate function failed: %s", f->workload,
                 lua_tostring(L, -1) ? lua_tostring(L, -1) : "(no message)");
    } else if (lua_type(L, -1) != LUA_TNUMBER || !(lua_tonumber(L, -1) >= 0)
               || !isfinite(lua_tonumber(L, -1))) {
        snprintf(err, err_size, "workload %s: the rate function must return a rate >= 0 per "
                 "second, got %s at t = %g s", f->workload,
                 lua_type(L, -1) == LUA_TNUMBER ? "a negative or infinite number" : luaL_typename(L, -1),
                 time_s);
    } else {
        rate = lua_tonumber(L, -1);
    }
    lua_pop(L, 1);
    return rate;
}
