/* Lua routing functions (see router.h). */
#include "lua/router.h"

#include <stdio.h>
#include <string.h>

#include <lauxlib.h>

#include "lua/sandbox.h"

struct lua_router {
    lua_State *L;
    int function_ref, replicas_ref, request_ref;
    unsigned n;
    char workload[64];
};

lua_router *lua_router_create(lua_State *L, int fn_index, unsigned replicas, const char *workload)
{
    fn_index = lua_absindex(L, fn_index);
    lua_router *r = lua_newuserdatauv(L, sizeof *r, 0);
    memset(r, 0, sizeof *r);
    r->L = L;
    r->n = replicas;
    snprintf(r->workload, sizeof r->workload, "%s", workload);
    luaL_ref(L, LUA_REGISTRYINDEX); /* anchors the router for the state's life */
    lua_pushvalue(L, fn_index);
    r->function_ref = luaL_ref(L, LUA_REGISTRYINDEX);
    lua_createtable(L, (int)replicas, 0);
    for (unsigned i = 0; i < replicas; i++) {
        lua_createtable(L, 0, 2);
        lua_rawseti(L, -2, (lua_Integer)i + 1);
    }
    r->replicas_ref = luaL_ref(L, LUA_REGISTRYINDEX);
    lua_createtable(L, 0, 3);
    r->request_ref = luaL_ref(L, LUA_REGISTRYINDEX);
    return r;
}

/* t[key] = value, raw: the function may have given the table a metatable */
static void set_number(lua_State *L, int table, const char *key, double value)
{
    lua_pushstring(L, key);
    lua_pushnumber(L, value);
    lua_rawset(L, table);
}

typedef struct route_call {
    lua_router *r;
    const replica_load *loads;
    unsigned n, prompt, output;
    double now_s;
} route_call;

/* Fills the argument tables and calls the function; run under lua_pcall, so that a
 * memory error while filling them cannot escape to C. */
static int call_protected(lua_State *L)
{
    route_call *call = lua_touserdata(L, 1);
    lua_router *r = call->r;
    lua_settop(L, 0);
    lua_rawgeti(L, LUA_REGISTRYINDEX, r->function_ref);
    lua_rawgeti(L, LUA_REGISTRYINDEX, r->replicas_ref);
    int replicas = lua_gettop(L);
    for (unsigned i = 0; i < call->n; i++) {
        if (lua_rawgeti(L, replicas, (lua_Integer)i + 1) != LUA_TTABLE) { /* replaced: renew */
            lua_pop(L, 1);
            lua_createtable(L, 0, 2);
            lua_pushvalue(L, -1);
            lua_rawseti(L, replicas, (lua_Integer)i + 1);
        }
        set_number(L, lua_gettop(L), "outstanding", call->loads[i].outstanding);
        set_number(L, lua_gettop(L), "tokens", call->loads[i].tokens);
        lua_pop(L, 1);
    }
    lua_rawgeti(L, LUA_REGISTRYINDEX, r->request_ref);
    int request = lua_gettop(L);
    set_number(L, request, "prompt", call->prompt);
    set_number(L, request, "output", call->output);
    set_number(L, request, "time", call->now_s);
    lua_call(L, 2, 1);
    return 1;
}

int lua_router_route(void *router, const replica_load *loads, unsigned n, unsigned prompt,
                     unsigned output, double now_s, char *err, size_t err_size)
{
    lua_router *r = router;
    lua_State *L = r->L;
    int top = lua_gettop(L);
    void *ud;
    lua_getallocf(L, &ud);
    sandbox_set_instruction_budget(ud, ROUTER_CALL_INSTRUCTIONS);
    route_call call = { r, loads, n, prompt, output, now_s };
    int choice = -1;
    if (!lua_checkstack(L, 8)) {
        snprintf(err, err_size, "workload %s: the routing function has no stack left", r->workload);
        return -1;
    }
    lua_pushcfunction(L, call_protected);
    lua_pushlightuserdata(L, &call);
    if (lua_pcall(L, 1, 1, 0) != LUA_OK) {
        snprintf(err, err_size, "workload %s: the routing function failed: %s", r->workload,
                 lua_tostring(L, -1) ? lua_tostring(L, -1) : "(no message)");
    } else {
        int exact;
        lua_Integer i = lua_tointegerx(L, -1, &exact);
        char got[64];
        if (lua_type(L, -1) == LUA_TNUMBER)
            snprintf(got, sizeof got, "%.15g", lua_tonumber(L, -1));
        else
            snprintf(got, sizeof got, "%s", lua_isnil(L, -1) ? "nothing" : luaL_typename(L, -1));
        if (!exact || i < 1 || i > (lua_Integer)n)
            snprintf(err, err_size, "workload %s: the routing function must return a replica "
                     "number from 1 to %u, got %s", r->workload, n, got);
        else
            choice = (int)i - 1;
    }
    lua_settop(L, top);
    return choice;
}
