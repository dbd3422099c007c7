/* prefix_cache = true | { block = 16, host = { size, bandwidth, latency }, disk = ...,
 * shared = ... }, affinity_bound = 0.25,
 * system_prompt = 1000 | { tokens = 1000, groups = 64 } | { { tokens = 1000, weight = 3 }, ... },
 * sessions = { turns = ..., think = ..., new_tokens = ... } (see prefix_load.h). */
#include "lua/prefix_load.h"

#include <lua.h>
#include <stdio.h>

#include "models/workload_groups.h"

static const char *const PREFIX_CACHE_KEYS[] = { "block", "host", "disk", "shared", NULL };
static const char *const TIER_KEYS[] = { "size", "bandwidth", "latency", NULL };

/* Sizes and rates past these are typing mistakes, not machines. */
#define TIER_MAX_BYTES 1e17
#define TIER_MAX_BYTES_PER_S 1e13

/* prefix_cache.<kind> = { size, bandwidth, latency }: size required; a disk's rates
 * too (no catalog states a drive's), the others' defaulted where they run. */
static int read_tier(load_context *c, const fields_object *pc, prefix_tier_kind kind,
                     prefix_tier_spec *out)
{
    const char *name = prefix_tier_kind_name(kind);
    bool stated = kind == PREFIX_TIER_DISK;
    *out = (prefix_tier_spec){ .latency_s = -1 };
    int top = lua_gettop(c->L);
    fields_object o;
    int found = fields_object_open_field(c, pc, name, NULL, "a table such as { size = "
                                         "\"512GB\", bandwidth = \"50GB/s\", latency = "
                                         "\"10us\" }", &o);
    if (found <= 0)
        return found;
    if (!*o.where)
        snprintf(o.where, sizeof o.where, "%s", pc->where);
    int status = fields_object_check_keys(c, &o, TIER_KEYS)
                 || fields_read_size(c, &o, "size", TIER_MAX_BYTES, &out->size_bytes);
    if (status == 0 && (stated || fields_object_get(c, &o, "bandwidth") != LUA_TNIL)) {
        if (!stated)
            lua_pop(c->L, 1);
        status = fields_read_bandwidth(c, &o, "bandwidth", true, 0, TIER_MAX_BYTES_PER_S,
                                       &out->bandwidth_bytes_per_s);
    } else if (status == 0) {
        lua_pop(c->L, 1);
    }
    if (status == 0)
        status = fields_read_duration(c, &o, "latency", stated, -1, 0, 10, true,
                                      &out->latency_s);
    lua_settop(c->L, top);
    return status ? -1 : 0;
}
static const char *const SESSION_KEYS[] = { "turns", "think", "new_tokens", NULL };
static const char *const SYSTEM_PROMPT_KEYS[] = { "tokens", "weight", "groups", NULL };

/* A trace's hashed block ids fix the cache's block: theirs, by default and required. */
static int read_prefix_cache(load_context *c, const fields_object *w, inference_spec *out)
{
    lua_State *L = c->L;
    bool hashed = out->has_trace && out->trace.blocks_column;
    int64_t fallback = hashed ? out->trace.block_tokens : 16;
    int top = lua_gettop(L);
    int type = fields_object_get(c, w, "prefix_cache");
    lua_settop(L, top);
    if (type == LUA_TNIL)
        return 0;
    if (type == LUA_TBOOLEAN) {
        bool on;
        if (fields_read_flag(c, w, "prefix_cache", false, &on) != 0)
            return -1;
        out->prefix_block = on ? (unsigned)fallback : 0;
        return 0;
    }
    fields_object pc;
    if (fields_object_open_field(c, w, "prefix_cache", NULL, "true or a table such as "
                                 "{ block = 16 }", &pc) < 0)
        return -1;
    int64_t block = fallback;
    int status = fields_object_check_keys(c, &pc, PREFIX_CACHE_KEYS)
                 || fields_read_integer(c, &pc, "block", false, fallback, 1, 65536, &block);
    for (unsigned k = 0; k < PREFIX_TIERS_MAX && status == 0; k++)
        status = read_tier(c, &pc, (prefix_tier_kind)k, &out->prefix_tiers[k]);
    if (status == 0 && hashed && block != fallback) {
        char path[FIELD_PATH_MAX];
        snprintf(path, sizeof path, "%s.prefix_cache.block", w->path);
        status = fields_fail(c, pc.where, path, "%lld tokens, but the trace's block ids stand "
                             "for %lld (fs.trace's block_tokens): leave block out or give %lld",
                             (long long)block, (long long)fallback, (long long)fallback);
    }
    lua_settop(L, top);
    out->prefix_block = (unsigned)block;
    return status ? -1 : 0;
}

/* One system prompt from the table on top of the stack, named `item` in messages. */
static int read_system_entry(load_context *c, const fields_object *w, const char *item,
                             system_prompt *out)
{
    fields_object e;
    int status = fields_object_open(c, -1, item, w->where, NULL, "a table such as "
                                    "{ tokens = 1000, weight = 1, groups = 1 }", &e);
    if (status == 0 && !*e.where)
        snprintf(e.where, sizeof e.where, "%s", w->where);
    int64_t tokens = 0, groups = 1;
    double weight = 1;
    status = status
             || fields_object_check_keys(c, &e, SYSTEM_PROMPT_KEYS)
             || fields_read_integer(c, &e, "tokens", true, 0, 1, 10000000, &tokens)
             || fields_read_number(c, &e, "weight", false, 1, 0, 1e12, false, &weight)
             || fields_read_integer(c, &e, "groups", false, 1, 1, SYSTEM_PROMPT_GROUPS_MAX,
                                    &groups);
    *out = (system_prompt){ (unsigned)tokens, weight, (unsigned)groups };
    return status;
}

/* system_prompt = tokens | { tokens, weight, groups } | a list of 1 to 16 of those. */
static int read_system_prompt(load_context *c, const fields_object *w, inference_spec *out)
{
    lua_State *L = c->L;
    int top = lua_gettop(L);
    int type = fields_object_get(c, w, "system_prompt");
    lua_settop(L, top);
    if (type == LUA_TNIL)
        return 0;
    char path[FIELD_PATH_MAX], got[96];
    snprintf(path, sizeof path, "%s.system_prompt", w->path);
    if (type == LUA_TNUMBER) {
        int64_t tokens;
        if (fields_read_integer(c, w, "system_prompt", true, 0, 1, 10000000, &tokens) != 0)
            return -1;
        out->system_prompts[0] = (system_prompt){ (unsigned)tokens, 1, 1 };
        out->nsystem_prompts = 1;
        return 0;
    }
    fields_object_get(c, w, "system_prompt");
    int status;
    if (type == LUA_TTABLE && lua_rawlen(L, -1) == 0
        && lua_getfield(L, -1, "tokens") != LUA_TNIL) { /* one prompt, its keys named */
        lua_pop(L, 1);
        status = read_system_entry(c, w, path, &out->system_prompts[0]);
        lua_settop(L, top);
        out->nsystem_prompts = status ? 0 : 1;
        return status ? -1 : 0;
    }
    lua_settop(L, top);
    fields_object_get(c, w, "system_prompt");
    size_t n = type == LUA_TTABLE ? lua_rawlen(L, -1) : 0;
    if (n < 1 || n > SYSTEM_PROMPTS_MAX) {
        fields_describe(L, -1, got, sizeof got);
        lua_settop(L, top);
        return fields_fail(c, w->where, path, "expected a token count, { tokens = ..., "
                           "weight = ..., groups = ... } or a list of 1 to %d of those, got %s",
                           SYSTEM_PROMPTS_MAX, got);
    }
    int list = lua_gettop(L);
    status = 0;
    for (size_t i = 0; i < n && status == 0; i++) {
        lua_rawgeti(L, list, (lua_Integer)i + 1);
        char item[FIELD_PATH_MAX];
        snprintf(item, sizeof item, "%s[%zu]", path, i + 1);
        status = read_system_entry(c, w, item, &out->system_prompts[i]);
        lua_settop(L, list);
    }
    lua_settop(L, top);
    out->nsystem_prompts = status ? 0 : (unsigned)n;
    return status ? -1 : 0;
}

static int read_sessions(load_context *c, const fields_object *w, inference_spec *out)
{
    lua_State *L = c->L;
    int top = lua_gettop(L);
    fields_object so;
    int found = fields_object_open_field(c, w, "sessions", NULL, "a table such as { turns = 4, "
                                         "think = \"30s\", new_tokens = 200 }", &so);
    if (found <= 0)
        return found;
    session_spec *s = &out->sessions;
    if (*so.where == 0)
        snprintf(so.where, sizeof so.where, "%s", w->where);
    int status = fields_object_check_keys(c, &so, SESSION_KEYS)
                 || fields_read_count_dist(c, &so, "turns", &s->turns);
    if (status == 0) {
        out->has_sessions = true; /* the turns' distribution is owned from here */
        s->think_s = sim_dist_constant(0);
        if (fields_object_get(c, &so, "think") != LUA_TNIL) {
            lua_pop(L, 1);
            status = fields_read_duration_dist(c, &so, "think", &s->think_s);
        } else {
            lua_pop(L, 1);
        }
    }
    if (status == 0) {
        if (fields_object_get(c, &so, "new_tokens") != LUA_TNIL) {
            lua_pop(L, 1);
            status = fields_read_count_dist(c, &so, "new_tokens", &s->new_tokens);
            out->has_new_tokens = status == 0;
        } else {
            lua_pop(L, 1);
            s->new_tokens = out->prompt_tokens; /* borrowed: the prompt's own */
        }
    }
    lua_settop(L, top);
    return status ? -1 : 0;
}

/* A shared tier's default rate is each pool's NICs: a pool whose device states none
 * needs it given. */
static int check_shared_tier(load_context *c, const fields_object *w, const scenario *sc,
                             const inference_spec *out)
{
    const prefix_tier_spec *t = &out->prefix_tiers[PREFIX_TIER_SHARED];
    if (!(t->size_bytes > 0) || t->bandwidth_bytes_per_s > 0)
        return 0;
    for (unsigned g = 0; g <= out->ngroups; g++) {
        size_t pool = workload_group_pool(out, g);
        const device_spec *d = &sc->catalog.devices[workload_group_device(out, g)];
        if (inference_profile(sc, out, pool, d).network_bytes_per_s > 0)
            continue;
        char path[FIELD_PATH_MAX];
        snprintf(path, sizeof path, "%s.prefix_cache.shared.bandwidth", w->path);
        return fields_fail(c, w->where, path, "missing: pool \"%s\"'s %s states no network "
                           "bandwidth to reach a shared store by default; give it, as in "
                           "shared = { size = \"10TB\", bandwidth = \"50GB/s\" }",
                           sc->pools[pool].name, d->name);
    }
    return 0;
}

int prefix_load_convert(load_context *c, const fields_object *w, const scenario *sc,
                        inference_spec *out)
{
    char path[FIELD_PATH_MAX];
    if (read_prefix_cache(c, w, out) != 0 || check_shared_tier(c, w, sc, out) != 0
        || fields_read_number(c, w, "affinity_bound", false, 0.25, 0, 1e6, true,
                              &out->affinity_bound) != 0
        || read_system_prompt(c, w, out) != 0 || read_sessions(c, w, out) != 0)
        return -1;
    if (out->routing == ROUTE_PREFIX_AFFINITY && !out->prefix_block) {
        snprintf(path, sizeof path, "%s.routing", w->path);
        return fields_fail(c, w->where, path, "\"prefix_affinity\" routes by the replicas' "
                           "prefix caches: give prefix_cache = { block = 16 } too");
    }
    for (unsigned i = 0; i < out->ngroups && !out->prefix_block; i++) {
        if (out->groups[i].routing != ROUTE_PREFIX_AFFINITY)
            continue;
        bool listed = fields_object_get(c, w, "groups") != LUA_TNIL; /* else decode = */
        lua_pop(c->L, 1);
        if (listed)
            snprintf(path, sizeof path, "%s.groups[%u].routing", w->path, i + 1);
        else
            snprintf(path, sizeof path, "%s.decode.routing", w->path);
        return fields_fail(c, w->where, path, "\"prefix_affinity\" routes by the replicas' "
                           "prefix caches: give prefix_cache = { block = 16 } too");
    }
    if (out->has_sessions && (out->has_trace || (out->has_traffic
                                                 && out->traffic.kind == TRAFFIC_CLOSED_LOOP))) {
        snprintf(path, sizeof path, "%s.sessions", w->path);
        return fields_fail(c, w->where, path, "sessions arrive as fs.poisson, fs.constant_rate "
                           "or a traffic profile: not with %s", out->has_trace
                           ? "a trace (name its session column: fs.trace { session = ... })" : "fs.closed_loop");
    }
    if (out->nsystem_prompts && out->has_trace && out->trace.blocks_column) {
        snprintf(path, sizeof path, "%s.system_prompt", w->path);
        return fields_fail(c, w->where, path, "not with a trace's block ids (fs.trace's "
                           "blocks): they name the whole prompt, a shared system prompt too");
    }
    return 0;
}
