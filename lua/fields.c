/* Checked reading of scenario tables (see fields.h). */
#define _DEFAULT_SOURCE /* realpath */
#include "lua/fields.h"

#include <errno.h>
#include <sys/stat.h>

#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>

#include "lua/sandbox.h"
#include "sim/array.h"
#include "sim/closest.h"

/* ---- messages ------------------------------------------------------------------ */

/* The --set text that changed path (or a table above it), or NULL. */
static const char *set_for(const load_context *c, const char *path)
{
    size_t plen = strlen(path);
    for (size_t i = c->nsets; i-- > 0;) {
        const char *eq = strchr(c->sets[i], '=');
        size_t klen = eq ? (size_t)(eq - c->sets[i]) : strlen(c->sets[i]);
        if (klen == plen && !strncmp(c->sets[i], path, plen))
            return c->sets[i];
    }
    return NULL;
}

int fields_fail(load_context *c, const char *where, const char *path, const char *format, ...)
{
    char message[512];
    va_list args;
    va_start(args, format);
    vsnprintf(message, sizeof message, format, args);
    va_end(args);
    const char *set = set_for(c, path);
    if (set)
        snprintf(c->err, c->err_size, "--set %s: %s: %s", set, path, message);
    else if (where && *where)
        snprintf(c->err, c->err_size, "%s%s: %s", where, path, message); /* where ends in ": " */
    else
        snprintf(c->err, c->err_size, "%s: %s", path, message);
    return -1;
}

const char *fields_describe(lua_State *L, int index, char *buf, size_t size)
{
    switch (lua_type(L, index)) {
    case LUA_TNIL: snprintf(buf, size, "nothing"); break;
    case LUA_TBOOLEAN: snprintf(buf, size, "%s", lua_toboolean(L, index) ? "true" : "false"); break;
    case LUA_TNUMBER:
        if (lua_isinteger(L, index))
            snprintf(buf, size, "%lld", (long long)lua_tointeger(L, index));
        else if (isnan(lua_tonumber(L, index))) /* printf's "-nan" or "nan" */
            snprintf(buf, size, "NaN");
        else
            snprintf(buf, size, "%.15g", lua_tonumber(L, index));
        break;
    case LUA_TSTRING: { /* its first 60 bytes, a control byte (a NUL cut it) as \xNN */
        size_t length, at = 0;
        const char *s = lua_tolstring(L, index, &length);
        char shown[60 * 4 + 1];
        for (size_t i = 0; i < length && i < 60; i++) {
            unsigned char ch = (unsigned char)s[i];
            at += (size_t)snprintf(shown + at, sizeof shown - at, ch < 0x20 || ch == 0x7f
                                                                   ? "\\x%02x" : "%c", ch);
        }
        shown[at] = '\0';
        snprintf(buf, size, "\"%s%s\"", shown, length > 60 ? "..." : "");
        break;
    }
    case LUA_TTABLE: snprintf(buf, size, "a table"); break;
    default: snprintf(buf, size, "a %s", luaL_typename(L, index)); break;
    }
    return buf;
}

const char *fields_text_flaw(const char *text, size_t length, bool lines_ok, char *why,
                             size_t size)
{
    for (size_t i = 0; i < length; i++) {
        unsigned char ch = (unsigned char)text[i];
        bool line = ch == '\t' || ch == '\n';
        if ((ch < 0x20 && !(lines_ok && line)) || ch == 0x7f) {
            snprintf(why, size, "a control byte \\x%02x at byte %zu", ch, i + 1);
            return why;
        }
    }
    return NULL;
}

/* ---- objects --------------------------------------------------------------------- */

static void join_path(char *out, const char *parent, const char *key)
{
    snprintf(out, FIELD_PATH_MAX, "%s%s%s", parent, *parent ? "." : "", key);
}

int fields_object_open(load_context *c, int index, const char *path, const char *parent_where,
                       const char *const *kinds, const char *what, fields_object *out)
{
    lua_State *L = c->L;
    char got[96];
    index = lua_absindex(L, index);
    memset(out, 0, sizeof *out);
    out->index = index;
    snprintf(out->path, sizeof out->path, "%s", path);
    if (!lua_istable(L, index))
        return fields_fail(c, parent_where, path, "expected %s, got %s", what,
                           fields_describe(L, index, got, sizeof got));
    lua_getfield(L, LUA_REGISTRYINDEX, SANDBOX_TAGS_KEY);
    lua_pushvalue(L, index);
    if (lua_rawget(L, -2) == LUA_TTABLE) {
        lua_getfield(L, -1, "kind");
        snprintf(out->kind, sizeof out->kind, "%s", lua_tostring(L, -1));
        lua_getfield(L, -2, "where");
        snprintf(out->where, sizeof out->where, "%s", lua_tostring(L, -1));
        lua_pop(L, 2);
    }
    lua_pop(L, 2);
    if (!kinds)
        return 0;
    for (const char *const *k = kinds; *k; k++)
        if (!strcmp(*k, out->kind))
            return 0;
    if (*out->kind)
        snprintf(got, sizeof got, "fs.%s { ... }", out->kind);
    else
        snprintf(got, sizeof got, "a plain table");
    return fields_fail(c, *out->where ? out->where : parent_where, path, "expected %s, got %s",
                       what, got);
}

int fields_object_open_field(load_context *c, const fields_object *parent, const char *key,
                             const char *const *kinds, const char *what, fields_object *out)
{
    int top = lua_gettop(c->L);
    if (fields_object_get(c, parent, key) == LUA_TNIL) {
        lua_settop(c->L, top);
        return 0;
    }
    char path[FIELD_PATH_MAX];
    join_path(path, parent->path, key);
    if (fields_object_open(c, -1, path, parent->where, kinds, what, out) != 0) {
        lua_settop(c->L, top);
        return -1;
    }
    if (!*out->where) /* a plain table: its mistakes are located at its parent */
        snprintf(out->where, sizeof out->where, "%s", parent->where);
    return 1;
}

static int by_string(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

int fields_object_check_keys(load_context *c, const fields_object *o, const char *const *known)
{
    lua_State *L = c->L;
    char got[96];
    size_t n = 0, cap = 0;
    const char **keys = NULL;
    int status = 0;
    lua_pushnil(L);
    while (lua_next(L, o->index)) {
        if (lua_type(L, -2) != LUA_TSTRING) {
            fields_describe(L, -1, got, sizeof got);
            lua_pop(L, 2);
            status = fields_fail(c, o->where, o->path, "unexpected unnamed value %s (fields "
                                 "are named, as in key = value)", got);
            break;
        }
        const char **grown = sim_array_try_grow(keys, &cap, n + 1, sizeof *keys, SIZE_MAX);
        if (!grown) {
            lua_pop(L, 2);
            status = fields_fail(c, o->where, o->path, "out of memory");
            break;
        }
        keys = grown;
        size_t length;
        const char *key = lua_tolstring(L, -2, &length); /* held by the table while we look */
        char why[64];
        if (fields_text_flaw(key, length, false, why, sizeof why)) {
            lua_pop(L, 2);
            char path[FIELD_PATH_MAX];
            join_path(path, o->path, key);
            status = fields_fail(c, o->where, path, "a key with %s (keys are names, "
                                 "as in key = value)", why);
            break;
        }
        keys[n++] = key;
        lua_pop(L, 1);
    }
    if (status == 0 && n > 0) {
        qsort(keys, n, sizeof *keys, by_string); /* the same message on every run */
        for (size_t i = 0; i < n && status == 0; i++) {
            bool ok = false;
            for (const char *const *k = known; *k && !ok; k++)
                ok = !strcmp(*k, keys[i]);
            if (ok)
                continue;
            const char *hint = closest_name(keys[i], known);
            char list[256] = "";
            for (const char *const *k = known; *k; k++)
                snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s",
                         k == known ? "" : ", ", *k);
            char path[FIELD_PATH_MAX];
            join_path(path, o->path, keys[i]);
            if (hint)
                status = fields_fail(c, o->where, path, "unknown key '%s' (did you mean '%s'?)",
                                     keys[i], hint);
            else
                status = fields_fail(c, o->where, path, "unknown key '%s' (known keys: %s)",
                                     keys[i], list);
        }
    }
    free(keys);
    return status;
}

int fields_object_get(load_context *c, const fields_object *o, const char *key)
{
    lua_pushstring(c->L, key);
    return lua_rawget(c->L, o->index); /* raw: a scenario's metatables are not consulted */
}

/* ---- scalars ------------------------------------------------------------------------ */

int fields_read_integer(load_context *c, const fields_object *o, const char *key, bool required,
                        int64_t fallback, int64_t min, int64_t max, int64_t *out)
{
    lua_State *L = c->L;
    char path[FIELD_PATH_MAX], got[96], expected[96];
    join_path(path, o->path, key);
    if (min == 1)
        snprintf(expected, sizeof expected, "a positive integer");
    else if (min == 0)
        snprintf(expected, sizeof expected, "an integer >= 0");
    else
        snprintf(expected, sizeof expected, "an integer from %lld to %lld", (long long)min,
                 (long long)max);
    int type = fields_object_get(c, o, key);
    int status = 0;
    if (type == LUA_TNIL) {
        if (required)
            status = fields_fail(c, o->where, path, "missing (expected %s)", expected);
        *out = fallback;
    } else if (type != LUA_TNUMBER) {
        status = fields_fail(c, o->where, path, "expected %s, got %s", expected,
                             fields_describe(L, -1, got, sizeof got));
    } else {
        lua_Integer i;
        double x = lua_tonumber(L, -1);
        if (lua_isinteger(L, -1))
            i = lua_tointeger(L, -1);
        else if (isfinite(x) && x == floor(x) && fabs(x) < 9.2e18)
            i = (lua_Integer)x;
        else {
            fields_describe(L, -1, got, sizeof got);
            lua_pop(L, 1);
            return fields_fail(c, o->where, path, "expected %s, got %s", expected, got);
        }
        if (i < min)
            status = fields_fail(c, o->where, path, "expected %s, got %lld", expected,
                                 (long long)i);
        else if (i > max)
            status = fields_fail(c, o->where, path, "%lld is over the limit of %lld", (long long)i,
                                 (long long)max);
        *out = i;
    }
    lua_pop(L, 1);
    return status;
}

/* A limit as a reader writes it: whole numbers in full (1048576, not 1.04858e+06), others
 * with a short exponent (1e-9, not 1e-09). */
static const char *format_limit(double x, char *buf, size_t size)
{
    if (x == floor(x) && fabs(x) < 1e15) {
        snprintf(buf, size, "%.0f", x);
        return buf;
    }
    char raw[48];
    snprintf(raw, sizeof raw, "%.6g", x);
    char *e = strchr(raw, 'e');
    if (!e) {
        snprintf(buf, size, "%s", raw);
        return buf;
    }
    const char *digits = e + 1 + (e[1] == '+' || e[1] == '-');
    while (*digits == '0' && digits[1])
        digits++;
    *e = '\0';
    snprintf(buf, size, "%se%s%s", raw, e[1] == '-' ? "-" : "", digits);
    return buf;
}

/* A value as given, to the digits that tell it from its limit: the fewest (6 to 17)
 * that read back as the same double ("1 is over the limit of 1" hid 1.0000001). */
static const char *format_value(double x, char *buf, size_t size)
{
    if (x == floor(x) && fabs(x) < 1e15) { /* whole: in full, as the limits are */
        snprintf(buf, size, "%.0f", x);
        return buf;
    }
    for (int digits = 6; digits <= 17; digits++) {
        snprintf(buf, size, "%.*g", digits, x);
        if (strtod(buf, NULL) == x)
            break;
    }
    return buf;
}

/* The number at index, finite and in [min, max] (or (min, max]). */
static int convert_number(load_context *c, const char *where, const char *path, int index,
                          double min, double max, bool allow_min, double *out)
{
    char got[96];
    if (lua_type(c->L, index) != LUA_TNUMBER)
        return fields_fail(c, where, path, "expected a number, got %s",
                           fields_describe(c->L, index, got, sizeof got));
    double x = lua_tonumber(c->L, index);
    if (!isfinite(x))
        return fields_fail(c, where, path, "expected a finite number, got %s",
                           isnan(x) ? "NaN" : x > 0 ? "inf" : "-inf");
    char limit[48], value[48];
    if (x < min || (!allow_min && x == min))
        return fields_fail(c, where, path, "expected a number %s %s, got %s",
                           allow_min ? ">=" : ">", format_limit(min, limit, sizeof limit),
                           format_value(x, value, sizeof value));
    if (x > max)
        return fields_fail(c, where, path, "%s is over the limit of %s",
                           format_value(x, value, sizeof value),
                           format_limit(max, limit, sizeof limit));
    *out = x;
    return 0;
}

int fields_read_number(load_context *c, const fields_object *o, const char *key, bool required,
                       double fallback, double min, double max, bool allow_min, double *out)
{
    char path[FIELD_PATH_MAX];
    join_path(path, o->path, key);
    int type = fields_object_get(c, o, key);
    int status = 0;
    *out = fallback;
    if (type == LUA_TNIL) {
        if (required)
            status = fields_fail(c, o->where, path, "missing (expected a number)");
    } else {
        status = convert_number(c, o->where, path, -1, min, max, allow_min, out);
    }
    lua_pop(c->L, 1);
    return status;
}

/* The value at index through fleetsim.units.<parser> (durations, rates), checked to be
 * finite and in [min, max] (or (min, max]).  The stack is left as it was. */
static int convert_with_unit(load_context *c, const char *where, const char *path, int index,
                             const char *parser, const char *noun, const char *unit,
                             double min, double max, bool allow_min, double *out)
{
    lua_State *L = c->L;
    int top = lua_gettop(L);
    index = lua_absindex(L, index);
    if (lua_getfield(L, LUA_REGISTRYINDEX, "fleetsim.parsers") != LUA_TTABLE) {
        lua_settop(L, top);
        return fields_fail(c, where, path, "the fleetsim module was not loaded");
    }
    lua_pushstring(L, parser);
    lua_rawget(L, -2);
    lua_pushvalue(L, index);
    if (lua_pcall(L, 1, 2, 0) != LUA_OK || lua_type(L, -2) != LUA_TNUMBER) {
        const char *why = lua_tostring(L, -1);
        int status = fields_fail(c, where, path, "%s", why ? why : "not a value with a unit");
        lua_settop(L, top);
        return status;
    }
    double x = lua_tonumber(L, -2);
    lua_settop(L, top);
    if (!isfinite(x))
        return fields_fail(c, where, path, "expected a finite %s, got %s", noun,
                           isnan(x) ? "NaN" : x > 0 ? "inf" : "-inf");
    char limit[48], value[48];
    if (x < min || (!allow_min && x == min))
        return fields_fail(c, where, path, "expected a %s %s %s %s, got %s %s", noun,
                           allow_min ? ">=" : ">", format_limit(min, limit, sizeof limit), unit,
                           format_value(x, value, sizeof value), unit);
    if (x > max)
        return fields_fail(c, where, path, "%s %s is over the limit of %s %s",
                           format_value(x, value, sizeof value), unit,
                           format_limit(max, limit, sizeof limit), unit);
    *out = x;
    return 0;
}

static int read_with_unit(load_context *c, const fields_object *o, const char *key,
                          const char *parser, const char *noun, const char *unit,
                          bool required, double fallback, double min, double max,
                          bool allow_min, double *out)
{
    char path[FIELD_PATH_MAX];
    join_path(path, o->path, key);
    *out = fallback;
    int status = 0;
    if (fields_object_get(c, o, key) == LUA_TNIL) {
        if (required)
            status = fields_fail(c, o->where, path, "missing (expected a %s)", noun);
    } else {
        status = convert_with_unit(c, o->where, path, -1, parser, noun, unit, min, max,
                                   allow_min, out);
    }
    lua_pop(c->L, 1);
    return status;
}

int fields_read_duration(load_context *c, const fields_object *o, const char *key, bool required,
                         double fallback, double min_s, double max_s, bool allow_min, double *out)
{
    return read_with_unit(c, o, key, "duration", "duration", "s", required, fallback, min_s,
                          max_s, allow_min, out);
}

int fields_read_size(load_context *c, const fields_object *o, const char *key, double max,
                     double *out)
{
    return read_with_unit(c, o, key, "size", "size", "bytes", true, 0, FIELDS_MIN_BYTES, max,
                          true, out);
}

int fields_read_rate(load_context *c, const fields_object *o, const char *key, double max,
                     double *out)
{
    return read_with_unit(c, o, key, "rate", "rate", "/s", true, 0, FIELDS_MIN_RATE_PER_S, max,
                          true, out);
}

int fields_read_bandwidth(load_context *c, const fields_object *o, const char *key,
                          bool required, double fallback, double max, double *out)
{
    return read_with_unit(c, o, key, "bandwidth", "bandwidth", "bytes/s", required, fallback,
                          FIELDS_MIN_BYTES_PER_S, max, true, out);
}

int fields_read_string(load_context *c, const fields_object *o, const char *key, bool required,
                       char **out)
{
    lua_State *L = c->L;
    char path[FIELD_PATH_MAX], got[96];
    join_path(path, o->path, key);
    int type = fields_object_get(c, o, key);
    int status = 0;
    *out = NULL;
    if (type == LUA_TNIL) {
        if (required)
            status = fields_fail(c, o->where, path, "missing (expected a string)");
    } else if (type != LUA_TSTRING) {
        status = fields_fail(c, o->where, path, "expected a string, got %s",
                             fields_describe(L, -1, got, sizeof got));
    } else {
        size_t length;
        const char *text = lua_tolstring(L, -1, &length);
        char why[64];
        if (fields_text_flaw(text, length, true, why, sizeof why))
            status = fields_fail(c, o->where, path, "expected text, got a string with %s",
                                 why);
        else if (!(*out = strdup(text)))
            status = fields_fail(c, o->where, path, "out of memory");
    }
    lua_pop(L, 1);
    return status;
}

/* ---- distributions of durations -------------------------------------------------- */

static const char *const DIST_KINDS[] = {
    "constant", "exponential", "uniform", "normal", "lognormal", "gamma", "weibull",
    "pareto", "empirical", NULL,
};

/* An array of durations (values) or numbers (weights) under key, into a new array. */
int fields_read_list(load_context *c, const fields_object *o, const char *key, bool durations,
                     bool required, double **out, size_t *n)
{
    lua_State *L = c->L;
    char path[FIELD_PATH_MAX], got[96];
    join_path(path, o->path, key);
    *out = NULL;
    *n = 0;
    if (fields_object_get(c, o, key) != LUA_TTABLE) {
        int absent = lua_isnil(L, -1);
        fields_describe(L, -1, got, sizeof got);
        lua_pop(L, 1);
        return absent && !required ? 0
                                    : fields_fail(c, o->where, path, "expected a list such as "
                                                  "{ 1, 2, 3 }, got %s", got);
    }
    int list = lua_gettop(L);
    size_t len = (size_t)lua_rawlen(L, list);
    if (len == 0 || len > LOAD_MAX_LIST_VALUES) {
        lua_pop(L, 1);
        return fields_fail(c, o->where, path, "expected a list of 1 to %u values, got %zu",
                           LOAD_MAX_LIST_VALUES, len);
    }
    if (c->list_values + len > LOAD_MAX_LIST_VALUES) {
        lua_pop(L, 1);
        return fields_fail(c, o->where, path, "the scenario's lists hold over %u values in all",
                           LOAD_MAX_LIST_VALUES);
    }
    c->list_values += len;
    double *values = malloc(len * sizeof *values);
    if (!values) {
        lua_pop(L, 1);
        return fields_fail(c, o->where, path, "out of memory for %zu values", len);
    }
    int status = 0;
    for (size_t i = 0; i < len && status == 0; i++) {
        char item[FIELD_PATH_MAX];
        snprintf(item, sizeof item, "%s.%zu", path, i + 1);
        lua_rawgeti(L, list, (lua_Integer)i + 1);
        if (durations)
            status = convert_with_unit(c, o->where, item, -1, "duration", "duration", "s", 0,
                                       INFINITY, true, &values[i]);
        else
            status = convert_number(c, o->where, item, -1, 0, INFINITY, true, &values[i]);
        lua_pop(L, 1);
    }
    lua_pop(L, 1);
    if (status != 0) {
        free(values);
        return status;
    }
    *out = values;
    *n = len;
    return 0;
}

static int read_empirical(load_context *c, const fields_object *d, bool durations, sim_dist *out)
{
    static const char *const keys[] = { "values", "weights", "interpolate", NULL };
    if (fields_object_check_keys(c, d, keys) != 0)
        return -1;
    double *values = NULL, *weights = NULL;
    size_t n = 0, nw = 0;
    if (fields_read_list(c, d, "values", durations, true, &values, &n) != 0)
        return -1;
    if (fields_read_list(c, d, "weights", false, false, &weights, &nw) != 0) {
        free(values);
        return -1;
    }
    fields_object_get(c, d, "interpolate");
    bool interpolate = lua_toboolean(c->L, -1);
    lua_pop(c->L, 1);
    int status = 0;
    char why[200];
    if (weights && nw != n)
        status = fields_fail(c, d->where, d->path, "has %zu weights for %zu values", nw, n);
    else if (sim_dist_empirical(out, values, weights, n, interpolate, why, sizeof why) != 0)
        status = fields_fail(c, d->where, d->path, "%s", why);
    free(values);
    free(weights);
    return status;
}

/* What a distribution's parameters are: durations (with units) or plain numbers. */
typedef int (*value_reader)(load_context *c, const fields_object *o, const char *key, bool required,
                            double fallback, double min, double max, bool allow_min, double *out);

typedef struct dist_unit {
    value_reader read;
    bool durations;  /* list values of fs.empirical go through the unit parser */
    const char *noun; /* "a duration", "a token count" */
    const char *plural;
} dist_unit;

static int read_dist(load_context *c, const fields_object *o, const char *key, const dist_unit *u,
                     sim_dist *out)
{
    lua_State *L = c->L;
    char path[FIELD_PATH_MAX];
    join_path(path, o->path, key);
    int top = lua_gettop(L);
    int type = fields_object_get(c, o, key);
    if (type == LUA_TNUMBER || (type == LUA_TSTRING && u->durations)) { /* a constant */
        lua_settop(L, top);
        double value;
        if (u->read(c, o, key, true, 0, 0, INFINITY, true, &value) != 0)
            return -1;
        *out = sim_dist_constant(value);
        return 0;
    }
    if (type == LUA_TNIL) {
        lua_settop(L, top);
        return fields_fail(c, o->where, path, "missing (expected %s or a distribution such as "
                           "fs.lognormal { median = ..., sigma = ... })", u->noun);
    }
    fields_object d;
    char what[128];
    snprintf(what, sizeof what, "%s or a distribution such as fs.lognormal { ... }", u->noun);
    if (fields_object_open(c, -1, path, o->where, DIST_KINDS, what, &d) != 0) {
        lua_settop(L, top);
        return -1;
    }
    const char *kind = d.kind;
    int status = 0;
    double a = 0, b = 0;
    const double inf = INFINITY;
    if (!strcmp(kind, "constant")) {
        static const char *const keys[] = { "value", NULL };
        status = fields_object_check_keys(c, &d, keys)
                 || u->read(c, &d, "value", true, 0, 0, inf, true, &a);
        *out = sim_dist_constant(a);
    } else if (!strcmp(kind, "exponential")) {
        static const char *const keys[] = { "mean", NULL };
        status = fields_object_check_keys(c, &d, keys)
                 || u->read(c, &d, "mean", true, 0, 0, inf, false, &a);
        *out = sim_dist_exponential(a);
    } else if (!strcmp(kind, "uniform")) {
        static const char *const keys[] = { "low", "high", NULL };
        status = fields_object_check_keys(c, &d, keys)
                 || u->read(c, &d, "low", true, 0, 0, inf, true, &a)
                 || u->read(c, &d, "high", true, 0, a, inf, false, &b);
        *out = sim_dist_uniform(a, b);
    } else if (!strcmp(kind, "normal")) {
        status = fields_fail(c, d.where, path, "a normal distribution can draw negative values, "
                             "and %s cannot be negative: use fs.lognormal or fs.gamma", u->plural);
    } else if (!strcmp(kind, "lognormal")) {
        static const char *const keys[] = { "median", "sigma", "p99", NULL };
        status = fields_object_check_keys(c, &d, keys)
                 || u->read(c, &d, "median", true, 0, 0, inf, false, &a);
        int has_sigma = fields_object_get(c, &d, "sigma") != LUA_TNIL;
        int has_p99 = fields_object_get(c, &d, "p99") != LUA_TNIL;
        lua_pop(L, 2);
        if (status == 0 && has_sigma == has_p99)
            status = fields_fail(c, d.where, path, "give either sigma or p99 with the median");
        else if (status == 0 && has_sigma)
            status = fields_read_number(c, &d, "sigma", true, 0, 0, 100, false, &b);
        else if (status == 0)
            status = u->read(c, &d, "p99", true, 0, a, inf, false, &b);
        if (status == 0)
            *out = has_sigma ? sim_dist_lognormal(a, b) : sim_dist_lognormal_p99(a, b);
    } else if (!strcmp(kind, "gamma")) {
        static const char *const keys[] = { "shape", "scale", "mean", "cv", NULL };
        status = fields_object_check_keys(c, &d, keys);
        int has_mean = fields_object_get(c, &d, "mean") != LUA_TNIL;
        lua_pop(L, 1);
        if (status == 0 && has_mean) { /* mean and coefficient of variation */
            status = u->read(c, &d, "mean", true, 0, 0, inf, false, &a)
                     || fields_read_number(c, &d, "cv", true, 0, 0, 1e6, false, &b);
            *out = sim_dist_gamma(1 / (b * b), a * b * b);
        } else if (status == 0) {
            status = fields_read_number(c, &d, "shape", true, 0, 0, 1e9, false, &a)
                     || u->read(c, &d, "scale", true, 0, 0, inf, false, &b);
            *out = sim_dist_gamma(a, b);
        }
    } else if (!strcmp(kind, "weibull")) {
        static const char *const keys[] = { "scale", "shape", NULL };
        status = fields_object_check_keys(c, &d, keys)
                 || u->read(c, &d, "scale", true, 0, 0, inf, false, &a)
                 || fields_read_number(c, &d, "shape", true, 0, 0, 1e9, false, &b);
        *out = sim_dist_weibull(a, b);
    } else if (!strcmp(kind, "pareto")) {
        static const char *const keys[] = { "shape", "minimum", NULL };
        status = fields_object_check_keys(c, &d, keys)
                 || fields_read_number(c, &d, "shape", true, 0, 0, 1e9, false, &a)
                 || u->read(c, &d, "minimum", true, 0, 0, inf, false, &b);
        *out = sim_dist_pareto(a, b);
    } else {
        status = read_empirical(c, &d, u->durations, out);
    }
    char why[200];
    if (status == 0 && sim_dist_check(out, why, sizeof why) != 0) {
        sim_dist_release(out);
        status = fields_fail(c, d.where, path, "%s", why);
    }
    lua_settop(L, top);
    return status ? -1 : 0;
}

int fields_read_duration_dist(load_context *c, const fields_object *o, const char *key,
                              sim_dist *out)
{
    static const dist_unit durations = { fields_read_duration, true, "a duration", "durations" };
    return read_dist(c, o, key, &durations, out);
}

int fields_read_count_dist(load_context *c, const fields_object *o, const char *key, sim_dist *out)
{
    static const dist_unit counts = { fields_read_number, false, "a token count", "token counts" };
    return read_dist(c, o, key, &counts, out);
}

/* A string field restricted to a list of words, with a default. */
int fields_read_choice(load_context *c, const fields_object *o, const char *key,
                       const char *const *choices, int fallback, int *out)
{
    char *word = NULL;
    if (fields_read_string(c, o, key, false, &word) != 0)
        return -1;
    *out = fallback;
    if (!word)
        return 0;
    for (int i = 0; choices[i]; i++) {
        if (!strcmp(choices[i], word)) {
            *out = i;
            free(word);
            return 0;
        }
    }
    char path[FIELD_PATH_MAX], list[256] = "";
    snprintf(path, sizeof path, "%s.%s", o->path, key);
    for (int i = 0; choices[i]; i++)
        snprintf(list + strlen(list), sizeof list - strlen(list), "%s\"%s\"", i ? ", " : "",
                 choices[i]);
    int status = fields_fail(c, o->where, path, "expected one of %s, got \"%s\"", list, word);
    free(word);
    return status;
}

int fields_read_flag(load_context *c, const fields_object *o, const char *key, bool fallback,
                     bool *out)
{
    int type = fields_object_get(c, o, key);
    *out = type == LUA_TNIL ? fallback : lua_toboolean(c->L, -1);
    lua_pop(c->L, 1);
    if (type != LUA_TNIL && type != LUA_TBOOLEAN) {
        char path[FIELD_PATH_MAX];
        snprintf(path, sizeof path, "%s.%s", o->path, key);
        return fields_fail(c, o->where, path, "expected true or false");
    }
    return 0;
}

/* A file a scenario names: relative to the scenario's folder, and inside it unless the
 * sandbox is lifted. */
int fields_resolve_path(load_context *c, const fields_object *o, const char *key, const char *file,
                        char **out)
{
    char path[FIELD_PATH_MAX];
    snprintf(path, sizeof path, "%s.%s", o->path, key);
    bool escapes = file[0] == '/' || !strcmp(file, "..") || !strncmp(file, "../", 3)
                   || strstr(file, "/../") || (strlen(file) >= 3 && !strcmp(file + strlen(file) - 3, "/.."));
    if (escapes && !c->unsafe)
        return fields_fail(c, o->where, path, "\"%s\" is outside the scenario's folder; a "
                           "scenario reads files beside it (a trusted file can use --unsafe)",
                           file);
    const char *slash = strrchr(c->scenario_path, '/');
    size_t dir = file[0] == '/' || !slash ? 0 : (size_t)(slash - c->scenario_path) + 1;
    size_t n = dir + strlen(file) + 1;
    *out = malloc(n);
    if (!*out)
        return fields_fail(c, o->where, path, "out of memory");
    snprintf(*out, n, "%.*s%s", (int)dir, c->scenario_path, file);
    if (c->unsafe)
        return 0;
    /* the text stays inside; so must the file it names, through any symbolic link, and
     * it must be a plain file (not a device that never ends) */
    char folder[4096], real_folder[4096], real_file[4096];
    snprintf(folder, sizeof folder, "%.*s", dir ? (int)dir : 1, dir ? c->scenario_path : ".");
    struct stat st;
    int status = 0;
    if (!realpath(folder, real_folder) || !realpath(*out, real_file))
        status = fields_fail(c, o->where, path, "cannot find \"%s\": %s", file, strerror(errno));
    else if (strncmp(real_file, real_folder, strlen(real_folder))
             || real_file[strlen(real_folder)] != '/')
        status = fields_fail(c, o->where, path, "\"%s\" leads outside the scenario's folder "
                             "(a link?); a trusted file can use --unsafe", file);
    else if (stat(real_file, &st) != 0 || !S_ISREG(st.st_mode))
        status = fields_fail(c, o->where, path, "\"%s\" is not a plain file", file);
    if (status != 0) {
        free(*out);
        *out = NULL;
    }
    return status;
}
