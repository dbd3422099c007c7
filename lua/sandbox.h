/* A Lua state for scenario files, which are code people pass around.
 *
 * Sandboxed (the default): only the base library (without dofile and loadfile, and with
 * load limited to source text), string, table, math (seeded with 0, so math.random is
 * deterministic), utf8 and coroutine; no io, os, debug or package, so no file access, no
 * processes, no C modules.  `require` finds the fleetsim API modules only.  Memory is
 * capped by the allocator and instructions by a count hook, each with a message saying
 * so.  Work that Lua's C library does in one call (pattern matching, table.move and the
 * other table functions that walk a list, allocating) is charged to the same budget of
 * instructions, before it is done (sandbox_charge).  Unsafe (for trusted files, `fleetsim
 * run --unsafe`): every standard library, no limits, and require falls back to Lua's own
 * for other modules.
 *
 * In both, what a scenario computes does not depend on the run: pairs, next and tostring
 * are deterministic (lua/sandbox_order.c), print writes a marked line to stderr, never to
 * the results (lua/sandbox_print.c).
 */
#ifndef FLEETSIM_LUA_SANDBOX_H
#define FLEETSIM_LUA_SANDBOX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <lua.h>

/* Overridable at build time only for the fuzzers (make fuzz), which lower the
 * instruction limit so that an endless loop costs them milliseconds, not seconds. */
#ifndef SANDBOX_MEMORY_LIMIT_BYTES
#define SANDBOX_MEMORY_LIMIT_BYTES ((size_t)256 << 20)
#endif
#ifndef SANDBOX_INSTRUCTION_LIMIT
#define SANDBOX_INSTRUCTION_LIMIT 200000000ull
#endif

typedef struct sandbox sandbox;

/* A new state; NULL if out of memory.  sandbox_free closes it (NULL is fine). */
sandbox *sandbox_create(bool unsafe);
void sandbox_free(sandbox *sb);

/* The current state. */
lua_State *sandbox_state(sandbox *sb);

/* The sandbox a state belongs to. */
sandbox *sandbox_of(lua_State *L);

/* Restarts the instruction count with a new limit (0: the default); for calls into a
 * scenario's functions during a run, each with a budget of its own. */
void sandbox_set_instruction_budget(sandbox *sb, uint64_t instructions);

/* Instructions run since the budget was last set (counted in steps of the hook's
 * interval, so to about 10,000). */
uint64_t sandbox_instructions_run(const sandbox *sb);

/* Counts `steps` of work done in C towards the instruction budget, before doing it: over
 * the budget, raises the budget's error saying that `what` ("string.find") was too much
 * work; from then on every instruction raises, as after the hook's error.  Nothing in
 * an unsafe state. */
void sandbox_charge(lua_State *L, uint64_t steps, const char *what);

/* Raises why, and from then on every instruction raises it too (until the budget is
 * reset), so that no pcall can catch it and go on: for what the sandbox refuses outright,
 * such as coroutine.close nested too deep. */
void sandbox_refuse(lua_State *L, const char *why);

/* Instructions left before the budget is spent (UINT64_MAX in an unsafe state). */
uint64_t sandbox_budget_left(lua_State *L);

/* Whether the last error came from the memory cap (Lua only says "not enough memory"). */
bool sandbox_memory_exhausted(const sandbox *sb);

/* Reads the scenario file at path whole (the text is kept, and counts against the memory
 * cap) and loads it as a chunk named "@path", as luaL_loadfilex does (a byte-order mark
 * and a first line starting with '#' are skipped, source text only).  A Lua status:
 * LUA_OK with the chunk on the stack, or an error with its message there (LUA_ERRFILE
 * when the file cannot be read). */
int sandbox_load_file(sandbox *sb, const char *path);

/* The file sandbox_load_file read ("" before), for messages. */
const char *sandbox_file(const sandbox *sb);

/* Registry key of the table that maps every object made by an API constructor to
 * { kind = "dedicated", where = "file.lua:12: " }. */
#define SANDBOX_TAGS_KEY "fleetsim.tags"

#endif
