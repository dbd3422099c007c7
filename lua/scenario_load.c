/* Scenario files to checked scenarios (see scenario_load.h). */
#define _GNU_SOURCE /* O_CLOEXEC, F_DUPFD_CLOEXEC */
#include "lua/scenario_load.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <lauxlib.h>

#include "lua/catalog.h"
#include "lua/engine_load.h"
#include "lua/claim.h"
#include "lua/experiment_load.h"
#include "lua/gpu_tasks_load.h"
#include "lua/host_kv_load.h"
#include "lua/training_load.h"
#include "lua/cold_start_load.h"
#include "lua/pool_load.h"
#include "lua/rate_function.h"
#include "lua/router.h"
#include "lua/speculative_load.h"
#include "lua/lora_load.h"
#include "models/workload_groups.h"
#include "models/memory.h"
#include "models/replica_tp.h"
#include "models/slo_tp.h"
#include "models/trace.h"
#include "output/plot_script.h"
#include "lua/fields.h"
#include "sim/closest.h"
#include "lua/prefix_load.h"
#include "lua/sandbox.h"

static const char *const SCENARIO_KEYS[] = {
    "name", "description", "duration", "warmup", "seed", "replications", "bucket", "pools",
    "workloads", "sweep", "search", "claim", "horizon", "discount_rate", NULL,
};
static const char *const WORKLOAD_KINDS[] = {
    "service", "inference", "gpu_tasks", "training", "job_stream", NULL,
};
static const char *const INFERENCE_KEYS[] = {
    "model", "precision", "pool", "tp", "arrivals", "prompt", "output", "max_batch",
    "max_tokens", "chunked_prefill", "routing", "max_wait", "rtt", "slo",
    "response_bytes_per_token", "response_bytes", "egress_per_day", "mode", "when_full",
    "overflow", "overflow_tp", "overflow_threshold", "kv_precision", "expert_parallel", "expert_skew", "attention_dp",
    "streams", "decode", "groups", "kv_link", "host_kv", "speculative", "prefix_cache", "affinity_bound",
    "system_prompt", "sessions", "replicas", "scale_to_zero", "cold_start", "lora", "engine",
    NULL,
};
static const char *const KV_LINK_KEYS[] = {
    "bandwidth", "latency", "shared", "gpus_per_node", NULL,
};
static const char *const SLO_KEYS[] = { "ttft", "tpot", "e2e", NULL };
static const char *const TRACE_KEYS[] = {
    "file", "time", "prompt", "output", "session", "blocks", "block_tokens", "speedup", "loop",
    "sample", "skip_bad", NULL,
};
/* Requests a run may hold waiting without max_wait: about 4 GB of queue. */
#define UNBOUNDED_INFERENCE_REQUESTS 5e7
static const char *const SERVICE_KEYS[] = { "arrivals", "service", "pool", "queue_limit", NULL };
static const char *const ARRIVAL_KINDS[] = { "poisson", "constant_rate", NULL };
static const char *const ARRIVAL_KEYS[] = { "rate", NULL };

/* Queues that could grow past this many requests in a run are refused (memory). */
#define UNBOUNDED_QUEUE_REQUESTS 1e8

/* ---- named collections: pools = { q = fs.dedicated {...}, ... } ---------------------- */

typedef struct named_list {
    char **names; /* sorted, NULL-terminated */
    size_t count;
} named_list;

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void named_list_release(named_list *l)
{
    for (size_t i = 0; i < l->count; i++)
        free(l->names[i]);
    free(l->names);
    l->names = NULL;
    l->count = 0;
}

/* The length bytes at text into buf with their control characters as \xNN (cut where
 * buf ends); whether there was one. */
static bool escape_controls(const char *text, size_t length, char *buf, size_t size)
{
    size_t n = 0;
    bool any = false;
    buf[0] = '\0';
    for (size_t i = 0; i < length && n + 5 < size; i++) {
        unsigned char ch = (unsigned char)text[i];
        bool control = ch < 0x20 || ch == 0x7f;
        any |= control;
        n += (size_t)(control ? snprintf(buf + n, size - n, "\\x%02x", ch)
                              : snprintf(buf + n, size - n, "%c", ch));
    }
    return any;
}

/* A name goes into CSV cells, file names, chart scripts and terminals: printable text
 * without the characters that would break one of them, and not too long for a chart's
 * file name.  The message shows the name with its control characters escaped. */
static int check_name(load_context *c, const char *where, const char *path, const char *name)
{
    char shown[160];
    bool control = escape_controls(name, strlen(name), shown, sizeof shown);
    bool bad = !*name || control || strpbrk(name, "\",\\");
    if (bad)
        return fields_fail(c, where, path, "bad name \"%s\": a name is text without "
                           "control characters, quotes, commas or backslashes", shown);
    if (strlen(name) > 64)
        return fields_fail(c, where, path, "the name \"%.64s...\" is longer than 64 bytes",
                           name);
    return 0;
}

/* Two names of one table must not give one chart file name (plots/<scope>_<name>...:
 * the second chart would silently replace the first). */
static int check_file_names(load_context *c, const char *where, const char *path,
                            const named_list *l)
{
    for (size_t i = 0; i < l->count; i++)
        for (size_t j = i + 1; j < l->count; j++) {
            char a[160], b[160];
            plot_script_name(a, sizeof a, l->names[i]);
            plot_script_name(b, sizeof b, l->names[j]);
            if (!strcmp(a, b))
                return fields_fail(c, where, path, "\"%s\" and \"%s\" would have the same "
                                   "file name, \"%s\", for their charts: rename one",
                                   l->names[i], l->names[j], a);
        }
    return 0;
}

/* The names of a table of named objects, sorted, so every run sees the same order
 * (Lua's own table order varies from run to run). */
static int list_names(load_context *c, const fields_object *o, const char *key, bool optional,
                      fields_object *table, named_list *out)
{
    lua_State *L = c->L;
    char path[FIELD_PATH_MAX], got[96];
    snprintf(path, sizeof path, "%s", key);
    memset(out, 0, sizeof *out);
    int type = fields_object_get(c, o, key);
    if (type == LUA_TNIL && optional) { /* an empty table stands in for it */
        lua_pop(L, 1);
        lua_newtable(L);
        type = LUA_TTABLE;
    }
    if (type != LUA_TTABLE) {
        fields_describe(L, -1, got, sizeof got);
        lua_pop(L, 1);
        return fields_fail(c, o->where, path, "%s (expected a table of named %s, as in "
                           "%s = { name = ... })", type == LUA_TNIL ? "missing" : got, key, key);
    }
    *table = (fields_object){ .index = lua_gettop(L) };
    snprintf(table->where, sizeof table->where, "%s", o->where);
    snprintf(table->path, sizeof table->path, "%s", path);
    lua_pushnil(L);
    while (lua_next(L, table->index)) {
        lua_pop(L, 1);
        if (lua_type(L, -1) != LUA_TSTRING) {
            fields_describe(L, -1, got, sizeof got);
            lua_pop(L, 1);
            named_list_release(out);
            return fields_fail(c, o->where, path, "entries need names, as in %s = { name = ... }, "
                               "got the key %s", key, got);
        }
        size_t length;
        const char *text = lua_tolstring(L, -1, &length);
        /* a name with a NUL byte is kept with its bytes escaped ("gp\x00us"): C would
         * read it cut, and the backslash makes check_name refuse it below, in sorted
         * order with the others, showing where the NUL was */
        char escaped[160];
        if (strlen(text) != length) {
            escape_controls(text, length, escaped, sizeof escaped);
            text = escaped;
        }
        char **grown = realloc(out->names, (out->count + 2) * sizeof *grown);
        char *name = strdup(text);
        if (!grown || !name) {
            free(name);
            if (grown)
                out->names = grown;
            lua_pop(L, 1);
            named_list_release(out);
            return fields_fail(c, o->where, path, "out of memory");
        }
        out->names = grown;
        out->names[out->count++] = name;
        out->names[out->count] = NULL;
    }
    if (out->count == 0 && !optional) {
        named_list_release(out);
        return fields_fail(c, o->where, path, "is empty (expected at least one entry)");
    }
    if (out->count > 1)
        qsort(out->names, out->count, sizeof *out->names, by_name);
    for (size_t i = 0; i < out->count; i++) {
        char entry[FIELD_PATH_MAX];
        snprintf(entry, sizeof entry, "%s.%s", path, out->names[i]);
        if (check_name(c, o->where, entry, out->names[i]) != 0) {
            named_list_release(out);
            return -1;
        }
    }
    if (check_file_names(c, o->where, path, out) != 0) {
        named_list_release(out);
        return -1;
    }
    return 0;
}

/* Opens entry `name` of a named table as an object of one of `kinds`. */
static int open_entry(load_context *c, const fields_object *table, const char *name,
                      const char *const *kinds, const char *what, fields_object *out)
{
    char path[FIELD_PATH_MAX];
    snprintf(path, sizeof path, "%s.%s", table->path, name);
    lua_pushstring(c->L, name);
    lua_rawget(c->L, table->index);
    return fields_object_open(c, -1, path, table->where, kinds, what, out);
}

/* ---- pools and workloads ------------------------------------------------------------ */

/* A renewal process; expected says what the workload takes, for a message. */
static int convert_arrivals(load_context *c, const fields_object *w, const char *expected,
                            arrival_spec *out)
{
    char path[FIELD_PATH_MAX];
    snprintf(path, sizeof path, "%s.arrivals", w->path);
    int top = lua_gettop(c->L);
    fields_object_get(c, w, "arrivals");
    fields_object a;
    int status = fields_object_open(c, -1, path, w->where, ARRIVAL_KINDS, expected, &a);
    if (status == 0)
        status = fields_object_check_keys(c, &a, ARRIVAL_KEYS);
    if (status == 0)
        status = fields_read_rate(c, &a, "rate", SCENARIO_MAX_RATE_PER_S, &out->rate_per_s);
    out->kind = !strcmp(a.kind, "poisson") ? ARRIVALS_POISSON : ARRIVALS_CONSTANT_RATE;
    lua_settop(c->L, top);
    return status;
}

/* Finds a pool by name for a workload; -1 with a did-you-mean when there is none. */
static int find_pool_at(load_context *c, const fields_object *w, const char *key,
                        const scenario *sc, const named_list *pools, const char *pool,
                        size_t *out)
{
    for (size_t i = 0; i < sc->npools; i++) {
        if (!strcmp(sc->pools[i].name, pool)) {
            *out = i;
            return 0;
        }
    }
    char path[FIELD_PATH_MAX];
    snprintf(path, sizeof path, "%s.%s", w->path, key);
    if (pools->count == 0)
        return fields_fail(c, w->where, path, "no pool named \"%s\" (the scenario has no pools)",
                           pool);
    const char *hint = closest_name(pool, (const char *const *)pools->names);
    if (hint)
        return fields_fail(c, w->where, path, "no pool named \"%s\" (did you mean \"%s\"?)",
                           pool, hint);
    return fields_fail(c, w->where, path, "no pool named \"%s\" (pools: %s%s)", pool,
                       pools->names[0], pools->count > 1 ? ", ..." : "");
}

static int find_pool(load_context *c, const fields_object *w, const scenario *sc,
                     const named_list *pools, const char *pool, size_t *out)
{
    return find_pool_at(c, w, "pool", sc, pools, pool, out);
}

static int convert_service(load_context *c, const fields_object *w, const scenario *sc,
                           const named_list *pools, service_spec *out)
{
    char *pool = NULL;
    int64_t queue_limit;
    if (fields_object_check_keys(c, w, SERVICE_KEYS) != 0
        || convert_arrivals(c, w, "fs.poisson or fs.constant_rate (fs.profile, fs.diurnal, "
                            "fs.mmpp, fs.trace and fs.closed_loop drive fs.inference "
                            "workloads)", &out->arrivals) != 0
        || fields_read_duration_dist(c, w, "service", &out->service) != 0
        || fields_read_integer(c, w, "queue_limit", false, 0, 1, SCENARIO_MAX_QUEUE_LIMIT,
                               &queue_limit) != 0
        || fields_read_string(c, w, "pool", true, &pool) != 0) {
        free(pool);
        return -1;
    }
    out->queue_limit = (size_t)queue_limit;
    int status = find_pool(c, w, sc, pools, pool, &out->pool);
    free(pool);
    return status;
}

/* What a workload sends its users (egress): response_bytes_per_token (4: text) and
 * response_bytes (0), or a volume a day, egress_per_day ("2TB"), which replaces them. */
static int read_egress_volume(load_context *c, const fields_object *w, inference_spec *out)
{
    bool per_token = fields_object_get(c, w, "response_bytes_per_token") != LUA_TNIL;
    lua_pop(c->L, 1);
    bool per_response = fields_object_get(c, w, "response_bytes") != LUA_TNIL;
    lua_pop(c->L, 1);
    bool volume = fields_object_get(c, w, "egress_per_day") != LUA_TNIL;
    lua_pop(c->L, 1);
    if (volume && (per_token || per_response)) {
        char path[FIELD_PATH_MAX + 32];
        snprintf(path, sizeof path, "%s.egress_per_day", w->path);
        return fields_fail(c, w->where, path, "given with %s: state the volume or the bytes, "
                           "not both", per_token ? "response_bytes_per_token" : "response_bytes");
    }
    if (volume)
        return fields_read_size(c, w, "egress_per_day", 1e18, &out->egress_bytes_per_day);
    if (fields_read_number(c, w, "response_bytes_per_token", false, 4, 0, 1e6, true,
                           &out->response_bytes_per_token) != 0)
        return -1;
    if (!per_response)
        return 0;
    return fields_read_size(c, w, "response_bytes", 1e12, &out->response_bytes);
}

static int convert_slo(load_context *c, const fields_object *w, inference_spec *out)
{
    int top = lua_gettop(c->L);
    fields_object slo;
    int found = fields_object_open_field(c, w, "slo", NULL, "a table such as { ttft = \"200ms\" }",
                                         &slo);
    if (found <= 0)
        return found;
    int status = fields_object_check_keys(c, &slo, SLO_KEYS)
                 || fields_read_duration(c, &slo, "ttft", false, 0, 0, 1e9, false, &out->slo_ttft_s)
                 || fields_read_duration(c, &slo, "tpot", false, 0, 0, 1e9, false, &out->slo_tpot_s)
                 || fields_read_duration(c, &slo, "e2e", false, 0, 0, 1e9, false, &out->slo_e2e_s);
    lua_settop(c->L, top);
    return status ? -1 : 0;
}

static char *dup_or_default(char *value, const char *fallback)
{
    return value ? value : strdup(fallback);
}

/* Opens the trace once, at load: every replication (and every worker forked later)
 * reads this descriptor, so the file cannot be swapped for another between the check
 * and the reads.  What is opened is checked, not only the name: a plain file, inside
 * the scenario's folder (unless unsafe). */
static int open_trace(load_context *c, const fields_object *t, const char *file,
                      const char *resolved, int *out)
{
    char key[FIELD_PATH_MAX];
    snprintf(key, sizeof key, "%s.file", t->path);
    int fd = open(resolved, O_RDONLY | O_CLOEXEC);
    if (fd >= 0 && fd < 3) { /* never 0 (read as "no descriptor"), nor a standard stream */
        int moved = fcntl(fd, F_DUPFD_CLOEXEC, 3);
        close(fd);
        fd = moved;
    }
    if (fd < 0)
        return fields_fail(c, t->where, key, "cannot read \"%s\": %s", file, strerror(errno));
    struct stat st;
    char link[64], opened[PATH_MAX], folder[PATH_MAX];
    int status = 0;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
        status = fields_fail(c, t->where, key, "\"%s\" is not a plain file", file);
    if (status == 0 && !c->unsafe) {
        snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
        ssize_t n = readlink(link, opened, sizeof opened - 1);
        const char *slash = strrchr(c->scenario_path, '/');
        char dir[PATH_MAX];
        snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - c->scenario_path) : 1,
                 slash ? c->scenario_path : ".");
        if (slash == c->scenario_path)
            snprintf(dir, sizeof dir, "/");
        if (n < 0 || !realpath(dir, folder))
            status = fields_fail(c, t->where, key, "cannot check \"%s\": %s", file,
                                 strerror(errno));
        else {
            opened[n] = '\0';
            size_t k = strlen(folder);
            bool inside = !strncmp(opened, folder, k) && (opened[k] == '/' || k == 1);
            if (!inside)
                status = fields_fail(c, t->where, key, "\"%s\" leads outside the scenario's "
                                     "folder (a link?); a trusted file can use --unsafe", file);
        }
    }
    if (status != 0) {
        close(fd);
        return -1;
    }
    *out = fd;
    return 0;
}

/* arrivals = fs.trace { file, time, prompt, output, session, blocks, block_tokens,
 * speedup, loop, sample, skip_bad } */
static int convert_trace(load_context *c, const fields_object *w, inference_spec *out)
{
    int top = lua_gettop(c->L);
    char path[FIELD_PATH_MAX];
    snprintf(path, sizeof path, "%s.arrivals", w->path);
    fields_object t;
    static const char *const kinds[] = { "trace", NULL };
    char *file = NULL, *time = NULL, *prompt = NULL, *output = NULL, *session_column = NULL;
    char *blocks_column = NULL;
    int64_t block_tokens = TRACE_BLOCK_TOKENS;
    double speedup = 1;
    int status = fields_object_open_field(c, w, "arrivals", kinds, "fs.trace { ... }", &t) != 1
                 || fields_object_check_keys(c, &t, TRACE_KEYS)
                 || fields_read_string(c, &t, "file", true, &file)
                 || fields_read_string(c, &t, "time", false, &time)
                 || fields_read_string(c, &t, "prompt", false, &prompt)
                 || fields_read_string(c, &t, "output", false, &output)
                 || fields_read_string(c, &t, "session", false, &session_column)
                 || fields_read_string(c, &t, "blocks", false, &blocks_column)
                 || fields_read_integer(c, &t, "block_tokens", false, TRACE_BLOCK_TOKENS, 1,
                                        65536, &block_tokens)
                 || fields_read_number(c, &t, "speedup", false, 1, 0, 1e9, false, &speedup)
                 || fields_read_number(c, &t, "sample", false, 1, 0, 1, false, &out->sample)
                 || fields_read_flag(c, &t, "loop", false, &out->loop)
                 || fields_read_flag(c, &t, "skip_bad", false, &out->trace.skip_bad);
    char *resolved = NULL;
    if (status == 0)
        status = fields_resolve_path(c, &t, "file", file, &resolved);
    if (status == 0)
        status = open_trace(c, &t, file, resolved, &out->trace.fd);
    out->has_trace = true;
    out->trace.path = resolved;
    out->trace.time_column = dup_or_default(time, "TIMESTAMP");
    out->trace.prompt_column = dup_or_default(prompt, "ContextTokens");
    out->trace.output_column = dup_or_default(output, "GeneratedTokens");
    out->trace.session_column = session_column; /* NULL: none */
    out->trace.blocks_column = blocks_column;   /* NULL: none */
    out->trace.block_tokens = (unsigned)block_tokens;
    if (status == 0 && (!out->trace.time_column || !out->trace.prompt_column
                        || !out->trace.output_column))
        status = fields_fail(c, t.where, path, "out of memory");
    out->trace.speedup = speedup;
    out->arrivals = (arrival_spec){ ARRIVALS_POISSON, 1 }; /* unused: the trace drives */
    if (status == 0 && trace_scan(&out->trace, &out->trace_summary, c->err, c->err_size) != 0)
        status = -1; /* the message is the trace's "file:row N: ..." */
    if (status == 0 && out->loop && !(out->trace_summary.duration_s > 0)) {
        char loop_path[FIELD_PATH_MAX];
        snprintf(loop_path, sizeof loop_path, "%s.loop", t.path);
        status = fields_fail(c, t.where, loop_path, "the trace's %llu row%s all arrive%s at "
                             "one instant: a loop would replay them at that instant without "
                             "end; a looped trace needs rows over a span of time (or leave out "
                             "loop = true)",
                             (unsigned long long)out->trace_summary.rows,
                             out->trace_summary.rows == 1 ? "" : "s",
                             out->trace_summary.rows == 1 ? "s" : "");
    }
    if (status == 0)
        out->arrivals.rate_per_s = out->trace_summary.rows / fmax(out->trace_summary.duration_s, 1e-9);
    free(file);
    lua_settop(c->L, top);
    return status ? -1 : 0;
}

/* prompt and output: distributions, or (with a trace, when both are left out) the
 * trace's own columns. */
static int read_lengths(load_context *c, const fields_object *w, inference_spec *out)
{
    bool has_prompt = fields_object_get(c, w, "prompt") != LUA_TNIL;
    bool has_output = fields_object_get(c, w, "output") != LUA_TNIL;
    lua_pop(c->L, 2);
    if (out->has_trace && !has_prompt && !has_output) {
        out->lengths_from_trace = true;
        double rows = fmax((double)out->trace_summary.rows, 1);
        out->prompt_tokens = sim_dist_constant(out->trace_summary.prompt_tokens / rows);
        out->output_tokens = sim_dist_constant(out->trace_summary.output_tokens / rows);
        return 0;
    }
    if (fields_read_count_dist(c, w, "prompt", &out->prompt_tokens) != 0)
        return -1;
    return fields_read_count_dist(c, w, "output", &out->output_tokens);
}

/* Whether the workload's arrivals are one of kinds. */
static bool arrivals_are(load_context *c, const fields_object *w, const char *const *kinds)
{
    int top = lua_gettop(c->L);
    fields_object_get(c, w, "arrivals");
    fields_object a;
    char scratch[16];
    char *saved = c->err;
    size_t saved_size = c->err_size;
    c->err = scratch; /* a probe: its failure is not the user's mistake */
    c->err_size = sizeof scratch;
    bool yes = lua_istable(c->L, -1) && fields_object_open(c, -1, "", "", kinds, "", &a) == 0;
    c->err = saved;
    c->err_size = saved_size;
    lua_settop(c->L, top);
    return yes;
}

static const char *const TRACE_KIND[] = { "trace", NULL };
static const char *const TRAFFIC_KINDS[] = { "profile", "diurnal", "mmpp", "closed_loop", NULL };
static const char *const PROFILE_KEYS[] = { "rates", "step", "rate", "peak", NULL };
static const char *const MMPP_KEYS[] = { "rates", "dwell", NULL };
/* An MMPP's state changes between two arrivals, on average, at most: 100 a millisecond's
 * dwell at 10 requests/s is a burst's scale; past this it is a Poisson process, and the
 * changes, drawn within one event, would stall the run between two events for seconds. */
#define MMPP_MAX_CHANGES_PER_ARRIVAL 1e4
static const char *const DIURNAL_KEYS[] = { "rates", NULL };
static const char *const CLOSED_KEYS[] = { "users", "think", NULL };

/* arrivals = fs.profile { rates, step } | fs.diurnal { rates } (24 hourly rates) |
 * fs.mmpp { rates, dwell } | fs.closed_loop { users, think } */
static int convert_traffic(load_context *c, const fields_object *w, inference_spec *out)
{
    int top = lua_gettop(c->L);
    char path[FIELD_PATH_MAX];
    snprintf(path, sizeof path, "%s.arrivals", w->path);
    fields_object a;
    traffic_spec *t = &out->traffic;
    out->has_traffic = true;
    int status = fields_object_open_field(c, w, "arrivals", TRAFFIC_KINDS, "an arrival process",
                                          &a) != 1;
    if (status == 0 && !strcmp(a.kind, "closed_loop")) {
        int64_t users = 0;
        t->kind = TRAFFIC_CLOSED_LOOP;
        t->think_s = sim_dist_constant(0);
        status = fields_object_check_keys(c, &a, CLOSED_KEYS)
                 || fields_read_integer(c, &a, "users", true, 0, 1, 10000000, &users)
                 || fields_read_duration_dist(c, &a, "think", &t->think_s);
        t->users = (unsigned)users;
        out->arrivals = (arrival_spec){ ARRIVALS_POISSON, 1 }; /* unused: the users drive */
    } else if (status == 0 && !strcmp(a.kind, "profile")
               && (fields_object_get(c, &a, "rate") == LUA_TFUNCTION ? (lua_pop(c->L, 1), true)
                                                                     : (lua_pop(c->L, 1), false))) {
        /* a rate given by a Lua function of time, thinned against its declared peak */
        t->kind = TRAFFIC_FUNCTION;
        status = fields_object_check_keys(c, &a, PROFILE_KEYS)
                 || fields_read_number(c, &a, "peak", true, 0, 0, SCENARIO_MAX_RATE_PER_S, false,
                                       &t->peak);
        if (status == 0) {
            t->rate_context = rate_function_create(c->L, a.index, "rate", out->name, t->peak);
            t->rate = rate_function_call;
            out->arrivals = (arrival_spec){ ARRIVALS_POISSON, t->peak };
        }
    } else if (status == 0) {
        bool mmpp = !strcmp(a.kind, "mmpp"), diurnal = !strcmp(a.kind, "diurnal");
        t->kind = mmpp ? TRAFFIC_MMPP : TRAFFIC_PROFILE;
        status = fields_object_check_keys(c, &a,
                                          mmpp ? MMPP_KEYS : diurnal ? DIURNAL_KEYS : PROFILE_KEYS)
                 || fields_read_list(c, &a, "rates", false, true, &t->rates, &t->n);
        if (status == 0 && mmpp) {
            size_t nd = 0;
            status = fields_read_list(c, &a, "dwell", true, true, &t->dwell_s, &nd);
            if (status == 0 && nd != t->n)
                status = fields_fail(c, a.where, path, "has %zu dwell times for %zu rates", nd,
                                     t->n);
            for (size_t i = 0; status == 0 && i < nd; i++)
                if (!(t->dwell_s[i] > 0))
                    status = fields_fail(c, a.where, path, "dwell time %zu must be > 0", i + 1);
        } else if (status == 0 && diurnal) {
            t->step_s = 3600;
            if (t->n != 24)
                status = fields_fail(c, a.where, path, "fs.diurnal takes 24 hourly rates, got %zu "
                                     "(fs.profile takes any number with a step)", t->n);
        } else if (status == 0) {
            status = fields_read_duration(c, &a, "step", true, 0, 0, 1e9, false, &t->step_s);
        }
        double peak = 0;
        for (size_t i = 0; status == 0 && i < t->n; i++)
            peak = fmax(peak, t->rates[i]);
        if (status == 0 && !(peak > 0))
            status = fields_fail(c, a.where, path, "every rate is 0: nothing would arrive");
        if (status == 0 && mmpp) {
            /* the state changes between two arrivals are drawn inside one event: a cycle
             * of n states sends sum(rate x dwell) requests on average */
            double sent = 0;
            for (size_t i = 0; i < t->n; i++)
                sent += t->rates[i] * t->dwell_s[i];
            double changes = (double)t->n / sent;
            if (changes > MMPP_MAX_CHANGES_PER_ARRIVAL)
                status = fields_fail(c, a.where, path, "its states change about %.3g times an "
                                     "arrival (at most %g): a process that switches far faster "
                                     "than it sends requests is a Poisson process at its mean "
                                     "rate, fs.poisson { rate = %.6g }", changes,
                                     MMPP_MAX_CHANGES_PER_ARRIVAL, traffic_mean_rate(t));
        }
        if (status == 0 && peak > SCENARIO_MAX_RATE_PER_S)
            status = fields_fail(c, a.where, path, "a rate of %g/s is over the limit of %g/s",
                                 peak, SCENARIO_MAX_RATE_PER_S);
        if (status == 0)
            out->arrivals = (arrival_spec){ ARRIVALS_POISSON, traffic_mean_rate(t) };
    }
    lua_settop(c->L, top);
    return status ? -1 : 0;
}

/* The arrivals of an inference workload: a renewal process, a trace or a traffic model. */
static int convert_inference_arrivals(load_context *c, const fields_object *w, inference_spec *out)
{
    if (arrivals_are(c, w, TRACE_KIND))
        return convert_trace(c, w, out);
    if (arrivals_are(c, w, TRAFFIC_KINDS))
        return convert_traffic(c, w, out);
    return convert_arrivals(c, w, "an arrival process such as fs.poisson { rate = 5 }",
                            &out->arrivals);
}

static void free_runtime(void *runtime) { sandbox_free(runtime); }
static void rewind_runtime(void *runtime) { sandbox_rewind(runtime); }

static bool routing_is_function(load_context *c, const fields_object *w)
{
    bool yes = fields_object_get(c, w, "routing") == LUA_TFUNCTION;
    lua_pop(c->L, 1);
    return yes;
}

/* A prompt that fills the model's context (no room for a token) is refused at load
 * when the prompts can be that long for sure: a trace row (named), or a distribution
 * whose largest value is finite.  Prompts drawn that long from an unbounded
 * distribution are dropped as they arrive and counted (requests_over_context); an
 * output that would run past the context ends there (requests_truncated). */
static int check_context(load_context *c, const fields_object *w, const model_spec *m,
                         const char *name, const inference_spec *spec)
{
    char path[FIELD_PATH_MAX];
    if (spec->lengths_from_trace) {
        if (spec->trace_summary.longest_prompt < m->context)
            return 0;
        snprintf(c->err, c->err_size, "%s:row %llu: a prompt of %.0f tokens fills the %u-token "
                 "context of %s (workload %s)", spec->trace.path,
                 (unsigned long long)spec->trace_summary.longest_prompt_row,
                 spec->trace_summary.longest_prompt, m->context, name, spec->name);
        return -1;
    }
    double most = fmax(1, round(sim_dist_max(&spec->prompt_tokens))); /* as drawn: serving.h */
    if (most < m->context || !isfinite(most))
        return 0;
    snprintf(path, sizeof path, "%s.prompt", w->path);
    return fields_fail(c, w->where, path, "prompts reach %.0f tokens, which fills the %u-token "
                       "context of %s", most, m->context, name);
}

static unsigned gcd(unsigned a, unsigned b)
{
    while (b) {
        unsigned t = a % b;
        a = b;
        b = t;
    }
    return a;
}

/* The tensor parallelisms replicas of model m on pool p's device d can take, best first
 * by tokens per second per GPU at the workload's mean lengths (replica_tp.h): powers of
 * two up to a node's devices dividing the pool's GPUs (its count, min and max). */
static size_t ranked_tps(const pool_spec *p, const model_spec *m, const device_spec *d,
                         const inference_spec *spec, const engine_spec *engine, unsigned *tps,
                         size_t max)
{
    perf_profile base = pool_profile(p, d);
    perf_profile profile = engine_apply_profile(engine, &base, d);
    perf_setup s = { .model = m, .device = d, .profile = &profile, .weights = spec->prec,
                     .kv = spec->kv_prec, .tp = 1, .expert_parallel = spec->expert_parallel,
                     .expert_skew = spec->expert_skew, .attention_dp = spec->attention_dp,
                     .reserve = inference_reserve(spec) };
    unsigned most = p->capacity.max, node = d->is_cpu ? 1 : profile.devices_per_node;
    return replica_tp_ranked(&s, most < node ? most : node,
                             gcd(gcd(most, p->capacity.count), p->min),
                             sim_dist_mean(&spec->prompt_tokens),
                             sim_dist_mean(&spec->output_tokens), spec->max_batch, tps, max);
}

/* The tensor parallelism of replicas of model m on pool p's device d: the one given
 * (tp_given), else the best of ranked_tps; *chosen says which.  The smallest that fits
 * a mean request when none of those does, for the message.  (With an SLO the loader
 * may try the others after: choose_tp_for_slo.) */
static int size_replicas(load_context *c, const fields_object *w, const char *key,
                         const pool_spec *p, const model_spec *m, const device_spec *d,
                         const inference_spec *spec, const engine_spec *engine,
                         unsigned tp_given, unsigned *tp, bool *chosen)
{
    char path[FIELD_PATH_MAX];
    double prompt = sim_dist_mean(&spec->prompt_tokens);
    double output = sim_dist_mean(&spec->output_tokens);
    double context = prompt + output;
    precision kv = spec->kv_prec;
    unsigned most = p->capacity.max;
    const memory_reserve *reserve = inference_reserve(spec);
    unsigned fit = memory_min_tp(m, d, spec->prec, kv, context, most, reserve);
    unsigned best = 0, tps[TP_TRIALS_MAX];
    if (!tp_given && fit && ranked_tps(p, m, d, spec, engine, tps, TP_TRIALS_MAX))
        best = tps[0];
    *chosen = !tp_given;
    *tp = tp_given ? tp_given : best ? best : fit ? fit : 1;
    snprintf(path, sizeof path, "%s.%s", w->path, key);
    inference_memory mem = memory_inference_for(m, d, spec->prec, kv, *tp, spec->attention_dp,
                                                reserve);
    if (*tp > most || most % *tp || p->capacity.count % *tp || p->min % *tp)
        return p->capacity.kind == POOL_DEDICATED
                   ? fields_fail(c, w->where, path, "%u does not divide the %u GPUs of pool "
                                 "\"%s\"%s", *tp, p->capacity.count, p->name,
                                 p->power.budget_kw > 0 ? " (those its power budget powers)" : "")
                   : fields_fail(c, w->where, path, "%u does not divide the GPUs of pool \"%s\" "
                                 "(count %u, min %u, max %u)", *tp, p->name, p->capacity.count, p->min,
                                 most);
    if (mem.kv_capacity_tokens < context)
        return fields_fail(c, w->where, path, "%s in %s does not fit on %u x %s: %.1f GB of "
                           "weights per GPU and %.0f tokens of cache for a mean request, with "
                           "%.1f GB usable; %s", m->name, precision_name(spec->prec), *tp,
                           d->name, mem.weights_bytes / 1e9, context, mem.usable_bytes / 1e9,
                           fit ? "a smaller tp is not enough either"
                               : "the pool has too few GPUs for any tensor parallelism that fits");
    return 0;
}

/* kv_link = { bandwidth, latency, shared, gpus_per_node } as a prefill pool p of
 * replicas of tp devices d sends over it, into *k: what is not given, that pool's
 * replicas' own NICs (its network bandwidth a device times tp, its latency, its node:
 * the device's, else its family's; models/perf.h). */
static int convert_kv_link(load_context *c, const fields_object *w, const pool_spec *p,
                           const device_spec *d, unsigned tp, kv_link_spec *k)
{
    perf_profile profile = pool_profile(p, d);
    static const char *const scopes[] = { "per_replica", "per_node", "one", NULL };
    int top = lua_gettop(c->L);
    fields_object link = { 0 };
    int found = fields_object_open_field(c, w, "kv_link", NULL, "a table such as { bandwidth = "
                                         "\"50GB/s\", latency = \"10us\" }", &link);
    if (found < 0)
        return -1;
    double nics = profile.network_bytes_per_s * tp;
    int scope = KV_LINK_PER_REPLICA;
    int64_t node = 0;
    if (!found) {
        if (!(nics > 0)) {
            char path[FIELD_PATH_MAX];
            snprintf(path, sizeof path, "%s.kv_link", w->path);
            return fields_fail(c, w->where, path, "missing: %s states no network bandwidth to "
                               "carry the caches by default; give kv_link = { bandwidth = "
                               "\"50GB/s\" }", d->name);
        }
        *k = (kv_link_spec){ nics, profile.link_latency_s, KV_LINK_PER_REPLICA,
                             profile.devices_per_node };
        return 0;
    }
    double latency = profile.link_latency_s;
    int status = fields_object_check_keys(c, &link, KV_LINK_KEYS)
                 || fields_read_bandwidth(c, &link, "bandwidth", !(nics > 0), nics, 1e18,
                                          &k->bandwidth_bytes_per_s)
                 || fields_read_duration(c, &link, "latency", false, latency, 0, 1e6, true,
                                         &k->latency_s)
                 || fields_read_choice(c, &link, "shared", scopes, KV_LINK_PER_REPLICA, &scope)
                 || fields_read_integer(c, &link, "gpus_per_node", false,
                                        profile.devices_per_node ? profile.devices_per_node : 8,
                                        1, 100000, &node);
    k->scope = (kv_link_scope)scope;
    k->gpus_per_node = (unsigned)node;
    lua_settop(c->L, top);
    return status ? -1 : 0;
}

/* Group i's pool (named at pool_path in o, its tp at tp_key), device, tp and cache:
 * another pool than the workload's own and the groups before it, with GPUs (whole ones
 * for a decode pool; on a pool of MIG slices or time-slicing shares a replica has tp 1). */
static int place_group(load_context *c, const fields_object *o, const char *pool_path,
                       const char *tp_key, scenario *sc, const model_spec *m,
                       inference_spec *out, unsigned i, int64_t tp)
{
    workload_group *g = &out->groups[i];
    const pool_spec *p = &sc->pools[g->pool];
    if (g->pool == out->pool)
        return fields_fail(c, o->where, pool_path, "\"%s\" is the workload's own%s pool; name "
                           "another", p->name, g->role == ROLE_DECODE ? " (prefill)" : "");
    for (unsigned k = 0; k < i; k++)
        if (out->groups[k].pool == g->pool) {
            char label[64];
            workload_group_label(out, k, label, sizeof label);
            return fields_fail(c, o->where, pool_path, "\"%s\" is %s already; a pool serves a "
                               "workload in one role (give another pool)", p->name, label);
        }
    if (!p->gpu)
        return fields_fail(c, o->where, pool_path, "pool \"%s\" names no gpu", p->name);
    if (g->role == ROLE_DECODE && p->units_per_gpu > 1)
        return fields_fail(c, o->where, pool_path, "pool \"%s\" shares its GPUs; decode "
                           "replicas run on whole GPUs", p->name);
    const device_spec *d = catalog_device(&sc->catalog, p->unit_device ? p->unit_device : p->gpu);
    g->device = (size_t)(d - sc->catalog.devices);
    if (size_replicas(c, o, tp_key, p, m, d, out, inference_engine(sc, out),
                      p->units_per_gpu > 1 ? 1 : (unsigned)tp, &g->tp, &g->tp_chosen) != 0)
        return -1;
    g->kv_capacity_tokens = memory_inference_for(m, d, out->prec, out->kv_prec, g->tp,
                                                 out->attention_dp, inference_reserve(out))
                                .kv_capacity_tokens;
    return 0;
}

static const char *const ROUTINGS[] = { "round_robin", "least_outstanding", "shortest_tokens",
                                        "power_of_two", "prefix_affinity", NULL };

/* A group's routing from o's "routing" (a name, or a function bound at `binding` from
 * the workload's table): by default the workload's (its function too, bound later:
 * inherit_routing), but a decode pool's is least outstanding where a function routes
 * the prefills (it sees the prefill replicas only). */
static int read_group_routing(load_context *c, const fields_object *w, const fields_object *o,
                              const char *binding, scenario *sc, inference_spec *out,
                              workload_group *g)
{
    int routing = (int)out->routing;
    if (routing == ROUTE_CUSTOM && g->role == ROLE_DECODE)
        routing = ROUTE_LEAST_OUTSTANDING;
    if (routing_is_function(c, o)) {
        g->routing = ROUTE_CUSTOM;
        g->route_context = router_create(c->L, w->index, binding, out->replicas, out->name);
        g->custom_route = router_route;
        sc->runtime = sandbox_of(c->L); /* the run calls into this state */
        return 0;
    }
    int status = fields_read_choice(c, o, "routing", ROUTINGS, routing, &routing);
    g->routing = (routing_policy)routing;
    return status;
}

/* overflow = "pool", overflow_tp: one overflow group (the own pool's threshold is the
 * workload's overflow_threshold). */
static int convert_overflow(load_context *c, const fields_object *w, scenario *sc,
                            const named_list *pools, const model_spec *m, inference_spec *out)
{
    char *name = NULL;
    int64_t tp;
    if (fields_read_string(c, w, "overflow", false, &name) != 0
        || fields_read_integer(c, w, "overflow_tp", false, 0, 1, 1024, &tp) != 0)
        return -1;
    if (!name)
        return 0;
    unsigned i = out->ngroups++;
    workload_group *g = &out->groups[i];
    *g = (workload_group){ .role = ROLE_OVERFLOW, .routing = out->routing };
    int status = find_pool_at(c, w, "overflow", sc, pools, name, &g->pool);
    free(name);
    if (status != 0)
        return -1;
    char path[FIELD_PATH_MAX];
    snprintf(path, sizeof path, "%s.overflow", w->path);
    return place_group(c, w, path, "overflow_tp", sc, m, out, i, tp);
}

static const char *const DECODE_KEYS[] = { "pool", "tp", "routing", NULL };

/* decode = { pool = "d", tp = 4, routing }: disaggregated serving over one decode group. */
static int convert_decode(load_context *c, const fields_object *w, scenario *sc,
                          const named_list *pools, const model_spec *m, inference_spec *out)
{
    char path[FIELD_PATH_MAX];
    int top = lua_gettop(c->L);
    fields_object dec = { 0 };
    int present = fields_object_open_field(c, w, "decode", NULL, "a table such as { pool = "
                                           "\"decode\", tp = 2 }", &dec);
    if (present <= 0)
        return present;
    unsigned i = out->ngroups++;
    workload_group *g = &out->groups[i];
    *g = (workload_group){ .role = ROLE_DECODE };
    char *name = NULL;
    int64_t tp = 0;
    int status = fields_object_check_keys(c, &dec, DECODE_KEYS)
                 || read_group_routing(c, w, &dec, "decode.routing", sc, out, g)
                 || fields_read_string(c, &dec, "pool", true, &name)
                 || fields_read_integer(c, &dec, "tp", false, 0, 1, 1024, &tp)
                 || find_pool_at(c, &dec, "pool", sc, pools, name, &g->pool);
    free(name);
    snprintf(path, sizeof path, "%s.pool", dec.path);
    if (status == 0)
        status = place_group(c, &dec, path, "tp", sc, m, out, i, tp);
    lua_settop(c->L, top);
    return status ? -1 : 0;
}

static const char *const GROUP_KEYS[] = { "role", "pool", "tp", "routing", "threshold", NULL };

/* groups[i] (0-based), the table on top of the stack; *prefill: its role was named
 * "prefill" (a serve pool's name where a decode pool takes over). */
static int convert_group_entry(load_context *c, const fields_object *w, scenario *sc,
                               const named_list *pools, const model_spec *m, unsigned i,
                               inference_spec *out, bool *prefill)
{
    static const char *const roles[] = { "serve", "decode", "overflow", "prefill", NULL };
    char item[FIELD_PATH_MAX], binding[64], path[FIELD_PATH_MAX];
    snprintf(item, sizeof item, "%s.groups[%u]", w->path, i + 1);
    fields_object o;
    if (fields_object_open(c, -1, item, w->where, NULL, "a table such as { role = "
                           "\"overflow\", pool = \"cloud\" }", &o) != 0)
        return -1;
    if (!*o.where)
        snprintf(o.where, sizeof o.where, "%s", w->where);
    workload_group *g = &out->groups[i];
    int role = ROLE_SERVE;
    char *name = NULL;
    int64_t tp = 0, threshold = 0;
    snprintf(binding, sizeof binding, "groups.%u.routing", i + 1);
    int status = fields_object_check_keys(c, &o, GROUP_KEYS)
                 || fields_read_choice(c, &o, "role", roles, -1, &role);
    snprintf(path, sizeof path, "%s.role", o.path);
    if (status == 0 && role < 0)
        status = fields_fail(c, o.where, path, "missing (expected \"serve\", \"prefill\", "
                             "\"decode\" or \"overflow\")");
    *prefill = role == 3;
    g->role = *prefill ? ROLE_SERVE : (serving_role)role;
    status = status
             || read_group_routing(c, w, &o, binding, sc, out, g)
             || fields_read_string(c, &o, "pool", true, &name)
             || fields_read_integer(c, &o, "tp", false, 0, 1, 1024, &tp)
             || fields_read_integer(c, &o, "threshold", false, 0, 1, 100000000, &threshold)
             || find_pool_at(c, &o, "pool", sc, pools, name, &g->pool);
    free(name);
    g->threshold = (unsigned)threshold;
    snprintf(path, sizeof path, "%s.threshold", o.path);
    if (status == 0 && threshold && g->role == ROLE_DECODE)
        status = fields_fail(c, o.where, path, "a decode pool takes no new requests, so it "
                             "spills nothing: only serve and overflow pools have a threshold");
    snprintf(path, sizeof path, "%s.pool", o.path);
    if (status == 0)
        status = place_group(c, &o, path, "tp", sc, m, out, i, tp);
    return status ? -1 : 0;
}

/* groups = { { role, pool, tp, routing, threshold }, ... }: 1 to SERVING_GROUPS_MAX - 1
 * groups beside the own pool, in order. */
static int convert_group_list(load_context *c, const fields_object *w, scenario *sc,
                              const named_list *pools, const model_spec *m, inference_spec *out)
{
    lua_State *L = c->L;
    int top = lua_gettop(L);
    char path[FIELD_PATH_MAX], got[96];
    snprintf(path, sizeof path, "%s.groups", w->path);
    fields_object_get(c, w, "groups");
    size_t n = lua_istable(L, -1) ? lua_rawlen(L, -1) : 0, keys = 0;
    if (n) { /* a list has no other keys, and no holes */
        lua_pushnil(L);
        while (lua_next(L, -2)) {
            keys++;
            lua_pop(L, 1);
        }
    }
    if (n < 1 || n > SERVING_GROUPS_MAX - 1 || keys != n) {
        fields_describe(L, -1, got, sizeof got);
        lua_settop(L, top);
        if (keys != n && n >= 1 && n < SERVING_GROUPS_MAX)
            snprintf(got, sizeof got, "a table with keys beside its list of %zu", n);
        else if (n >= SERVING_GROUPS_MAX)
            snprintf(got, sizeof got, "a list of %zu", n);
        return fields_fail(c, w->where, path, "expected a list of 1 to %d groups such as "
                           "{ role = \"overflow\", pool = \"cloud\" }, got %s",
                           SERVING_GROUPS_MAX - 1, got);
    }
    int list = lua_gettop(L);
    int status = 0;
    bool prefill[SERVING_GROUPS_MAX] = { false };
    for (unsigned i = 0; i < n && status == 0; i++) {
        lua_rawgeti(L, list, (lua_Integer)i + 1);
        out->ngroups = i + 1;
        status = convert_group_entry(c, w, sc, pools, m, i, out, &prefill[i]);
        lua_settop(L, list);
    }
    lua_settop(L, top);
    for (unsigned i = 0; i < out->ngroups && status == 0 && !workload_decodes(out); i++) {
        if (!prefill[i])
            continue;
        snprintf(path, sizeof path, "%s.groups[%u].role", w->path, i + 1);
        status = fields_fail(c, w->where, path, "\"prefill\" makes the first token and hands "
                             "the request to a decode pool: give one ({ role = \"decode\", "
                             "pool = ... }), or say \"serve\"");
    }
    /* a threshold says when a pool spills to the cascade's next: none after the last */
    unsigned overflows = workload_role_count(out, ROLE_OVERFLOW), seen = 0;
    for (unsigned i = 0; i < out->ngroups && status == 0; i++) {
        const workload_group *g = &out->groups[i];
        seen += g->role == ROLE_OVERFLOW;
        if (!g->threshold || (g->role == ROLE_SERVE ? overflows > 0 : seen < overflows))
            continue;
        snprintf(path, sizeof path, "%s.groups[%u].threshold", w->path, i + 1);
        status = fields_fail(c, w->where, path, "%s, so nothing spills past it",
                             g->role == ROLE_SERVE ? "the workload has no overflow pool"
                             : "the cascade's last pool takes whatever reaches it");
    }
    return status;
}

/* The workload's groups beside its own pool: groups = { ... }, or the shorthands
 * decode = { ... } and overflow = "pool" (decode first, then overflow); kv_link with a
 * decode group only.  The own pool's overflow_threshold either way. */
static int convert_groups(load_context *c, const fields_object *w, scenario *sc,
                          const named_list *pools, const model_spec *m, inference_spec *out)
{
    char path[FIELD_PATH_MAX];
    int64_t threshold;
    if (fields_read_integer(c, w, "overflow_threshold", false, 0, 1, 100000000, &threshold) != 0)
        return -1;
    out->overflow_threshold = (unsigned)threshold;
    int top = lua_gettop(c->L);
    bool list = fields_object_get(c, w, "groups") != LUA_TNIL;
    lua_settop(c->L, top);
    int status;
    if (list) {
        const char *shorthand[] = { "decode", "overflow", "overflow_tp" };
        for (int k = 0; k < 3; k++) {
            bool given = fields_object_get(c, w, shorthand[k]) != LUA_TNIL;
            lua_settop(c->L, top);
            snprintf(path, sizeof path, "%s.%s", w->path, shorthand[k]);
            if (given)
                return fields_fail(c, w->where, path, "the workload states its groups in "
                                   "groups = { ... }: give this pool there, with its role");
        }
        status = convert_group_list(c, w, sc, pools, m, out);
    } else {
        status = convert_overflow(c, w, sc, pools, m, out)
                 || convert_decode(c, w, sc, pools, m, out);
        if (status == 0 && out->ngroups == 2) { /* the serving's order: decode, overflow */
            workload_group overflow = out->groups[0];
            out->groups[0] = out->groups[1];
            out->groups[1] = overflow;
        }
    }
    if (status != 0)
        return -1;
    if (workload_decodes(out)) { /* every prefilling pool's links */
        status = convert_kv_link(c, w, &sc->pools[out->pool],
                                 &sc->catalog.devices[out->device], out->tp, &out->kv_link);
        for (unsigned i = 0; i < out->ngroups && status == 0; i++) {
            workload_group *g = &out->groups[i];
            if (g->role == ROLE_SERVE)
                status = convert_kv_link(c, w, &sc->pools[g->pool],
                                         &sc->catalog.devices[g->device], g->tp, &g->kv_link);
        }
        return status ? -1 : 0;
    }
    bool link = fields_object_get(c, w, "kv_link") != LUA_TNIL;
    lua_settop(c->L, top);
    snprintf(path, sizeof path, "%s.kv_link", w->path);
    return link ? fields_fail(c, w->where, path, "a link for disaggregated serving; give %s "
                              "too", list ? "a decode group ({ role = \"decode\", pool = ... })"
                                          : "decode = { pool = ... }")
                : 0;
}

/* Groups that route as the workload does, a function too: its router, once made. */
static void inherit_routing(inference_spec *out)
{
    for (unsigned i = 0; i < out->ngroups; i++) {
        workload_group *g = &out->groups[i];
        if (g->routing == ROUTE_CUSTOM && !g->custom_route) {
            g->custom_route = out->custom_route;
            g->route_context = out->route_context;
        }
    }
}

static int convert_inference(load_context *c, const fields_object *w, scenario *sc,
                             const named_list *pools, unsigned tp_forced, inference_spec *out)
{
    static const char *const precisions[] = { "fp32", "tf32", "fp16", "bf16", "fp8", "int8",
                                              "int4", "fp4", NULL };
    static const char *const routings[] = { "round_robin", "least_outstanding",
                                            "shortest_tokens", "power_of_two",
                                            "prefix_affinity", NULL };
    static const char *const modes[] = { "fast", "reference", NULL };
    static const char *const when_full[] = { "queue", "preempt", "swap", NULL };
    static const kv_policy policies[] = { KV_RESERVE, KV_PREEMPT, KV_SWAP };
    static const char *const caches[] = { "fp16", "bf16", "fp8", "fp32", NULL };
    static const precision cache_precisions[] = { PREC_FP16, PREC_BF16, PREC_FP8, PREC_FP32 };
    char *model = NULL, *pool = NULL, path[FIELD_PATH_MAX];
    int64_t tp = 0, max_batch, max_tokens;
    int prec, routing, mode, full, cache = -1;
    out->rtt_s = sim_dist_constant(0);
    int status = fields_object_check_keys(c, w, INFERENCE_KEYS)
                 || fields_read_string(c, w, "model", true, &model)
                 || fields_read_string(c, w, "pool", true, &pool)
                 || fields_read_choice(c, w, "precision", precisions, -1, &prec)
                 || fields_read_choice(c, w, "kv_precision", caches, -1, &cache)
                 || fields_read_integer(c, w, "tp", false, 0, 1, 1024, &tp)
                 || convert_inference_arrivals(c, w, out)
                 || read_lengths(c, w, out)
                 || fields_read_integer(c, w, "max_batch", false, 0, 1, 1000000, &max_batch)
                 || fields_read_integer(c, w, "max_tokens", false, 0, 1, 100000000, &max_tokens)
                 || fields_read_flag(c, w, "chunked_prefill", true, &out->chunked_prefill)
                 || fields_read_flag(c, w, "expert_parallel", false, &out->expert_parallel)
                 || fields_read_flag(c, w, "attention_dp", false, &out->attention_dp)
                 || fields_read_number(c, w, "expert_skew", false, 1, 1, 1e6, true,
                                       &out->expert_skew)
                 || (routing_is_function(c, w) ? (routing = ROUTE_CUSTOM, 0)
                                               : fields_read_choice(c, w, "routing", routings,
                                                                    ROUTE_LEAST_OUTSTANDING,
                                                                    &routing))
                 || fields_read_duration(c, w, "max_wait", false, 0, 0, 1e9, true, &out->max_wait_s)
                 || convert_slo(c, w, out)
                 || read_egress_volume(c, w, out)
                 || fields_read_choice(c, w, "mode", modes, 0, &mode)
                 || fields_read_choice(c, w, "when_full", when_full, 0, &full)
                 || host_kv_load(c, w, full == 2, &out->host_kv)
                 || fields_read_string(c, w, "streams", false, &out->streams);
    if (tp_forced) /* a candidate choose_tp_for_slo tries */
        tp = tp_forced;
    if (status == 0 && fields_object_get(c, w, "rtt") != LUA_TNIL) {
        lua_pop(c->L, 1);
        out->has_rtt = true;
        status = fields_read_duration_dist(c, w, "rtt", &out->rtt_s);
    } else if (status == 0) {
        lua_pop(c->L, 1);
    }
    if (status == 0)
        status = find_pool(c, w, sc, pools, pool, &out->pool);
    const model_spec *m = NULL;
    const device_spec *d = NULL;
    if (status == 0) {
        m = catalog_model(&sc->catalog, model);
        snprintf(path, sizeof path, "%s.model", w->path);
        if (!m) {
            char names[1024], hints[512];
            const char *hint = catalog_model_hint(&sc->catalog, model, '"', hints, sizeof hints);
            status = hint ? fields_fail(c, w->where, path, "unknown model \"%s\" (did you mean "
                                        "%s?)", model, hint)
                          : fields_fail(c, w->where, path, "unknown model \"%s\" (known: %s)",
                                        model,
                                        catalog_model_names(&sc->catalog, names, sizeof names));
        }
    }
    if (status == 0 && (out->expert_parallel || out->attention_dp) && !m->experts) {
        const char *key = out->expert_parallel ? "expert_parallel" : "attention_dp";
        snprintf(path, sizeof path, "%s.%s", w->path, key);
        status = fields_fail(c, w->where, path, "%s is for a mixture of experts; \"%s\" is "
                             "dense", key, model);
    }
    const pool_spec *p = status == 0 ? &sc->pools[out->pool] : NULL;
    if (status == 0 && !p->gpu) {
        snprintf(path, sizeof path, "%s.pool", w->path);
        status = fields_fail(c, w->where, path, "pool \"%s\" names no gpu; an inference "
                             "workload runs on a pool such as fs.dedicated { gpu = \"H100-SXM\", "
                             "count = 8 }", p->name);
    }
    if (status == 0) {
        /* checked by check_devices; a unit of a shared GPU is a device of its own */
        d = catalog_device(&sc->catalog, p->unit_device ? p->unit_device : p->gpu);
        out->model = (size_t)(m - sc->catalog.models);
        out->device = d ? (size_t)(d - sc->catalog.devices) : 0;
        out->prec = prec >= 0 ? (precision)prec : m->released; /* the model's own, or fp16 */
        out->kv_prec = cache >= 0 ? cache_precisions[cache] : precision_cache(out->prec);
        out->routing = (routing_policy)routing;
        out->reference = mode == 1;
        out->kv_policy = policies[full];
        status = engine_load(c, w, &sc->catalog, false, &out->engine, &out->engine_default);
    }
    if (status == 0) { /* not given: the engine's own defaults on this device */
        unsigned seqs, tokens;
        engine_batch_defaults(&sc->catalog.engines[out->engine], d, &seqs, &tokens);
        out->max_batch = max_batch ? (unsigned)max_batch : seqs;
        out->max_tokens = max_tokens ? (unsigned)max_tokens : tokens;
    }
    if (status == 0) {
        out->has_engine = true;
        out->reserve = engine_memory_reserve(&sc->catalog.engines[out->engine], m);
    }
    if (status == 0 && d && p->units_per_gpu > 1 && tp > 1) {
        snprintf(path, sizeof path, "%s.tp", w->path);
        status = fields_fail(c, w->where, path, "a replica on shared GPUs runs on one MIG slice "
                             "or time-slicing share: tp must be 1, got %lld", (long long)tp);
    }
    if (status == 0 && d)
        status = size_replicas(c, w, "tp", p, m, d, out, inference_engine(sc, out),
                               p->units_per_gpu > 1 ? 1 : (unsigned)tp, &out->tp,
                               &out->tp_chosen);
    if (status == 0) {
        inference_memory mem = memory_inference_for(m, d, out->prec, out->kv_prec, out->tp,
                                                    out->attention_dp, inference_reserve(out));
        out->replicas = p->capacity.count / out->tp;
        out->kv_capacity_tokens = mem.kv_capacity_tokens;
        status = cold_start_load(c, w, p, mem.weights_bytes * out->tp, out);
    }
    if (status == 0)
        status = check_context(c, w, m, model, out);
    if (status == 0)
        status = convert_groups(c, w, sc, pools, m, out);
    if (status == 0)
        status = speculative_load(c, w, sc, out);
    if (status == 0)
        status = prefix_load_convert(c, w, sc, out);
    if (status == 0)
        status = lora_load(c, w, sc, out);
    if (status == 0 && out->has_traffic && out->traffic.kind == TRAFFIC_FUNCTION)
        sc->runtime = sandbox_of(c->L); /* the run calls the rate function */
    if (status == 0 && out->routing == ROUTE_CUSTOM) {
        out->route_context = router_create(c->L, w->index, "routing", out->replicas, out->name);
        out->custom_route = router_route;
        sc->runtime = sandbox_of(c->L); /* the run calls into this state */
    }
    if (status == 0)
        inherit_routing(out);
    if (status == 0 && out->max_wait_s == 0 && !out->has_trace
        && !(out->has_traffic && out->traffic.kind == TRAFFIC_CLOSED_LOOP)
        && out->arrivals.rate_per_s * sc->duration_s > UNBOUNDED_INFERENCE_REQUESTS)
        status = fields_fail(c, w->where, w->path, "%.3g requests over the run with no max_wait "
                             "could all wait at once; set max_wait (e.g. \"30s\")",
                             out->arrivals.rate_per_s * sc->duration_s);
    free(model);
    free(pool);
    return status ? -1 : 0;
}

/* A pool whose queue would grow without bound for the whole run could exhaust memory. */
static int check_queues_stay_bounded(load_context *c, const scenario *sc,
                                     const fields_object *pool_objects)
{
    for (size_t p = 0; p < sc->npools; p++) {
        double load = scenario_offered_load(sc, p), rate = 0;
        bool limited = true;
        for (size_t i = 0; i < sc->nservices; i++) {
            if (sc->services[i].pool != p)
                continue;
            rate += sc->services[i].arrivals.rate_per_s;
            limited &= sc->services[i].queue_limit > 0;
        }
        if (limited || load < sc->pools[p].count)
            continue;
        double excess = rate * (1 - sc->pools[p].count / load) * sc->duration_s;
        if (excess > UNBOUNDED_QUEUE_REQUESTS || isnan(excess))
            return fields_fail(c, pool_objects[p].where, pool_objects[p].path,
                               "its offered load of %.4g Erlangs is not below its %u servers, so "
                               "its queue grows without bound: about %.2g requests over the run; "
                               "add servers, shorten the run, or set queue_limit on its workloads",
                               load, sc->pools[p].count, excess);
    }
    return 0;
}

/* Every gpu a pool names must be in the device catalog, as the scenario left it (a file
 * may add devices to fs.devices before it returns). */
static int check_devices(load_context *c, const scenario *sc, const fields_object *pool_objects)
{
    for (size_t p = 0; p < sc->npools; p++) {
        const char *gpu = sc->pools[p].gpu;
        if (!gpu || catalog_device(&sc->catalog, gpu))
            continue;
        char path[FIELD_PATH_MAX], names[1024];
        snprintf(path, sizeof path, "%s.gpu", pool_objects[p].path);
        char hints[512];
        const char *hint = catalog_device_hint(&sc->catalog, gpu, '"', hints, sizeof hints);
        if (hint)
            return fields_fail(c, pool_objects[p].where, path, "unknown device \"%s\" (did you "
                               "mean %s?)", gpu, hint);
        return fields_fail(c, pool_objects[p].where, path, "unknown device \"%s\" (known: %s)",
                           gpu, catalog_device_names(&sc->catalog, names, sizeof names));
    }
    return 0;
}

/* start = "low_carbon": the start within [at, deadline - its work at full speed] whose
 * span has the least mean intensity on its pool's grid.  On a cloud or spot pool whose
 * GPUs held from the start are fewer than the job's, the start also leaves room for the
 * order: the provisioning delay's 99th percentile (failed attempts' retries aside), so
 * that the job does not end past its deadline by the time its GPUs take to come. */
static int low_carbon_start(load_context *c, const fields_object *w, const pool_spec *p,
                            training_spec *t)
{
    double order = p->capacity.kind != POOL_DEDICATED && t->gpus > p->capacity.count
                       ? sim_dist_quantile(&p->provision_s, 0.99) : 0;
    double work = t->steps * t->step_s, latest = t->deadline_s - work - order;
    if (latest < t->at_s) {
        char path[FIELD_PATH_MAX], ordered[96] = "";
        snprintf(path, sizeof path, "%s.deadline", w->path);
        if (order > 0)
            snprintf(ordered, sizeof ordered, ", and its GPUs up to %.10g s to provision",
                     order);
        return fields_fail(c, w->where, path, "%.10g s leaves no start: its work takes %.10g s "
                           "from its arrival at %.10g s%s", t->deadline_s, work, t->at_s,
                           ordered);
    }
    t->at_s = carbon_lowest_start(&p->carbon, t->at_s, latest, work);
    return 0;
}

/* fs.training and fs.job_stream: jobs on a pool of GPUs. */
static int convert_job_workload(load_context *c, const fields_object *w, scenario *sc,
                                const named_list *pools)
{
    char *name = NULL;
    size_t pool = 0;
    int status = fields_read_string(c, w, "pool", true, &name)
                 || find_pool(c, w, sc, pools, name, &pool);
    free(name);
    if (status != 0)
        return -1;
    const pool_spec *p = &sc->pools[pool];
    if (!p->gpu) {
        char path[FIELD_PATH_MAX];
        snprintf(path, sizeof path, "%s.pool", w->path);
        return fields_fail(c, w->where, path, "pool \"%s\" names no gpu; training runs on a "
                           "pool such as fs.dedicated { gpu = \"H100-SXM\", count = 64 }", p->name);
    }
    const char *gpu = p->unit_device ? p->unit_device : p->gpu;
    const device_spec *d = catalog_device(&sc->catalog, gpu);
    perf_profile profile = d ? pool_profile(p, d) : p->profile;
    if (!strcmp(w->kind, "training")) {
        training_spec *t = &sc->trainings[sc->ntrainings++];
        if (training_load_convert(c, w, &sc->catalog, pool, gpu,
                                  d || p->has_profile ? &profile : NULL, t) != 0)
            return -1;
        return t->low_carbon ? low_carbon_start(c, w, p, t) : 0;
    }
    return training_load_convert_job_stream(c, w, pool, &sc->job_streams[sc->njob_streams++]);
}

/* Several inference workloads on one pool (several models sharing its GPUs): each names
 * it as its own pool (not as a group's: overflow, decode or serve), says how many replicas it
 * starts with, and the replicas they start with fit; the pool's GPUs are whole (no
 * MIG, time-slicing or noisy neighbours) and it has no autoscaler (a model grows by its
 * own demand: scale_to_zero). */
static int check_shared_pool(load_context *c, const scenario *sc, size_t p,
                             const fields_object *o)
{
    const pool_spec *pool = &sc->pools[p];
    if (pool->autoscaler.enabled) /* MIG, time-slicing and noise are the pool's hosts':
                                     models packed on a GPU share them */
        return fields_fail(c, o->where, o->path, "is shared by several inference workloads, "
                           "which needs no autoscaler (not yet with one)");
    unsigned gpus = 0;
    for (size_t i = 0; i < sc->ninferences; i++) {
        const inference_spec *w = &sc->inferences[i];
        if (workload_group_on(w, p))
            return fields_fail(c, o->where, o->path, "is shared by several models; workload "
                               "\"%s\" cannot overflow, decode or serve there as a group",
                               w->name);
        if (w->pool != p)
            continue;
        if (!w->replicas_given)
            return fields_fail(c, o->where, o->path, "is shared by several models: workload "
                               "\"%s\" must say how many replicas it has (replicas = N)",
                               w->name);
        gpus += w->scale_to_zero_s > 0 ? 0 : w->replicas * w->tp;
    }
    unsigned most = pool->capacity.kind == POOL_DEDICATED ? pool->count : pool->capacity.max;
    bool units = pool->units_per_gpu > 1; /* counts are in units then */
    if (gpus > most)
        return fields_fail(c, o->where, o->path, "its models' replicas that do not scale to "
                           "zero need %u %s; it has %u", gpus,
                           units ? "units (MIG slices or time-slicing shares)" : "GPUs", most);
    return 0;
}

/* An inference workload has its pool to itself unless several models share it
 * (check_shared_pool), and its groups' pools always.  Queueing services run
 * on fixed servers. */
static int check_pool_sharing(load_context *c, const scenario *sc,
                              const fields_object *pool_objects)
{
    for (size_t p = 0; p < sc->npools; p++) {
        size_t inference = 0, services = 0;
        const pool_spec *pool = &sc->pools[p];
        const fields_object *o = &pool_objects[p];
        for (size_t i = 0; i < sc->ninferences; i++)
            inference += sc->inferences[i].pool == p
                         || workload_group_on(&sc->inferences[i], p) != NULL;
        for (size_t i = 0; i < sc->nservices; i++)
            services += sc->services[i].pool == p;
        size_t jobs = 0;
        for (size_t i = 0; i < sc->ntrainings; i++)
            jobs += sc->trainings[i].pool == p;
        for (size_t i = 0; i < sc->njob_streams; i++)
            jobs += sc->job_streams[i].pool == p;
        if (jobs && (inference || services))
            return fields_fail(c, o->where, o->path, "runs training jobs and %s; give the jobs a "
                               "pool of their own", inference ? "an inference workload"
                                                             : "queueing services");
        if (inference && services)
            return fields_fail(c, o->where, o->path, "is used by %zu workloads, one of them an "
                               "inference workload, which needs its pool to itself",
                               inference + services);
        if (inference > 1 && check_shared_pool(c, sc, p, o) != 0)
            return -1;
        if (services && pool->capacity.kind != POOL_DEDICATED)
            return fields_fail(c, o->where, o->path, "a queueing service (fs.service) runs on "
                               "fixed servers: use fs.dedicated for it");
        if (services && pool->has_cost) { /* its run would print no cost at all */
            char path[FIELD_PATH_MAX];
            snprintf(path, sizeof path, "%s.cost", o->path);
            return fields_fail(c, o->where, path, "a queueing service (fs.service) counts its "
                               "servers busy, not GPU-hours: cost, power and a horizon are "
                               "priced for pools of GPUs that serve models or run jobs "
                               "(fs.inference, fs.training, fs.job_stream)");
        }
        bool on_demand = false; /* a model that scales to zero orders its own GPUs */
        for (size_t i = 0; i < sc->ninferences; i++) {
            const inference_spec *w = &sc->inferences[i];
            if (w->pool != p || !(w->scale_to_zero_s > 0))
                continue;
            on_demand = true;
            if (pool->autoscaler.enabled || w->ngroups)
                return fields_fail(c, o->where, o->path, "workload \"%s\" scales to zero "
                                   "here, which is not with %s", w->name,
                                   pool->autoscaler.enabled ? "an autoscaler on the pool"
                                   : workload_role_count(w, ROLE_OVERFLOW) ? "an overflow pool"
                                   : workload_decodes(w) ? "disaggregated decoding"
                                                         : "another serving pool");
        }
        if (inference && pool->count == 0 && !pool->autoscaler.enabled && !on_demand)
            return fields_fail(c, o->where, o->path, "starts with no GPUs and has no autoscaler, "
                               "so its workload would never be served: set count or autoscaler");
    }
    return 0;
}

/* ---- the scenario ----------------------------------------------------------------- */

/* With an SLO and tp left out (slo_tp_applies), the tp that meets it: the candidates in
 * the throughput ranking tried in turn, the workload converted again at each, until one
 * meets it (slo_tp.h); the one kept replaces *inf, with the trials.  A candidate that
 * cannot be made (its cache holds no LoRA slot, say) or run is passed over. */
static int choose_tp_for_slo(load_context *c, const fields_object *w, scenario *sc,
                             const named_list *pools, inference_spec *inf)
{
    if (c->no_tp_trials || !slo_tp_applies(sc, inf))
        return 0;
    const pool_spec *p = &sc->pools[inf->pool];
    unsigned tps[TP_TRIALS_MAX];
    size_t n = ranked_tps(p, &sc->catalog.models[inf->model], &sc->catalog.devices[inf->device],
                          inf, inference_engine(sc, inf), tps, TP_TRIALS_MAX);
    if (n < 2)
        return 0;
    if (!slo_tp_trial_span(sc, inf).replications) { /* past the budget: said, not tried */
        inf->tp_untried_requests = inf->arrivals.rate_per_s * (sc->duration_s - sc->warmup_s);
        return 0;
    }
    inference_spec *tried = calloc(n, sizeof *tried);
    if (!tried)
        return fields_fail(c, w->where, w->path, "out of memory");
    tp_trial trials[TP_TRIALS_MAX];
    size_t of[TP_TRIALS_MAX], ntrials = 0, original = n;
    char err[512];
    for (size_t k = 0; k < n; k++) {
        int top = lua_gettop(c->L);
        inference_spec *s = &tried[k];
        int made = 0;
        if (tps[k] == inf->tp) {
            *s = *inf;
            original = k;
        } else if (!(s->name = strdup(inf->name))) {
            made = -1;
        } else {
            made = convert_inference(c, w, sc, pools, tps[k], s);
        }
        lua_settop(c->L, top);
        if (made == 0 && slo_tp_trial(sc, s, &trials[ntrials], err, sizeof err) == 0) {
            of[ntrials++] = k;
            if (trials[ntrials - 1].meets)
                break;
        }
        c->err[0] = '\0'; /* passed over: not this load's error */
    }
    size_t keep = ntrials ? of[slo_tp_pick(trials, ntrials)] : original;
    if (keep != original) {
        if (original < n)
            tried[original] = (inference_spec){ 0 }; /* still *inf's */
        inference_spec_release(inf);
        *inf = tried[keep];
        tried[keep] = (inference_spec){ 0 };
    } else if (original < n) {
        tried[original] = (inference_spec){ 0 };
    }
    for (size_t k = 0; k < n; k++)
        inference_spec_release(&tried[k]);
    free(tried);
    inf->tp_chosen = true;
    inf->ntp_trials = (unsigned)ntrials;
    memcpy(inf->tp_trials, trials, ntrials * sizeof trials[0]);
    return 0;
}

static char *default_name(const char *path)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    char *name = strdup(base);
    if (name) {
        char *dot = strrchr(name, '.');
        if (dot && dot != name)
            *dot = '\0';
    }
    return name;
}

typedef struct convert_job {
    load_context *c;
    const char *path;
    scenario *sc;
    experiment_spec *experiment; /* NULL: sweep and search are checked, then dropped */
    int status;
    int undo;          /* stack index of a table for what each --set replaced (0: none) */
    lua_Integer undone; /* its entries: table, key, old value, three slots each */
} convert_job;

static int convert_scenario(load_context *c, const char *path, int root, scenario *sc,
                            experiment_spec *experiment)
{
    lua_State *L = c->L;
    fields_object s;
    static const char *const kinds[] = { "scenario", NULL };
    if (!lua_istable(L, root) || fields_object_open(c, root, "", "", kinds, "", &s) != 0) {
        snprintf(c->err, c->err_size, "%s: the file returns no scenario (it should end with "
                 "return fs.scenario { ... })", path);
        return -1;
    }
    int64_t seed, replications;
    if (fields_object_check_keys(c, &s, SCENARIO_KEYS) != 0
        || fields_read_string(c, &s, "name", false, &sc->name) != 0
        || fields_read_string(c, &s, "description", false, &sc->description) != 0
        || fields_read_duration(c, &s, "duration", true, 0, 0, SCENARIO_MAX_DURATION_S, false,
                                &sc->duration_s) != 0
        || fields_read_duration(c, &s, "warmup", false, 0, 0, sc->duration_s, true,
                                &sc->warmup_s) != 0
        || fields_read_integer(c, &s, "seed", false, 1, 0, INT64_MAX, &seed) != 0
        || fields_read_integer(c, &s, "replications", false, 1, 1, SCENARIO_MAX_REPLICATIONS,
                               &replications) != 0
        || fields_read_duration(c, &s, "bucket", false, sc->duration_s / 100,
                                sc->duration_s / SCENARIO_MAX_BUCKETS, sc->duration_s, true,
                                &sc->bucket_s) != 0
        || fields_read_duration(c, &s, "horizon", false, 0, 0, SCENARIO_MAX_DURATION_S, true,
                                &sc->horizon_s) != 0
        || fields_read_number(c, &s, "discount_rate", false, 0, 0, 1, true,
                              &sc->discount_rate) != 0)
        return -1;
    if (sc->discount_rate > 0 && !(sc->horizon_s > 0))
        return fields_fail(c, s.where, "discount_rate", "%g with no horizon: nothing to "
                           "discount (give horizon = \"3y\" or leave the rate out)",
                           sc->discount_rate);
    if (sc->warmup_s >= sc->duration_s)
        return fields_fail(c, s.where, "warmup", "%g s leaves nothing to measure in a run of "
                           "%g s", sc->warmup_s, sc->duration_s);
    experiment_spec unused;
    experiment_load_init(&unused);
    int read = experiment_load_read(c, &s, experiment ? experiment : &unused);
    experiment_load_release(&unused);
    int has_claim = read == 0 ? claim_load(c, &s) : -1; /* judged after the run */
    if (read != 0 || has_claim < 0)
        return -1;
    sc->seed = (uint64_t)seed;
    sc->replications = (unsigned)replications;
    if (!sc->name && !(sc->name = default_name(path)))
        return fields_fail(c, s.where, "name", "out of memory");
    if (check_name(c, s.where, "name", sc->name) != 0)
        return -1;

    named_list pools, workloads;
    fields_object pools_table, workloads_table;
    if (list_names(c, &s, "pools", true, &pools_table, &pools) != 0)
        return -1;
    int status = 0;
    bool calls_lua = false;
    fields_object *pool_objects = calloc(pools.count + 1, sizeof *pool_objects);
    sc->pools = calloc(pools.count + 1, sizeof *sc->pools);
    if (!pool_objects || !sc->pools)
        status = fields_fail(c, s.where, "pools", "out of memory");
    for (size_t i = 0; i < pools.count && status == 0; i++) {
        int top = lua_gettop(L);
        pool_spec *p = &sc->pools[sc->npools++];
        if (!(p->name = strdup(pools.names[i]))) {
            status = fields_fail(c, s.where, "pools", "out of memory");
            break;
        }
        status = open_entry(c, &pools_table, pools.names[i], POOL_KINDS,
                            "a pool such as fs.dedicated { count = 4 }", &pool_objects[i])
                 || pool_load_convert(c, &pool_objects[i], p, &calls_lua);
        lua_settop(L, top);
    }
    if (status == 0 && calls_lua)
        sc->runtime = sandbox_of(L); /* the run calls a scaling policy */
    if (status == 0 && has_claim)
        sc->runtime = sandbox_of(L); /* the verdict runs after the run */
    if (status == 0 && c->catalog_read && catalog_copy(&sc->catalog, c->catalog_read) != 0)
        status = fields_fail(c, s.where, "", "out of memory copying the catalogs");
    else if (status == 0 && !c->catalog_read
             && catalog_load_from(L, c->scenario_path, &sc->catalog, c->err, c->err_size) != 0)
        status = -1;
    if (status == 0)
        status = check_devices(c, sc, pool_objects);
    for (size_t i = 0; i < sc->npools && status == 0; i++)
        status = pool_load_resolve_units(c, &pool_objects[i], &sc->pools[i], &sc->catalog);
    if (status == 0 && list_names(c, &s, "workloads", false, &workloads_table, &workloads) == 0) {
        sc->services = calloc(workloads.count, sizeof *sc->services);
        sc->inferences = calloc(workloads.count, sizeof *sc->inferences);
        sc->gpu_tasks = calloc(workloads.count, sizeof *sc->gpu_tasks);
        sc->trainings = calloc(workloads.count, sizeof *sc->trainings);
        sc->job_streams = calloc(workloads.count, sizeof *sc->job_streams);
        if (!sc->services || !sc->inferences || !sc->gpu_tasks || !sc->trainings
            || !sc->job_streams)
            status = fields_fail(c, s.where, "workloads", "out of memory");
        for (size_t i = 0; i < workloads.count && status == 0; i++) {
            int top = lua_gettop(L);
            fields_object w;
            status = open_entry(c, &workloads_table, workloads.names[i], WORKLOAD_KINDS,
                                "a workload such as fs.service { ... } or fs.inference { ... }", &w);
            if (status == 0 && (!strcmp(w.kind, "training") || !strcmp(w.kind, "job_stream"))) {
                status = convert_job_workload(c, &w, sc, &pools);
            } else if (status == 0 && !strcmp(w.kind, "gpu_tasks")) {
                gpu_tasks_workload *t = &sc->gpu_tasks[sc->ngpu_tasks++];
                status = (t->name = strdup(workloads.names[i]))
                             ? gpu_tasks_load_convert(c, &w, &t->spec)
                             : fields_fail(c, s.where, "workloads", "out of memory");
            } else if (status == 0 && !strcmp(w.kind, "inference")) {
                inference_spec *inf = &sc->inferences[sc->ninferences++];
                status = (inf->name = strdup(workloads.names[i]))
                             ? convert_inference(c, &w, sc, &pools, 0, inf)
                             : fields_fail(c, s.where, "workloads", "out of memory");
            } else if (status == 0) {
                service_spec *sv = &sc->services[sc->nservices++];
                status = (sv->name = strdup(workloads.names[i]))
                             ? convert_service(c, &w, sc, &pools, sv)
                             : fields_fail(c, s.where, "workloads", "out of memory");
            }
            lua_settop(L, top);
        }
        if (status == 0)
            status = check_pool_sharing(c, sc, pool_objects);
        for (size_t i = 0; i < sc->ninferences && status == 0; i++) {
            int top = lua_gettop(L);
            fields_object w;
            status = open_entry(c, &workloads_table, sc->inferences[i].name, WORKLOAD_KINDS,
                                "an inference workload", &w)
                     || choose_tp_for_slo(c, &w, sc, &pools, &sc->inferences[i]);
            lua_settop(L, top);
        }
        named_list_release(&workloads);
    } else if (status == 0) {
        status = -1;
    }
    if (status == 0)
        status = check_queues_stay_bounded(c, sc, pool_objects);
    named_list_release(&pools);
    free(pool_objects);
    return status ? -1 : 0;
}

/* Runs the conversion inside lua_pcall, so that no Lua error escapes to C. */
static int apply_set(load_context *c, int root, const char *text, convert_job *undo);

/* Applies the --set overrides and converts, inside lua_pcall, so that no Lua error
 * (memory included) escapes to C. */
static int convert_protected(lua_State *L)
{
    convert_job *job = lua_touserdata(L, 1);
    lua_remove(L, 1);
    if (job->undo)
        job->undo = 2; /* the undo table, passed after the scenario's */
    load_context *c = job->c;
    static const char *const kinds[] = { "scenario", NULL };
    for (size_t i = 0; i < c->nsets; i++) {
        fields_object s;
        if (!lua_istable(L, 1) || fields_object_open(c, 1, "", "", kinds, "", &s) != 0) {
            snprintf(c->err, c->err_size, "%s: the file returns no scenario (it should end "
                     "with return fs.scenario { ... })", job->path);
            job->status = -1;
            return 0;
        }
        if (apply_set(c, 1, c->sets[i], job->undo ? job : NULL) != 0) {
            job->status = -1;
            return 0;
        }
    }
    job->status = convert_scenario(c, job->path, 1, job->sc, job->experiment);
    return 0;
}

/* ---- --set ------------------------------------------------------------------------ */

/* Applies "a.b.c=value" to the table at root: the value is a number if it reads as one,
 * a boolean for true/false, else a string (units are parsed when the value is read).
 * With undo, what the key held before is recorded there first (put_back_sets). */
static int apply_set(load_context *c, int root, const char *text, convert_job *undo)
{
    lua_State *L = c->L;
    const char *eq = strchr(text, '=');
    if (!eq || eq == text) {
        snprintf(c->err, c->err_size, "--set %s: expected KEY=VALUE, as in "
                 "--set pools.q.count=6", text);
        return -1;
    }
    char key[FIELD_PATH_MAX];
    snprintf(key, sizeof key, "%.*s", (int)(eq - text), text);
    const char *value = eq + 1;
    int top = lua_gettop(L);
    lua_pushvalue(L, root);
    char *part = key, *dot;
    char walked[FIELD_PATH_MAX] = "";
    for (;;) {
        dot = strchr(part, '.');
        if (dot)
            *dot = '\0';
        if (!*part) {
            lua_settop(L, top);
            snprintf(c->err, c->err_size, "--set %s: empty part in the key", text);
            return -1;
        }
        char *end;
        long long index = strtoll(part, &end, 10);
        if (*end == '\0')
            lua_pushinteger(L, index); /* list entries by position */
        else
            lua_pushstring(L, part);
        if (!dot)
            break;
        lua_rawget(L, -2);
        snprintf(walked + strlen(walked), sizeof walked - strlen(walked), "%s%s",
                 *walked ? "." : "", part);
        if (!lua_istable(L, -1)) {
            lua_settop(L, top);
            snprintf(c->err, c->err_size, "--set %s: the scenario has no table %s", text, walked);
            return -1;
        }
        lua_remove(L, -2);
        part = dot + 1;
    }
    lua_pushvalue(L, -1);
    if (lua_rawget(L, -3) == LUA_TTABLE) {
        lua_settop(L, top);
        snprintf(c->err, c->err_size, "--set %s: %.*s is a table; --set changes single values "
                 "inside it", text, (int)(eq - text), text);
        return -1;
    }
    if (undo) { /* table, key, old value (nil: absent) */
        lua_pushvalue(L, -3);
        lua_rawseti(L, undo->undo, ++undo->undone);
        lua_pushvalue(L, -2);
        lua_rawseti(L, undo->undo, ++undo->undone);
        lua_rawseti(L, undo->undo, ++undo->undone); /* pops the old value */
    } else {
        lua_pop(L, 1);
    }
    if (!strcmp(value, "true") || !strcmp(value, "false"))
        lua_pushboolean(L, value[0] == 't');
    else if (!*value || lua_stringtonumber(L, value) == 0)
        lua_pushstring(L, value);
    lua_rawset(L, -3);
    lua_settop(L, top);
    return 0;
}

/* After a rewind (lua/sandbox.h): the --set overrides again, on the file's new table. */
static int replay_sets(lua_State *L, int root, const char *const *sets, size_t nsets,
                       char *err, size_t err_size)
{
    load_context c = { L, err, err_size, sets, nsets, "", false, 0, false, NULL };
    for (size_t i = 0; i < nsets; i++)
        if (apply_set(&c, root, sets[i], NULL) != 0)
            return -1;
    return 0;
}

/* Puts back what each --set of job replaced, the last first (the table is as the file
 * left it).  rawset of a key the table holds, or of nil, allocates nothing: no error. */
static void put_back_sets(lua_State *L, const convert_job *job)
{
    for (lua_Integer i = job->undone; i >= 3; i -= 3) {
        lua_rawgeti(L, job->undo, i - 2);
        lua_rawgeti(L, job->undo, i - 1);
        lua_rawgeti(L, job->undo, i);
        lua_rawset(L, -3);
        lua_pop(L, 1);
    }
}

/* ---- running the file ---------------------------------------------------------------- */


/* Loads and runs the file; leaves its first result on the stack. */
static int run_file(sandbox *sb, const char *path, char *err, size_t err_size)
{
    lua_State *L = sandbox_state(sb);
    struct stat st;
    if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) { /* a pipe would block the open */
        snprintf(err, err_size, "%s: cannot read the scenario file: %s", path,
                 S_ISDIR(st.st_mode) ? "a folder, not a file" : "not a plain file (a pipe or "
                 "a device)");
        return -1;
    }
    FILE *probe = fopen(path, "rb");
    if (!probe) {
        snprintf(err, err_size, "%s: cannot read the scenario file: %s", path, strerror(errno));
        return -1;
    }
    int first = fgetc(probe);
    fclose(probe);
    if (first == LUA_SIGNATURE[0]) {
        snprintf(err, err_size, "%s: is a compiled Lua chunk; scenario files must be Lua "
                 "source text", path);
        return -1;
    }
    lua_pushcfunction(L, sandbox_traceback);
    int status = sandbox_load_file(sb, path); /* the text is kept for rewinds */
    if (status == LUA_OK)
        status = lua_pcall(L, 0, 1, -2);
    if (status == LUA_OK) {
        lua_remove(L, -2);
        return 0;
    }
    if (status == LUA_ERRMEM && sandbox_memory_exhausted(sb))
        snprintf(err, err_size, "%s: the scenario used more than the sandbox's %zu MiB of "
                 "memory (a trusted file can lift the limit with --unsafe)", path,
                 SANDBOX_MEMORY_LIMIT_BYTES >> 20);
    else
        snprintf(err, err_size, "%s", lua_tostring(L, -1) ? lua_tostring(L, -1) : "error");
    return -1;
}

int scenario_load(const char *path, const scenario_load_options *options, scenario *out,
                  char *err, size_t err_size)
{
    return scenario_load_experiment(path, options, out, NULL, err, err_size);
}

/* A new table of n array slots (under lua_pcall). */
static int new_table(lua_State *L)
{
    lua_createtable(L, (int)lua_tointeger(L, 1), 0);
    return 1;
}

/* Converts the table at root of sb's state (the file's result) with options' --set
 * overrides into out.  With undo, each override is put back after the conversion, so
 * that the table can be converted again with others. */
static int convert_table(sandbox *sb, int root, const char *path,
                         const scenario_load_options *options, scenario *out,
                         experiment_spec *experiment, bool undo, const catalog *catalog_read,
                         char *err, size_t err_size)
{
    lua_State *L = sandbox_state(sb);
    load_context c = { L, err, err_size, options->sets, options->nsets, path, options->unsafe, 0,
                       options->no_tp_trials, catalog_read };
    convert_job job = { &c, path, out, experiment, -1, 0, 0 };
    int undo_at = 0;
    if (undo) { /* made in protected mode: the state may be near its memory cap */
        lua_pushcfunction(L, new_table);
        lua_pushinteger(L, 3 * (lua_Integer)options->nsets);
        if (lua_pcall(L, 1, 1, 0) != LUA_OK) {
            lua_pop(L, 1);
            snprintf(err, err_size, "%s: out of memory converting the scenario", path);
            return -1;
        }
        undo_at = job.undo = lua_gettop(L);
    }
    lua_pushcfunction(L, convert_protected);
    lua_pushlightuserdata(L, &job);
    lua_pushvalue(L, root);
    if (undo)
        lua_pushvalue(L, undo_at);
    if (lua_pcall(L, undo ? 3 : 2, 0, 0) != LUA_OK) {
        snprintf(err, err_size, "%s: %s", path, lua_tostring(L, -1) ? lua_tostring(L, -1)
                                                                     : "error while reading");
        lua_pop(L, 1);
        job.status = -1;
    }
    if (undo) {
        job.undo = undo_at;
        put_back_sets(L, &job);
        lua_pop(L, 1);
    }
    out->list_values = c.list_values;
    return job.status;
}

/* The end of a load from a state of its own: the state goes with the scenario when the
 * run calls into it, else it is freed; on failure out is released. */
static int finish_load(sandbox *sb, const scenario_load_options *options, scenario *out,
                       experiment_spec *experiment, int status, char *err, size_t err_size)
{
    if (options->instructions_run)
        *options->instructions_run = sandbox_instructions_run(sb);
    if (status == 0 && out->runtime == sb) {
        out->runtime_free = free_runtime; /* a routing function runs with the scenario */
        out->runtime_rewind = rewind_runtime;
        if (sandbox_keep_for_rewinds(sb, options->sets, options->nsets, replay_sets,
                                     out->replications + 1, err, err_size) != 0)
            status = -1; /* the replications and the verdict each run the file again */
        sandbox_set_instruction_budget(sb, 0);
    } else {
        out->runtime = NULL;
        sandbox_free(sb);
    }
    if (status != 0) {
        scenario_release(out);
        experiment_load_release(experiment);
    }
    return status;
}

int scenario_load_experiment(const char *path, const scenario_load_options *options,
                             scenario *out, experiment_spec *experiment, char *err,
                             size_t err_size)
{
    scenario_init(out);
    if (experiment)
        experiment_load_init(experiment);
    sandbox *sb = sandbox_create(options->unsafe);
    if (!sb) {
        snprintf(err, err_size, "out of memory creating the Lua state");
        return -1;
    }
    if (options->instruction_budget)
        sandbox_set_instruction_budget(sb, options->instruction_budget);
    int status = run_file(sb, path, err, err_size);
    if (status == 0)
        status = convert_table(sb, lua_gettop(sandbox_state(sb)), path, options, out, experiment,
                               false, NULL, err, err_size);
    return finish_load(sb, options, out, experiment, status, err, err_size);
}

/* ---- a file run once, converted at each point ----------------------------------------- */

struct scenario_source {
    char *path;
    sandbox *sb;     /* the file's state, its table at the top, while reusable */
    bool ran;        /* the file ran once (sb is NULL after it when not reusable) */
    /* the state's catalogs, read once: the table never reaches them (a --set could
     * then change an entry), so every point's conversion would read the same */
    catalog catalog;
    bool catalog_read;
};

scenario_source *scenario_source_open(const char *path)
{
    scenario_source *src = calloc(1, sizeof *src);
    if (src && !(src->path = strdup(path))) {
        free(src);
        src = NULL;
    }
    return src;
}

void scenario_source_close(scenario_source *src)
{
    if (!src)
        return;
    if (src->sb)
        sandbox_free(src->sb);
    catalog_release(&src->catalog);
    free(src->path);
    free(src);
}

bool scenario_source_reused(const scenario_source *src) { return src->sb != NULL; }

/* What the scan of a file's table found. */
typedef struct plain_scan {
    int seen;              /* table -> true (looked at), or 2 (a catalog's) */
    bool reaches_catalog;  /* the table holds one of the catalogs' tables */
} plain_scan;

/* Marks the table at index and the tables under it as the catalogs' in seen. */
static void mark_catalog(lua_State *L, int index, int seen, int depth)
{
    index = lua_absindex(L, index);
    if (lua_type(L, index) != LUA_TTABLE || depth > 200 || !lua_checkstack(L, 4))
        return;
    lua_pushvalue(L, index);
    bool marked = lua_rawget(L, seen) != LUA_TNIL;
    lua_pop(L, 1);
    if (marked)
        return;
    lua_pushvalue(L, index);
    lua_pushinteger(L, 2);
    lua_rawset(L, seen);
    lua_pushnil(L);
    while (lua_next(L, index)) {
        mark_catalog(L, -2, seen, depth + 1);
        mark_catalog(L, -1, seen, depth + 1);
        lua_pop(L, 1);
    }
}

/* Whether the value at index, and everything reachable from it, is plain data: tables
 * without metatables, strings, numbers, booleans.  A function (a routing policy, a rate,
 * a claim's verdict) may keep state between calls, so a table holding one is converted
 * from a fresh run of the file.  A catalog's table counts as plain (convert reads the
 * catalogs through fs.devices and the like anyway) and is noted. */
static bool plain_data(lua_State *L, int index, plain_scan *scan, int depth)
{
    index = lua_absindex(L, index);
    int type = lua_type(L, index);
    if (type != LUA_TTABLE)
        return type == LUA_TNIL || type == LUA_TBOOLEAN || type == LUA_TNUMBER
               || type == LUA_TSTRING;
    lua_pushvalue(L, index);
    int seen = lua_rawget(L, scan->seen);
    bool catalogs = seen == LUA_TNUMBER;
    lua_pop(L, 1);
    if (catalogs)
        scan->reaches_catalog = true;
    if (seen != LUA_TNIL)
        return true;
    if (depth > 200 || !lua_checkstack(L, 4))
        return false;
    if (lua_getmetatable(L, index)) {
        lua_pop(L, 1);
        return false;
    }
    lua_pushvalue(L, index);
    lua_pushboolean(L, 1);
    lua_rawset(L, scan->seen);
    bool plain = true;
    lua_pushnil(L);
    while (plain && lua_next(L, index)) {
        plain = plain_data(L, -2, scan, depth + 1) && plain_data(L, -1, scan, depth + 1);
        lua_pop(L, plain ? 1 : 2);
    }
    return plain;
}

/* plain_data of the table at 1 into the plain_scan at 2, in protected mode (it
 * allocates): the catalogs' tables are marked first. */
static int check_plain(lua_State *L)
{
    plain_scan *scan = lua_touserdata(L, 2);
    lua_newtable(L);
    scan->seen = lua_gettop(L);
    if (lua_getfield(L, LUA_REGISTRYINDEX, "fleetsim.loaded") == LUA_TTABLE
        && lua_getfield(L, -1, "fleetsim") == LUA_TTABLE) {
        static const char *const sections[] = { "devices", "models", "engines" };
        for (size_t k = 0; k < sizeof sections / sizeof sections[0]; k++) {
            lua_getfield(L, -1, sections[k]);
            mark_catalog(L, -1, scan->seen, 0);
            lua_pop(L, 1);
        }
    }
    lua_settop(L, scan->seen);
    lua_pushboolean(L, plain_data(L, 1, scan, 0));
    return 1;
}

int scenario_source_load(scenario_source *src, const scenario_load_options *options,
                         scenario *out, char *err, size_t err_size)
{
    if (src->ran && !src->sb)
        return scenario_load(src->path, options, out, err, err_size);
    scenario_init(out);
    uint64_t file_instructions = 0;
    if (!src->ran) { /* the first load runs the file, and keeps its state if plain data */
        src->ran = true;
        sandbox *sb = sandbox_create(options->unsafe);
        if (!sb) {
            snprintf(err, err_size, "out of memory creating the Lua state");
            return -1;
        }
        lua_State *L = sandbox_state(sb);
        if (options->instruction_budget)
            sandbox_set_instruction_budget(sb, options->instruction_budget);
        int status = run_file(sb, src->path, err, err_size);
        int root = lua_gettop(L);
        bool plain = false;
        plain_scan scan = { 0, false };
        if (status == 0) {
            lua_pushcfunction(L, check_plain);
            lua_pushvalue(L, root);
            lua_pushlightuserdata(L, &scan);
            plain = lua_pcall(L, 2, 1, 0) == LUA_OK && lua_toboolean(L, -1);
            lua_settop(L, root);
        }
        if (status != 0 || !plain) { /* this load as any other */
            if (status == 0)
                status = convert_table(sb, root, src->path, options, out, NULL, false, NULL,
                                       err, err_size);
            return finish_load(sb, options, out, NULL, status, err, err_size);
        }
        src->sb = sb;
        file_instructions = sandbox_instructions_run(sb);
        char ignored[256]; /* a mistake in an entry: each conversion says it */
        src->catalog_read = !scan.reaches_catalog
                            && catalog_load_from(L, src->path, &src->catalog, ignored,
                                                 sizeof ignored) == 0;
    }
    lua_State *L = sandbox_state(src->sb);
    int root = lua_gettop(L);
    sandbox_set_instruction_budget(src->sb, options->instruction_budget);
    int status = convert_table(src->sb, root, src->path, options, out, NULL, true,
                               src->catalog_read ? &src->catalog : NULL, err, err_size);
    lua_settop(L, root);
    if (options->instructions_run)
        *options->instructions_run = file_instructions + sandbox_instructions_run(src->sb);
    if (status == 0 && out->runtime) { /* plain data never needs its state: not reused */
        out->runtime = NULL;
        scenario_release(out);
        sandbox_free(src->sb);
        src->sb = NULL;
        return scenario_load(src->path, options, out, err, err_size);
    }
    if (status != 0)
        scenario_release(out);
    return status;
}
