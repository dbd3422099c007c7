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

int lua_router_route(void *router, const replica_load *loads, unsigned n, unsigned prompt,
                     unsigned output, double now_s, char *err, size_t err_size)
{
    lua_router *r = router;
    lua_State *L = r->L;
    int top = lua_gettop(L);
    void *ud;
    lua_getallocf(L, &ud);
    sandbox_set_instruction_budget(ud, ROUTER_CALL_INSTRUCTIONS);
    lua_rawgeti(L, LUA_REGISTRYINDEX, r->function_ref);
    lua_rawgeti(L, LUA_REGISTRYINDEX, r->replicas_ref);
    int replicas = lua_gettop(L);
    for (unsigned i = 0; i < n; i++) {
        if (lua_rawgeti(L, replicas, (lua_Integer)i + 1) != LUA_TTABLE) { /* replaced: renew */
            lua_pop(L, 1);
            lua_createtable(L, 0, 2);
            lua_pushvalue(L, -1);
            lua_rawseti(L, replicas, (lua_Integer)i + 1);
        }
        set_number(L, lua_gettop(L), "outstanding", loads[i].outstanding);
        set_number(L, lua_gettop(L), "tokens", loads[i].tokens);
        lua_pop(L, 1);
    }
    lua_rawgeti(L, LUA_REGISTRYINDEX, r->request_ref);
    int request = lua_gettop(L);
    set_number(L, request, "prompt", prompt);
    set_number(L, request, "output", output);
    set_number(L, request, "time", now_s);
    int status = lua_pcall(L, 2, 1, 0);
    int choice = -1;
    if (status != LUA_OK) {
        snprintf(err, err_size, "workload %s: the routing function failed: %s", r->workload,
                 lua_tostring(L, -1) ? lua_tostring(L, -1) : "(no message)");
    } else {
        int exact;
        lua_Integer i = lua_tointegerx(L, -1, &exact);
        if (!exact || i < 1 || i > (lua_Integer)n)
            snprintf(err, err_size, "workload %s: the routing function must return a replica "
                     "number from 1 to %u, got %s", r->workload, n,
                     lua_isnil(L, -1) ? "nothing" : lua_tostring(L, -1) ? lua_tostring(L, -1) : "a table");
        else
            choice = (int)i - 1;
    }
    lua_settop(L, top);
    return choice;
}
