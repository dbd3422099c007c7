/* The parts of the sandbox (lua/sandbox.h), each a file of its own: its struct, shared by
 * lua/sandbox.c and lua/sandbox_rewind.c, and the functions that replace or guard parts
 * of Lua's standard library in a new state.  Each sandbox_open_* runs once per state,
 * after the libraries are open and before any scenario code. */
#ifndef FLEETSIM_LUA_SANDBOX_INTERNAL_H
#define FLEETSIM_LUA_SANDBOX_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <lua.h>

#include "lua/sandbox.h"

/* A function the run calls later, and where to find it again after a rewind. */
typedef struct binding {
    uint64_t seq;  /* its owner's constructor call (0: an untagged table) */
    char *key;
    int ref;       /* in the current state's registry */
} binding;

struct sandbox {
    lua_State *L;
    bool unsafe;
    size_t used_bytes;      /* by the current state */
    size_t kept_bytes;      /* outside it: the file's text, bindings, attachments */
    size_t alloc_uncharged; /* bytes allocated not yet charged as instructions */
    bool memory_exhausted;
    uint64_t instructions;
    uint64_t instruction_limit;
    bool exhausted; /* over the limit: every instruction raises until the budget resets */
    bool cpu_watched;   /* the hook has looked at the CPU clock since the budget was set */
    double cpu_start_s; /* ... and read this (lua/sandbox.c, watch_cpu) */
    char why[512];  /* what it raises */
    uint64_t constructed;   /* API constructor calls in the current state */
    uint64_t objects;       /* objects numbered in the current state (sandbox_order.c) */
    int closing_depth;      /* nested coroutine closes (sandbox_coroutine.c) */
    char *file;             /* the scenario file's path, "" before one is read */
    char *source;           /* its text, as loaded */
    size_t source_size, source_kept;
    /* rewinds */
    bool rewindable, rewind_wanted, broken;
    char **sets;
    size_t nsets;
    sandbox_replay_fn replay;
    binding *bindings;
    size_t nbindings;
    struct { void *object; const char *name; } *attached;
    size_t nattached;
    unsigned rewinds;
};

/* A new state for sb (the old one closed first by the caller); -1 if out of memory. */
int sandbox_open_state(sandbox *sb);

/* n bytes kept outside the state, counted against the cap: 0, or -1 (nothing taken). */
int sandbox_keep_bytes(sandbox *sb, size_t n);

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

/* The functions whose work grows with a string's length or the heap (utf8.len, tonumber,
 * collectgarbage, ...), charged for it, and those that allocate their result looked at
 * as they return (lua/sandbox_scan.c): sandboxed states only, after sandbox_open_order. */
void sandbox_open_scans(lua_State *L);

/* Bytes allocated or read for one instruction of the budget: about what copying or
 * reading them costs against an instruction. */
#define SANDBOX_BYTES_PER_INSTRUCTION 16

/* Raises the budget's message at the caller's line if the budget is spent (work charged
 * since the hook last looked, such as an allocation); nothing in an unsafe state. */
void sandbox_check_budget(lua_State *L);

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
