/* A Lua state for scenario files, which are code people pass around.
 *
 * Sandboxed (the default): only the base library (without dofile and loadfile, and with
 * load limited to source text), string, table, math (seeded with 0, so math.random is
 * deterministic), utf8 and coroutine; no io, os, debug or package, so no file access, no
 * processes, no C modules.  `require` finds the fleetsim API modules only.  Memory is
 * capped by the allocator and instructions by a count hook, each with a message saying
 * so.  Unsafe (for trusted files, `fleetsim run --unsafe`): every standard library, no
 * limits, and require falls back to Lua's own for other modules.
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
lua_State *sandbox_state(sandbox *sb);

/* Restarts the instruction count with a new limit (0: the default); for calls into a
 * scenario's functions during a run, each with a budget of its own. */
void sandbox_set_instruction_budget(sandbox *sb, uint64_t instructions);

/* Instructions run since the budget was last set (counted in steps of the hook's
 * interval, so to about 10,000). */
uint64_t sandbox_instructions_run(const sandbox *sb);

/* Whether the last error came from the memory cap (Lua only says "not enough memory"). */
bool sandbox_memory_exhausted(const sandbox *sb);

/* Registry key of the table that maps every object made by an API constructor to
 * { kind = "dedicated", where = "file.lua:12: " }. */
#define SANDBOX_TAGS_KEY "fleetsim.tags"

#endif
