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
 * the results (lua/sandbox_print.c), and a state can be rewound: made again from the
 * file's text, so that each replication starts from the same state (sandbox_rewind).
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
/* CPU seconds a budget allows, per million of its instructions and at least: the last
 * resort against work in Lua's own operations that no count sees (lua/sandbox.c). */
#define SANDBOX_CPU_S_PER_MILLION 0.1
#define SANDBOX_CPU_S_MIN 5.0

typedef struct sandbox sandbox;

/* A new state; NULL if out of memory.  sandbox_free closes it (NULL is fine), with every
 * object attached to it (sandbox_attach). */
sandbox *sandbox_create(bool unsafe);
void sandbox_free(sandbox *sb);

/* The current state.  A rewind replaces it: do not keep it across sandbox_enter. */
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

/* A message handler for lua_pcall running a scenario's code: the error's message with
 * a traceback.  An error raised with a value that is not a string (error({})) gets the
 * place of the Lua code that raised it and says what it was, as "file:line: ..." */
int sandbox_traceback(lua_State *L);

/* Whether the last error came from the memory cap (Lua only says "not enough memory"). */
bool sandbox_memory_exhausted(const sandbox *sb);

/* Reads the scenario file at path whole (the text is kept for sandbox_rewind, and counts
 * against the memory cap) and loads it as a chunk named "@path", as luaL_loadfilex does
 * (a byte-order mark and a first line starting with '#' are skipped, source text only).
 * A Lua status: LUA_OK with the chunk on the stack, or an error with its message there
 * (LUA_ERRFILE when the file cannot be read). */
int sandbox_load_file(sandbox *sb, const char *path);

/* The file sandbox_load_file read ("" before), for messages. */
const char *sandbox_file(const sandbox *sb);

/* ---- rewinding --------------------------------------------------------------------
 * A scenario's functions called during a run (a routing function, a scaling policy, a
 * rate function, a claim's verdict) can keep state: upvalues, globals, math.random's.
 * So that a replication does not see what an earlier one left, whichever process runs
 * it, the state is made again before each: the file's text is run again in a fresh
 * state, the overrides replayed, and each bound function found again. */

/* Replays the loader's overrides on the table the file returned (at index root) in a
 * rewound state; raises a Lua error, or returns 0, or -1 with the message in err. */
typedef int (*sandbox_replay_fn)(lua_State *L, int root, const char *const *sets,
                                 size_t nsets, char *err, size_t err_size);

/* Instructions all the rewinds of one state may take together: rewinds times what the
 * load took (the file, measured by the budget's count when this is called). */
#ifndef SANDBOX_REWIND_INSTRUCTIONS
#define SANDBOX_REWIND_INSTRUCTIONS 10000000000ull
#endif

/* Makes sb rewindable, for up to `rewinds` rewinds: after a rewind the kept text runs
 * again, then replay(sets) (the strings are copied).  0, or -1 with the message in err
 * ("file: ..."): out of memory, or rewinds times the instructions the load took so far
 * would pass SANDBOX_REWIND_INSTRUCTIONS. */
int sandbox_keep_for_rewinds(sandbox *sb, const char *const *sets, size_t nsets,
                             sandbox_replay_fn replay, unsigned rewinds, char *err,
                             size_t err_size);

/* Binds the function at key of the table at index owner (a table an fs constructor
 * made: after a rewind, the table the same constructor call makes is looked up) and
 * returns the binding's number for sandbox_push_function.  key may be a dotted path
 * through plain tables inside owner ("decode.routing").  Runs inside a protected call:
 * raises a Lua error if the value is not a function or memory is short. */
int sandbox_bind_function(lua_State *L, int owner, const char *key);

/* Pushes the value at the dotted path key inside the table at index owner ("routing",
 * "decode.routing", "groups.2.routing": a part of digits is a list's item), read raw;
 * nil where a part is missing or not a table.  Its type. */
int sandbox_get_path(lua_State *L, int owner, const char *key);

/* Pushes bound function `binding` of the current state. */
void sandbox_push_function(sandbox *sb, int binding);

/* Asks for a fresh state before the next sandbox_enter: called as each replication
 * starts (models/scenario.h: runtime_rewind), and before a verdict. */
void sandbox_rewind(sandbox *sb);

/* Call before running any of the scenario's code: makes the state again if a rewind was
 * asked for and Lua has run since the state was made (the load counts).  0, or -1 with
 * the message in err (the state is then unusable: every later enter fails too). */
int sandbox_enter(sandbox *sb, char *err, size_t err_size);

/* How many times the state was made again (for tests and measurements). */
unsigned sandbox_rewinds(const sandbox *sb);

/* `size` zero-filled bytes that live as long as sb, across rewinds (freed by
 * sandbox_free), for objects that the run holds while the state under them changes;
 * counted against the memory cap.  name: NULL, or a literal to find it again by (kept,
 * not copied).  NULL if out of memory. */
void *sandbox_attach(sandbox *sb, size_t size, const char *name);

/* The last object attached under name, or NULL. */
void *sandbox_attached(const sandbox *sb, const char *name);

/* Registry key of the table that maps every object made by an API constructor to
 * { kind = "dedicated", where = "file.lua:12: ", seq = n } (n: the constructor calls
 * made before it, plus one). */
#define SANDBOX_TAGS_KEY "fleetsim.tags"

#endif
