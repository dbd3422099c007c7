/* Rewinding a sandbox (see sandbox.h): objects that outlive the state, functions bound
 * by where their constructor call put them, and the state made again from the file. */
#include "lua/sandbox.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>

#include "lua/sandbox_internal.h"

void *sandbox_attach(sandbox *sb, size_t size, const char *name)
{
    void *grown = realloc(sb->attached, (sb->nattached + 1) * sizeof *sb->attached);
    if (!grown)
        return NULL;
    sb->attached = grown;
    void *object = sandbox_keep_bytes(sb, size) == 0 ? calloc(1, size) : NULL;
    if (!object)
        return NULL;
    sb->attached[sb->nattached].object = object;
    sb->attached[sb->nattached++].name = name;
    return object;
}

void *sandbox_attached(const sandbox *sb, const char *name)
{
    for (size_t i = sb->nattached; i-- > 0;)
        if (sb->attached[i].name && !strcmp(sb->attached[i].name, name))
            return sb->attached[i].object;
    return NULL;
}

int sandbox_keep_for_rewinds(sandbox *sb, const char *const *sets, size_t nsets,
                             sandbox_replay_fn replay, unsigned rewinds, char *err,
                             size_t err_size)
{
    double each = (double)sb->instructions, total = each * rewinds;
    if (!sb->unsafe && total > (double)SANDBOX_REWIND_INSTRUCTIONS) {
        snprintf(err, err_size, "%s: the file runs again before each of its %u replications "
                 "(its functions could keep state from one to the next), and running it "
                 "takes %.3g million Lua instructions: %.3g million in all, over the limit "
                 "of %.3g million; make the file cheaper or run fewer replications",
                 sb->file, rewinds - 1, each / 1e6, total / 1e6,
                 (double)SANDBOX_REWIND_INSTRUCTIONS / 1e6);
        return -1;
    }
    char **copies = calloc(nsets + 1, sizeof *copies);
    for (size_t i = 0; copies && i < nsets; i++)
        if (!(copies[i] = strdup(sets[i]))) {
            for (size_t j = 0; j < i; j++)
                free(copies[j]);
            free(copies);
            copies = NULL;
        }
    if (!copies) {
        snprintf(err, err_size, "%s: out of memory", sb->file);
        return -1;
    }
    for (size_t i = 0; i < sb->nsets; i++)
        free(sb->sets[i]);
    free(sb->sets);
    sb->sets = copies;
    sb->nsets = nsets;
    sb->replay = replay;
    sb->rewindable = true;
    return 0;
}

/* The constructor call that made the table at index (0: none did). */
static uint64_t seq_of(lua_State *L, int index)
{
    index = lua_absindex(L, index);
    int top = lua_gettop(L);
    lua_getfield(L, LUA_REGISTRYINDEX, SANDBOX_TAGS_KEY);
    lua_pushvalue(L, index);
    uint64_t seq = 0;
    if (lua_rawget(L, -2) == LUA_TTABLE && lua_getfield(L, -1, "seq") == LUA_TNUMBER)
        seq = (uint64_t)lua_tointeger(L, -1);
    lua_settop(L, top);
    return seq;
}

int sandbox_get_path(lua_State *L, int owner, const char *key)
{
    owner = lua_absindex(L, owner);
    lua_pushvalue(L, owner);
    for (const char *part = key;;) {
        const char *dot = strchr(part, '.');
        if (!lua_istable(L, -1)) {
            lua_pop(L, 1);
            lua_pushnil(L);
            return LUA_TNIL;
        }
        size_t n = dot ? (size_t)(dot - part) : strlen(part);
        if (n > 0 && n < 10 && strspn(part, "0123456789") == n) /* a list's item */
            lua_rawgeti(L, -1, (lua_Integer)strtol(part, NULL, 10));
        else {
            lua_pushlstring(L, part, n);
            lua_rawget(L, -2);
        }
        lua_remove(L, -2);
        if (!dot)
            return lua_type(L, -1);
        part = dot + 1;
    }
}

int sandbox_bind_function(lua_State *L, int owner, const char *key)
{
    sandbox *sb = sandbox_of(L);
    owner = lua_absindex(L, owner);
    uint64_t seq = seq_of(L, owner);
    if (sandbox_get_path(L, owner, key) != LUA_TFUNCTION)
        return luaL_error(L, "%s is not a function", key);
    int ref = luaL_ref(L, LUA_REGISTRYINDEX);
    binding *grown = realloc(sb->bindings, (sb->nbindings + 1) * sizeof *grown);
    char *copy = grown ? strdup(key) : NULL;
    if (grown)
        sb->bindings = grown;
    if (!copy || sandbox_keep_bytes(sb, sizeof *grown + strlen(key) + 1) != 0) {
        free(copy);
        luaL_unref(L, LUA_REGISTRYINDEX, ref);
        return luaL_error(L, "not enough memory");
    }
    sb->bindings[sb->nbindings] = (binding){ seq, copy, ref };
    return (int)sb->nbindings++;
}

void sandbox_push_function(sandbox *sb, int b)
{
    lua_rawgeti(sb->L, LUA_REGISTRYINDEX, sb->bindings[b].ref);
}

void sandbox_rewind(sandbox *sb)
{
    if (sb->rewindable)
        sb->rewind_wanted = true;
}

unsigned sandbox_rewinds(const sandbox *sb) { return sb->rewinds; }

typedef struct remake_job {
    sandbox *sb;
    char *err;
    size_t err_size;
    int status;
} remake_job;

/* Under lua_pcall in the new state: the file, the overrides, the bindings. */
static int remake_protected(lua_State *L)
{
    remake_job *job = lua_touserdata(L, 1);
    sandbox *sb = job->sb;
    lua_settop(L, 0);
    lua_pushfstring(L, "@%s", sb->file);
    if (luaL_loadbufferx(L, sb->source, sb->source_size, lua_tostring(L, -1), "t") != LUA_OK)
        return lua_error(L);
    lua_call(L, 0, 1);
    int root = lua_gettop(L);
    if (sb->replay
        && sb->replay(L, root, (const char *const *)sb->sets, sb->nsets, job->err,
                      job->err_size) != 0)
        return 0; /* job->status stays -1, the message in err */
    /* the objects by constructor call, to find each binding's owner */
    lua_newtable(L);
    int by_seq = lua_gettop(L);
    lua_getfield(L, LUA_REGISTRYINDEX, SANDBOX_TAGS_KEY);
    int tags = lua_gettop(L);
    lua_pushnil(L);
    while (lua_next(L, tags)) {
        if (lua_istable(L, -1) && lua_getfield(L, -1, "seq") == LUA_TNUMBER) {
            lua_pushvalue(L, -3);
            lua_rawseti(L, by_seq, lua_tointeger(L, -2));
        }
        lua_settop(L, tags + 1);
    }
    for (size_t i = 0; i < sb->nbindings; i++) {
        binding *b = &sb->bindings[i];
        if (lua_rawgeti(L, by_seq, (lua_Integer)b->seq) != LUA_TTABLE)
            return luaL_error(L, "the file made fewer objects when run again (%s of object "
                              "%I)", b->key, (lua_Integer)b->seq);
        if (sandbox_get_path(L, -1, b->key) != LUA_TFUNCTION)
            return luaL_error(L, "the file made object %I without its function %s when run "
                              "again", (lua_Integer)b->seq, b->key);
        b->ref = luaL_ref(L, LUA_REGISTRYINDEX);
        lua_pop(L, 1);
    }
    job->status = 0;
    return 0;
}


/* The state made again from the file's text; 0, or -1 with the message. */
static int remake(sandbox *sb, char *err, size_t err_size)
{
    lua_close(sb->L);
    sb->L = NULL;
    sb->instruction_limit = SANDBOX_INSTRUCTION_LIMIT;
    sb->instructions = 0;
    sb->exhausted = false;
    if (sandbox_open_state(sb) != 0) {
        snprintf(err, err_size, "out of memory making the Lua state again");
        return -1;
    }
    lua_State *L = sb->L;
    remake_job job = { sb, err, err_size, -1 };
    snprintf(err, err_size, "the file ran differently");
    lua_pushcfunction(L, sandbox_traceback);
    lua_pushcfunction(L, remake_protected);
    lua_pushlightuserdata(L, &job);
    if (lua_pcall(L, 1, 0, 1) != LUA_OK) {
        snprintf(err, err_size, "%s", lua_tostring(L, -1) ? lua_tostring(L, -1) : "error");
        job.status = -1;
    }
    lua_settop(L, 0);
    sandbox_set_instruction_budget(sb, 0);
    sb->rewinds++;
    return job.status;
}

int sandbox_enter(sandbox *sb, char *err, size_t err_size)
{
    if (sb->broken) {
        snprintf(err, err_size, "the scenario's Lua state could not be made again");
        return -1;
    }
    if (sb->rewind_wanted) { /* the load, or an earlier replication, ran Lua in it */
        char why[1024];
        if (remake(sb, why, sizeof why) != 0) {
            sb->broken = true;
            snprintf(err, err_size, "making the scenario's Lua state again for this "
                     "replication: %s", why);
            return -1;
        }
    }
    sb->rewind_wanted = false;
    return 0;
}
