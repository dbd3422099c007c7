/* Calls into a scenario's functions during a run (see callback.h). */
#include "lua/callback.h"

#include <stdio.h>
#include <string.h>

#include <lauxlib.h>

void *callback_create(lua_State *L, int owner, const char *key, size_t size,
                      const char *kind, const char *name, const char *what)
{
    sandbox *sb = sandbox_of(L);
    int function = sandbox_bind_function(L, owner, key);
    callback *cb = sandbox_attach(sb, size, NULL);
    if (!cb)
        luaL_error(L, "not enough memory");
    cb->sb = sb;
    cb->function = function;
    cb->kind = kind;
    cb->what = what;
    snprintf(cb->name, sizeof cb->name, "%s", name);
    sandbox_get_path(L, owner, key); /* the function: where it is defined, for messages */
    lua_Debug ar;
    if (!lua_isfunction(L, -1))
        lua_pop(L, 1);
    else if (lua_getinfo(L, ">S", &ar) && ar.source[0] == '@' && ar.linedefined > 0)
        snprintf(cb->where, sizeof cb->where, "%.280s:%d: ", ar.source + 1, ar.linedefined);
    return cb;
}

void callback_push_table(lua_State *L, callback *cb, int slot)
{
    unsigned state = sandbox_rewinds(cb->sb) + 1;
    if (cb->tables_state != state) { /* new, or made in a state since replaced */
        for (int i = 0; i < CALLBACK_TABLES; i++)
            cb->tables[i] = LUA_NOREF;
        cb->tables_state = state;
    }
    if (cb->tables[slot] != LUA_NOREF) {
        lua_rawgeti(L, LUA_REGISTRYINDEX, cb->tables[slot]);
        return;
    }
    lua_newtable(L);
    lua_pushvalue(L, -1);
    cb->tables[slot] = luaL_ref(L, LUA_REGISTRYINDEX);
}

typedef struct protected_call {
    callback *cb;
    callback_push_fn push;
    void *arg;
} protected_call;

static int call_protected(lua_State *L)
{
    protected_call *call = lua_touserdata(L, 1);
    lua_settop(L, 0);
    sandbox_push_function(call->cb->sb, call->cb->function);
    int nargs = call->push(L, call->arg);
    lua_call(L, nargs, 1);
    return 1;
}

int callback_call(callback *cb, callback_push_fn push, void *arg, char *err, size_t err_size)
{
    char why[1536];
    if (sandbox_enter(cb->sb, why, sizeof why) != 0) {
        snprintf(err, err_size, "%s%s %s: the %s failed: %s", cb->where, cb->kind, cb->name,
                 cb->what, why);
        return -1;
    }
    lua_State *L = sandbox_state(cb->sb);
    sandbox_set_instruction_budget(cb->sb, CALLBACK_CALL_INSTRUCTIONS);
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

lua_State *callback_state(const callback *cb) { return sandbox_state(cb->sb); }

const char *callback_describe(lua_State *L, int index, char *buf, size_t size)
{
    if (lua_type(L, index) == LUA_TNUMBER)
        snprintf(buf, size, "%.15g", lua_tonumber(L, index));
    else
        snprintf(buf, size, "%s", lua_isnil(L, index) ? "nothing" : luaL_typename(L, index));
    return buf;
}
