/* Catalog tables to device_spec and model_spec (see catalog.h). */
#include "lua/catalog.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>

#include "lua/fields.h"
#include "models/kernel_constants.h"
#include "sim/closest.h"
#include "lua/sandbox.h"

static const char *const DEVICE_KEYS[] = {
    "kind", "tflops", "memory", "memory_cuda", "bandwidth_gbs", "nvlink_gbs", "scale_up", "network", "pcie_gen",
    "idle_w", "loaded_w", "tdp_w", "usd_per_hour", "price_date", "price_source", "purchase_usd",
    "purchase_date", "purchase_source", "cores", NULL,
};
static const char *const SCALE_UP_KEYS[] = { "devices", "gbs", NULL };
static const char *const NETWORK_KEYS[] = { "gbit_per_s", "latency", "efficiency", NULL };
static const char *const MODEL_KEYS[] = {
    "layers", "hidden", "heads", "kv_heads", "ffn", "gated", "vocab", "tied", "positions",
    "alibi", "experts", "experts_active", "params", "params_active", "context", "head_dim",
    "expert_ffn", "shared_experts", "dense_layers", "moe_every", "routed_nodes", "kv_lora_rank",
    "q_lora_rank", "rope_head_dim", "v_head_dim", "window", "global_every", "precision",
    "quantized", "unquantized_edge_layers", NULL,
};

static const char *const ENGINE_KEYS[] = {
    "kind", "describes", "kernels", "families", "host", "cuda_graphs", "memory", "training",
    "draft_steps", "alltoall", "batch", NULL,
};
static const char *const ENGINE_HOST_KEYS[] = {
    "from", "ray", "base", "per_sequence", "tp_base", "tp_per_sequence", "overlap", "measured",
    "source", NULL,
};
static const char *const ENGINE_MEMORY_KEYS[] = {
    "rule", "share", "runtime_gib", "runtime_tp_gib", "runtime_rank_gib", "graphs_gib",
    "token_budget", "activation_bytes_per_token", "activation_factor", "activation_split",
    "sampler_seqs", "bytes_per_logit", "floor_gib", "floor_above_gib", NULL,
};
static const char *const ENGINE_TRAINING_KEYS[] = {
    "weight_bytes", "gradient_bytes", "optimizer_bytes", "pipeline_zero", "zero_stages",
    "tp_overlap", "sequence_parallel", NULL,
};
static const char *const ENGINE_GRAPH_KEYS[] = { "max_batch", NULL };
static const char *const ENGINE_BATCH_KEYS[] = { "max_batch", "max_tokens", "smaller", NULL };
static const char *const ENGINE_SMALLER_KEYS[] = { "max_batch", "max_tokens", "below_gib",
                                                   "named", NULL };
static const char *const ENGINE_ALLTOALL_KEYS[] = {
    "dispatch_fp8", "per_node", "two_batch_overlap", NULL,
};

static int by_name(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static void free_keys(char **keys)
{
    for (char **k = keys; k && *k; k++)
        free(*k);
    free(keys);
}

/* The sorted string keys of the table at index, copied (scenario code that runs while
 * the catalog is read may remove them from the table), NULL-ended; NULL if out of
 * memory.  Free with free_keys. */
static char **sorted_keys(lua_State *L, int index, size_t *n)
{
    size_t count = 0;
    lua_pushnil(L);
    while (lua_next(L, index)) {
        lua_pop(L, 1);
        count += lua_type(L, -1) == LUA_TSTRING;
    }
    char **keys = calloc(count + 1, sizeof *keys);
    if (!keys)
        return NULL;
    *n = 0;
    lua_pushnil(L);
    while (lua_next(L, index)) {
        lua_pop(L, 1);
        if (lua_type(L, -1) == LUA_TSTRING && *n < count) {
            if (!(keys[*n] = strdup(lua_tostring(L, -1)))) {
                lua_pop(L, 1);
                free_keys(keys);
                return NULL;
            }
            (*n)++;
        }
    }
    qsort(keys, *n, sizeof *keys, by_name);
    return keys;
}

/* scale_up = { devices = 72, gbs = 1800 }: the scale-up domain and its link (GB/s a device,
 * both directions, as datasheets quote NVLink; nvlink_gbs is its older spelling). */
static int read_scale_up(load_context *c, const fields_object *o, double nvlink_gbs,
                         device_spec *d)
{
    fields_object s;
    int found = fields_object_open_field(c, o, "scale_up", NULL,
                                         "a table such as { devices = 8, gbs = 900 }", &s);
    if (found <= 0) {
        d->nvlink_bytes_per_s = nvlink_gbs * 1e9;
        return found;
    }
    int64_t devices = 1;
    double gbs = 0;
    int status = fields_object_check_keys(c, &s, SCALE_UP_KEYS)
                 || fields_read_integer(c, &s, "devices", true, 0, 1, 100000, &devices)
                 || fields_read_number(c, &s, "gbs", false, nvlink_gbs, 0, 1e6, true, &gbs);
    if (status == 0 && nvlink_gbs > 0 && gbs != nvlink_gbs)
        status = fields_fail(c, s.where, s.path, "gbs (%g) and nvlink_gbs (%g) disagree: give "
                             "the link once, as scale_up.gbs", gbs, nvlink_gbs);
    if (status == 0 && devices > 1 && !(gbs > 0))
        status = fields_fail(c, s.where, s.path, "a domain of %lld devices needs its link: gbs "
                             "(GB/s a device, both directions)", (long long)devices);
    lua_settop(c->L, s.index - 1);
    if (status)
        return -1; /* nothing read is kept */
    d->scale_up_devices = (unsigned)devices;
    d->nvlink_bytes_per_s = gbs * 1e9;
    return 0;
}

/* network = { gbit_per_s = 400, latency = "10us", efficiency = 0.74 }: the scale-out NIC a
 * device has, a collective step's start-up over it and the share of its line rate a
 * collective's traffic reaches. */
static int read_network(load_context *c, const fields_object *o, device_spec *d)
{
    fields_object s;
    int found = fields_object_open_field(c, o, "network", NULL,
                                         "a table such as { gbit_per_s = 400, latency = \"10us\" }",
                                         &s);
    if (found <= 0)
        return found;
    double gbit = 0;
    int status = fields_object_check_keys(c, &s, NETWORK_KEYS)
                 || fields_read_number(c, &s, "gbit_per_s", true, 0, 0, 1e6, false, &gbit)
                 || fields_read_duration(c, &s, "latency", false, 0, 0, 1, true,
                                         &d->network_latency_s)
                 || fields_read_number(c, &s, "efficiency", false, 0, 0, 1, false,
                                       &d->network_efficiency);
    lua_settop(c->L, s.index - 1);
    if (status)
        return -1; /* nothing read is kept */
    d->network_bytes_per_s = gbit * 1e9 / 8;
    return 0;
}

static int convert_device(load_context *c, const fields_object *o, const char *name, device_spec *d)
{
    char *kind = NULL, *purchase_date = NULL, *purchase_source = NULL;
    double nvlink = 0, pcie_gen = 4, cores = 0, bandwidth = 0;
    int status = fields_object_check_keys(c, o, DEVICE_KEYS)
                 || fields_read_string(c, o, "kind", true, &kind)
                 || fields_read_size(c, o, "memory", 1e15, &d->memory_bytes)
                 || fields_read_number(c, o, "bandwidth_gbs", true, 0, 0, 1e6, false, &bandwidth)
                 || fields_read_number(c, o, "nvlink_gbs", false, 0, 0, 1e6, true, &nvlink)
                 || fields_read_number(c, o, "pcie_gen", false, 4, 1, 7, true, &pcie_gen)
                 || fields_read_number(c, o, "idle_w", true, 0, 0, 1e5, true, &d->idle_w)
                 || fields_read_number(c, o, "tdp_w", true, 0, d->idle_w, 1e5, true, &d->tdp_w)
                 || fields_read_number(c, o, "loaded_w", false, 0, d->idle_w, d->tdp_w, true,
                                       &d->loaded_w)
                 || fields_read_number(c, o, "usd_per_hour", false, NAN, 0, 1e6, true,
                                       &d->usd_per_hour)
                 || fields_read_string(c, o, "price_date", false, &d->price_date)
                 || fields_read_string(c, o, "price_source", false, &d->price_source)
                 || fields_read_number(c, o, "purchase_usd", false, NAN, 0, 1e9, true,
                                       &d->purchase_usd)
                 || fields_read_string(c, o, "purchase_date", false, &purchase_date)
                 || fields_read_string(c, o, "purchase_source", false, &purchase_source)
                 || fields_read_number(c, o, "cores", false, 0, 0, 1e6, true, &cores)
                 || read_scale_up(c, o, nvlink, d) || read_network(c, o, d);
    /* memory_cuda = "79.22GiB": what CUDA reports, where a source gives it */
    d->memory_datasheet_bytes = d->memory_bytes;
    if (status == 0) {
        bool stated = fields_object_get(c, o, "memory_cuda") != LUA_TNIL;
        lua_pop(c->L, 1);
        if (stated)
            status = fields_read_size(c, o, "memory_cuda", 1e15, &d->memory_bytes);
        else if (kind && !strcmp(kind, "gpu"))
            d->memory_bytes = device_cuda_memory_bytes(d->memory_datasheet_bytes);
    }
    free(purchase_date); /* checked, kept for the catalog's reader only */
    free(purchase_source);
    if (status == 0 && strcmp(kind, "gpu") && strcmp(kind, "cpu"))
        status = fields_fail(c, o->where, o->path, "kind must be \"gpu\" or \"cpu\", got \"%s\"",
                             kind);
    if (!(d->name = strdup(name)) && status == 0)
        status = fields_fail(c, o->where, o->path, "out of memory");
    d->is_cpu = kind && !strcmp(kind, "cpu");
    d->bandwidth_bytes_per_s = bandwidth * 1e9;
    d->pcie_bytes_per_s = 16e9 * pow(2, pcie_gen - 3); /* x16: ~16 GB/s at gen 3, doubling */
    d->cores = (unsigned)cores;
    free(kind);
    if (status)
        return -1;
    /* tflops = { fp32 = ..., fp16 = ... } */
    if (fields_object_get(c, o, "tflops") != LUA_TTABLE) {
        lua_pop(c->L, 1);
        return fields_fail(c, o->where, o->path, "tflops: expected a table such as { fp16 = 312 }");
    }
    fields_object t = { .index = lua_gettop(c->L) };
    snprintf(t.where, sizeof t.where, "%s", o->where);
    snprintf(t.path, sizeof t.path, "%s.tflops", o->path);
    const char *names[PREC_COUNT + 1];
    for (int i = 0; i < PREC_COUNT; i++)
        names[i] = precision_name((precision)i);
    names[PREC_COUNT] = NULL;
    status = fields_object_check_keys(c, &t, names);
    for (int i = 0; i < PREC_COUNT && status == 0; i++) {
        double tf;
        status = fields_read_number(c, &t, names[i], false, 0, 0, 1e7, true, &tf);
        d->peak_flops[i] = tf * 1e12;
    }
    lua_pop(c->L, 1);
    if (status == 0 && !(d->peak_flops[PREC_FP32] > 0))
        status = fields_fail(c, o->where, o->path, "tflops.fp32 is required");
    return status ? -1 : 0;
}

static int read_unsigned(load_context *c, const fields_object *o, const char *key, bool required,
                         unsigned *out)
{
    int64_t v;
    int status = fields_read_integer(c, o, key, required, 0, required ? 1 : 0, 100000000, &v);
    *out = (unsigned)v;
    return status;
}

static int convert_model(load_context *c, const fields_object *o, const char *name, model_spec *m)
{
    /* in precision's order (models/device.h) */
    static const char *const released_choices[] = { "fp32", "tf32", "fp16", "bf16", "fp8",
                                                    "int8", "int4", "fp4", NULL };
    int released = -1, scope = 0;
    static const char *const scope_choices[] = { "all", "mlp", NULL };
    if (!(m->name = strdup(name)))
        return fields_fail(c, o->where, o->path, "out of memory");
    int status = fields_object_check_keys(c, o, MODEL_KEYS)
                 || read_unsigned(c, o, "layers", true, &m->layers)
                 || read_unsigned(c, o, "hidden", true, &m->hidden)
                 || read_unsigned(c, o, "heads", true, &m->heads)
                 || read_unsigned(c, o, "kv_heads", true, &m->kv_heads)
                 || read_unsigned(c, o, "ffn", true, &m->ffn)
                 || read_unsigned(c, o, "vocab", true, &m->vocab)
                 || read_unsigned(c, o, "positions", false, &m->positions)
                 || read_unsigned(c, o, "experts", false, &m->experts)
                 || read_unsigned(c, o, "experts_active", false, &m->experts_active)
                 || read_unsigned(c, o, "context", false, &m->context)
                 || read_unsigned(c, o, "head_dim", false, &m->head_dim)
                 || read_unsigned(c, o, "expert_ffn", false, &m->expert_ffn)
                 || read_unsigned(c, o, "shared_experts", false, &m->shared_experts)
                 || read_unsigned(c, o, "dense_layers", false, &m->dense_layers)
                 || read_unsigned(c, o, "moe_every", false, &m->moe_every)
                 || read_unsigned(c, o, "routed_nodes", false, &m->routed_nodes)
                 || read_unsigned(c, o, "kv_lora_rank", false, &m->kv_lora_rank)
                 || read_unsigned(c, o, "q_lora_rank", false, &m->q_lora_rank)
                 || read_unsigned(c, o, "rope_head_dim", false, &m->rope_head_dim)
                 || read_unsigned(c, o, "v_head_dim", false, &m->v_head_dim)
                 || read_unsigned(c, o, "window", false, &m->window)
                 || read_unsigned(c, o, "global_every", false, &m->global_every)
                 || fields_read_choice(c, o, "precision", released_choices, -1, &released)
                 || fields_read_choice(c, o, "quantized", scope_choices, 0, &scope)
                 || read_unsigned(c, o, "unquantized_edge_layers", false,
                                  &m->unquantized_edge_layers)
                 || fields_read_flag(c, o, "gated", false, &m->gated)
                 || fields_read_flag(c, o, "tied", false, &m->tied)
                 || fields_read_flag(c, o, "alibi", false, &m->alibi)
                 || fields_read_number(c, o, "params", false, 0, 0, 1e15, true,
                                       &m->published_params)
                 || fields_read_number(c, o, "params_active", false, 0, 0, 1e15, true,
                                       &m->published_active_params);
    if (status == 0 && !m->experts
        && (m->expert_ffn || m->shared_experts || m->dense_layers || m->moe_every
            || m->routed_nodes))
        status = fields_fail(c, o->where, o->path, "expert_ffn, shared_experts, dense_layers, "
                             "moe_every and routed_nodes describe a mixture of experts: set "
                             "experts too");
    if (status == 0 && m->experts && m->dense_layers >= m->layers)
        status = fields_fail(c, o->where, o->path, "dense_layers (%u) must be fewer than "
                             "layers (%u)", m->dense_layers, m->layers);
    if (status == 0 && !m->kv_lora_rank && (m->q_lora_rank || m->rope_head_dim || m->v_head_dim))
        status = fields_fail(c, o->where, o->path, "q_lora_rank, rope_head_dim and v_head_dim "
                             "describe latent attention: set kv_lora_rank too");
    if (status == 0 && m->kv_lora_rank && !m->rope_head_dim)
        status = fields_fail(c, o->where, o->path, "latent attention (kv_lora_rank %u) needs "
                             "rope_head_dim, the rotary key's size", m->kv_lora_rank);
    m->has_released = released >= 0;
    m->released = m->has_released ? (precision)released : PREC_FP16;
    m->quantize_mlp_only = scope == 1;
    if (status == 0 && m->unquantized_edge_layers
        && (m->experts || 2 * (uint64_t)m->unquantized_edge_layers >= m->layers))
        status = fields_fail(c, o->where, o->path, "unquantized_edge_layers (%u) keeps the first "
                             "and as many last layers 16-bit: it needs a dense model (no "
                             "experts) of more than twice as many layers (%u)",
                             m->unquantized_edge_layers, m->layers);
    if (status == 0 && m->global_every && !m->window)
        status = fields_fail(c, o->where, o->path, "global_every (%u) sets which layers attend "
                             "beyond a sliding window: set window too", m->global_every);
    if (status == 0 && m->global_every > m->layers)
        status = fields_fail(c, o->where, o->path, "global_every (%u) must be at most layers (%u)",
                             m->global_every, m->layers);
    if (status == 0 && !m->head_dim && m->hidden % m->heads)
        status = fields_fail(c, o->where, o->path, "hidden (%u) must be a multiple of heads (%u), or "
                             "head_dim given",
                             m->hidden, m->heads);
    if (status == 0 && (m->kv_heads > m->heads || m->heads % m->kv_heads))
        status = fields_fail(c, o->where, o->path, "kv_heads (%u) must divide heads (%u)",
                             m->kv_heads, m->heads);
    if (status == 0 && (m->experts_active > m->experts || (m->experts && !m->experts_active)))
        status = fields_fail(c, o->where, o->path, "experts_active (%u) must be between 1 and "
                             "experts (%u)", m->experts_active, m->experts);
    if (status == 0 && m->alibi && m->positions)
        status = fields_fail(c, o->where, o->path, "alibi and positions (%u) exclude each other: "
                             "ALiBi has no learned position table", m->positions);
    if (status == 0 && !m->context)
        m->context = 4096;
    return status ? -1 : 0;
}

/* batch.smaller: the defaults on a smaller device (engine_batch_defaults) */
static int read_engine_smaller(load_context *c, const fields_object *bt, engine_spec *e)
{
    fields_object s;
    int found = fields_object_open_field(c, bt, "smaller", NULL, "a table such as { max_batch "
                                         "= 256, max_tokens = 2048, below_gib = 70 }", &s);
    if (found <= 0)
        return found < 0;
    int64_t seqs = 0, tokens = 0;
    double below_gib = 0;
    char *named = NULL;
    int status = fields_object_check_keys(c, &s, ENGINE_SMALLER_KEYS)
                 || fields_read_integer(c, &s, "max_batch", true, 0, 1, 1000000, &seqs)
                 || fields_read_integer(c, &s, "max_tokens", true, 0, 1, 100000000, &tokens)
                 || fields_read_number(c, &s, "below_gib", false, 0, 0, 1e6, true, &below_gib)
                 || fields_read_string(c, &s, "named", false, &named);
    if (status == 0 && named && strlen(named) >= sizeof e->smaller_named)
        status = fields_fail(c, s.where, s.path, "named: at most %zu characters, got \"%s\"",
                             sizeof e->smaller_named - 1, named);
    if (status == 0) {
        e->smaller_max_batch = (unsigned)seqs;
        e->smaller_max_tokens = (unsigned)tokens;
        e->smaller_below_bytes = below_gib * 1073741824.0;
        snprintf(e->smaller_named, sizeof e->smaller_named, "%s", named ? named : "");
    }
    free(named);
    lua_settop(c->L, s.index - 1);
    return status;
}

/* host = { from = "operators" | base, per_sequence, tp_base, tp_per_sequence, overlap,
 * measured, source } */
static int read_engine_host(load_context *c, const fields_object *o, engine_spec *e)
{
    fields_object h;
    int found = fields_object_open_field(c, o, "host", NULL,
                                         "a table such as { from = \"operators\", overlap = 0 }", &h);
    if (found < 0)
        return -1;
    if (found == 0)
        return fields_fail(c, o->where, o->path, "host is required for a serving engine");
    static const char *const from_choices[] = { "operators", NULL };
    int from = -1;
    int status = fields_object_check_keys(c, &h, ENGINE_HOST_KEYS)
                 || fields_read_choice(c, &h, "from", from_choices, -1, &from)
                 || fields_read_number(c, &h, "overlap", true, 0, 0, 1, true, &e->host_overlap)
                 || fields_read_flag(c, &h, "measured", false, &e->host_measured)
                 || fields_read_string(c, &h, "source", true, &e->host_source);
    if (status == 0 && from == 0) {
        e->host_s = NAN;
        bool ray = true;
        status = fields_read_flag(c, &h, "ray", true, &ray);
        e->host_local_workers = !ray;
        if (status == 0) {
            bool both = fields_object_get(c, &h, "base") != LUA_TNIL;
            lua_pop(c->L, 1);
            if (both)
                status = fields_fail(c, h.where, h.path, "base and from = \"operators\" "
                                     "exclude each other: give the figures, or take the fit "
                                     "set's");
        }
    } else if (status == 0) {
        status = fields_read_duration(c, &h, "base", true, 0, 0, 10, true, &e->host_s)
                 || fields_read_duration(c, &h, "per_sequence", true, 0, 0, 1, true,
                                         &e->host_per_seq_s)
                 || fields_read_duration(c, &h, "tp_base", false, 0, 0, 10, true, &e->host_tp_s)
                 || fields_read_duration(c, &h, "tp_per_sequence", false, 0, 0, 1, true,
                                         &e->host_tp_per_seq_s);
    }
    lua_settop(c->L, h.index - 1);
    return status ? -1 : 0;
}

/* memory = { rule, share, runtime_gib, runtime_tp_gib, graphs_gib, token_budget,
 * activation_factor, activation_split } */
static int read_engine_memory(load_context *c, const fields_object *o, engine_spec *e)
{
    fields_object m;
    int found = fields_object_open_field(c, o, "memory", NULL,
                                         "a table such as { rule = \"share_of_total\", share = 0.9 }",
                                         &m);
    if (found < 0)
        return -1;
    if (found == 0)
        return fields_fail(c, o->where, o->path, "memory is required for a serving engine");
    static const char *const rules[] = { "share_of_total", "static_pool", "share_of_free", NULL };
    int rule = 0;
    double runtime = 0, runtime_tp = 0, runtime_rank = 0, graphs = 0, floor = 0, above = 0;
    const double gib = 1073741824.0;
    int status = fields_object_check_keys(c, &m, ENGINE_MEMORY_KEYS)
                 || fields_read_choice(c, &m, "rule", rules, -1, &rule)
                 || fields_read_number(c, &m, "share", true, 0, 0, 1, true, &e->memory_share)
                 || fields_read_number(c, &m, "runtime_gib", false, 0, 0, 1e4, true, &runtime)
                 || fields_read_number(c, &m, "runtime_tp_gib", false, 0, 0, 1e4, true, &runtime_tp)
                 || fields_read_number(c, &m, "runtime_rank_gib", false, 0, 0, 1e4, true,
                                       &runtime_rank)
                 || fields_read_number(c, &m, "graphs_gib", false, 0, 0, 1e4, true, &graphs)
                 || fields_read_number(c, &m, "token_budget", true, 0, 0, 1e8, true,
                                       &e->token_budget)
                 || fields_read_number(c, &m, "activation_bytes_per_token", false, 0, 0, 1e12,
                                       true, &e->activation_bytes_per_token)
                 || fields_read_number(c, &m, "activation_factor", false, 0, 0, 100, true,
                                       &e->activation_factor)
                 || fields_read_flag(c, &m, "activation_split", false, &e->activation_split)
                 || fields_read_number(c, &m, "sampler_seqs", false, 0, 0, 1e7, true,
                                       &e->sampler_seqs)
                 || fields_read_number(c, &m, "bytes_per_logit", false, 0, 0, 1e4, true,
                                       &e->bytes_per_logit)
                 || fields_read_number(c, &m, "floor_gib", false, 0, 0, 1e4, true, &floor)
                 || fields_read_number(c, &m, "floor_above_gib", false, 0, 0, 1e6, true, &above);
    e->memory_rule = (memory_rule)(rule < 0 ? 0 : rule);
    if (status == 0 && !(e->memory_share > 0) && e->memory_rule != MEMORY_STATIC_POOL)
        status = fields_fail(c, m.where, m.path, "share must be above 0 (0 means \"the device "
                             "less what is reserved\" only with rule = \"static_pool\")");
    e->runtime_bytes = runtime * gib;
    e->runtime_tp_bytes = runtime_tp * gib;
    e->runtime_rank_bytes = runtime_rank * gib;
    e->cuda_graph_bytes = graphs * gib;
    e->floor_bytes = floor * gib;
    e->floor_above_bytes = above * gib;
    lua_settop(c->L, m.index - 1);
    return status ? -1 : 0;
}

/* kernels = { gemm = "...", ... }: each class's family in words */
static int read_engine_kernels(load_context *c, const fields_object *o, engine_spec *e)
{
    fields_object k;
    int found = fields_object_open_field(c, o, "kernels", NULL,
                                         "a table such as { gemm = \"operators\" }", &k);
    if (found <= 0)
        return found < 0 ? -1 : fields_fail(c, o->where, o->path, "kernels is required");
    const char *names[ENGINE_CLASS_COUNT + 1];
    for (int i = 0; i < ENGINE_CLASS_COUNT; i++)
        names[i] = engine_class_name((engine_class)i);
    names[ENGINE_CLASS_COUNT] = NULL;
    int status = fields_object_check_keys(c, &k, names);
    for (int i = 0; i < ENGINE_CLASS_COUNT && status == 0; i++)
        status = fields_read_string(c, &k, names[i], true, &e->kernels[i]);
    lua_settop(c->L, k.index - 1);
    return status ? -1 : 0;
}

/* families = { attention_prefill = "fa3_bf16_h100", moe_gemm = "...", attention_backward =
 * "..." }: the fitted kernel families (models/kernel_constants.h) that price those
 * classes; each of its class */
static int read_engine_families(load_context *c, const fields_object *o, engine_spec *e)
{
    const struct { const char *key; perf_kernel_class kernel; const perf_kernel_family **to; }
        wired[] = {
            { "attention_prefill", KERNEL_ATTN_PREFILL, &e->families[ENGINE_ATTN_PREFILL] },
            { "moe_gemm", KERNEL_GROUPED_GEMM, &e->families[ENGINE_MOE_GEMM] },
            { "attention_backward", KERNEL_ATTN_BACKWARD, &e->attn_backward_family },
            { "moe_wgrad", KERNEL_GROUPED_GEMM, &e->moe_wgrad_family },
        };
    const char *keys[sizeof wired / sizeof wired[0] + 1] = { NULL };
    for (size_t i = 0; i < sizeof wired / sizeof wired[0]; i++)
        keys[i] = wired[i].key;
    fields_object f;
    int found = fields_object_open_field(c, o, "families", NULL,
                                         "a table such as { attention_prefill = "
                                         "\"fa3_bf16_h100\" }", &f);
    if (found <= 0)
        return found;
    int status = fields_object_check_keys(c, &f, keys);
    for (size_t i = 0; i < sizeof wired / sizeof wired[0] && status == 0; i++) {
        const char *key = wired[i].key;
        char *name = NULL;
        status = fields_read_string(c, &f, key, false, &name);
        if (status == 0 && name) {
            const perf_kernel_family *k = perf_kernel_family_named(name);
            if (!k || k->cls != wired[i].kernel) {
                char known[1024] = "";
                for (size_t j = 0; perf_kernel_families[j]; j++)
                    if (perf_kernel_families[j]->cls == wired[i].kernel)
                        snprintf(known + strlen(known), sizeof known - strlen(known), "%s%s",
                                 *known ? ", " : "", perf_kernel_families[j]->name);
                status = fields_fail(c, f.where, f.path, "%s: \"%s\" is not a fitted family "
                                     "of that class (known: %s)", key, name, known);
            }
            *wired[i].to = k;
        }
        free(name);
    }
    lua_settop(c->L, f.index - 1);
    return status ? -1 : 0;
}

static int convert_engine(load_context *c, const fields_object *o, const char *name, engine_spec *e)
{
    static const char *const kinds[] = { "serving", "training", NULL };
    int kind = 0;
    if (!(e->name = strdup(name)))
        return fields_fail(c, o->where, o->path, "out of memory");
    int status = fields_object_check_keys(c, o, ENGINE_KEYS)
                 || fields_read_choice(c, o, "kind", kinds, -1, &kind)
                 || fields_read_string(c, o, "describes", true, &e->describes)
                 || read_engine_kernels(c, o, e) || read_engine_families(c, o, e);
    e->training = kind == 1;
    if (status == 0 && !e->training) {
        fields_object g;
        int found = fields_object_open_field(c, o, "cuda_graphs", NULL,
                                             "a table such as { max_batch = 512 }", &g);
        int64_t max_batch = 0;
        if (found > 0) {
            status = fields_object_check_keys(c, &g, ENGINE_GRAPH_KEYS)
                     || fields_read_integer(c, &g, "max_batch", true, 0, 0, 1 << 20, &max_batch);
            lua_settop(c->L, g.index - 1);
        }
        status = status || found < 0; /* the first mistake is the one said */
        e->cuda_graph_max_batch = (unsigned)max_batch;
        static const char *const drafts[] = { "in_round", "iterations", NULL };
        int steps = 0;
        status = status || fields_read_choice(c, o, "draft_steps", drafts, 0, &steps);
        e->draft_iterations = steps == 1;
        fields_object a;
        int has_a2a = status ? 0 : fields_object_open_field(c, o, "alltoall", NULL,
                                                            "a table such as { dispatch_fp8 = "
                                                            "true, per_node = true }", &a);
        if (has_a2a > 0) {
            status = fields_object_check_keys(c, &a, ENGINE_ALLTOALL_KEYS)
                     || fields_read_flag(c, &a, "dispatch_fp8", false, &e->dispatch_fp8)
                     || fields_read_flag(c, &a, "per_node", false, &e->per_node_dispatch)
                     || fields_read_flag(c, &a, "two_batch_overlap", false,
                                         &e->two_batch_overlap);
            lua_settop(c->L, a.index - 1);
        }
        status = status || has_a2a < 0;
        fields_object bt;
        int has_batch = status ? 0 : fields_object_open_field(c, o, "batch", NULL,
                                                              "a table such as { max_batch = "
                                                              "256, max_tokens = 8192 }", &bt);
        int64_t seqs = 256, tokens = 8192;
        if (has_batch > 0) {
            status = fields_object_check_keys(c, &bt, ENGINE_BATCH_KEYS)
                     || fields_read_integer(c, &bt, "max_batch", false, 256, 1, 1000000, &seqs)
                     || fields_read_integer(c, &bt, "max_tokens", false, 8192, 1, 100000000,
                                            &tokens)
                     || read_engine_smaller(c, &bt, e);
            lua_settop(c->L, bt.index - 1);
        }
        status = status || has_batch < 0;
        e->max_batch = (unsigned)seqs;
        e->max_tokens = (unsigned)tokens;
        status = status || read_engine_host(c, o, e) || read_engine_memory(c, o, e);
    }
    if (status == 0 && e->training) {
        fields_object t;
        int found = fields_object_open_field(c, o, "training", NULL,
                                             "a table such as { weight_bytes = 2, gradient_bytes "
                                             "= 4, optimizer_bytes = 12 }", &t);
        if (found < 0)
            return -1;
        if (found == 0)
            return fields_fail(c, o->where, o->path, "training is required for a training engine");
        status = fields_object_check_keys(c, &t, ENGINE_TRAINING_KEYS)
                 || fields_read_number(c, &t, "weight_bytes", true, 0, 0, 64, false,
                                       &e->train_weight_bytes)
                 || fields_read_number(c, &t, "gradient_bytes", true, 0, 0, 64, false,
                                       &e->train_gradient_bytes)
                 || fields_read_number(c, &t, "optimizer_bytes", true, 0, 0, 64, true,
                                       &e->train_optimizer_bytes);
        int64_t zero = 3;
        status = status || fields_read_integer(c, &t, "pipeline_zero", false, 3, 0, 3, &zero);
        e->train_pipeline_zero = (unsigned)zero;
        status = status || fields_read_number(c, &t, "tp_overlap", false, 0, 0, 1, true,
                                              &e->train_tp_overlap);
        bool sp = true;
        status = status || fields_read_flag(c, &t, "sequence_parallel", true, &sp);
        e->train_no_sequence_parallel = !sp;
        double *stages = NULL;
        size_t nstages = 0;
        status = status || fields_read_list(c, &t, "zero_stages", false, false, &stages, &nstages);
        e->train_zero_stages = nstages ? 0 : 0xf; /* absent: every stage */
        for (size_t i = 0; status == 0 && i < nstages; i++) {
            if (stages[i] != floor(stages[i]) || stages[i] > 3)
                status = fields_fail(c, t.where, t.path, "zero_stages: %g is not a ZeRO stage "
                                     "(0, 1, 2 or 3)", stages[i]);
            else
                e->train_zero_stages |= 1u << (unsigned)stages[i];
        }
        free(stages);
        lua_settop(c->L, t.index - 1);
    }
    if (status == 0 && e->training) {
        static const char *const serving_only[] = { "host", "memory", "cuda_graphs", "batch",
                                                    "alltoall", "draft_steps", NULL };
        for (int i = 0; serving_only[i] && status == 0; i++) {
            if (fields_object_get(c, o, serving_only[i]) != LUA_TNIL)
                status = fields_fail(c, o->where, o->path, "%s describes a serving engine: a "
                                     "training engine (kind \"training\") takes training",
                                     serving_only[i]);
            lua_pop(c->L, 1);
        }
    }
    return status ? -1 : 0;
}

typedef struct load_job {
    load_context *c;
    catalog *out;
    int status;
    const char *edited_in; /* the scenario whose state this is, or NULL */
} load_job;

/* Reads fleetsim.devices, fleetsim.models and fleetsim.engines (the module's tables,
 * which a scenario may have extended) into out. */
static int load_protected(lua_State *L)
{
    load_job *job = lua_touserdata(L, 1);
    load_context *c = job->c;
    catalog *out = job->out;
    lua_getfield(L, LUA_REGISTRYINDEX, "fleetsim.loaded");
    lua_getfield(L, -1, "fleetsim");
    int fs = lua_gettop(L);
    const char *sections[3] = { "devices", "models", "engines" };
    for (int k = 0; k < 3 && job->status == 0; k++) {
        lua_pushstring(L, sections[k]); /* raw: fs's __index calls a missing key a typo */
        lua_rawget(L, fs);
        int table = lua_gettop(L);
        size_t n = 0;
        char **names = lua_istable(L, table) ? sorted_keys(L, table, &n) : NULL;
        if (!names) {
            char got[96];
            fields_describe(L, table, got, sizeof got);
            snprintf(c->err, c->err_size, "%s%sfs.%s: expected the catalog's table, which a "
                     "scenario may change but not replace, got %s",
                     job->edited_in ? job->edited_in : "", job->edited_in ? ": " : "",
                     sections[k], got);
            job->status = -1;
            break;
        }
        if (k == 0)
            out->devices = calloc(n + 1, sizeof *out->devices);
        else if (k == 1)
            out->models = calloc(n + 1, sizeof *out->models);
        else
            out->engines = calloc(n + 1, sizeof *out->engines);
        for (size_t i = 0; i < n && job->status == 0; i++) {
            fields_object o;
            char path[FIELD_PATH_MAX], where[FIELD_PATH_MAX];
            snprintf(path, sizeof path, "%s.%s", sections[k], names[i]);
            /* in a scenario's state every entry that fails is one the scenario edited */
            if (job->edited_in)
                snprintf(where, sizeof where, "%s: fs.", job->edited_in);
            else
                snprintf(where, sizeof where, "fleetsim/%s.lua: ", sections[k]);
            lua_getfield(L, table, names[i]);
            if (fields_object_open(c, -1, path, where, NULL, "a table", &o) != 0) {
                job->status = -1;
                break;
            }
            if (!*o.where)
                snprintf(o.where, sizeof o.where, "%s", where);
            if (k == 0)
                job->status = convert_device(c, &o, names[i], &out->devices[out->ndevices++]);
            else if (k == 1)
                job->status = convert_model(c, &o, names[i], &out->models[out->nmodels++]);
            else
                job->status = convert_engine(c, &o, names[i], &out->engines[out->nengines++]);
            lua_pop(L, 1);
        }
        free_keys(names);
        lua_settop(L, fs);
    }
    return 0;
}

int catalog_load_from(lua_State *L, const char *edited_in, catalog *out, char *err,
                      size_t err_size)
{
    memset(out, 0, sizeof *out);
    load_context c = { L, err, err_size, NULL, 0, "", false, 0, false, NULL };
    load_job job = { &c, out, 0, edited_in };
    lua_pushcfunction(L, load_protected);
    lua_pushlightuserdata(L, &job);
    if (lua_pcall(L, 1, 0, 0) != LUA_OK) {
        const char *why = lua_tostring(L, -1);
        snprintf(err, err_size, "reading the catalogs: %s", why ? why : "(an error that is not a string)");
        lua_pop(L, 1);
        job.status = -1;
    }
    if (job.status != 0)
        catalog_release(out);
    return job.status;
}

/* The catalogs in a fresh sandbox, after the file at path (NULL: none) ran there. */
static int load_in_sandbox(const char *path, catalog *out, char *err, size_t err_size)
{
    memset(out, 0, sizeof *out);
    sandbox *sb = sandbox_create(false);
    if (!sb) {
        snprintf(err, err_size, "out of memory");
        return -1;
    }
    lua_State *L = sandbox_state(sb);
    int status = luaL_dostring(L, "require 'fleetsim'");
    if (status == LUA_OK && path) {
        status = sandbox_load_file(sb, path);
        if (status == LUA_OK)
            status = lua_pcall(L, 0, 0, 0);
    }
    if (status != LUA_OK) {
        const char *why = lua_tostring(L, -1);
        if (status == LUA_ERRMEM && sandbox_memory_exhausted(sb))
            snprintf(err, err_size, "%s: the file used more than the sandbox's memory",
                     path ? path : "the catalog");
        else
            snprintf(err, err_size, "%s", why ? why : "(an error that is not a string)");
        sandbox_free(sb);
        return -1;
    }
    status = catalog_load_from(L, path, out, err, err_size);
    sandbox_free(sb);
    return status;
}

int catalog_load_file(const char *path, catalog *out, char *err, size_t err_size)
{
    return load_in_sandbox(path, out, err, err_size);
}

int catalog_load(catalog *out, char *err, size_t err_size)
{
    return load_in_sandbox(NULL, out, err, err_size);
}

