/* The scenario sandbox (see sandbox.h): the state, its limits and the file's text.
 * Rewinds are in lua/sandbox_rewind.c, the replaced library functions in the other
 * lua/sandbox_*.c. */
#include "lua/sandbox.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <string.h>
#include <time.h>

#include <lauxlib.h>
#include <lualib.h>

#include "lua/modules.h"
#include "lua/sandbox_internal.h"
#include "sim/closest.h"
#include "sim/plain_file.h"
#include "sim/version.h"

#define HOOK_EVERY 10000 /* instructions between two checks of the budget */

sandbox *sandbox_of(lua_State *L)
{
    void *ud;
    lua_getallocf(L, &ud);
    return ud;
}

/* Whether `more` bytes outside or inside the state would pass the cap. */
static bool over_cap(const sandbox *sb, size_t more)
{
    return !sb->unsafe && sb->used_bytes + sb->kept_bytes + more > SANDBOX_MEMORY_LIMIT_BYTES;
}

/* The allocator: counts bytes and refuses to pass the cap (Lua then raises a memory
 * error, which the caller recognises through sandbox_memory_exhausted).  Allocating and
 * filling memory is work the hook does not see (string.rep, a long concatenation): one
 * instruction is charged for every SANDBOX_BYTES_PER_INSTRUCTION bytes allocated. */
static void *limited_alloc(void *ud, void *ptr, size_t old_size, size_t new_size)
{
    sandbox *sb = ud;
    size_t old = ptr ? old_size : 0;
    if (new_size == 0) {
        free(ptr);
        sb->used_bytes -= old;
        return NULL;
    }
    if (new_size > old && over_cap(sb, new_size - old)) {
        sb->memory_exhausted = true;
        return NULL;
    }
    void *grown = realloc(ptr, new_size);
    if (!grown)
        return NULL;
    sb->used_bytes = sb->used_bytes - old + new_size;
    if (new_size > old && !sb->unsafe) { /* charged; the hook raises when over */
        sb->alloc_uncharged += new_size - old;
        sb->instructions += sb->alloc_uncharged / SANDBOX_BYTES_PER_INSTRUCTION;
        sb->alloc_uncharged %= SANDBOX_BYTES_PER_INSTRUCTION;
    }
    return grown;
}

static void instruction_hook(lua_State *L, lua_Debug *ar);

/* From now on every instruction raises why (NULL: the budget's message), so that a
 * pcall that catches the error cannot buy more time; until the budget is reset. */
static void spend_all(lua_State *L, sandbox *sb, const char *why)
{
    if (why)
        snprintf(sb->why, sizeof sb->why, "%s", why);
    else
        snprintf(sb->why, sizeof sb->why, "the scenario ran more than %llu million Lua "
                 "instructions (an endless loop?); a trusted file can lift the limit with "
                 "--unsafe", (unsigned long long)(sb->instruction_limit / 1000000));
    sb->exhausted = true;
    if (!sb->unsafe) { /* here, and in the main thread, which a coroutine returns to */
        lua_sethook(L, instruction_hook, LUA_MASKCOUNT, 1);
        lua_sethook(sb->L, instruction_hook, LUA_MASKCOUNT, 1);
    }
}

/* This thread's CPU seconds. */
static double thread_cpu_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* The last resort against work that neither the count nor a charge sees: Lua's own
 * operations on long strings (comparing two of 50 MB takes 2 ms, one instruction).  A
 * budget allows SANDBOX_CPU_S_PER_MILLION CPU seconds per million instructions, at least
 * SANDBOX_CPU_S_MIN: honest code runs 50 million instructions a second and more here (an
 * endless loop of tostring 57 million, its allocations charged), so only such a loop
 * meets it, under a sanitiser too.  The clock starts at the hook's first look after the
 * budget is set (a look at every reset would cost a system call per callback). */
static void watch_cpu(lua_State *L, sandbox *sb)
{
    double now = thread_cpu_s();
    if (!sb->cpu_watched) {
        sb->cpu_watched = true;
        sb->cpu_start_s = now;
        return;
    }
    double allowed = SANDBOX_CPU_S_PER_MILLION * (double)sb->instruction_limit / 1e6;
    if (allowed < SANDBOX_CPU_S_MIN)
        allowed = SANDBOX_CPU_S_MIN;
    if (now - sb->cpu_start_s <= allowed)
        return;
    char why[sizeof sb->why];
    snprintf(why, sizeof why, "the scenario's Lua ran %.0f s of CPU, past the %.0f s its budget "
             "of %.3g million Lua instructions allows: work inside Lua's own operations, which "
             "the count does not see (comparing or concatenating very long strings in a "
             "loop?); a trusted file can lift the limit with --unsafe", now - sb->cpu_start_s,
             allowed, (double)sb->instruction_limit / 1e6);
    spend_all(L, sb, why);
}

/* Raises the budget's message at the Lua code `level` up the stack (lua_error). */
static int raise_spent(lua_State *L, sandbox *sb, int level)
{
    luaL_where(L, level);
    lua_pushstring(L, sb->why);
    lua_concat(L, 2);
    return lua_error(L);
}

static void instruction_hook(lua_State *L, lua_Debug *ar)
{
    (void)ar;
    sandbox *sb = sandbox_of(L);
    sb->instructions += sb->exhausted ? 1 : HOOK_EVERY;
    if (sb->instructions > sb->instruction_limit && !sb->exhausted)
        spend_all(L, sb, NULL);
    if (!sb->exhausted && !sb->unsafe)
        watch_cpu(L, sb);
    if (sb->exhausted) /* level 0 in a hook: the line the scenario is at */
        raise_spent(L, sb, 0);
}

void sandbox_charge(lua_State *L, uint64_t steps, const char *what)
{
    sandbox *sb = sandbox_of(L);
    if (sb->unsafe)
        return;
    if (sb->exhausted)
        luaL_error(L, "%s", sb->why);
    uint64_t left = sandbox_budget_left(L);
    if (steps <= left) {
        sb->instructions += steps;
        return;
    }
    char why[sizeof sb->why];
    snprintf(why, sizeof why, "%s: more than %.3g steps of work in one call, past what is "
             "left of the sandbox's budget of %llu million Lua instructions; a trusted file "
             "can lift the limit with --unsafe", what, (double)steps,
             (unsigned long long)(sb->instruction_limit / 1000000));
    sb->instructions = sb->instruction_limit + 1;
    spend_all(L, sb, why);
    luaL_error(L, "%s", sb->why);
}

void sandbox_check_budget(lua_State *L)
{
    sandbox *sb = sandbox_of(L);
    if (sb->unsafe || (!sb->exhausted && sb->instructions <= sb->instruction_limit))
        return;
    if (!sb->exhausted)
        spend_all(L, sb, NULL);
    raise_spent(L, sb, 1); /* the Lua code that called the C function raising this */
}

void sandbox_refuse(lua_State *L, const char *why)
{
    sandbox *sb = sandbox_of(L);
    spend_all(L, sb, why);
    luaL_error(L, "%s", sb->why);
}

uint64_t sandbox_budget_left(lua_State *L)
{
    sandbox *sb = sandbox_of(L);
    if (sb->unsafe)
        return UINT64_MAX;
    return sb->instructions >= sb->instruction_limit ? 0
                                                     : sb->instruction_limit - sb->instructions;
}

/* load() that accepts source text only: binary chunks can crash the interpreter. */
static int text_only_load(lua_State *L)
{
    int n = lua_gettop(L);
    while (lua_gettop(L) < 3)
        lua_pushnil(L);
    lua_pushliteral(L, "t");
    lua_replace(L, 3);
    lua_pushvalue(L, lua_upvalueindex(1));
    lua_insert(L, 1);
    lua_call(L, n > 3 ? n : 3, LUA_MULTRET);
    return lua_gettop(L);
}

/* A constructor such as fs.dedicated: checks that its argument is a table and records
 * its kind, the file:line of the call and its number.  Constructors are C functions so
 * that `return fs.scenario { ... }`, a tail call, still has its caller's line: a tail
 * call into Lua would replace the scenario's frame. */
static int api_construct(lua_State *L)
{
    const char *kind = lua_tostring(L, lua_upvalueindex(1));
    if (!lua_istable(L, 1))
        return luaL_error(L, "fs.%s expects a table of fields, as in fs.%s { ... }, got %s",
                          kind, kind, luaL_typename(L, 1));
    lua_settop(L, 1);
    lua_getfield(L, LUA_REGISTRYINDEX, SANDBOX_TAGS_KEY);
    lua_pushvalue(L, 1);
    lua_createtable(L, 0, 3);
    lua_pushvalue(L, lua_upvalueindex(1));
    lua_setfield(L, -2, "kind");
    luaL_where(L, 1); /* the scenario line that called the constructor */
    lua_setfield(L, -2, "where");
    lua_pushinteger(L, (lua_Integer)++sandbox_of(L)->constructed);
    lua_setfield(L, -2, "seq");
    lua_rawset(L, -3);
    lua_pop(L, 1);
    sandbox_object_number(L, 1); /* ordered as a key by when it was made */
    return 1;
}

/* C.closest(word, names) -> the names word most likely meant, quoted and joined
 * ("fs.dedicated" or ...: closest_names_text), or nil. */
static int api_closest(lua_State *L)
{
    const char *word = luaL_checkstring(L, 1);
    luaL_checktype(L, 2, LUA_TTABLE);
    enum { MOST = 128 };
    const char *names[MOST + 1];
    size_t n = 0;
    /* each name stays on the stack while its pointer is used, so make room for them all:
     * a C function is only promised LUA_MINSTACK (20) slots */
    luaL_checkstack(L, MOST + 1, "closest: names");
    for (lua_Integer i = 1; n < MOST && lua_rawgeti(L, 2, i) == LUA_TSTRING; i++)
        names[n++] = lua_tostring(L, -1);
    names[n] = NULL;
    char text[512];
    if (closest_names_text(word, names, 0, text, sizeof text))
        lua_pushstring(L, text);
    else
        lua_pushnil(L);
    return 1;
}

/* __newindex of a catalog section (fs.devices, fs.models, fs.engines): tags a new entry
 * with the file:line of its assignment (as a constructor tags its table), so that the
 * checks after the file ran can say where the entry was written. */
static int record_entry(lua_State *L)
{
    lua_settop(L, 3);
    if (lua_istable(L, 3)) {
        lua_getfield(L, LUA_REGISTRYINDEX, SANDBOX_TAGS_KEY);
        if (lua_istable(L, -1)) {
            lua_pushvalue(L, 3);
            lua_createtable(L, 0, 2);
            lua_pushvalue(L, lua_upvalueindex(1));
            lua_setfield(L, -2, "kind");
            luaL_where(L, 1); /* the file's line that assigned the entry */
            lua_setfield(L, -2, "where");
            lua_rawset(L, -3);
        }
        lua_pop(L, 1);
    }
    lua_rawset(L, 1);
    return 0;
}

/* C.catalog_section(table, kind): the entries a file adds to table are tagged with their
 * line (record_entry), in a scenario's state as in a model file's; a table that has a
 * metatable already is left alone. */
static int api_catalog_section(lua_State *L)
{
    luaL_checktype(L, 1, LUA_TTABLE);
    luaL_checkstring(L, 2);
    if (!lua_getmetatable(L, 1)) {
        lua_createtable(L, 0, 1);
        lua_pushvalue(L, 2);
        lua_pushcclosure(L, record_entry, 1);
        lua_setfield(L, -2, "__newindex");
        lua_setmetatable(L, 1);
    }
    return 0;
}

/* C.constructor(kind) -> a constructor function for that kind. */
static int api_constructor(lua_State *L)
{
    luaL_checkstring(L, 1);
    lua_settop(L, 1);
    lua_pushcclosure(L, api_construct, 1);
    return 1;
}

/* require(name): fleetsim modules from the binary; others only when unsafe. */
static int sandbox_require(lua_State *L)
{
    const char *name = luaL_checkstring(L, 1);
    lua_getfield(L, LUA_REGISTRYINDEX, "fleetsim.loaded");
    if (lua_getfield(L, -1, name) != LUA_TNIL)
        return 1;
    lua_pop(L, 1);
    for (const lua_module_source *m = lua_module_sources; m->name; m++) {
        if (strcmp(m->name, name) != 0)
            continue;
        if (luaL_loadbufferx(L, m->source, m->length, m->chunkname, "t") != LUA_OK)
            return lua_error(L);
        lua_pushstring(L, name);
        lua_getfield(L, LUA_REGISTRYINDEX, "fleetsim.api");
        lua_call(L, 2, 1);
        lua_pushvalue(L, -1);
        lua_setfield(L, -3, name);
        if (!strcmp(name, "fleetsim.units") && lua_istable(L, -1)) {
            /* the loader's own copy of the parsers: a scenario may replace the fields of
             * the module table it sees, not these */
            lua_newtable(L);
            static const char *const parsers[] = { "duration", "size", "rate", "bandwidth" };
            for (int i = 0; i < 4; i++) {
                lua_pushstring(L, parsers[i]);
                lua_rawget(L, -3);
                lua_setfield(L, -2, parsers[i]);
            }
            lua_setfield(L, LUA_REGISTRYINDEX, "fleetsim.parsers");
        }
        return 1;
    }
    if (!lua_isnil(L, lua_upvalueindex(1))) { /* unsafe: Lua's own require */
        lua_pushvalue(L, lua_upvalueindex(1));
        lua_pushvalue(L, 1);
        lua_call(L, 1, LUA_MULTRET);
        return lua_gettop(L) - 2;
    }
    return luaL_error(L, "module '%s' is not available in the sandbox (scenarios may require "
                      "\"fleetsim\" and its modules; a trusted file can use --unsafe)", name);
}

/* setmetatable without finalizers: __gc runs when the state closes, where the
 * instruction hook no longer stops an endless loop. */
static int safe_setmetatable(lua_State *L)
{
    if (lua_istable(L, 2)) {
        lua_pushliteral(L, "__gc");
        if (lua_rawget(L, 2) != LUA_TNIL)
            return luaL_error(L, "finalizers (__gc) are not allowed in scenario files");
        lua_pop(L, 1);
    }
    return sandbox_call_original(L);
}

int sandbox_call_original(lua_State *L)
{
    lua_CFunction original = lua_tocfunction(L, lua_upvalueindex(1));
    return original(L);
}

static void open_safe_libraries(lua_State *L)
{
    static const luaL_Reg libs[] = {
        { LUA_GNAME, luaopen_base }, { LUA_STRLIBNAME, luaopen_string },
        { LUA_TABLIBNAME, luaopen_table }, { LUA_MATHLIBNAME, luaopen_math },
        { LUA_UTF8LIBNAME, luaopen_utf8 }, { LUA_COLIBNAME, luaopen_coroutine },
        { NULL, NULL },
    };
    for (const luaL_Reg *lib = libs; lib->func; lib++) {
        luaL_requiref(L, lib->name, lib->func, 1);
        lua_pop(L, 1);
    }
    lua_pushnil(L);
    lua_setglobal(L, "dofile");
    lua_pushnil(L);
    lua_setglobal(L, "loadfile");
    lua_getglobal(L, "load");
    lua_pushcclosure(L, text_only_load, 1);
    lua_setglobal(L, "load");
    lua_getglobal(L, "setmetatable");
    lua_pushcclosure(L, safe_setmetatable, 1);
    lua_setglobal(L, "setmetatable");
    sandbox_open_patterns(L);
    sandbox_open_tables(L);
}

/* The last resort for an error outside any protected call: a message, not an abort. */
static int on_panic(lua_State *L)
{
    const char *message = lua_tostring(L, -1);
    fprintf(stderr, "fleetsim: unrecoverable Lua error: %s\n", message ? message : "(none)");
    fflush(stderr);
    _exit(1);
}

/* The libraries, the API's helpers and the limits, in a new state of sb's (setup runs
 * under lua_pcall, so that a memory error is caught). */
static int setup_state(lua_State *L)
{
    sandbox *sb = sandbox_of(L);
    if (sb->unsafe)
        luaL_openlibs(L);
    else
        open_safe_libraries(L);
    sandbox_open_order(L);
    if (!sb->unsafe)
        sandbox_open_scans(L);
    sandbox_open_print(L);
    sandbox_open_coroutines(L);
    /* math.random is seeded from the clock by default: seed it for reproducible files */
    lua_getglobal(L, "math");
    lua_getfield(L, -1, "randomseed");
    lua_pushinteger(L, 0);
    lua_call(L, 1, 0);
    lua_pop(L, 1);

    lua_newtable(L); /* tags, weak keys */
    lua_createtable(L, 0, 1);
    lua_pushliteral(L, "k");
    lua_setfield(L, -2, "__mode");
    lua_setmetatable(L, -2);
    lua_setfield(L, LUA_REGISTRYINDEX, SANDBOX_TAGS_KEY);
    lua_newtable(L);
    lua_setfield(L, LUA_REGISTRYINDEX, "fleetsim.loaded");
    lua_createtable(L, 0, 4); /* the helpers the API modules receive */
    lua_pushcfunction(L, api_constructor);
    lua_setfield(L, -2, "constructor");
    lua_pushcfunction(L, api_catalog_section);
    lua_setfield(L, -2, "catalog_section");
    lua_pushcfunction(L, api_closest);
    lua_setfield(L, -2, "closest");
    lua_pushliteral(L, FLEETSIM_VERSION);
    lua_setfield(L, -2, "version");
    lua_setfield(L, LUA_REGISTRYINDEX, "fleetsim.api");

    if (sb->unsafe)
        lua_getglobal(L, "require");
    else
        lua_pushnil(L);
    lua_pushcclosure(L, sandbox_require, 1);
    lua_setglobal(L, "require");
    return 0;
}

int sandbox_open_state(sandbox *sb)
{
    sb->cpu_watched = false;
    sb->constructed = 0;
    sb->objects = 0;
    sb->closing_depth = 0;
    sb->L = lua_newstate(limited_alloc, sb);
    if (!sb->L)
        return -1;
    lua_State *L = sb->L;
    lua_atpanic(L, on_panic);
    lua_pushcfunction(L, setup_state);
    if (lua_pcall(L, 0, 0, 0) != LUA_OK) {
        lua_close(L);
        sb->L = NULL;
        return -1;
    }
    if (!sb->unsafe)
        lua_sethook(L, instruction_hook, LUA_MASKCOUNT, HOOK_EVERY);
    return 0;
}

sandbox *sandbox_create(bool unsafe)
{
    sandbox *sb = calloc(1, sizeof *sb);
    if (!sb)
        return NULL;
    sb->unsafe = unsafe;
    sb->instruction_limit = SANDBOX_INSTRUCTION_LIMIT;
    sb->file = strdup("");
    if (!sb->file || sandbox_open_state(sb) != 0) {
        free(sb->file);
        free(sb);
        return NULL;
    }
    return sb;
}

void sandbox_free(sandbox *sb)
{
    if (!sb)
        return;
    if (sb->L)
        lua_close(sb->L);
    for (size_t i = 0; i < sb->nbindings; i++)
        free(sb->bindings[i].key);
    free(sb->bindings);
    for (size_t i = 0; i < sb->nattached; i++)
        free(sb->attached[i].object);
    free(sb->attached);
    for (size_t i = 0; i < sb->nsets; i++)
        free(sb->sets[i]);
    free(sb->sets);
    free(sb->source);
    free(sb->file);
    free(sb);
}

lua_State *sandbox_state(sandbox *sb) { return sb->L; }

void sandbox_set_instruction_budget(sandbox *sb, uint64_t instructions)
{
    sb->instructions = 0;
    sb->cpu_watched = false;
    sb->alloc_uncharged = 0;
    sb->instruction_limit = instructions ? instructions : SANDBOX_INSTRUCTION_LIMIT;
    if (sb->exhausted && !sb->unsafe) {
        sb->exhausted = false;
        lua_sethook(sb->L, instruction_hook, LUA_MASKCOUNT, HOOK_EVERY);
    }
}

bool sandbox_memory_exhausted(const sandbox *sb) { return sb->memory_exhausted; }

uint64_t sandbox_instructions_run(const sandbox *sb) { return sb->instructions; }

/* ---- the file ----------------------------------------------------------------------- */

int sandbox_keep_bytes(sandbox *sb, size_t n)
{
    if (over_cap(sb, n)) {
        sb->memory_exhausted = true;
        return -1;
    }
    sb->kept_bytes += n;
    return 0;
}

/* The whole file, or NULL with errno set (EFBIG past the cap; EISDIR, ENODEV for what
 * is not a plain file: sim_open_plain). */
static char *read_whole(sandbox *sb, const char *path, size_t *size)
{
    FILE *f = sim_open_plain(path, "rb");
    if (!f)
        return NULL;
    size_t used = 0, capacity = 0;
    char *text = NULL;
    for (;;) {
        if (used == capacity) {
            size_t grown = capacity ? 2 * capacity : 8192;
            char *bigger = over_cap(sb, grown) ? NULL : realloc(text, grown);
            if (!bigger) {
                free(text);
                fclose(f);
                errno = over_cap(sb, grown) ? EFBIG : ENOMEM;
                return NULL;
            }
            text = bigger;
            capacity = grown;
        }
        size_t n = fread(text + used, 1, capacity - used, f);
        used += n;
        if (n == 0)
            break;
    }
    int failed = ferror(f);
    fclose(f);
    if (failed) {
        free(text);
        errno = EIO;
        return NULL;
    }
    *size = used;
    return text;
}

int sandbox_load_file(sandbox *sb, const char *path)
{
    lua_State *L = sb->L;
    size_t size = 0;
    char *text = read_whole(sb, path, &size);
    char *name = text ? strdup(path) : NULL;
    if (!text || !name || sandbox_keep_bytes(sb, size) != 0) {
        lua_pushfstring(L, "cannot read %s: %s", path,
                        !text ? sim_open_plain_why(errno) : "out of memory");
        free(text);
        free(name);
        return LUA_ERRFILE;
    }
    /* luaL_loadfilex's rules: a byte-order mark goes, and a first line starting with
     * '#' (a Unix interpreter line), whose newline stays to keep the line numbers */
    size_t skip = 0;
    if (size >= 3 && !memcmp(text, "\xEF\xBB\xBF", 3))
        skip = 3;
    if (skip < size && text[skip] == '#')
        while (skip < size && text[skip] != '\n')
            skip++;
    sb->kept_bytes -= sb->source_kept;
    sb->source_kept = size;
    free(sb->source);
    free(sb->file);
    sb->source = text;
    sb->source_size = size;
    sb->file = name;
    memmove(sb->source, sb->source + skip, size - skip);
    sb->source_size = size - skip;
    lua_pushfstring(L, "@%s", path);
    int status = luaL_loadbufferx(L, sb->source, sb->source_size, lua_tostring(L, -1), "t");
    lua_remove(L, -2);
    /* the parser's own limits (a table or a parenthesis nested thousands deep: "C stack
     * overflow") come without the file's name, which every other message has */
    if (status != LUA_OK && status != LUA_ERRMEM && lua_isstring(L, -1)
        && strncmp(lua_tostring(L, -1), path, strlen(path)) != 0) {
        lua_pushfstring(L, "%s: %s (the parser's limit)", path, lua_tostring(L, -1));
        lua_remove(L, -2);
    }
    return status;
}

const char *sandbox_file(const sandbox *sb) { return sb->file; }

/* ---- for the other parts ------------------------------------------------------------ */

int *sandbox_closing_depth(lua_State *L) { return &sandbox_of(L)->closing_depth; }

uint64_t sandbox_next_object_number(lua_State *L) { return ++sandbox_of(L)->objects; }

int sandbox_traceback(lua_State *L)
{
    const char *message = lua_tostring(L, 1);
    if (!message) { /* error(value): where the Lua code that raised it is */
        lua_Debug ar;
        char where[300] = "";
        for (int level = 1; lua_getstack(L, level, &ar); level++)
            if (lua_getinfo(L, "Sl", &ar) && ar.currentline > 0) {
                snprintf(where, sizeof where, "%s:%d: ", ar.short_src, ar.currentline);
                break;
            }
        lua_pushfstring(L, "%serror raised with %s%s, not a message (give error a string)",
                        where, lua_isnil(L, 1) ? "" : "a ", luaL_typename(L, 1));
        message = lua_tostring(L, -1);
    }
    luaL_traceback(L, L, message, 1);
    return 1;
}
