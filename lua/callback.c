/* Calls into a scenario's functions during a run (see callback.h). */
#include "lua/callback.h"

#include <stdio.h>
#include <string.h>

#include <lauxlib.h>

#include "lua/sandbox.h"

void *callback_create(lua_State *L, int fn_index, size_t size, const char *kind,
                      const char *name, const char *what)
{
    fn_index = lua_absindex(L, fn_index);
    callback *cb = lua_newuserdatauv(L, size, 0);
    memset(cb, 0, size);
    cb->L = L;
    cb->kind = kind;
    cb->what = what;
    snprintf(cb->name, sizeof cb->name, "%s", name);
    lua_Debug ar;
    lua_pushvalue(L, fn_index);
    if (lua_getinfo(L, ">S", &ar) && ar.source[0] == '@' && ar.linedefined > 0)
        snprintf(cb->where, sizeof cb->where, "%.280s:%d: ", ar.source + 1, ar.linedefined);
    luaL_ref(L, LUA_REGISTRYINDEX); /* anchors the userdata for the state's life */
    lua_pushvalue(L, fn_index);
    cb->function_ref = luaL_ref(L, LUA_REGISTRYINDEX);
    return cb;
}

typedef struct protected_call {
    const callback *cb;
    callback_push_fn push;
    void *arg;
} protected_call;

static int call_protected(lua_State *L)
{
    protected_call *call = lua_touserdata(L, 1);
    lua_settop(L, 0);
    lua_rawgeti(L, LUA_REGISTRYINDEX, call->cb->function_ref);
    int nargs = call->push(L, call->arg);
    lua_call(L, nargs, 1);
    return 1;
}

int callback_call(const callback *cb, callback_push_fn push, void *arg, char *err,
                  size_t err_size)
{
    lua_State *L = cb->L;
    void *sb;
    lua_getallocf(L, &sb); /* the sandbox is the allocator's context */
    sandbox_set_instruction_budget(sb, CALLBACK_CALL_INSTRUCTIONS);
    if (!lua_checkstack(L, 8)) {
        snprintf(err, err_size, "%s%s %s: the %s has no stack left", cb->where, cb->kind,
                 cb->name, cb->what);
        return -1;
    }
    int top = lua_gettop(L);
    protected_call call = { cb, push, arg };
    lua_pushcfunction(L, call_protected);
    lua_pushlightuserdata(L, &call);
    if (lua_pcall(L, 1, 1, 0) != LUA_OK) {
        snprintf(err, err_size, "%s%s %s: the %s failed: %s", cb->where, cb->kind, cb->name,
                 cb->what,
                 lua_tostring(L, -1) ? lua_tostring(L, -1) : "(no message)");
        lua_settop(L, top);
        return -1;
    }
    return 0;
}

const char *callback_describe(lua_State *L, int index, char *buf, size_t size)
{
    if (lua_type(L, index) == LUA_TNUMBER)
        snprintf(buf, size, "%.15g", lua_tonumber(L, index));
    else
        snprintf(buf, size, "%s", lua_isnil(L, index) ? "nothing" : luaL_typename(L, index));
    return buf;
}
