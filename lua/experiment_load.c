/* Reading sweep and search out of a scenario table (see experiment_load.h). */
#include "lua/experiment_load.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>

static const char *const SEARCH_KINDS[] = { "search", NULL };
static const char *const SEARCH_KEYS[] = { "key", "target", "low", "high", "step", "find",
                                           "subject", "scope", "grid", "minimise", "maximise",
                                           NULL };
static const char *const SEARCH_FINDS[] = { "smallest", "largest", NULL };
/* Integers a search may probe: exactly representable doubles. */
#define SEARCH_MAX_VALUE 9007199254740992.0

void experiment_load_init(experiment_spec *spec) { memset(spec, 0, sizeof *spec); }

static void axis_release(sweep_axis *a)
{
    for (size_t i = 0; i < a->nvalues; i++)
        free(a->values[i]);
    free(a->values);
    free(a->key);
    free(a->origin);
    memset(a, 0, sizeof *a);
}

void experiment_load_release(experiment_spec *spec)
{
    if (!spec)
        return;
    for (size_t i = 0; i < spec->naxes; i++)
        axis_release(&spec->axes[i]);
    free(spec->axes);
    search_spec *s = &spec->search;
    free(s->key);
    free(s->target);
    for (size_t i = 0; i < s->nconds; i++) {
        free(s->conds[i].text);
        free(s->conds[i].metric);
    }
    free(s->subject);
    free(s->scope);
    for (size_t i = 0; i < s->ngrid; i++)
        axis_release(&s->grid[i]);
    free(s->grid);
    free(s->objective);
    free(s->objective_metric);
    free(s->objective_subject);
    experiment_load_init(spec);
}

static int by_key(const void *a, const void *b)
{
    return strcmp(((const sweep_axis *)a)->key, ((const sweep_axis *)b)->key);
}

/* Takes axis (its strings) into spec, replacing an axis of the same key. */
static void put_axis(experiment_spec *spec, sweep_axis *axis)
{
    for (size_t i = 0; i < spec->naxes; i++)
        if (!strcmp(spec->axes[i].key, axis->key)) {
            axis->zip = axis->zip || spec->axes[i].zip; /* --sweep keeps a key zipped */
            axis_release(&spec->axes[i]);
            spec->axes[i] = *axis;
            return;
        }
    spec->axes[spec->naxes++] = *axis;
    qsort(spec->axes, spec->naxes, sizeof *spec->axes, by_key);
}

static bool grow_axes(experiment_spec *spec)
{
    sweep_axis *grown = realloc(spec->axes, (spec->naxes + 1) * sizeof *grown);
    if (grown)
        spec->axes = grown;
    return grown != NULL;
}

/* A Lua number as --set text that reads back to the same number. */
static void number_text(lua_State *L, int index, char *buf, size_t size)
{
    if (lua_isinteger(L, index)) {
        snprintf(buf, size, "%lld", (long long)lua_tointeger(L, index));
        return;
    }
    double x = lua_tonumber(L, index);
    for (int precision = 15; precision <= 17; precision++) {
        snprintf(buf, size, "%.*g", precision, x);
        if (strtod(buf, NULL) == x)
            break;
    }
}

/* what[key] = { v1, v2, ... } at the top of the stack, into axis; what is "sweep" or
 * "search.grid", the table it is in. */
static int read_axis(load_context *c, const fields_object *s, const char *what, const char *key,
                     sweep_axis *axis)
{
    lua_State *L = c->L;
    char path[FIELD_PATH_MAX], got[96], text[64];
    snprintf(path, sizeof path, "%s[\"%s\"]", what, key);
    if (!*key || strchr(key, '='))
        return fields_fail(c, s->where, what, "keys are dotted paths such as "
                           "\"pools.q.count\", got \"%s\"", key);
    size_t n = lua_istable(L, -1) ? (size_t)lua_rawlen(L, -1) : 0;
    if (n == 0)
        return fields_fail(c, s->where, path, "expected a list of values such as { 4, 8, 16 }, "
                           "got %s", fields_describe(L, -1, got, sizeof got));
    axis->key = strdup(key);
    axis->values = calloc(n, sizeof *axis->values);
    size_t wlen = strlen(s->where) + strlen(what) + 1;
    axis->origin = malloc(wlen);
    if (!axis->key || !axis->values || !axis->origin)
        return fields_fail(c, s->where, path, "out of memory");
    snprintf(axis->origin, wlen, "%s%s", s->where, what);
    for (size_t i = 0; i < n; i++) {
        int type = lua_rawgeti(L, -1, (lua_Integer)(i + 1));
        const char *value = text;
        if (type == LUA_TNUMBER)
            number_text(L, -1, text, sizeof text);
        else if (type == LUA_TBOOLEAN)
            value = lua_toboolean(L, -1) ? "true" : "false";
        else if (type == LUA_TSTRING)
            value = lua_tostring(L, -1);
        else
            return fields_fail(c, s->where, path, "value %zu: expected a number, a string or "
                               "a boolean, got %s", i + 1, fields_describe(L, -1, got, sizeof got));
        if (!(axis->values[axis->nvalues] = strdup(value)))
            return fields_fail(c, s->where, path, "out of memory");
        axis->nvalues++;
        lua_pop(L, 1);
    }
    return 0;
}

/* The lists of the table at `table` (sweep, or sweep.zip with zip set; a search's grid
 * when what is "search.grid") into out's axes. */
static int read_axes(load_context *c, const fields_object *s, const char *what, int table,
                     bool zip, experiment_spec *out)
{
    bool grid = !strcmp(what, "search.grid");
    lua_State *L = c->L;
    char got[96];
    int status = 0;
    lua_pushnil(L);
    while (status == 0 && lua_next(L, table)) {
        if (lua_type(L, -2) != LUA_TSTRING) {
            status = fields_fail(c, s->where, zip ? "sweep.zip" : what, "keys are dotted "
                                 "paths such as [\"pools.q.count\"], got the key %s",
                                 fields_describe(L, -2, got, sizeof got));
            break;
        }
        if (!zip && !grid && !strcmp(lua_tostring(L, -2), "zip")) {
            if (!lua_istable(L, -1))
                status = fields_fail(c, s->where, "sweep.zip", "expected a table of lists that "
                                     "move together, as in zip = { [\"pools.a.count\"] = { 4, 8 "
                                     "}, [\"pools.b.count\"] = { 2, 4 } }, got %s",
                                     fields_describe(L, -1, got, sizeof got));
            else
                status = read_axes(c, s, what, lua_gettop(L), true, out);
            lua_settop(L, table + 1);
            continue;
        }
        sweep_axis axis = { .zip = zip };
        /* Lua keys are unique within a table: the same key again is one in sweep and in
         * sweep.zip, of which one would silently win (the table's order deciding) */
        bool twice = false;
        for (size_t i = 0; i < out->naxes && !twice && !grid; i++)
            twice = !strcmp(out->axes[i].key, lua_tostring(L, -2));
        if (twice)
            status = fields_fail(c, s->where, "sweep.zip", "%s is both crossed (in sweep) "
                                 "and zipped (in sweep.zip): give it in one of them",
                                 lua_tostring(L, -2));
        else if (!grow_axes(out))
            status = fields_fail(c, s->where, "sweep", "out of memory");
        else if ((status = read_axis(c, s, what, lua_tostring(L, -2), &axis)) == 0)
            put_axis(out, &axis);
        else
            axis_release(&axis);
        lua_settop(L, table + 1); /* the key, for lua_next */
    }
    return status;
}

static int read_sweep(load_context *c, const fields_object *s, experiment_spec *out)
{
    lua_State *L = c->L;
    char got[96];
    int top = lua_gettop(L);
    int type = fields_object_get(c, s, "sweep");
    if (type == LUA_TNIL) {
        lua_settop(L, top);
        return 0;
    }
    if (type != LUA_TTABLE) {
        fields_fail(c, s->where, "sweep", "expected a table of lists, as in sweep = { "
                    "[\"pools.q.count\"] = { 4, 8 } }, got %s",
                    fields_describe(L, -1, got, sizeof got));
        lua_settop(L, top);
        return -1;
    }
    int status = read_axes(c, s, "sweep", lua_gettop(L), false, out);
    lua_settop(L, top);
    return status;
}

/* One "METRIC OP NUMBER" (e.g. "ttft_p99_s <= 0.2") from text[0, len). */
static int parse_condition(const char *text, size_t len, search_condition *c)
{
    char buf[256];
    if (len >= sizeof buf)
        return -1;
    memcpy(buf, text, len);
    buf[len] = '\0';
    const char *p = buf;
    while (isspace((unsigned char)*p))
        p++;
    const char *name = p;
    while (isalnum((unsigned char)*p) || *p == '_')
        p++;
    size_t name_len = (size_t)(p - name);
    while (isspace((unsigned char)*p))
        p++;
    if (name_len == 0)
        return -1;
    if (p[0] == '<' && p[1] == '=')
        c->op = SEARCH_LE, p += 2;
    else if (p[0] == '>' && p[1] == '=')
        c->op = SEARCH_GE, p += 2;
    else if (p[0] == '<')
        c->op = SEARCH_LT, p++;
    else if (p[0] == '>')
        c->op = SEARCH_GT, p++;
    else
        return -1;
    char *end;
    c->threshold = strtod(p, &end);
    if (end == p || !isfinite(c->threshold))
        return -1;
    while (isspace((unsigned char)*end))
        end++;
    if (*end)
        return -1;
    c->metric = strndup(name, name_len);
    const char *from = buf, *to = buf + len;
    while (isspace((unsigned char)*from))
        from++;
    while (to > from && isspace((unsigned char)to[-1]))
        to--;
    c->text = strndup(from, (size_t)(to - from));
    return c->metric && c->text ? 0 : -1;
}

/* The target: conditions joined by " and ", at most SEARCH_MAX_CONDITIONS. */
static int parse_target(const char *text, search_spec *s)
{
    for (const char *p = text;;) {
        const char *and = strstr(p, " and ");
        size_t len = and ? (size_t)(and - p) : strlen(p);
        if (s->nconds == SEARCH_MAX_CONDITIONS
            || parse_condition(p, len, &s->conds[s->nconds]) != 0)
            return -1;
        s->nconds++;
        if (!and)
            return 0;
        p = and + 5;
    }
}

/* search.grid: a table of lists at the top of the stack, into sp->grid (sorted by key). */
static int read_grid(load_context *c, const fields_object *o, search_spec *sp)
{
    lua_State *L = c->L;
    char got[96];
    int top = lua_gettop(L);
    int type = fields_object_get(c, o, "grid");
    int status = 0;
    experiment_spec axes;
    experiment_load_init(&axes);
    if (type != LUA_TTABLE)
        status = fields_fail(c, o->where, "search.grid", "expected a table of lists, as in grid "
                             "= { [\"workloads.chat.tp\"] = { 1, 2, 4 }, [\"pools.gpus.count\"] "
                             "= { 8, 16 } }, got %s", fields_describe(L, -1, got, sizeof got));
    else
        status = read_axes(c, o, "search.grid", lua_gettop(L), false, &axes);
    if (status == 0 && axes.naxes == 0)
        status = fields_fail(c, o->where, "search.grid", "expected at least one key and its "
                             "values, got an empty table");
    sp->grid = axes.axes;  /* taken, whole or partial: released with the spec */
    sp->ngrid = axes.naxes;
    lua_settop(L, top);
    return status;
}

/* minimise = "METRIC" or "METRIC of SUBJECT" (maximise alike). */
static int read_objective(load_context *c, const fields_object *o, search_spec *sp)
{
    char *least = NULL, *most = NULL;
    if (fields_read_string(c, o, "minimise", false, &least)
        || fields_read_string(c, o, "maximise", false, &most)) {
        free(least);
        free(most);
        return -1;
    }
    if (least && most) {
        free(least);
        free(most);
        return fields_fail(c, o->where, "search.maximise", "a search minimises or maximises "
                           "one metric: give minimise or maximise, not both");
    }
    sp->maximise = most != NULL;
    sp->objective = most ? most : least;
    if (!sp->objective)
        return 0;
    const char *text = sp->objective, *of = strstr(text, " of ");
    size_t len = of ? (size_t)(of - text) : strlen(text);
    bool ok = len > 0;
    for (size_t i = 0; i < len && ok; i++)
        ok = isalnum((unsigned char)text[i]) || text[i] == '_';
    if (ok && of) {
        const char *who = of + 4;
        ok = *who && !strchr(who, ' ');
        if (ok && !(sp->objective_subject = strdup(who)))
            return fields_fail(c, o->where, "search", "out of memory");
    }
    if (!ok)
        return fields_fail(c, o->where, sp->maximise ? "search.maximise" : "search.minimise",
                           "expected a metric such as \"cost_usd\", or one of a subject such "
                           "as \"cost_usd of gpus\", got \"%s\"", text);
    if (!(sp->objective_metric = strndup(text, len)))
        return fields_fail(c, o->where, "search", "out of memory");
    return 0;
}

/* The keys of a grid search that belong to a search along one key, refused by name. */
static int refuse_with_grid(load_context *c, const fields_object *o)
{
    static const char *const one_key[] = { "key", "low", "high", "step", "find", NULL };
    for (size_t i = 0; one_key[i]; i++) {
        int type = fields_object_get(c, o, one_key[i]);
        lua_pop(c->L, 1);
        if (type != LUA_TNIL)
            return fields_fail(c, o->where, "search.grid", "a grid search runs every point of "
                               "its grid: %s belongs to a search along one key; give grid or "
                               "key, low and high", one_key[i]);
    }
    return 0;
}

static int read_search(load_context *c, const fields_object *s, experiment_spec *out)
{
    int top = lua_gettop(c->L);
    fields_object o;
    int found = fields_object_open_field(c, s, "search", SEARCH_KINDS, "fs.search { key = ..., "
                                         "target = ..., low = ..., high = ... }", &o);
    if (found <= 0)
        return found;
    search_spec *sp = &out->search;
    int find = 0;
    out->has_search = true;
    snprintf(sp->where, sizeof sp->where, "%s", o.where);
    int grid = fields_object_get(c, &o, "grid");
    lua_pop(c->L, 1);
    int status = fields_object_check_keys(c, &o, SEARCH_KEYS)
                 || fields_read_string(c, &o, "target", true, &sp->target)
                 || fields_read_string(c, &o, "subject", false, &sp->subject)
                 || fields_read_string(c, &o, "scope", false, &sp->scope)
                 || read_objective(c, &o, sp);
    if (status == 0 && grid != LUA_TNIL) {
        status = refuse_with_grid(c, &o) || read_grid(c, &o, sp);
        if (status == 0 && !sp->objective)
            status = fields_fail(c, o.where, "search.minimise", "a grid search picks the point "
                                 "meeting the target with the least (minimise = \"cost_usd\") "
                                 "or most (maximise = ...) of a metric: give one");
    } else if (status == 0) {
        status = fields_read_string(c, &o, "key", true, &sp->key)
                 || fields_read_integer(c, &o, "low", true, 0, -(int64_t)SEARCH_MAX_VALUE,
                                        (int64_t)SEARCH_MAX_VALUE, &sp->low)
                 || fields_read_integer(c, &o, "high", true, 0, -(int64_t)SEARCH_MAX_VALUE,
                                        (int64_t)SEARCH_MAX_VALUE, &sp->high)
                 || fields_read_integer(c, &o, "step", false, 1, 1, (int64_t)SEARCH_MAX_VALUE,
                                        &sp->step)
                 || fields_read_choice(c, &o, "find", SEARCH_FINDS, 0, &find);
        if (status == 0 && sp->objective)
            status = fields_fail(c, o.where, sp->maximise ? "search.maximise" : "search.minimise",
                                 "an objective needs a grid of points to choose among (grid = "
                                 "{ [\"KEY\"] = { values }, ... }); a search along one key "
                                 "finds its smallest or largest value");
        sp->largest = find == 1;
        if (status == 0 && (!*sp->key || strchr(sp->key, '=')))
            status = fields_fail(c, o.where, "search.key", "expected a dotted path such as "
                                 "\"pools.q.count\", got \"%s\"", sp->key);
    }
    if (status == 0 && parse_target(sp->target, sp) != 0)
        status = fields_fail(c, o.where, "search.target", "expected \"METRIC OP NUMBER\" such as "
                             "\"ttft_p99_s <= 0.2\" (OP: <=, <, >= or >), or up to %d of them "
                             "joined by \" and \", got \"%s\"", SEARCH_MAX_CONDITIONS,
                             sp->target);
    if (status == 0 && !sp->ngrid && sp->high < sp->low)
        status = fields_fail(c, o.where, "search.high", "%lld is below low (%lld)",
                             (long long)sp->high, (long long)sp->low);
    if (status == 0 && !sp->ngrid && (sp->high - sp->low) % sp->step)
        status = fields_fail(c, o.where, "search.high", "%lld is not low (%lld) plus a multiple "
                             "of step (%lld): say %lld", (long long)sp->high,
                             (long long)sp->low, (long long)sp->step,
                             (long long)(sp->high - (sp->high - sp->low) % sp->step));
    lua_settop(c->L, top);
    return status ? -1 : 0;
}

int experiment_load_read(load_context *c, const fields_object *s, experiment_spec *out)
{
    if (read_sweep(c, s, out) != 0 || read_search(c, s, out) != 0)
        return -1;
    if (out->naxes && out->has_search)
        return fields_fail(c, s->where, "search", "a scenario takes a sweep or a search, not "
                           "both");
    return 0;
}

int experiment_load_add_sweep(experiment_spec *spec, const char *text, char *err,
                              size_t err_size)
{
    const char *eq = strchr(text, '=');
    if (!eq || eq == text || !eq[1]) {
        snprintf(err, err_size, "--sweep %s: expected KEY=v1,v2,..., as in "
                 "--sweep pools.q.count=4,8,16", text);
        return -1;
    }
    sweep_axis axis = { 0 };
    axis.key = strndup(text, (size_t)(eq - text));
    axis.origin = strdup("--sweep");
    size_t n = 1;
    for (const char *p = eq + 1; *p; p++)
        n += *p == ',';
    axis.values = calloc(n, sizeof *axis.values);
    bool ok = axis.key && axis.origin && axis.values && grow_axes(spec);
    for (const char *p = eq + 1; ok && axis.nvalues < n; axis.nvalues++) {
        size_t len = strcspn(p, ",");
        if (len == 0) {
            snprintf(err, err_size, "--sweep %s: value %zu is empty (expected KEY=v1,v2,...)",
                     text, axis.nvalues + 1);
            axis_release(&axis);
            return -1;
        }
        ok = (axis.values[axis.nvalues] = strndup(p, len)) != NULL;
        p += len + (p[len] == ',');
    }
    if (!ok) {
        snprintf(err, err_size, "out of memory");
        axis_release(&axis);
        return -1;
    }
    put_axis(spec, &axis);
    return 0;
}

const char *experiment_load_search_op_text(search_op op)
{
    static const char *const text[] = { "<=", "<", ">=", ">" };
    return text[op];
}

bool experiment_load_search_meets(search_op op, double value, double threshold)
{
    switch (op) {
    case SEARCH_LE: return value <= threshold;
    case SEARCH_LT: return value < threshold;
    case SEARCH_GE: return value >= threshold;
    case SEARCH_GT: return value > threshold;
    }
    return false;
}
