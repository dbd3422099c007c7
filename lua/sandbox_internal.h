/* The parts of the sandbox (lua/sandbox.h), each a file of its own, that replace or guard
 * functions of Lua's standard library in a new state.  Each sandbox_open_* runs once per
 * state, after the libraries are open and before any scenario code. */
#ifndef FLEETSIM_LUA_SANDBOX_INTERNAL_H
#define FLEETSIM_LUA_SANDBOX_INTERNAL_H

#include <stdint.h>

#include <lua.h>

/* Deterministic pairs, next and tostring, and string.format's %s and %p
 * (lua/sandbox_order.c): in both modes. */
void sandbox_open_order(lua_State *L);

/* tostring without addresses: the text for the value at index pushed (lua/sandbox_order.c). */
const char *sandbox_tostring(lua_State *L, int index, size_t *length);

/* print as a marked, escaped line on stderr (lua/sandbox_print.c): in both modes. */
void sandbox_open_print(lua_State *L);

/* coroutine.close with a bound on nesting (lua/sandbox_coroutine.c): in both modes. */
void sandbox_open_coroutines(lua_State *L);

/* The table functions that walk a list, charged per element (lua/sandbox_table.c):
 * sandboxed states only. */
void sandbox_open_tables(lua_State *L);

/* string.find, match, gmatch and gsub, charged for the matcher's work
 * (lua/sandbox_pattern.c): sandboxed states only. */
void sandbox_open_patterns(lua_State *L);

/* Closes coroutines nested in __close handlers, counted (lua/sandbox_coroutine.c). */
int *sandbox_closing_depth(lua_State *L);

/* The number of the object at index in the order of lua/sandbox_order.c, given now if it
 * has none. */
uint64_t sandbox_object_number(lua_State *L, int index);

/* A number for an object that has none yet in this state: 1, 2, 3, ... in the order
 * asked (lua/sandbox_order.c keeps the numbers). */
uint64_t sandbox_next_object_number(lua_State *L);

/* Calls the C function in upvalue 1 in this very frame, so that its errors name the
 * scenario's line and the function as the scenario called it ("bad argument #1 to
 * 'insert'"), as if it had been called directly.  Its upvalues must not matter to it:
 * the standard library's functions have none. */
int sandbox_call_original(lua_State *L);

#endif
