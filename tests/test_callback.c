/* Calls into a scenario's functions during a run: the result on the stack, messages that
 * name the owner, the stack left as it was, and a budget of instructions per call. */
#include <criterion/criterion.h>
#include <lauxlib.h>
#include <string.h>

#include "lua/callback.h"
#include "lua/sandbox.h"
#include "support/scratch.h"

static sandbox *sb;

static void setup(void) { sb = sandbox_create(false); }
static void teardown(void) { sandbox_free(sb); }

TestSuite(callback, .init = setup, .fini = teardown);

/* A callback for the function the chunk returns; the stack is empty after. */
static callback *wrap(const char *chunk)
{
    lua_State *L = sandbox_state(sb);
    cr_assert_eq(luaL_loadbuffer(L, chunk, strlen(chunk), "@fleet.lua"), LUA_OK);
    cr_assert_eq(lua_pcall(L, 0, 1, 0), LUA_OK, "%s", lua_tostring(L, -1));
    lua_createtable(L, 0, 1); /* its owner, as a workload's table would be */
    lua_insert(L, -2);
    lua_setfield(L, -2, "f");
    callback *cb = callback_create(L, -1, "f", sizeof(callback), "workload", "chat",
                                   "test function");
    lua_pop(L, 1);
    cr_assert_eq(lua_gettop(L), 0);
    return cb;
}

static int push_number(lua_State *L, void *arg)
{
    lua_pushnumber(L, *(const double *)arg);
    return 1;
}

Test(callback, the_result_is_left_on_top_for_the_caller)
{
    lua_State *L = sandbox_state(sb);
    callback *cb = wrap("return function(x) return 2 * x end");
    double x = 21;
    char err[256] = "";
    cr_assert_eq(callback_call(cb, push_number, &x, err, sizeof err), 0, "%s", err);
    cr_expect_eq(lua_gettop(L), 1);
    cr_expect_eq(lua_tonumber(L, -1), 42);
}

Test(callback, an_error_names_the_owner_and_the_function_and_leaves_the_stack)
{
    lua_State *L = sandbox_state(sb);
    callback *cb = wrap("return function(x) error('no replica for ' .. x) end");
    lua_pushinteger(L, 7); /* something of the caller's */
    double x = 3;
    char err[256];
    cr_expect_eq(callback_call(cb, push_number, &x, err, sizeof err), -1);
    /* where the function is defined, then its owner, then Lua's own message */
    cr_expect_str_eq(err, "fleet.lua:1: workload chat: the test function failed: fleet.lua:1: "
                          "no replica for 3.0");
    cr_expect_eq(lua_gettop(L), 1);
    cr_expect_eq(lua_tointeger(L, 1), 7);
}

Test(callback, each_call_has_a_budget_of_its_own)
{
    lua_State *L = sandbox_state(sb);
    callback *slow = wrap("return function(n) local s = 0 for i = 1, n do s = s + i end "
                          "return s end");
    char err[256];
    double n = 200000; /* some 400,000 instructions: five in a row pass only because each
                        * call starts with a budget of a million */
    for (int i = 0; i < 5; i++) {
        cr_assert_eq(callback_call(slow, push_number, &n, err, sizeof err), 0, "call %d: %s",
                     i, err);
        lua_pop(L, 1);
    }
    callback *endless = wrap("return function() while true do end end");
    cr_expect_eq(callback_call(endless, push_number, &n, err, sizeof err), -1);
    cr_expect(strstr(err, "workload chat: the test function failed: ")
              && strstr(err, "million Lua instructions"), "%s", err);
    cr_expect_eq(callback_call(slow, push_number, &n, err, sizeof err), 0,
                 "the next call starts afresh: %s", err);
}

Test(callback, describes_a_wrong_result)
{
    lua_State *L = sandbox_state(sb);
    char buf[64];
    lua_pushnumber(L, 2.5);
    cr_expect_str_eq(callback_describe(L, -1, buf, sizeof buf), "2.5");
    lua_pushnil(L);
    cr_expect_str_eq(callback_describe(L, -1, buf, sizeof buf), "nothing");
    lua_newtable(L);
    cr_expect_str_eq(callback_describe(L, -1, buf, sizeof buf), "table");
}

/* A rewind makes the state again from the file's text: upvalues, globals and
 * math.random start over, and the callback finds its function in the new state. */
Test(callback, a_rewind_starts_the_function_over)
{
    char *dir = scratch_dir();
    char *file = scratch_file(dir, "fleet.lua",
                              "local fs = require 'fleetsim'\n"
                              "local calls = 0\n"
                              "return fs.claim { text = 'x', verdict = function()\n"
                              "  calls = calls + 1\n"
                              "  total = (total or 0) + 1\n"
                              "  return calls * 1000000 + total * 1000 + math.random(999) end }\n");
    lua_State *L = sandbox_state(sb);
    cr_assert_eq(sandbox_load_file(sb, file), LUA_OK, "%s", lua_tostring(L, -1));
    cr_assert_eq(lua_pcall(L, 0, 1, 0), LUA_OK, "%s", lua_tostring(L, -1));
    callback *cb = callback_create(L, -1, "verdict", sizeof(callback), "workload", "chat",
                                   "test function");
    lua_pop(L, 1);
    char err[256] = "";
    cr_assert_eq(sandbox_keep_for_rewinds(sb, NULL, 0, NULL, 3, err, sizeof err), 0, "%s", err);
    double unused = 0, first = 0;
    for (int round = 0; round < 3; round++) {
        if (round)
            sandbox_rewind(sb);
        for (int call = 1; call <= 2; call++) {
            cr_assert_eq(callback_call(cb, push_number, &unused, err, sizeof err), 0, "%s", err);
            lua_State *now = callback_state(cb);
            double got = lua_tonumber(now, -1);
            lua_pop(now, 1);
            if (call == 1 && round == 0)
                first = got;
            if (call == 1)
                cr_expect_eq(got, first, "round %d starts from where round 0 did", round);
            else
                cr_expect_eq((long)got / 1000, 2002, "round %d: calls and total count on", round);
        }
    }
    cr_expect_eq(sandbox_rewinds(sb), 2);
    cr_expect_eq((long)first / 1000, 1001);
    free(file);
    scratch_remove_dir(dir);
}
