/* The table functions that walk a list, with their work charged to the instruction
 * budget before it is done (see sandbox.h).
 *
 * Lua's own run in C, where the instruction hook does not look: table.move({}, 1, 1e15,
 * 2) loops for ever, and table.insert(t, 1, x) on a list of 4 million costs 60 ms, so
 * a budget of 200 million instructions allowed days.  These are the functions of the
 * reference manual, element for element (metamethods included; each length is asked
 * once), charged one instruction per element moved, read or written; sort is a merge
 * sort, charged n log n, which also makes its order of equal elements the same on every
 * run (Lua's quicksort picks pivots from the clock on unbalanced input). */
#include <limits.h>

#include <lauxlib.h>

#include "lua/sandbox.h"
#include "lua/sandbox_internal.h"

enum { TAB_R = 1, TAB_W = 2, TAB_L = 4 };

/* As Lua's: a table, or a value whose metatable gives what the operation needs. */
static void check_table(lua_State *L, int arg, int what)
{
    if (lua_type(L, arg) == LUA_TTABLE)
        return;
    int n = 1;
    if (lua_getmetatable(L, arg)) {
        static const char *const fields[] = { "__index", "__newindex", "__len" };
        bool ok = true;
        for (int i = 0; i < 3 && ok; i++)
            if (what & (1 << i)) {
                lua_pushstring(L, fields[i]);
                ok = lua_rawget(L, -++n) != LUA_TNIL;
            }
        if (ok) {
            lua_pop(L, n);
            return;
        }
    }
    luaL_checktype(L, arg, LUA_TTABLE); /* the error */
}

static lua_Integer length_of(lua_State *L, int arg, int what)
{
    check_table(L, arg, what | TAB_L);
    return luaL_len(L, arg);
}

static void charge(lua_State *L, lua_Unsigned elements, const char *what)
{
    sandbox_charge(L, elements, what);
}

static int sandboxed_insert(lua_State *L)
{
    lua_Integer e = length_of(L, 1, TAB_R | TAB_W) + 1; /* the first empty slot */
    lua_Integer pos;
    switch (lua_gettop(L)) {
    case 2:
        pos = e;
        break;
    case 3:
        pos = luaL_checkinteger(L, 2);
        luaL_argcheck(L, (lua_Unsigned)pos - 1u < (lua_Unsigned)e, 2, "position out of bounds");
        charge(L, (lua_Unsigned)(e - pos), "table.insert");
        for (lua_Integer i = e; i > pos; i--) { /* move up */
            lua_geti(L, 1, i - 1);
            lua_seti(L, 1, i);
        }
        break;
    default:
        return luaL_error(L, "wrong number of arguments to 'insert'");
    }
    lua_seti(L, 1, pos);
    return 0;
}

static int sandboxed_remove(lua_State *L)
{
    lua_Integer size = length_of(L, 1, TAB_R | TAB_W);
    lua_Integer pos = luaL_optinteger(L, 2, size);
    if (pos != size) /* argument 1 in the message, as Lua 5.4.4 says */
        luaL_argcheck(L, (lua_Unsigned)pos - 1u <= (lua_Unsigned)size, 1,
                      "position out of bounds");
    if (pos < size)
        charge(L, (lua_Unsigned)(size - pos), "table.remove");
    lua_geti(L, 1, pos);
    for (; pos < size; pos++) {
        lua_geti(L, 1, pos + 1);
        lua_seti(L, 1, pos);
    }
    lua_pushnil(L);
    lua_seti(L, 1, pos);
    return 1;
}

static int sandboxed_move(lua_State *L)
{
    lua_Integer f = luaL_checkinteger(L, 2);
    lua_Integer e = luaL_checkinteger(L, 3);
    lua_Integer t = luaL_checkinteger(L, 4);
    int tt = !lua_isnoneornil(L, 5) ? 5 : 1; /* the destination table */
    check_table(L, 1, TAB_R);
    check_table(L, tt, TAB_W);
    if (e >= f) {
        luaL_argcheck(L, f > 0 || e < LUA_MAXINTEGER + f, 3, "too many elements to move");
        lua_Integer n = e - f + 1;
        luaL_argcheck(L, t <= LUA_MAXINTEGER - n + 1, 4, "destination wrap around");
        charge(L, (lua_Unsigned)n, "table.move");
        if (t > e || t <= f || (tt != 1 && !lua_compare(L, 1, tt, LUA_OPEQ))) {
            for (lua_Integer i = 0; i < n; i++) {
                lua_geti(L, 1, f + i);
                lua_seti(L, tt, t + i);
            }
        } else {
            for (lua_Integer i = n - 1; i >= 0; i--) {
                lua_geti(L, 1, f + i);
                lua_seti(L, tt, t + i);
            }
        }
    }
    lua_pushvalue(L, tt);
    return 1;
}

static int sandboxed_concat(lua_State *L)
{
    lua_Integer last = length_of(L, 1, TAB_R);
    size_t lsep;
    const char *sep = luaL_optlstring(L, 2, "", &lsep);
    lua_Integer i = luaL_optinteger(L, 3, 1);
    last = luaL_optinteger(L, 4, last);
    if (i <= last)
        charge(L, (lua_Unsigned)last - (lua_Unsigned)i + 1u, "table.concat");
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    for (; i <= last; i++) {
        lua_geti(L, 1, i);
        if (!lua_isstring(L, -1))
            return luaL_error(L, "invalid value (%s) at index %I in table for 'concat'",
                              luaL_typename(L, -1), (lua_Integer)i);
        luaL_addvalue(&b);
        if (i < last)
            luaL_addlstring(&b, sep, lsep);
        if (i == LUA_MAXINTEGER)
            break;
    }
    luaL_pushresult(&b);
    return 1;
}

static int sandboxed_unpack(lua_State *L)
{
    lua_Integer i = luaL_optinteger(L, 2, 1);
    lua_Integer e = luaL_opt(L, luaL_checkinteger, 3, luaL_len(L, 1));
    if (i > e)
        return 0;
    lua_Unsigned n = (lua_Unsigned)e - i;
    if (n >= (unsigned int)INT_MAX || !lua_checkstack(L, (int)(++n)))
        return luaL_error(L, "too many results to unpack");
    charge(L, n, "table.unpack");
    for (; i < e; i++)
        lua_geti(L, 1, i);
    lua_geti(L, 1, e);
    return (int)n;
}

/* Whether the value at a sorts before the one at b, by the comparator at 2 or by <. */
static bool sorts_before(lua_State *L, int a, int b)
{
    if (lua_isnil(L, 2))
        return lua_compare(L, a, b, LUA_OPLT);
    lua_pushvalue(L, 2);
    lua_pushvalue(L, a < 0 ? a - 1 : a);
    lua_pushvalue(L, b < 0 ? b - 2 : b);
    lua_call(L, 2, 1);
    bool yes = lua_toboolean(L, -1);
    lua_pop(L, 1);
    return yes;
}

static int sandboxed_sort(lua_State *L)
{
    lua_Integer n = length_of(L, 1, TAB_R | TAB_W);
    if (n < 2)
        return 0;
    luaL_argcheck(L, n < INT_MAX, 1, "array too big");
    if (!lua_isnoneornil(L, 2))
        luaL_checktype(L, 2, LUA_TFUNCTION);
    lua_settop(L, 2);
    lua_Unsigned rounds = 1;
    for (lua_Integer w = 1; w < n; w *= 2)
        rounds++;
    charge(L, (lua_Unsigned)n * rounds, "table.sort");
    int from = 3, to = 4;
    lua_createtable(L, (int)n, 0);
    lua_createtable(L, (int)n, 0);
    for (lua_Integer i = 1; i <= n; i++) {
        lua_geti(L, 1, i);
        lua_rawseti(L, from, i);
    }
    for (lua_Integer width = 1; width < n; width *= 2) { /* bottom-up, stable */
        for (lua_Integer lo = 1; lo <= n; lo += 2 * width) {
            lua_Integer mid = lo + width - 1 < n ? lo + width - 1 : n;
            lua_Integer hi = lo + 2 * width - 1 < n ? lo + 2 * width - 1 : n;
            lua_Integer i = lo, j = mid + 1, k = lo;
            while (i <= mid || j <= hi) {
                bool right = i > mid;
                if (!right && j <= hi) {
                    lua_rawgeti(L, from, j);
                    lua_rawgeti(L, from, i);
                    right = sorts_before(L, -2, -1); /* only if strictly before: stable */
                    lua_pop(L, 2);
                }
                lua_rawgeti(L, from, right ? j++ : i++);
                lua_rawseti(L, to, k++);
            }
        }
        int swap = from;
        from = to;
        to = swap;
    }
    for (lua_Integer i = 1; i <= n; i++) {
        lua_rawgeti(L, from, i);
        lua_seti(L, 1, i);
    }
    return 0;
}

void sandbox_open_tables(lua_State *L)
{
    static const luaL_Reg functions[] = {
        { "insert", sandboxed_insert }, { "remove", sandboxed_remove },
        { "move", sandboxed_move }, { "concat", sandboxed_concat },
        { "unpack", sandboxed_unpack }, { "sort", sandboxed_sort },
        { NULL, NULL },
    };
    lua_getglobal(L, "table");
    luaL_setfuncs(L, functions, 0);
    lua_pop(L, 1);
}
