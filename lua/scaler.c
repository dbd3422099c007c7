/* Lua scaling policies (see scaler.h). */
#include "lua/scaler.h"

#include <stdio.h>

#include <lauxlib.h>

#include "lua/callback.h"

struct scaler {
    callback cb; /* first: the object is the callback's */
};

scaler *scaler_create(lua_State *L, int owner, const char *key, const char *pool)
{
    return callback_create(L, owner, key, sizeof(scaler), "pool", pool, "scaling policy");
}

typedef struct scale_call {
    scaler *s;
    const autoscale_view *v;
} scale_call;

/* The view, filled (a callback_push_fn). */
static int push_view(lua_State *L, void *arg)
{
    const scale_call *call = arg;
    const autoscale_view *v = call->v;
    callback_push_table(L, &call->s->cb, 0); /* the view, reused */
    int view = lua_gettop(L);
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
        lua_rawset(L, view);
    }
    return 1;
}

int scaler_decide(void *context, const autoscale_view *view, char *err, size_t err_size)
{
    scaler *s = context;
    scale_call call = { s, view };
    if (callback_call(&s->cb, push_view, &call, err, err_size) != 0)
        return -1;
    lua_State *L = callback_state(&s->cb);
    int exact, wanted = -1;
    lua_Integer n = lua_tointegerx(L, -1, &exact);
    char got[64];
    if (!exact)
        snprintf(err, err_size, "%spool %s: the scaling policy must return a whole number "
                 "of replicas, got %s", s->cb.where, s->cb.name,
                 callback_describe(L, -1, got, sizeof got));
    else if (n < 0 || n > view->max)
        snprintf(err, err_size, "%spool %s: the scaling policy asked for %lld replicas; it "
                 "may ask for 0 to %u (the pool's max)", s->cb.where, s->cb.name, (long long)n,
                 view->max);
    else
        wanted = (int)n;
    lua_pop(L, 1);
    return wanted;
}
