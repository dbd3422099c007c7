/* coroutine.close with a bound on nesting (see sandbox.h).
 *
 * Closing a coroutine runs its pending __close handlers; a handler may close another
 * coroutine, and so on.  Lua 5.4.4 does not count those nested closes against its C
 * stack limit (lua_resetthread starts from the closed coroutine's own count; fixed in
 * 5.4.6 by lua_closethread), so some 20,000 of them overflow the C stack and crash the
 * process.  Here a close started while MAX_NESTED_CLOSES others are under way is refused
 * with an error instead.  Between two nested closes Lua's own limit still holds (200 C
 * calls), so the C stack used stays bounded. */
#include <stdio.h>

#include <lauxlib.h>

#include "lua/sandbox.h"
#include "lua/sandbox_internal.h"

/* Closes in progress at once; legitimate code nests none or one. */
#define MAX_NESTED_CLOSES 8

static int guarded_close(lua_State *L)
{
    lua_State *co = lua_tothread(L, 1);
    luaL_argexpected(L, co, 1, "coroutine");
    lua_Debug ar;
    if (co == L || (lua_status(co) == LUA_OK && lua_getstack(co, 0, &ar)))
        return sandbox_call_original(L); /* running or normal: it raises, closing nothing */
    int *depth = sandbox_closing_depth(L);
    if (*depth >= MAX_NESTED_CLOSES) { /* a close returns its handlers' errors: refuse it all */
        char why[256];
        snprintf(why, sizeof why, "coroutine.close nested more than %d deep (in __close "
                 "handlers that close coroutines): refused, as Lua 5.4.4 would overflow the "
                 "C stack", MAX_NESTED_CLOSES);
        sandbox_refuse(L, why);
    }
    ++*depth; /* the close itself never raises: its errors are its results */
    int results = sandbox_call_original(L);
    --*depth;
    return results;
}

void sandbox_open_coroutines(lua_State *L)
{
    lua_getglobal(L, "coroutine");
    if (lua_istable(L, -1)) {
        lua_getfield(L, -1, "close");
        lua_pushcclosure(L, guarded_close, 1);
        lua_setfield(L, -2, "close");
    }
    lua_pop(L, 1);
}
