/* A scenario's function that the run calls back while it simulates: a routing function
 * (lua/router.h), a scaling policy (lua/scaler.h), a rate function (lua/rate_function.h).
 * Each call has a budget of instructions of its own in the sandbox and runs under
 * lua_pcall, so that an error, an endless loop or a memory error stops the run with a
 * message that names where the function is defined and its owner:
 * "fleet.lua:9: workload chat: the routing function failed: fleet.lua:12: boom". */
#ifndef FLEETSIM_LUA_CALLBACK_H
#define FLEETSIM_LUA_CALLBACK_H

#include <stddef.h>

#include <lua.h>

/* Instructions one call may use before it counts as an endless loop. */
#define CALLBACK_CALL_INSTRUCTIONS 1000000u

typedef struct callback {
    lua_State *L;
    int function_ref;  /* the function, in the registry */
    const char *kind;  /* the owner's kind, "workload" or "pool" (a literal) */
    char name[64];     /* the owner's name ("chat"; longer names are cut) */
    const char *what;  /* "routing function" (a literal) */
    char where[320];   /* "fleet.lua:12: ", the line that defines the function, or "" */
} callback;

/* A new userdata of `size` bytes, zero-filled, for a wrapper struct whose first member
 * is a callback, set up for the function at fn_index; kind and what are literals (kept,
 * not copied).  The userdata lives as long as the state (anchored in its registry, not
 * left on the stack), and so does the function.  Out of memory raises a Lua error, as
 * lua_newuserdatauv does. */
void *callback_create(lua_State *L, int fn_index, size_t size, const char *kind,
                      const char *name, const char *what);

/* Pushes the arguments of one call (above the function) and returns how many.  It runs
 * inside the protected call, so that a memory error while filling tables is caught. */
typedef int (*callback_push_fn)(lua_State *L, void *arg);

/* Calls the function with a fresh budget of CALLBACK_CALL_INSTRUCTIONS and the arguments
 * push(L, arg) pushes.  0 with its one result on top of the stack (the caller checks it
 * and pops it), or -1 with "<where><kind> <name>: the <what> failed: <Lua's message>"
 * (or "... has no stack left") in err and the stack as it was.  Messages about a wrong
 * result start with cb->where too. */
int callback_call(const callback *cb, callback_push_fn push, void *arg, char *err,
                  size_t err_size);

/* The value at index for a message about a wrong result: a number as "%.15g", nil as
 * "nothing", anything else by its type name. */
const char *callback_describe(lua_State *L, int index, char *buf, size_t size);

#endif
