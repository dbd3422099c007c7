/* Lua scaling policies (see scaler.h). */
#include "lua/scaler.h"

#include <stdio.h>
#include <string.h>

#include <lauxlib.h>

#include "lua/sandbox.h"

struct lua_scaler {
    lua_State *L;
    int function_ref, view_ref;
    char pool[64];
};

lua_scaler *lua_scaler_create(lua_State *L, int fn_index, const char *pool)
{
    fn_index = lua_absindex(L, fn_index);
    lua_scaler *s = lua_newuserdatauv(L, sizeof *s, 0);
    memset(s, 0, sizeof *s);
    s->L = L;
    snprintf(s->pool, sizeof s->pool, "%s", pool);
    luaL_ref(L, LUA_REGISTRYINDEX); /* anchors the scaler for the state's life */
    lua_pushvalue(L, fn_index);
    s->function_ref = luaL_ref(L, LUA_REGISTRYINDEX);
    lua_createtable(L, 0, 10);
    s->view_ref = luaL_ref(L, LUA_REGISTRYINDEX);
    return s;
}

typedef struct scale_call {
    lua_scaler *s;
    const autoscale_view *v;
} scale_call;

/* Fills the view and calls the function, under lua_pcall (a memory error while filling
 * cannot escape to C). */
static int call_protected(lua_State *L)
{
    scale_call *call = lua_touserdata(L, 1);
    const autoscale_view *v = call->v;
    lua_settop(L, 0);
    lua_rawgeti(L, LUA_REGISTRYINDEX, call->s->function_ref);
    lua_rawgeti(L, LUA_REGISTRYINDEX, call->s->view_ref);
    struct { const char *key; double value; } fields[] = {
        { "time", v->now_s }, { "active", v->active }, { "provisioning", v->provisioning },
        { "draining", v->draining }, { "min", v->min }, { "max", v->max },
        { "utilization", v->utilization }, { "kv_cache", v->kv_cache },
        { "outstanding", v->outstanding },
        { "pending", v->pending },
    };
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++) {
        lua_pushstring(L, fields[i].key);
        lua_pushnumber(L, fields[i].value);
        lua_rawset(L, 2);
    }
    lua_call(L, 1, 1);
    return 1;
}

int lua_scaler_decide(void *scaler, const autoscale_view *view, char *err, size_t err_size)
{
    lua_scaler *s = scaler;
    lua_State *L = s->L;
    int top = lua_gettop(L), wanted = -1;
    void *ud;
    lua_getallocf(L, &ud);
    sandbox_set_instruction_budget(ud, SCALER_CALL_INSTRUCTIONS);
    scale_call call = { s, view };
    if (!lua_checkstack(L, 8)) {
        snprintf(err, err_size, "pool %s: the scaling policy has no stack left", s->pool);
        return -1;
    }
    lua_pushcfunction(L, call_protected);
    lua_pushlightuserdata(L, &call);
    if (lua_pcall(L, 1, 1, 0) != LUA_OK) {
        snprintf(err, err_size, "pool %s: the scaling policy failed: %s", s->pool,
                 lua_tostring(L, -1) ? lua_tostring(L, -1) : "(no message)");
    } else {
        int exact;
        lua_Integer n = lua_tointegerx(L, -1, &exact);
        char got[64];
        if (lua_type(L, -1) == LUA_TNUMBER)
            snprintf(got, sizeof got, "%.15g", lua_tonumber(L, -1));
        else
            snprintf(got, sizeof got, "%s", lua_isnil(L, -1) ? "nothing" : luaL_typename(L, -1));
        if (!exact || n < 0 || n > 10000000)
            snprintf(err, err_size, "pool %s: the scaling policy must return a whole number "
                     "of replicas, got %s", s->pool, got);
        else
            wanted = (int)n;
    }
    lua_settop(L, top);
    return wanted;
}
