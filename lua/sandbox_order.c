/* Deterministic pairs, next and tostring (see sandbox.h).
 *
 * Lua 5.4 seeds its string hashes per state (from the clock and addresses), and hashes
 * tables and functions by address, so the order of pairs and next changes from run to
 * run, and tostring({}) prints an address.  Here they walk keys in one fixed order:
 *
 *   numbers ascending (integers and floats by value), then strings (byte by byte, a
 *   prefix first), then false and true, then every other key (tables, functions,
 *   coroutines) by its object number.
 *
 * An object is numbered 1, 2, 3, ... in the state when it is first needed: an fs
 * constructor's table as it is made, any other object when tostring prints it or when
 * it must be ordered as a key.  Two objects never numbered before that turn up as keys
 * of one table at once cannot be ordered (nothing tells them apart but their
 * addresses): pairs and next refuse, with a message, rather than pick an order that
 * differs from run to run.  tostring prints "table: #3"; string.format's %s does the
 * same, and %p (an address) is refused.
 *
 * pairs walks a sorted copy of the keys taken when it is called: a value removed during
 * the loop is skipped, a key added is not visited (Lua leaves both undefined).  next
 * keeps such a copy for the last table it walked, so a loop of next calls costs what
 * pairs does.  Work is charged to the budget (sandbox_charge): a key for each pass of
 * next over a table, n log n for a sort. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>

#include "lua/sandbox.h"
#include "lua/sandbox_internal.h"

#define NUMBERS_KEY "fleetsim.numbers" /* registry: object -> its number, weak keys */
/* registry: the last table next walked past its first key, { walked = { the table }
 * (weak), keys = its keys sorted, at = the position of the key last returned } */
#define CURSOR_KEY "fleetsim.next_cursor"

enum { KEY_NUMBER, KEY_STRING, KEY_BOOLEAN, KEY_OBJECT };

typedef struct key_record {
    int kind;
    bool is_integer;
    lua_Integer integer;
    lua_Number number;
    const char *string;  /* held by the table of keys */
    size_t length;
    uint64_t object;     /* an object's number, or a boolean's value */
    lua_Integer slot;    /* in the table of keys */
} key_record;

/* The number of the object at index, 0 if it has none and assign is false. */
static uint64_t object_number(lua_State *L, int index, bool assign)
{
    index = lua_absindex(L, index);
    lua_getfield(L, LUA_REGISTRYINDEX, NUMBERS_KEY);
    lua_pushvalue(L, index);
    uint64_t number = 0;
    if (lua_rawget(L, -2) == LUA_TNUMBER)
        number = (uint64_t)lua_tointeger(L, -1);
    lua_pop(L, 1);
    if (!number && assign) {
        number = sandbox_next_object_number(L);
        lua_pushvalue(L, index);
        lua_pushinteger(L, (lua_Integer)number);
        lua_rawset(L, -3);
    }
    lua_pop(L, 1);
    return number;
}

static int kind_of(lua_State *L, int index)
{
    switch (lua_type(L, index)) {
    case LUA_TNUMBER: return KEY_NUMBER;
    case LUA_TSTRING: return KEY_STRING;
    case LUA_TBOOLEAN: return KEY_BOOLEAN;
    default: return KEY_OBJECT;
    }
}

/* The record of the key at index; objects get no number here (object stays 0 for one
 * that has none). */
static void describe_key(lua_State *L, int index, lua_Integer slot, key_record *r)
{
    memset(r, 0, sizeof *r);
    r->kind = kind_of(L, index);
    r->slot = slot;
    if (r->kind == KEY_NUMBER) {
        r->is_integer = lua_isinteger(L, index);
        r->integer = lua_tointeger(L, index);
        r->number = lua_tonumber(L, index);
    } else if (r->kind == KEY_STRING) {
        r->string = lua_tolstring(L, index, &r->length); /* a string: no conversion */
    } else if (r->kind == KEY_BOOLEAN) {
        r->object = (uint64_t)lua_toboolean(L, index);
    } else {
        r->object = object_number(L, index, false);
    }
}

/* i against f, exactly (f is never NaN: keys are not). */
static int compare_integer_float(lua_Integer i, lua_Number f)
{
    if (f >= 9223372036854775808.0)
        return -1;
    if (f < -9223372036854775808.0)
        return 1;
    lua_Number whole = floor(f);
    lua_Integer w = (lua_Integer)whole;
    if (i != w)
        return i < w ? -1 : 1;
    return f > whole ? -1 : 0;
}

static int compare_keys(const key_record *a, const key_record *b)
{
    if (a->kind != b->kind)
        return a->kind < b->kind ? -1 : 1;
    switch (a->kind) {
    case KEY_NUMBER:
        if (a->is_integer && b->is_integer)
            return a->integer < b->integer ? -1 : a->integer > b->integer;
        if (a->is_integer)
            return compare_integer_float(a->integer, b->number);
        if (b->is_integer)
            return -compare_integer_float(b->integer, a->number);
        return a->number < b->number ? -1 : a->number > b->number;
    case KEY_STRING: {
        int c = memcmp(a->string, b->string, a->length < b->length ? a->length : b->length);
        if (c)
            return c < 0 ? -1 : 1;
        return a->length < b->length ? -1 : a->length > b->length;
    }
    default: /* booleans and objects: by value, by number */
        return a->object < b->object ? -1 : a->object > b->object;
    }
}

static int compare_records(const void *a, const void *b) { return compare_keys(a, b); }

static int unorderable(lua_State *L, const char *function)
{
    return luaL_error(L, "%s: the table has two or more keys that are tables, functions or "
                      "coroutines never ordered before, so no order of them would be the same "
                      "from run to run: use names or numbers as keys, or a list", function);
}

/* log2(n) + 1, for the charge of a sort. */
static uint64_t sort_factor(uint64_t n)
{
    uint64_t f = 1;
    while (n >>= 1)
        f++;
    return f;
}

/* ---- next ------------------------------------------------------------------------- */

static void push_sorted_keys(lua_State *L, int t, const char *what);

/* The cursor's table of walked tables, pushed (its [1]: the table walked, weak). */
static int push_walked(lua_State *L, int cursor)
{
    lua_getfield(L, cursor, "walked");
    return lua_gettop(L);
}

/* next(t, k) for k not nil, from the cursor: pushes the key after k (nil at the end) and
 * returns true, or false when k is not a key of the copy (the caller then scans). */
static bool next_from_cursor(lua_State *L)
{
    lua_getfield(L, LUA_REGISTRYINDEX, CURSOR_KEY);
    int cursor = lua_gettop(L);
    int walked = push_walked(L, cursor);
    bool same = lua_rawgeti(L, walked, 1) == LUA_TTABLE && lua_rawequal(L, -1, 1);
    lua_settop(L, walked);
    if (!same) { /* a new copy for t: n log n, once per walk */
        lua_pushvalue(L, 1);
        lua_rawseti(L, walked, 1);
        push_sorted_keys(L, 1, "next");
        lua_setfield(L, cursor, "keys");
        lua_pushinteger(L, 0);
        lua_setfield(L, cursor, "at");
    }
    if (lua_getfield(L, cursor, "keys") != LUA_TTABLE) {
        lua_settop(L, cursor - 1);
        return false;
    }
    int keys = lua_gettop(L);
    lua_getfield(L, cursor, "at");
    lua_Integer at = lua_tointeger(L, -1);
    lua_pop(L, 1);
    if (lua_rawgeti(L, keys, at) == LUA_TNIL || !lua_rawequal(L, -1, 2)) {
        /* k is not the key returned last: find it (a loop started again, or two loops) */
        lua_Integer lo = 1, hi = (lua_Integer)lua_rawlen(L, keys);
        key_record want, got;
        describe_key(L, 2, 0, &want);
        if (want.kind == KEY_OBJECT && !want.object) {
            lua_settop(L, cursor - 1);
            return false;
        }
        at = 0;
        while (lo <= hi) {
            lua_Integer mid = lo + (hi - lo) / 2;
            lua_rawgeti(L, keys, mid);
            describe_key(L, -1, 0, &got);
            if (got.kind == KEY_OBJECT && !got.object)
                got.object = object_number(L, -1, true);
            int c = compare_keys(&got, &want);
            lua_pop(L, 1);
            if (c == 0) {
                at = mid;
                break;
            }
            if (c < 0)
                lo = mid + 1;
            else
                hi = mid - 1;
        }
        if (!at) {
            lua_settop(L, cursor - 1);
            return false;
        }
    }
    lua_settop(L, keys);
    for (;;) { /* the next key whose value is still there */
        if (lua_rawgeti(L, keys, ++at) == LUA_TNIL)
            break;
        lua_pushvalue(L, -1);
        if (lua_rawget(L, 1) != LUA_TNIL) {
            lua_pop(L, 1);
            break;
        }
        lua_pop(L, 2);
    }
    lua_pushinteger(L, at);
    lua_setfield(L, cursor, "at");
    lua_replace(L, cursor);
    lua_settop(L, cursor);
    return true;
}

/* next(t, k): the smallest key after k in the order (the smallest if k is nil) and its
 * value, or nil.  One pass over the table.  Objects never numbered come after every
 * numbered one (they will get the next numbers), so one of them is the answer only when
 * nothing else is left, and only if it is the only one. */
static int ordered_next(lua_State *L)
{
    luaL_checktype(L, 1, LUA_TTABLE);
    lua_settop(L, 2);
    bool first = lua_isnil(L, 2);
    if (first) { /* t's walk starts again: a later call copies its keys as they are now */
        lua_getfield(L, LUA_REGISTRYINDEX, CURSOR_KEY);
        int walked = push_walked(L, lua_gettop(L));
        lua_rawgeti(L, walked, 1);
        if (lua_rawequal(L, -1, 1)) {
            lua_pushnil(L);
            lua_rawseti(L, walked, 1);
        }
        lua_settop(L, 2);
    }
    if (!first && next_from_cursor(L)) { /* a walk: from the sorted copy */
        if (lua_isnil(L, 3))
            return 1;
        lua_pushvalue(L, 3);
        lua_rawget(L, 1);
        return 2;
    }
    key_record after, best, r;
    if (!first) {
        describe_key(L, 2, 0, &after);
        if (after.kind == KEY_OBJECT && !after.object)
            after.object = object_number(L, 2, true);
    }
    lua_pushnil(L); /* 3: the best key after k so far */
    lua_pushnil(L); /* 4: an object never numbered */
    bool found = false;
    int unnumbered = 0;
    uint64_t keys = 0;
    lua_pushnil(L);
    while (lua_next(L, 1)) {
        lua_pop(L, 1);
        keys++;
        describe_key(L, -1, 0, &r);
        if (r.kind == KEY_OBJECT && !r.object) {
            unnumbered++;
            lua_pushvalue(L, -1);
            lua_replace(L, 4);
        } else if ((first || compare_keys(&r, &after) > 0)
                   && (!found || compare_keys(&r, &best) < 0)) {
            best = r;
            found = true;
            lua_pushvalue(L, -1);
            lua_replace(L, 3);
        }
    }
    sandbox_charge(L, keys, "next");
    if (!found && unnumbered > 1)
        return unorderable(L, "next");
    if (!found && unnumbered == 0) {
        lua_pushnil(L);
        return 1;
    }
    if (!found) {
        object_number(L, 4, true);
        lua_replace(L, 3);
    }
    lua_settop(L, 3);
    lua_pushvalue(L, 3);
    lua_rawget(L, 1);
    return 2;
}

/* ---- pairs ------------------------------------------------------------------------ */

/* The loop's iterator: upvalue 1 the sorted keys, 2 the position reached. */
static int snapshot_step(lua_State *L)
{
    lua_Integer at = lua_tointeger(L, lua_upvalueindex(2));
    for (;;) {
        if (lua_rawgeti(L, lua_upvalueindex(1), ++at) == LUA_TNIL)
            return 1; /* the end: nil */
        lua_pushvalue(L, -1);
        if (lua_rawget(L, 1) != LUA_TNIL) { /* skipped if removed during the loop */
            lua_pushinteger(L, at);
            lua_replace(L, lua_upvalueindex(2));
            return 2;
        }
        lua_pop(L, 2);
    }
}

/* Pushes a list of the keys of the table at index t, sorted (objects numbered as
 * needed, refused when two never numbered would have to be ordered); what names the
 * caller in the message. */
static void push_sorted_keys(lua_State *L, int t, const char *what)
{
    lua_Integer n = 0;
    lua_pushnil(L);
    while (lua_next(L, t)) {
        lua_pop(L, 1);
        n++;
    }
    sandbox_charge(L, (uint64_t)n * sort_factor((uint64_t)n), what);
    lua_createtable(L, (int)(n < INT32_MAX ? n : 0), 0); /* the keys, in table order */
    int keys = lua_gettop(L);
    key_record *records = lua_newuserdatauv(L, (size_t)(n ? n : 1) * sizeof *records, 0);
    lua_Integer count = 0, unnumbered = 0, slot_of_unnumbered = 0;
    lua_pushnil(L);
    while (count < n && lua_next(L, t)) {
        lua_pop(L, 1);
        lua_pushvalue(L, -1);
        lua_rawseti(L, keys, ++count);
        describe_key(L, -1, count, &records[count - 1]);
        if (records[count - 1].kind == KEY_OBJECT && !records[count - 1].object) {
            unnumbered++;
            slot_of_unnumbered = count;
        }
    }
    lua_settop(L, keys + 1);
    if (unnumbered > 1)
        unorderable(L, what);
    if (unnumbered == 1) {
        lua_rawgeti(L, keys, slot_of_unnumbered);
        records[slot_of_unnumbered - 1].object = object_number(L, -1, true);
        lua_pop(L, 1);
    }
    qsort(records, (size_t)count, sizeof *records, compare_records);
    lua_createtable(L, (int)(count < INT32_MAX ? count : 0), 0);
    for (lua_Integer i = 0; i < count; i++) {
        lua_rawgeti(L, keys, records[i].slot);
        lua_rawseti(L, -2, i + 1);
    }
    lua_replace(L, keys);
    lua_settop(L, keys);
}

static int ordered_pairs(lua_State *L)
{
    luaL_checkany(L, 1);
    if (luaL_getmetafield(L, 1, "__pairs") != LUA_TNIL) { /* as Lua's pairs */
        lua_pushvalue(L, 1);
        lua_call(L, 1, 3);
        return 3;
    }
    luaL_checktype(L, 1, LUA_TTABLE);
    lua_settop(L, 1);
    push_sorted_keys(L, 1, "pairs");
    lua_pushinteger(L, 0);
    lua_pushcclosure(L, snapshot_step, 2);
    lua_pushvalue(L, 1);
    lua_pushnil(L);
    return 3;
}

/* ---- tostring and string.format --------------------------------------------------- */

const char *sandbox_tostring(lua_State *L, int index, size_t *length)
{
    index = lua_absindex(L, index);
    if (luaL_callmeta(L, index, "__tostring")) {
        if (!lua_isstring(L, -1))
            luaL_error(L, "'__tostring' must return a string");
        return lua_tolstring(L, -1, length);
    }
    switch (lua_type(L, index)) {
    case LUA_TNUMBER: case LUA_TSTRING: case LUA_TBOOLEAN: case LUA_TNIL:
        return luaL_tolstring(L, index, length);
    default: {
        uint64_t number = object_number(L, index, true);
        int name = luaL_getmetafield(L, index, "__name"); /* pushed unless nil */
        lua_pushfstring(L, "%s: #%I", name == LUA_TSTRING ? lua_tostring(L, -1)
                                                          : luaL_typename(L, index),
                        (lua_Integer)number);
        if (name != LUA_TNIL)
            lua_remove(L, -2);
        return lua_tolstring(L, -1, length);
    }
    }
}

uint64_t sandbox_object_number(lua_State *L, int index) { return object_number(L, index, true); }

static int ordered_tostring(lua_State *L)
{
    luaL_checkany(L, 1);
    sandbox_tostring(L, 1, NULL);
    return 1;
}

/* string.format with %s of objects printed as tostring does, and %p refused. */
static int ordered_format(lua_State *L)
{
    size_t length;
    const char *format = luaL_checklstring(L, 1, &length);
    const char *end = format + length;
    int arg = 1, top = lua_gettop(L);
    for (const char *p = format; p < end; p++) {
        if (*p != '%')
            continue;
        if (++p < end && *p == '%')
            continue;
        p += strspn(p, "-+ #0123456789.");
        if (p >= end)
            break; /* the original says what is wrong */
        if (++arg > top)
            break;
        if (*p == 'p')
            return luaL_error(L, "invalid conversion '%%p' to 'format': an address changes "
                              "from run to run (not in scenario files)");
        if (*p == 's' && lua_type(L, arg) != LUA_TSTRING && lua_type(L, arg) != LUA_TNUMBER) {
            sandbox_tostring(L, arg, NULL);
            lua_replace(L, arg);
        }
    }
    return sandbox_call_original(L);
}

void sandbox_open_order(lua_State *L)
{
    lua_newtable(L);
    lua_createtable(L, 0, 1);
    lua_pushliteral(L, "k");
    lua_setfield(L, -2, "__mode");
    lua_setmetatable(L, -2);
    lua_setfield(L, LUA_REGISTRYINDEX, NUMBERS_KEY);
    lua_createtable(L, 0, 3); /* the cursor */
    lua_newtable(L);
    lua_createtable(L, 0, 1);
    lua_pushliteral(L, "v");
    lua_setfield(L, -2, "__mode");
    lua_setmetatable(L, -2);
    lua_setfield(L, -2, "walked");
    lua_setfield(L, LUA_REGISTRYINDEX, CURSOR_KEY);
    lua_pushcfunction(L, ordered_next);
    lua_setglobal(L, "next");
    lua_pushcfunction(L, ordered_pairs);
    lua_setglobal(L, "pairs");
    lua_pushcfunction(L, ordered_tostring);
    lua_setglobal(L, "tostring");
    lua_getglobal(L, "string");
    lua_getfield(L, -1, "format");
    lua_pushcclosure(L, ordered_format, 1);
    lua_setfield(L, -2, "format");
    lua_pop(L, 1);
}
