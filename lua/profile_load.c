/* Calibration profiles from their Lua files (see profile_load.h). */
#include "lua/profile_load.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>

#include "lua/sandbox.h"

static const char *const TOP_KEYS[] = {
    "format", "device", "kind", "catalog", "host", "date", "threads", "quick", "samples",
    "blas", "achieved", "perf", "datasheet", "fits", "medians", "operators", NULL,
};
static const char *const OPERATOR_KEYS[] = {
    "model", "precision", "peak_flops", "bandwidth_bytes_per_s", "gemm", "pass",
    "attention_decode", "attention_prefill", "host", "spread", "fits", "ceilings", "steps",
    NULL,
};
static const char *const PASS_KEYS[PASS_COUNT + 1] = {
    [PASS_NORM] = "norm", [PASS_ROPE] = "rope", [PASS_ACT] = "act", [PASS_ADD] = "add",
    [PASS_EMBED] = "embed", [PASS_RESHAPE] = "reshape", [PASS_SAMPLE] = "sample",
};
static const char *const ACHIEVED_KEYS[] = {
    "flops", "fp64_flops", "bandwidth_bytes_per_s", "link_bytes_per_s",
    "host_link_bytes_per_s", "host_link_latency_s", "launch_s", "memory_bytes", NULL,
};
static const char *const PERF_KEYS[] = {
    "compute_efficiency", "tokens_half", "width_half", "bandwidth_efficiency",
    "kernel_launch_s", "kernels_per_layer", "link_latency_s", "network_bytes_per_s",
    "devices_per_node", "dp_overlap", "host_s", "host_per_seq_s", "host_tp_s",
    "host_tp_per_seq_s", NULL,
};

/* A string key into a fixed buffer ("" when absent). */
static int read_text(load_context *c, const fields_object *o, const char *key, char *buf,
                     size_t size)
{
    char *s = NULL;
    if (fields_read_string(c, o, key, false, &s) != 0)
        return -1;
    snprintf(buf, size, "%s", s ? s : "");
    free(s);
    return 0;
}

static int read_achieved(load_context *c, const fields_object *top, device_profile *p)
{
    lua_State *L = c->L;
    int base = lua_gettop(L);
    fields_object a, f;
    int present = fields_object_open_field(c, top, "achieved", NULL, "a table of achieved figures",
                                           &a);
    if (present <= 0)
        return present;
    int status = fields_object_check_keys(c, &a, ACHIEVED_KEYS)
                 || fields_read_number(c, &a, "fp64_flops", false, 0, 0, 1e20, true, &p->fp64_flops)
                 || fields_read_number(c, &a, "bandwidth_bytes_per_s", false, 0, 0, 1e16, true,
                                       &p->bandwidth_bytes_per_s)
                 || fields_read_number(c, &a, "link_bytes_per_s", false, 0, 0, 1e16, true,
                                       &p->link_bytes_per_s)
                 || fields_read_number(c, &a, "host_link_bytes_per_s", false, 0, 0, 1e16, true,
                                       &p->host_link_bytes_per_s)
                 || fields_read_number(c, &a, "host_link_latency_s", false, 0, 0, 1, true,
                                       &p->host_link_latency_s)
                 || fields_read_number(c, &a, "launch_s", false, 0, 0, 1, true, &p->launch_s)
                 || fields_read_number(c, &a, "memory_bytes", false, 0, 0, 1e16, true,
                                       &p->memory_bytes);
    if (status == 0
        && (present = fields_object_open_field(c, &a, "flops", NULL,
                                               "a table such as { bf16 = 7e14 }", &f)) < 0)
        status = -1;
    if (status == 0 && present == 1) {
        const char *names[PREC_COUNT + 1];
        for (int i = 0; i < PREC_COUNT; i++)
            names[i] = precision_name((precision)i);
        names[PREC_COUNT] = NULL;
        status = fields_object_check_keys(c, &f, names);
        for (int i = 0; i < PREC_COUNT && status == 0; i++)
            status = fields_read_number(c, &f, names[i], false, 0, 0, 1e20, true, &p->flops[i]);
    }
    lua_settop(L, base);
    return status ? -1 : 0;
}

static int read_perf(load_context *c, const fields_object *top, perf_profile *perf)
{
    int base = lua_gettop(c->L);
    fields_object o;
    int present = fields_object_open_field(c, top, "perf", NULL, "a table of perf_profile fields",
                                           &o);
    if (present <= 0)
        return present;
    int64_t per_node = 0;
    int status = fields_object_check_keys(c, &o, PERF_KEYS)
        || fields_read_number(c, &o, "compute_efficiency", false, NAN, 0, 10, false,
                              &perf->compute_efficiency)
        || fields_read_number(c, &o, "tokens_half", false, NAN, 0, 1e9, true, &perf->tokens_half)
        || fields_read_number(c, &o, "width_half", false, NAN, 0, 1e9, true, &perf->width_half)
        || fields_read_number(c, &o, "bandwidth_efficiency", false, NAN, 0, 10, false,
                              &perf->bandwidth_efficiency)
        || fields_read_number(c, &o, "kernel_launch_s", false, NAN, 0, 1, true,
                              &perf->kernel_launch_s)
        || fields_read_number(c, &o, "kernels_per_layer", false, NAN, 0, 1e4, true,
                              &perf->kernels_per_layer)
        || fields_read_number(c, &o, "link_latency_s", false, NAN, 0, 1, true,
                              &perf->link_latency_s)
        || fields_read_number(c, &o, "network_bytes_per_s", false, NAN, 0, 1e16, false,
                              &perf->network_bytes_per_s)
        || fields_read_integer(c, &o, "devices_per_node", false, 0, 1, 1000000, &per_node)
        || fields_read_number(c, &o, "dp_overlap", false, NAN, 0, 1, true, &perf->dp_overlap)
        || fields_read_number(c, &o, "host_s", false, NAN, 0, 10, true, &perf->host_s)
        || fields_read_number(c, &o, "host_per_seq_s", false, NAN, 0, 1, true,
                              &perf->host_per_seq_s)
        || fields_read_number(c, &o, "host_tp_s", false, NAN, 0, 10, true, &perf->host_tp_s)
        || fields_read_number(c, &o, "host_tp_per_seq_s", false, NAN, 0, 1, true,
                              &perf->host_tp_per_seq_s);
    perf->devices_per_node = (unsigned)per_node;
    lua_settop(c->L, base);
    return status ? -1 : 0;
}

/* Numbers of a sub-table of the operators block: keys[i] into *out[i], each in [0, max]. */
static int read_numbers(load_context *c, const fields_object *parent, const char *key,
                        const char *const *keys, double *const *out, double max)
{
    int base = lua_gettop(c->L);
    fields_object o;
    int present = fields_object_open_field(c, parent, key, NULL, "a table of numbers", &o);
    int status = present < 0 ? -1 : 0;
    if (present == 1) {
        status = fields_object_check_keys(c, &o, keys);
        for (size_t i = 0; keys[i] && status == 0; i++)
            status = fields_read_number(c, &o, keys[i], false, 0, 0, max, true, out[i]);
    }
    lua_settop(c->L, base);
    return status;
}

/* operators = { ... } (kernels/calib_ops.h writes it): the device's own operator table. */
static int read_operators(load_context *c, const fields_object *top, device_profile *p)
{
    int base = lua_gettop(c->L);
    fields_object o, passes;
    int present = fields_object_open_field(c, top, "operators", NULL,
                                           "a table of operator constants", &o);
    if (present <= 0)
        return present;
    perf_family *t = &p->perf.operators;
    memset(t, 0, sizeof *t);
    t->name = "calibrated";
    t->profiled = "this device's operators (fleetsim calibrate)";
    char prec[16];
    static const char *const gemm_keys[] = { "efficiency", "tokens_half", "bandwidth_efficiency",
                                             "overlap", "floor_s",
                                             "vector_bandwidth_efficiency", NULL };
    static const char *const pass_keys[] = { "efficiency", "tokens_half", "floor_s", NULL };
    static const char *const decode_keys[] = { "efficiency", "width_half", "floor_s",
                                               "per_head_s", "score_accesses", NULL };
    static const char *const prefill_keys[] = { "cached_efficiency", "new_efficiency", "floor_s",
                                                NULL };
    static const char *const host_keys[] = { "base_s", "per_seq_s", NULL };
    double *gemm[] = { &t->gemm.efficiency, &t->gemm.tokens_half, &t->gemm.bandwidth_efficiency,
                       &t->gemm.overlap, &t->gemm.floor_s, &t->gemm.vector_bandwidth_efficiency };
    double *decode[] = { &t->attn_decode.efficiency, &t->attn_decode.width_half,
                         &t->attn_decode.floor_s, &t->attn_decode.per_head_s,
                         &t->attn_decode.score_accesses };
    double *prefill[] = { &t->attn_prefill.cached_efficiency, &t->attn_prefill.new_efficiency,
                          &t->attn_prefill.floor_s };
    double *host[] = { &t->host.base_s, &t->host.per_seq_s };
    double *spread[SPREAD_CLASSES];
    for (int k = 0; k < SPREAD_CLASSES; k++)
        spread[k] = &p->spread[k];
    const char *spread_keys[SPREAD_CLASSES + 1] = { NULL };
    memcpy(spread_keys, profile_spread_names, sizeof profile_spread_names);
    int status = fields_object_check_keys(c, &o, OPERATOR_KEYS)
                 || read_text(c, &o, "model", p->operators_model, sizeof p->operators_model)
                 || read_text(c, &o, "precision", prec, sizeof prec)
                 || fields_read_number(c, &o, "peak_flops", true, 0, 1, 1e20, true, &t->peak_flops)
                 || fields_read_number(c, &o, "bandwidth_bytes_per_s", true, 0, 1, 1e16, true,
                                       &t->bandwidth_bytes_per_s)
                 || read_numbers(c, &o, "gemm", gemm_keys, gemm, 1e6)
                 || read_numbers(c, &o, "attention_decode", decode_keys, decode, 1e9)
                 || read_numbers(c, &o, "attention_prefill", prefill_keys, prefill, 1e6)
                 || read_numbers(c, &o, "host", host_keys, host, 10)
                 || read_numbers(c, &o, "spread", spread_keys, spread, 10);
    if (status == 0 && precision_parse(*prec ? prec : "fp16", &p->operators_precision) != 0)
        status = fields_fail(c, o.where, "operators.precision", "expected a precision such as "
                             "\"fp32\" or \"bf16\", got \"%s\"", prec);
    if (status == 0 && !(t->gemm.efficiency > 0))
        status = fields_fail(c, o.where, "operators.gemm.efficiency", "expected a positive "
                             "share of peak_flops, got %g", t->gemm.efficiency);
    if (status == 0 && (present = fields_object_open_field(c, &o, "pass", NULL,
                                                           "a table of passes", &passes)) < 0)
        status = -1;
    if (status == 0 && present == 1) {
        status = fields_object_check_keys(c, &passes, PASS_KEYS);
        for (int i = 0; i < PASS_COUNT && status == 0; i++) {
            double *one[] = { &t->pass[i].efficiency, &t->pass[i].tokens_half,
                              &t->pass[i].floor_s };
            status = read_numbers(c, &passes, PASS_KEYS[i], pass_keys, one, 1e6);
        }
    }
    p->perf.has_operators = status == 0;
    lua_settop(c->L, base);
    return status ? -1 : 0;
}

/* Reads the table the chunk returned (on top of the stack). */
static int read_profile(load_context *c, const char *where, device_profile *p)
{
    fields_object top;
    char got[96];
    if (!lua_istable(c->L, -1)) {
        snprintf(c->err, c->err_size, "%sexpected the file to return a table (return { ... }), "
                 "got %s", where, fields_describe(c->L, -1, got, sizeof got));
        return -1;
    }
    if (fields_object_open(c, -1, "", where, NULL, "a table", &top) != 0)
        return -1;
    snprintf(top.where, sizeof top.where, "%s", where);
    int64_t format = 1;
    int status = fields_object_check_keys(c, &top, TOP_KEYS)
                 || fields_read_integer(c, &top, "format", false, 1, 1, 1, &format)
                 || read_text(c, &top, "device", p->device, sizeof p->device)
                 || read_text(c, &top, "kind", p->kind, sizeof p->kind)
                 || read_text(c, &top, "catalog", p->catalog, sizeof p->catalog)
                 || read_text(c, &top, "host", p->host, sizeof p->host)
                 || read_text(c, &top, "date", p->date, sizeof p->date)
                 || read_achieved(c, &top, p) || read_perf(c, &top, &p->perf)
                 || read_operators(c, &top, p);
    if (status == 0 && *p->kind && strcmp(p->kind, "gpu") && strcmp(p->kind, "cpu"))
        status = fields_fail(c, where, "kind", "expected \"gpu\" or \"cpu\", got \"%s\"", p->kind);
    return status ? -1 : 0;
}

int profile_load_file(const char *path, device_profile *out, char *err, size_t err_size)
{
    profile_init(out);
    sandbox *sb = sandbox_create(false);
    if (!sb) {
        snprintf(err, err_size, "%s: out of memory", path);
        return -1;
    }
    lua_State *L = sandbox_state(sb);
    int status = sandbox_load_file(sb, path); /* a plain file's text, never a pipe's */
    if (status == LUA_OK)
        status = lua_pcall(L, 0, 1, 0);
    if (status != LUA_OK) {
        const char *why = lua_tostring(L, -1); /* names the file (and line) already */
        snprintf(err, err_size, "%s", why ? why : "the profile raised an error that is not a string");
        sandbox_free(sb);
        return -1;
    }
    const char *slash = strrchr(path, '/');
    char where[FIELD_PATH_MAX];
    snprintf(where, sizeof where, "%s: ", slash ? slash + 1 : path);
    load_context c = { L, err, err_size, NULL, 0, path, false, 0, false, NULL };
    status = read_profile(&c, where, out);
    sandbox_free(sb);
    if (status != 0)
        profile_init(out);
    return status;
}

int profile_load_apply_file(const char *path, device_spec *device, perf_profile *perf,
                            device_profile *loaded, char *err, size_t err_size)
{
    device_profile p;
    if (profile_load_file(path, &p, err, err_size) != 0)
        return -1;
    char why[512];
    if (profile_check_kind(&p, device, why, sizeof why) != 0) {
        const char *slash = strrchr(path, '/');
        snprintf(err, err_size, "%s: %s", slash ? slash + 1 : path, why);
        return -1;
    }
    profile_apply(&p, device, perf);
    if (loaded)
        *loaded = p;
    return 0;
}

int profile_load_convert(load_context *c, const fields_object *pool, device_spec *device,
                         perf_profile *perf)
{
    char *file = NULL, *resolved = NULL, path[FIELD_PATH_MAX], message[768];
    if (fields_read_string(c, pool, "profile", false, &file) != 0)
        return -1;
    if (!file)
        return 0;
    int status = fields_resolve_path(c, pool, "profile", file, &resolved);
    if (status == 0 && profile_load_apply_file(resolved, device, perf, NULL, message,
                                               sizeof message) != 0) {
        snprintf(path, sizeof path, "%s%sprofile", pool->path, *pool->path ? "." : "");
        status = fields_fail(c, pool->where, path, "%s", message);
    }
    free(file);
    free(resolved);
    return status == 0 ? 1 : -1;
}
