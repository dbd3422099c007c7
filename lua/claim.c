/* Claims and their verdicts (see claim.h). */
#include "lua/claim.h"

#include <math.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include <lauxlib.h>

#include "lua/sandbox.h"
#include "sim/closest.h"
#include "sim/stat.h"

/* The claim, attached to the sandbox under this name (it outlives rewinds). */
#define CLAIM_NAME "fleetsim.claim"

typedef struct claim {
    char text[512];
    char where[FIELD_PATH_MAX]; /* "file.lua:12: " */
    int verdict;                /* the function's binding (sandbox_bind_function) */
} claim;

static const char *const CLAIM_KINDS[] = { "claim", NULL };
static const char *const CLAIM_KEYS[] = { "text", "verdict", NULL };
static const char *const WORDS[] = { "holds", "qualified", "refuted", NULL };
static const double SCORES[] = { 1, 0.5, 0 };

int claim_load(load_context *c, const fields_object *s)
{
    lua_State *L = c->L;
    int top = lua_gettop(L);
    fields_object o;
    int found = fields_object_open_field(c, s, "claim", CLAIM_KINDS, "a claim such as "
                                         "fs.claim { text = \"...\", verdict = function(r) ... "
                                         "end }", &o);
    if (found <= 0)
        return found;
    char *text = NULL, got[96];
    int status = fields_object_check_keys(c, &o, CLAIM_KEYS)
                 || fields_read_string(c, &o, "text", true, &text);
    if (status == 0 && !*text)
        status = fields_fail(c, o.where, "claim.text", "is empty (say what the scenario tests)");
    if (status == 0 && fields_object_get(c, &o, "verdict") != LUA_TFUNCTION) {
        fields_describe(L, -1, got, sizeof got);
        status = fields_fail(c, o.where, "claim.verdict", "expected a function(r) that returns "
                             "\"holds\", \"qualified\" or \"refuted\" and a figure, got %s", got);
    }
    if (status == 0) {
        int verdict = sandbox_bind_function(L, o.index, "verdict");
        claim *kept = sandbox_attach(sandbox_of(L), sizeof *kept, CLAIM_NAME);
        if (!kept) {
            free(text);
            luaL_error(L, "not enough memory");
        }
        snprintf(kept->text, sizeof kept->text, "%s", text);
        snprintf(kept->where, sizeof kept->where, "%s", o.where);
        kept->verdict = verdict;
    }
    free(text);
    lua_settop(L, top);
    return status ? -1 : 1;
}

bool claim_present(void *runtime)
{
    return runtime && sandbox_attached(runtime, CLAIM_NAME);
}

/* t[key] (a table), made when missing; left on the stack. */
static void subtable(lua_State *L, int t, const char *key)
{
    if (lua_getfield(L, t, key) != LUA_TTABLE) {
        lua_pop(L, 1);
        lua_newtable(L);
        lua_pushvalue(L, -1);
        lua_setfield(L, t, key);
    }
}

/* into.<scope>.<subject>.<name> = value, for a non-NaN value. */
static void put_metric(lua_State *L, int into, const sim_metric *m, double value)
{
    if (isnan(value))
        return;
    subtable(L, into, m->scope);
    subtable(L, lua_gettop(L), m->subject);
    lua_pushnumber(L, value);
    lua_setfield(L, -2, m->name);
    lua_pop(L, 2);
}

static int compare_names(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* __index of a scope's or a subject's table (issue 18, 12): a name it does not know is
 * a misspelling, said with the closest names and the list, at the verdict's line; a
 * known metric without a value (NaN: nothing to measure) reads nil.  Upvalues: the set
 * of known names, the table's path ("r.workload.chat") and what it holds ("metric"). */
static int strict_index(lua_State *L)
{
    if (lua_type(L, 2) != LUA_TSTRING)
        return 0;
    lua_pushvalue(L, 2);
    if (lua_rawget(L, lua_upvalueindex(1)) != LUA_TNIL)
        return 0;
    enum { MOST = 256 };
    const char *names[MOST + 1];
    size_t n = 0;
    lua_pushnil(L);
    while (n < MOST && lua_next(L, lua_upvalueindex(1))) {
        lua_pop(L, 1);
        if (lua_type(L, -1) == LUA_TSTRING)
            names[n++] = lua_tostring(L, -1); /* kept alive by the set */
    }
    if (n == MOST)
        lua_pop(L, 1); /* the key lua_next left */
    qsort(names, n, sizeof *names, compare_names);
    names[n] = NULL;
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    for (size_t i = 0; i < n; i++) {
        if (i)
            luaL_addstring(&b, ", ");
        luaL_addstring(&b, names[i]);
    }
    luaL_pushresult(&b);
    char hint[512];
    const char *close = closest_names_text(lua_tostring(L, 2), names, 0, hint, sizeof hint);
    luaL_where(L, 1); /* the verdict's line that read it */
    lua_pushfstring(L, "%s%s.%s: no %s of that name%s%s%s (known: %s)", lua_tostring(L, -1),
                    lua_tostring(L, lua_upvalueindex(2)), lua_tostring(L, 2),
                    lua_tostring(L, lua_upvalueindex(3)), close ? " (did you mean " : "",
                    close ? close : "", close ? "?)" : "", lua_tostring(L, -2));
    return lua_error(L);
}

/* Makes the table at t strict (strict_index) about names in `known` (at index k). */
static void make_strict(lua_State *L, int t, int k, const char *path, const char *what)
{
    lua_createtable(L, 0, 1);
    lua_pushvalue(L, k);
    lua_pushstring(L, path);
    lua_pushstring(L, what);
    lua_pushcclosure(L, strict_index, 3);
    lua_setfield(L, -2, "__index");
    lua_setmetatable(L, t);
}

/* known[scope] = set of subjects, known[scope .. "\0" .. subject] = set of metric names:
 * every metric of the point, NaN ones too. */
static void mark_known(lua_State *L, int known, const sim_metric *m)
{
    subtable(L, known, m->scope);
    lua_pushboolean(L, 1);
    lua_setfield(L, -2, m->subject);
    lua_pop(L, 1);
    lua_pushstring(L, m->scope);
    lua_pushlstring(L, "", 1);
    lua_pushstring(L, m->subject);
    lua_concat(L, 3);
    if (lua_rawget(L, known) != LUA_TTABLE) {
        lua_pop(L, 1);
        lua_newtable(L);
        lua_pushstring(L, m->scope);
        lua_pushlstring(L, "", 1);
        lua_pushstring(L, m->subject);
        lua_concat(L, 3);
        lua_pushvalue(L, -2);
        lua_rawset(L, known);
    }
    lua_pushboolean(L, 1);
    lua_setfield(L, -2, m->name);
    lua_pop(L, 1);
}

/* The scope and subject tables of `into` (a point, or its ci95 tables), made strict and
 * created where every value was NaN; prefix names it ("r", "r.ci95_lo"). */
static void make_point_strict(lua_State *L, int into, int known, const sim_metrics *metrics,
                              const char *prefix)
{
    char path[FIELD_PATH_MAX];
    for (size_t i = 0; i < metrics->count; i++) {
        const sim_metric *m = &metrics->items[i];
        subtable(L, into, m->scope);
        int scope = lua_gettop(L);
        if (!lua_getmetatable(L, scope)) {
            snprintf(path, sizeof path, "%s.%s", prefix, m->scope);
            lua_getfield(L, known, m->scope);
            make_strict(L, scope, lua_gettop(L), path, m->scope);
            lua_pop(L, 1);
        } else {
            lua_pop(L, 1);
        }
        subtable(L, scope, m->subject);
        int subject = lua_gettop(L);
        if (!lua_getmetatable(L, subject)) {
            snprintf(path, sizeof path, "%s.%s.%s", prefix, m->scope, m->subject);
            lua_pushstring(L, m->scope);
            lua_pushlstring(L, "", 1);
            lua_pushstring(L, m->subject);
            lua_concat(L, 3);
            lua_rawget(L, known);
            make_strict(L, subject, lua_gettop(L), path, "metric");
            lua_pop(L, 1);
        } else {
            lua_pop(L, 1);
        }
        lua_pop(L, 2);
    }
}

/* A point's table: metrics by scope, their bounds, values and replications. */
static void push_point(lua_State *L, const claim_results *r, const claim_point *p)
{
    lua_newtable(L);
    int t = lua_gettop(L);
    subtable(L, t, "ci95_lo");
    subtable(L, t, "ci95_hi");
    int lo = t + 1, hi = t + 2;
    lua_newtable(L);
    int known = t + 3;
    for (size_t i = 0; i < p->metrics->count; i++) {
        const sim_metric *m = &p->metrics->items[i];
        sim_ci ci = sim_ci_student(&m->replications, 0.95);
        put_metric(L, t, m, ci.mean);
        put_metric(L, lo, m, ci.low);
        put_metric(L, hi, m, ci.high);
        mark_known(L, known, m);
    }
    make_point_strict(L, t, known, p->metrics, "r");
    make_point_strict(L, lo, known, p->metrics, "r.ci95_lo");
    make_point_strict(L, hi, known, p->metrics, "r.ci95_hi");
    lua_settop(L, t);
    lua_newtable(L);
    int values = lua_gettop(L);
    lua_newtable(L); /* the swept keys, for values to be strict about */
    for (size_t k = 0; k < r->nkeys; k++) {
        if (!p->values[k] || !lua_stringtonumber(L, p->values[k]))
            lua_pushstring(L, p->values[k] ? p->values[k] : "");
        lua_setfield(L, values, r->keys[k]);
        lua_pushboolean(L, 1);
        lua_setfield(L, values + 1, r->keys[k]);
    }
    make_strict(L, values, values + 1, "r.values", "swept key");
    lua_settop(L, values);
    lua_setfield(L, t, "values");
    lua_pushinteger(L, (lua_Integer)p->replications);
    lua_setfield(L, t, "replications");
    lua_pushstring(L, r->name);
    lua_setfield(L, t, "name");
    /* the point itself strict too: a misspelt scope (r.pooll) read nil.  Known: every
     * scope a run can have (nil where this one has none), the scopes of its metrics,
     * and the fields a point or r holds (r.search nil without a search) */
    static const char *const fields[] = { "workload", "pool", "job", "run", "ci95_lo",
                                          "ci95_hi", "values", "replications", "name",
                                          "points", "keys", "search" };
    lua_newtable(L);
    int names = lua_gettop(L);
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++) {
        lua_pushboolean(L, 1);
        lua_setfield(L, names, fields[i]);
    }
    for (size_t i = 0; i < p->metrics->count; i++) {
        lua_pushboolean(L, 1);
        lua_setfield(L, names, p->metrics->items[i].scope);
    }
    make_strict(L, t, names, "r", "scope or field");
    lua_settop(L, t);
}

/* r.points is made as it is read: a sweep of thousands of points, each three tables of
 * every metric, did not fit the sandbox's memory when made at once, and the computed
 * sweep was lost.  The points table is empty; its metatable makes point i when it is
 * read (__index), counts them (__len) and walks them (__pairs; ipairs walks through
 * __index).  The first point (r itself) and the search's point are kept, so that
 * r.points[1] is r; so is the point read last, so that r.points[i].a and r.points[i].b
 * make it once.  The box holds the results while the verdict runs; after it the box is
 * emptied, and a point read later (a table the verdict kept) raises an error instead of
 * reading freed results. */
typedef struct points_box {
    const claim_results *r; /* NULL after the verdict */
    size_t n;
} points_box;

static int points_index(lua_State *L)
{
    const points_box *box = lua_touserdata(L, lua_upvalueindex(1));
    int kept = lua_upvalueindex(2);
    if (!lua_isinteger(L, 2))
        return 0;
    lua_Integer i = lua_tointeger(L, 2);
    if (i < 1 || (size_t)i > box->n)
        return 0;
    if (lua_rawgeti(L, kept, i) != LUA_TNIL)
        return 1;
    if (lua_getfield(L, kept, "last") == LUA_TNUMBER && lua_tointeger(L, -1) == i) {
        lua_getfield(L, kept, "last_point");
        return 1;
    }
    if (!box->r)
        return luaL_error(L, "r.points[%d] is read during the verdict only", (int)i);
    push_point(L, box->r, &box->r->points[i - 1]);
    lua_pushvalue(L, -1);
    lua_setfield(L, kept, "last_point");
    lua_pushinteger(L, i);
    lua_setfield(L, kept, "last");
    return 1;
}

static int points_len(lua_State *L)
{
    const points_box *box = lua_touserdata(L, lua_upvalueindex(1));
    lua_pushinteger(L, (lua_Integer)box->n);
    return 1;
}

static int points_next(lua_State *L)
{
    lua_Integer i = luaL_optinteger(L, 2, 0) + 1;
    lua_pushinteger(L, i);
    if (lua_geti(L, 1, i) != LUA_TNIL) /* through __index */
        return 2;
    lua_pushnil(L); /* past the last point: the loop ends */
    return 1;
}

static int points_pairs(lua_State *L)
{
    lua_pushcfunction(L, points_next);
    lua_pushvalue(L, 1);
    lua_pushinteger(L, 0);
    return 3;
}

/* Pushes r.points for r (box, a full userdata at index box, holds it) with the points
 * kept: the table at index kept maps their indices to their tables. */
static void push_points(lua_State *L, int box, int kept)
{
    lua_newtable(L);
    lua_createtable(L, 0, 4);
    lua_pushvalue(L, box);
    lua_pushvalue(L, kept);
    lua_pushcclosure(L, points_index, 2);
    lua_setfield(L, -2, "__index");
    lua_pushvalue(L, box);
    lua_pushcclosure(L, points_len, 1);
    lua_setfield(L, -2, "__len");
    lua_pushcfunction(L, points_pairs);
    lua_setfield(L, -2, "__pairs");
    lua_pushliteral(L, "points");
    lua_setfield(L, -2, "__metatable"); /* not to be replaced */
    lua_setmetatable(L, -2);
}

/* The argument table; the first point doubles as the top level.  box: the index of the
 * points_box (a full userdata). */
static void push_results(lua_State *L, const claim_results *r, int box)
{
    lua_newtable(L); /* the points kept, by index */
    int kept = lua_gettop(L);
    push_point(L, r, &r->points[0]);
    lua_pushvalue(L, -1);
    lua_rawseti(L, kept, 1);
    int top = lua_gettop(L);
    push_points(L, box, kept);
    int points = lua_gettop(L);
    lua_pushvalue(L, points);
    lua_setfield(L, top, "points");
    lua_createtable(L, (int)r->nkeys, 0);
    for (size_t k = 0; k < r->nkeys; k++) {
        lua_pushstring(L, r->keys[k]);
        lua_rawseti(L, -2, (lua_Integer)k + 1);
    }
    lua_setfield(L, top, "keys");
    if (r->has_search) {
        lua_createtable(L, 0, 5);
        if (!r->grid) {
            lua_pushstring(L, r->keys[0]);
            lua_setfield(L, -2, "key");
        }
        lua_pushstring(L, r->search_target ? r->search_target : "");
        lua_setfield(L, -2, "target");
        lua_pushboolean(L, r->found);
        lua_setfield(L, -2, "found");
        lua_Integer at = 0; /* the point's index, 1-based */
        if (r->found && r->grid) { /* the grid's point, with its values under r.keys */
            at = (lua_Integer)r->answer_point + 1;
        } else if (r->found) {
            char answer[32];
            snprintf(answer, sizeof answer, "%lld", r->answer);
            lua_pushinteger(L, r->answer);
            lua_setfield(L, -2, "answer");
            for (size_t i = r->npoints; i-- > 0 && !at;) /* the last probe of the answer */
                if (r->points[i].values[0] && !strcmp(r->points[i].values[0], answer))
                    at = (lua_Integer)i + 1;
        }
        if (at) {
            lua_geti(L, points, at);
            lua_pushvalue(L, -1);
            lua_rawseti(L, kept, at);
            lua_setfield(L, -2, "point");
        }
        lua_setfield(L, top, "search");
    }
    lua_settop(L, top);
    lua_remove(L, kept);
}

typedef struct judge_call {
    const claim_results *r;
    sandbox *sb;
    int verdict;
    int box; /* the points_box's registry reference, LUA_NOREF until made */
} judge_call;

/* Under lua_pcall: builds r and calls verdict(r), leaving its two results. */
static int call_protected(lua_State *L)
{
    judge_call *call = lua_touserdata(L, 1);
    lua_settop(L, 0);
    points_box *box = lua_newuserdatauv(L, sizeof *box, 0);
    *box = (points_box){ call->r, call->r->npoints };
    lua_pushvalue(L, 1);
    call->box = luaL_ref(L, LUA_REGISTRYINDEX); /* held until the verdict is over */
    sandbox_push_function(call->sb, call->verdict);
    push_results(L, call->r, 1);
    lua_call(L, 1, 2);
    return 2;
}

int claim_judge(void *runtime, const claim_results *r, claim_verdict *out, char *err,
                size_t err_size)
{
    memset(out, 0, sizeof *out);
    const claim *kept = sandbox_attached(runtime, CLAIM_NAME);
    snprintf(out->text, sizeof out->text, "%s", kept->text);
    const char *where = kept->where;
    char why[1536];
    sandbox_rewind(runtime); /* the verdict sees the state the file made, not a run's */
    if (sandbox_enter(runtime, why, sizeof why) != 0) {
        snprintf(err, err_size, "%sclaim.verdict: %s", where, why);
        return -1;
    }
    lua_State *L = sandbox_state(runtime);
    int top = lua_gettop(L);
    if (!lua_checkstack(L, 16)) {
        snprintf(err, err_size, "claim.verdict: no Lua stack left");
        return -1;
    }

    judge_call call = { r, runtime, kept->verdict, LUA_NOREF };
    sandbox_set_instruction_budget(runtime, CLAIM_CALL_INSTRUCTIONS);
    lua_pushcfunction(L, call_protected);
    lua_pushlightuserdata(L, &call);
    int status = lua_pcall(L, 1, 2, 0);
    sandbox_set_instruction_budget(runtime, 0);
    if (call.box != LUA_NOREF) { /* the results are the caller's again: points read no more */
        lua_rawgeti(L, LUA_REGISTRYINDEX, call.box);
        ((points_box *)lua_touserdata(L, -1))->r = NULL;
        lua_pop(L, 1);
        luaL_unref(L, LUA_REGISTRYINDEX, call.box);
    }
    if (status != LUA_OK) {
        const char *message = lua_tostring(L, -1);
        if (status == LUA_ERRMEM && sandbox_memory_exhausted(runtime))
            message = "the sandbox's memory is spent (each r.points[i] is made as it is "
                      "read: a verdict that keeps every point keeps them all; keep the "
                      "figures it needs instead)";
        snprintf(err, err_size, "%sclaim.verdict: %s", where, message ? message : "(no message)");
        lua_settop(L, top);
        return -1;
    }
    size_t word_length = 0;
    const char *word = lua_type(L, -2) == LUA_TSTRING ? lua_tolstring(L, -2, &word_length)
                                                      : NULL;
    int which = -1;
    for (int i = 0; word && WORDS[i]; i++)
        if (word_length == strlen(WORDS[i]) && !memcmp(word, WORDS[i], word_length))
            which = i;
    char got[96];
    if (which < 0 || lua_type(L, -1) != LUA_TSTRING) {
        fields_describe(L, which < 0 ? -2 : -1, got, sizeof got);
        snprintf(err, err_size, "%sclaim.verdict: must return \"holds\", \"qualified\" or "
                 "\"refuted\" and a figure text, got %s%s", where, got,
                 which < 0 ? "" : " for the figure");
        lua_settop(L, top);
        return -1;
    }
    size_t length;
    const char *figure = lua_tolstring(L, -1, &length);
    if (fields_text_flaw(figure, length, true, why, sizeof why)) {
        snprintf(err, err_size, "%sclaim.verdict: the figure text has %s (expected text)",
                 where, why);
        lua_settop(L, top);
        return -1;
    }
    snprintf(out->word, sizeof out->word, "%s", WORDS[which]);
    out->score = SCORES[which];
    snprintf(out->figure, sizeof out->figure, "%s", figure);
    if (length >= sizeof out->figure) /* cut where a reader sees it was */
        memcpy(out->figure + sizeof out->figure - 7, " [...]", 7);
    for (char *ch = out->figure; *ch; ch++) /* one line */
        if (*ch == '\n' || *ch == '\r' || *ch == '\t')
            *ch = ' ';
    lua_settop(L, top);
    return 0;
}
