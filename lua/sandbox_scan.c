/* The library functions whose work grows with a string's length or with the heap,
 * charged to the instruction budget before they run (see sandbox.h).
 *
 * One call to them is one instruction to the count hook, however long the string:
 * utf8.len of a 50 MB string takes 78 ms and tonumber of one 12 ms, and a full
 * collection walks the whole heap, so a short loop of them ran for hours inside a budget
 * of 200 million instructions.  Each is charged one instruction per 16 bytes it reads
 * (the allocation charge's rate: about what reading them costs), or for a collection
 * per 16 bytes of the heap; and those that allocate their result, which the allocator
 * charges, are looked at as they return, so that a loop of string.format over a long
 * string stops at the call that spends the budget rather than at the hook's next look,
 * seconds later. */
#include <string.h>

#include <lauxlib.h>

#include "lua/sandbox.h"
#include "lua/sandbox_internal.h"

/* Calls the original function (upvalue 1, perhaps itself a closure of the sandbox's)
 * with the arguments as they are; raises the budget's message, at the caller's line, if
 * what it allocated spent the budget. */
static int call_then_look(lua_State *L)
{
    lua_pushvalue(L, lua_upvalueindex(1));
    lua_insert(L, 1);
    lua_call(L, lua_gettop(L) - 1, LUA_MULTRET);
    sandbox_check_budget(L);
    return lua_gettop(L);
}

/* Argument arg as an integer, or fallback when absent (or not one: the original function
 * then raises its own error). */
static lua_Integer integer_or(lua_State *L, int arg, lua_Integer fallback)
{
    int is_integer = 0;
    lua_Integer v = lua_tointegerx(L, arg, &is_integer);
    return is_integer ? v : fallback;
}

/* Bytes i..j of a string of len bytes (negative positions from its end, as Lua's). */
static uint64_t span(size_t len, lua_Integer i, lua_Integer j)
{
    lua_Integer n = (lua_Integer)len;
    if (i < 0)
        i = i < -n ? 1 : n + i + 1;
    if (j < 0)
        j = j < -n ? 0 : n + j + 1;
    if (i < 1)
        i = 1;
    if (j > n)
        j = n;
    return j >= i ? (uint64_t)(j - i + 1) : 0;
}

/* Charges the bytes a call reads, one instruction per SANDBOX_BYTES_PER_INSTRUCTION. */
static void charge_bytes(lua_State *L, uint64_t bytes, const char *what)
{
    sandbox_charge(L, bytes / SANDBOX_BYTES_PER_INSTRUCTION, what);
}

/* utf8.len(s, i, j): bytes i..j (1, -1) */
static int charged_utf8_len(lua_State *L)
{
    size_t len = 0;
    if (lua_type(L, 1) == LUA_TSTRING && lua_tolstring(L, 1, &len))
        charge_bytes(L, span(len, integer_or(L, 2, 1), integer_or(L, 3, -1)), "utf8.len");
    return call_then_look(L);
}

/* utf8.codepoint(s, i, j) and string.byte(s, i, j): a value pushed for each character
 * or byte i..j (1, i), one instruction each */
static int charged_values(lua_State *L, const char *what)
{
    size_t len = 0;
    if (lua_type(L, 1) == LUA_TSTRING && lua_tolstring(L, 1, &len)) {
        lua_Integer i = integer_or(L, 2, 1);
        sandbox_charge(L, span(len, i, integer_or(L, 3, i)), what);
    }
    return call_then_look(L);
}

static int charged_utf8_codepoint(lua_State *L) { return charged_values(L, "utf8.codepoint"); }

static int charged_byte(lua_State *L) { return charged_values(L, "string.byte"); }

/* utf8.offset(s, n, i): up to n characters of up to 4 bytes each, within the string */
static int charged_utf8_offset(lua_State *L)
{
    size_t len = 0;
    if (lua_type(L, 1) == LUA_TSTRING && lua_tolstring(L, 1, &len)) {
        lua_Integer n = integer_or(L, 2, 0);
        uint64_t chars = n < 0 ? (uint64_t)0 - (uint64_t)n : (uint64_t)n;
        charge_bytes(L, chars < len / 4 ? 4 * chars : len, "utf8.offset");
    }
    return call_then_look(L);
}

/* tonumber(s) and string.format(s, ...): the whole first string */
static int charged_first_string(lua_State *L)
{
    if (lua_type(L, 1) == LUA_TSTRING)
        charge_bytes(L, lua_rawlen(L, 1), "a long string");
    return call_then_look(L);
}

/* collectgarbage: "collect" (the default) and "step" may walk the whole heap */
static int charged_collect(lua_State *L)
{
    const char *option = luaL_optstring(L, 1, "collect");
    if (!strcmp(option, "collect") || !strcmp(option, "step")) {
        uint64_t heap = (uint64_t)lua_gc(L, LUA_GCCOUNT) * 1024 + (uint64_t)lua_gc(L, LUA_GCCOUNTB);
        sandbox_charge(L, heap / SANDBOX_BYTES_PER_INSTRUCTION + 1, "collectgarbage");
    }
    return call_then_look(L);
}

/* Replaces table[name] (a function) with wrapper, which finds it as upvalue 1. */
static void wrap(lua_State *L, const char *table, const char *name, lua_CFunction wrapper)
{
    if (table)
        lua_getglobal(L, table);
    else
        lua_pushglobaltable(L);
    lua_getfield(L, -1, name);
    if (lua_type(L, -1) == LUA_TFUNCTION) {
        lua_pushcclosure(L, wrapper, 1);
        lua_setfield(L, -2, name);
    } else {
        lua_pop(L, 1);
    }
    lua_pop(L, 1);
}

void sandbox_open_scans(lua_State *L)
{
    /* what allocates its result, charged by the allocator, looked at on return */
    static const char *const making[] = { "char", "lower", "upper", "rep", "reverse", "sub",
                                          NULL };
    for (const char *const *f = making; *f; f++)
        wrap(L, "string", *f, call_then_look);
    wrap(L, "utf8", "char", call_then_look);
    wrap(L, NULL, "tostring", call_then_look);
    /* what reads a string's bytes, charged for them first */
    wrap(L, "string", "format", charged_first_string);
    wrap(L, NULL, "tonumber", charged_first_string);
    wrap(L, "utf8", "len", charged_utf8_len);
    wrap(L, "utf8", "codepoint", charged_utf8_codepoint);
    wrap(L, "string", "byte", charged_byte);
    wrap(L, "utf8", "offset", charged_utf8_offset);
    wrap(L, NULL, "collectgarbage", charged_collect);
}
