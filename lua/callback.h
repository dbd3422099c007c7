/* A scenario's function that the run calls back while it simulates: a routing function
 * (lua/router.h), a scaling policy (lua/scaler.h), a rate function (lua/rate_function.h).
 * Each call has a budget of instructions of its own in the sandbox and runs under
 * lua_pcall, so that an error, an endless loop or a memory error stops the run with a
 * message that names where the function is defined and its owner:
 * "fleet.lua:9: workload chat: the routing function failed: fleet.lua:12: boom".
 *
 * The first call of each replication finds the sandbox's state made again from the
 * file (sandbox_enter, after the replication's sandbox_rewind), so no replication sees
 * what the function kept from an earlier one; the callback itself lives outside the
 * state, attached to the sandbox, and finds its function there again. */
#ifndef FLEETSIM_LUA_CALLBACK_H
#define FLEETSIM_LUA_CALLBACK_H

#include <stddef.h>

#include <lua.h>

#include "lua/sandbox.h"

/* Instructions one call may use before it counts as an endless loop. */
#define CALLBACK_CALL_INSTRUCTIONS 1000000u

/* Tables a callback reuses from call to call for its arguments. */
#define CALLBACK_TABLES 2

typedef struct callback {
    sandbox *sb;
    int function;      /* its binding in the sandbox (sandbox_bind_function) */
    const char *kind;  /* the owner's kind, "workload" or "pool" (a literal) */
    char name[64];     /* the owner's name ("chat"; longer names are cut) */
    const char *what;  /* "routing function" (a literal) */
    char where[320];   /* "fleet.lua:12: ", the line that defines the function, or "" */
    int tables[CALLBACK_TABLES]; /* registry references, valid in state tables_state */
    unsigned tables_state;       /* sandbox_rewinds() + 1 when they were made; 0: none */
} callback;

/* A new object of `size` bytes, zero-filled, for a wrapper struct whose first member is
 * a callback, set up for the function at key of the table at index owner (an object an
 * fs constructor made); kind and what are literals (kept, not copied).  It lives as
 * long as the sandbox (sandbox_attach).  Runs inside a protected call: raises a Lua
 * error if the value is not a function or memory is short. */
void *callback_create(lua_State *L, int owner, const char *key, size_t size,
                      const char *kind, const char *name, const char *what);

/* Pushes the arguments of one call (above the function) and returns how many.  It runs
 * inside the protected call, so that a memory error while filling tables is caught. */
typedef int (*callback_push_fn)(lua_State *L, void *arg);

/* For a callback_push_fn: pushes the callback's reusable table number `slot` (below
 * CALLBACK_TABLES), empty when new, and new after each rewind. */
void callback_push_table(lua_State *L, callback *cb, int slot);

/* Calls the function with a fresh budget of CALLBACK_CALL_INSTRUCTIONS and the arguments
 * push(L, arg) pushes.  0 with its one result on top of the stack of the sandbox's
 * current state (the caller checks it and pops it), or -1 with "<where><kind> <name>:
 * the <what> failed: <Lua's message>" (or "... has no stack left") in err and the stack
 * as it was.  Messages about a wrong result start with cb->where too. */
int callback_call(callback *cb, callback_push_fn push, void *arg, char *err, size_t err_size);

/* The state the last call ran in, where its result is. */
lua_State *callback_state(const callback *cb);

/* The value at index for a message about a wrong result: a number as "%.15g", nil as
 * "nothing", anything else by its type name. */
const char *callback_describe(lua_State *L, int index, char *buf, size_t size);

#endif
