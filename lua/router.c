/* Lua routing functions (see router.h). */
#include "lua/router.h"

#include <stdio.h>

#include <lauxlib.h>

#include "lua/callback.h"

struct router {
    callback cb;    /* first: the object is the callback's */
    unsigned shown; /* the replicas' table's entries the last call filled */
};

enum { REPLICAS_TABLE, REQUEST_TABLE }; /* the callback's reused tables */

router *router_create(lua_State *L, int owner, const char *key, unsigned replicas,
                      const char *workload)
{
    (void)replicas; /* the tables are made on the first call of each state */
    return callback_create(L, owner, key, sizeof(router), "workload", workload,
                           "routing function");
}

/* t[key] = value, raw: the function may have given the table a metatable */
static void set_number(lua_State *L, int table, const char *key, double value)
{
    lua_pushstring(L, key);
    lua_pushnumber(L, value);
    lua_rawset(L, table);
}

typedef struct route_call {
    router *r;
    const replica_load *loads;
    unsigned n, prompt, output;
    double now_s;
} route_call;

/* The argument tables, filled (a callback_push_fn). */
static int push_route(lua_State *L, void *arg)
{
    const route_call *call = arg;
    callback_push_table(L, &call->r->cb, REPLICAS_TABLE);
    int replicas = lua_gettop(L);
    for (unsigned i = 0; i < call->n; i++) {
        if (lua_rawgeti(L, replicas, (lua_Integer)i + 1) != LUA_TTABLE) { /* new or replaced */
            lua_pop(L, 1);
            lua_createtable(L, 0, 2);
            lua_pushvalue(L, -1);
            lua_rawseti(L, replicas, (lua_Integer)i + 1);
        }
        set_number(L, lua_gettop(L), "outstanding", call->loads[i].outstanding);
        set_number(L, lua_gettop(L), "tokens", call->loads[i].tokens);
        lua_pop(L, 1);
    }
    /* a fleet that shrank (a failure, a preemption, a scale-in): the replicas it no longer
     * has leave the reused table, so that #replicas and pairs() see n */
    for (unsigned i = call->n; i < call->r->shown; i++) {
        lua_pushnil(L);
        lua_rawseti(L, replicas, (lua_Integer)i + 1);
    }
    call->r->shown = call->n;
    callback_push_table(L, &call->r->cb, REQUEST_TABLE);
    int request = lua_gettop(L);
    set_number(L, request, "prompt", call->prompt);
    set_number(L, request, "output", call->output);
    set_number(L, request, "time", call->now_s);
    return 2;
}

int router_route(void *context, const replica_load *loads, unsigned n, unsigned prompt,
                 unsigned output, double now_s, char *err, size_t err_size)
{
    router *r = context;
    route_call call = { r, loads, n, prompt, output, now_s };
    if (callback_call(&r->cb, push_route, &call, err, err_size) != 0)
        return -1;
    lua_State *L = callback_state(&r->cb);
    int exact, choice = -1;
    lua_Integer i = lua_tointegerx(L, -1, &exact);
    char got[64];
    if (!exact || i < 1 || i > (lua_Integer)n)
        snprintf(err, err_size, "%sworkload %s: the routing function must return a replica "
                 "number from 1 to %u, got %s", r->cb.where, r->cb.name, n,
                 callback_describe(L, -1, got, sizeof got));
    else
        choice = (int)i - 1;
    lua_pop(L, 1);
    return choice;
}
