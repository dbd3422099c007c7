/* Reading checked values out of the tables a scenario file returns.
 *
 * Every reader reports a mistake as "file.lua:12: pools.q.count: expected a positive
 * integer, got 2.5": the place where the object holding the key was built (remembered
 * by its constructor), the dotted path of the key, what was expected and the value
 * found.  A value changed on the command line is reported as "--set KEY=VALUE: ...".
 * Readers return 0, or -1 with the message written into the context.
 */
#ifndef FLEETSIM_LUA_FIELDS_H
#define FLEETSIM_LUA_FIELDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <lua.h>

#include "sim/dist.h"

#define FIELD_PATH_MAX 256

typedef struct load_context {
    lua_State *L;
    char *err;
    size_t err_size;
    const char *const *sets; /* --set KEY=VALUE texts, for locating their errors */
    size_t nsets;
    const char *scenario_path; /* files a scenario names are relative to its folder */
    bool unsafe;               /* may name files outside that folder */
    size_t list_values;        /* values copied out of lists so far (capped) */
    bool no_tp_trials;         /* scenario_load_options.no_tp_trials */
    /* the catalogs as this state holds them, read before (a file converted again at
     * each point of a sweep): copied instead of read again; NULL: read them */
    const struct catalog *catalog_read;
} load_context;

/* Values a scenario's lists may hold in all: the C copies are outside the sandbox's
 * memory cap, so they have a cap of their own (80 MB of doubles). */
#define LOAD_MAX_LIST_VALUES 10000000u

/* A table made by an API constructor, on the Lua stack. */
typedef struct fields_object {
    int index;                 /* absolute stack index */
    char kind[32];             /* "dedicated", "poisson", ... ("" if untagged) */
    char where[FIELD_PATH_MAX]; /* "file.lua:12: " ("" if untagged) */
    char path[FIELD_PATH_MAX];  /* "pools.q" */
} fields_object;

/* Writes the message for a mistake at path (in an object built at `where`, which is
 * "file.lua:12: " or ""). */
__attribute__((format(printf, 4, 5)))
int fields_fail(load_context *c, const char *where, const char *path, const char *format, ...);

/* Describes the value at index for a message: "\"eight\"", "2.5", "true", "a table",
 * "nothing". */
const char *fields_describe(lua_State *L, int index, char *buf, size_t size);

/* NULL when the `length` bytes at text are text (no control byte; tab and newline
 * allowed where lines_ok), else why not, into why: "a control byte
 * \x00 at byte 3".  C reads a string to its first NUL, so a name or text with one would
 * be checked and looked up cut. */
const char *fields_text_flaw(const char *text, size_t length, bool lines_ok, char *why,
                             size_t size);

/* Takes the table at `index` as an object of one of the kinds in `kinds` (NULL-ended;
 * NULL accepts any tagged table).  what names the expectation in messages, e.g. "a pool
 * such as fs.dedicated { ... }".  parent_where locates the mistake if it is not a table. */
int fields_object_open(load_context *c, int index, const char *path, const char *parent_where,
                       const char *const *kinds, const char *what, fields_object *out);

/* The table under parent[key] as an object (kinds and what as for fields_object_open; a plain
 * table takes its parent's place for messages): 1 when present (pushed on the stack),
 * 0 when absent (nothing pushed), -1 on a mistake (nothing pushed). */
int fields_object_open_field(load_context *c, const fields_object *parent, const char *key,
                             const char *const *kinds, const char *what, fields_object *out);

/* Refuses keys not in known (NULL-ended), suggesting the closest known one. */
int fields_object_check_keys(load_context *c, const fields_object *o, const char *const *known);

/* Pushes the field's value (nil if absent) and returns its Lua type. */
int fields_object_get(load_context *c, const fields_object *o, const char *key);

/* Integer in [min, max]; absent: *out = fallback, or an error when required. */
int fields_read_integer(load_context *c, const fields_object *o, const char *key, bool required,
                        int64_t fallback, int64_t min, int64_t max, int64_t *out);

/* A duration in seconds, in [min_s, max_s], finite (strings through fleetsim.units). */
int fields_read_duration(load_context *c, const fields_object *o, const char *key, bool required,
                         double fallback, double min_s, double max_s, bool allow_min, double *out);

/* The least a size, a rate and a bandwidth may be: below them a value means nothing a
 * fleet does and its arithmetic leaves the doubles' range (a link of 1e-300 B/s printed
 * a fraction of inf, a rate of 1e-300/s waits of 2.7e307 s).  A byte; one event in about
 * 32 years; a kilobyte a second, slower than any network a GPU is reached through. */
#define FIELDS_MIN_BYTES 1.0
#define FIELDS_MIN_RATE_PER_S 1e-9
#define FIELDS_MIN_BYTES_PER_S 1e3

/* A size in bytes in [FIELDS_MIN_BYTES, max] (strings such as "80GB" through
 * fleetsim.units). */
int fields_read_size(load_context *c, const fields_object *o, const char *key, double max,
                     double *out);

/* A rate per second in [FIELDS_MIN_RATE_PER_S, max]. */
int fields_read_rate(load_context *c, const fields_object *o, const char *key, double max,
                     double *out);

/* A bandwidth in bytes per second in [FIELDS_MIN_BYTES_PER_S, max] ("50GB/s"); absent:
 * *out = fallback, or an error when required. */
int fields_read_bandwidth(load_context *c, const fields_object *o, const char *key,
                          bool required, double fallback, double max, double *out);

/* A finite number in [min, max] (or (min, max] without allow_min). */
int fields_read_number(load_context *c, const fields_object *o, const char *key, bool required,
                       double fallback, double min, double max, bool allow_min, double *out);

/* A list of non-negative numbers (or durations, through the unit parser) into a new
 * array (*out, *n; the caller frees *out); absent: *out NULL and *n 0, or an error when
 * required. */
int fields_read_list(load_context *c, const fields_object *o, const char *key, bool durations,
                     bool required, double **out, size_t *n);

/* A string (copied with strdup into *out, NULL if absent and not required). */
int fields_read_string(load_context *c, const fields_object *o, const char *key, bool required,
                       char **out);

/* A distribution of durations: a number or duration string (a constant) or a
 * distribution constructor.  Durations are never negative, so distributions that can
 * draw negative values are refused. */
int fields_read_duration_dist(load_context *c, const fields_object *o, const char *key,
                              sim_dist *out);

/* The same for token counts: plain numbers, no units. */
int fields_read_count_dist(load_context *c, const fields_object *o, const char *key, sim_dist *out);

/* A string field restricted to a list of words (NULL-ended): *out is the index of the
 * word given, or fallback when absent. */
int fields_read_choice(load_context *c, const fields_object *o, const char *key,
                       const char *const *choices, int fallback, int *out);

/* true or false; absent: fallback. */
int fields_read_flag(load_context *c, const fields_object *o, const char *key, bool fallback,
                     bool *out);

/* A file the scenario names in o[key] (its text in file): relative to the scenario's
 * folder, and inside it (through links too) unless c->unsafe; a plain file.  *out is a
 * new string (the caller frees it). */
int fields_resolve_path(load_context *c, const fields_object *o, const char *key, const char *file,
                        char **out);

#endif
