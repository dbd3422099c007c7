/* A Lua routing function sees exactly the replicas the fleet has at each call: the tables
 * are reused from call to call, so a fleet that shrinks (a failure, a preemption, a
 * scale-in) must not leave the entries of replicas it no longer has. */
#include <criterion/criterion.h>
#include <lauxlib.h>
#include <string.h>

#include "lua/router.h"
#include "lua/sandbox.h"

static sandbox *sb;

static void setup(void) { sb = sandbox_create(false); }
static void teardown(void) { sandbox_free(sb); }

TestSuite(router, .init = setup, .fini = teardown);

/* A router for the function the chunk returns, as a workload's `routing`. */
static router *wrap(const char *chunk, unsigned replicas)
{
    lua_State *L = sandbox_state(sb);
    cr_assert_eq(luaL_loadbuffer(L, chunk, strlen(chunk), "@fleet.lua"), LUA_OK);
    cr_assert_eq(lua_pcall(L, 0, 1, 0), LUA_OK, "%s", lua_tostring(L, -1));
    lua_createtable(L, 0, 1);
    lua_insert(L, -2);
    lua_setfield(L, -2, "routing");
    router *r = router_create(L, -1, "routing", replicas, "chat");
    lua_pop(L, 1);
    return r;
}

static int route(router *r, unsigned n, char *err, size_t size)
{
    replica_load loads[8];
    for (unsigned i = 0; i < n; i++)
        loads[i] = (replica_load){ .outstanding = 10 - i, .tokens = 100.0 * i };
    return router_route(r, loads, n, 100, 10, 1.0, err, size);
}

Test(router, a_shrunk_fleet_shows_only_the_replicas_it_has)
{
    router *r = wrap("return function(replicas, request) return #replicas end", 7);
    char err[256] = "";
    cr_expect_eq(route(r, 7, err, sizeof err), 6, "%s", err);
    cr_expect_eq(route(r, 3, err, sizeof err), 2, "seven replicas became three: %s", err);
    cr_expect_eq(route(r, 1, err, sizeof err), 0, "%s", err);
    cr_expect_eq(route(r, 5, err, sizeof err), 4, "and grew again: %s", err);
}

Test(router, entries_past_the_fleet_are_gone_even_after_a_gap)
{
    /* the function counts every entry it can see, holes included */
    router *r = wrap("return function(replicas, request)\n"
                     "  local n = 0\n"
                     "  for _ in pairs(replicas) do n = n + 1 end\n"
                     "  return n\n"
                     "end", 8);
    char err[256] = "";
    cr_expect_eq(route(r, 8, err, sizeof err), 7, "%s", err);
    cr_expect_eq(route(r, 2, err, sizeof err), 1, "%s", err);
}

Test(router, the_loads_are_the_current_ones)
{
    router *r = wrap("return function(replicas, request)\n"
                     "  local best = 1\n"
                     "  for i = 2, #replicas do\n"
                     "    if replicas[i].outstanding < replicas[best].outstanding then best = i end\n"
                     "  end\n"
                     "  return best\n"
                     "end", 6);
    char err[256] = "";
    cr_expect_eq(route(r, 6, err, sizeof err), 5, "%s", err); /* outstanding 10 - i */
    cr_expect_eq(route(r, 2, err, sizeof err), 1, "%s", err);
}
